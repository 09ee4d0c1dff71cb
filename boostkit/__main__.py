"""``python -m boostkit``: the ``boostkit`` command (:func:`boostkit.cli.main`)."""

import sys

from .cli import main

if __name__ == "__main__":  # importing the module (documentation tools do) runs nothing
    sys.exit(main())
