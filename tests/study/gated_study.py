"""``python gated_study.py ARGS...``: ``boostkit ARGS...`` with one more stopping component,
``waits-on-five-features``: a fit on data of five features waits, from its second round, until
the file named by the environment variable BOOSTKIT_TEST_GATE exists (compare's one-round trial
fit of a recipe passes).

The signal tests run it in a subprocess to stop a study while it surely still runs, without
timing: the cells of a five-feature dataset hold their workers until the test opens the gate.
The plugin is registered at import, so the spawned worker processes (which import this file as
``__mp_main__``) have it too. With BOOSTKIT_TEST_STARTING naming a directory, a worker process
holds still while it starts up -- importing this file, before the pool's initializer runs --
after writing a file named by its pid there, so a test can signal it at that moment (and
``<pid>.interrupted`` if KeyboardInterrupt is raised in it then).

The study runs as a terminal's foreground job would: Ctrl-C raises KeyboardInterrupt in it even
when the test runner itself ignores SIGINT (as a background job of a non-interactive shell does,
and passes on to its children).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import attrs

import boostkit

GATE = os.environ["BOOSTKIT_TEST_GATE"]
STARTING = os.environ.get("BOOSTKIT_TEST_STARTING")

if __name__ == "__mp_main__" and STARTING:
    (Path(STARTING) / str(os.getpid())).touch()
    try:
        while True:  # until the driver stops the study
            time.sleep(0.02)
    except KeyboardInterrupt:  # what the signal test checks does not happen
        (Path(STARTING) / f"{os.getpid()}.interrupted").touch()
        raise


@attrs.define
class WaitsOnFiveFeatures(boostkit.Stopping):
    name = "waits-on-five-features"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        while state.data.X.shape[1] == 5 and record.round >= 2 and not os.path.exists(GATE):
            time.sleep(0.02)
        return None


class _Plugin:
    @boostkit.hookimpl
    def boostkit_register_components(self, registry):
        registry.add_component(WaitsOnFiveFeatures)


boostkit.register_plugin(_Plugin(), name="gated-study")

if __name__ == "__main__":
    from boostkit.cli import main

    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main(sys.argv[1:]))
