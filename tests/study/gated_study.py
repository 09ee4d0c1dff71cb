"""``python gated_study.py ARGS...``: ``boostkit ARGS...`` with one more stopping component,
``waits-on-five-features``: a fit on data of five features waits, from its second round, until
the file named by the environment variable BOOSTKIT_TEST_GATE exists (compare's one-round trial
fit of a recipe passes).

The signal tests run it in a subprocess to stop a study while it surely still runs, without
timing: the cells of a five-feature dataset hold their workers until the test opens the gate.
The plugin is registered at import, so the spawned worker processes (which import this file as
``__mp_main__``) have it too.
"""

from __future__ import annotations

import os
import sys
import time

import attrs

import boostkit

GATE = os.environ["BOOSTKIT_TEST_GATE"]


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

    sys.exit(main(sys.argv[1:]))
