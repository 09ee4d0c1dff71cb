"""The plugin guide's own learner passes the plugin author's check: ``boostkit.testing``'s
``check_component`` on ``centroid-direction`` (``example_plugin/``, registered in-process), in
every recipe the capability check accepts, finds no failure, its hypotheses' cells at prediction
being the cells it trained on."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import boostkit
from boostkit.testing import check_component

EXAMPLE = Path(__file__).parent / "example_plugin"


@pytest.fixture
def example_plugin(monkeypatch, fresh_plugins):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    module = importlib.import_module("boostkit_example")
    boostkit.register_plugin(module, name="example")
    yield module
    boostkit.unregister_plugin("example")
    sys.modules.pop("boostkit_example", None)
    sys.modules.pop("boostkit_example.kernels", None)


def test_the_guides_learner_passes_check_component(example_plugin):
    report = check_component("centroid-direction", datasets=("ionosphere",), n_rows=120,
                             n_rounds=8, max_recipes=6)
    assert report.passed and not report.partner_failures, str(report)
    assert any("calibration=domain-partition" in recipe for recipe in report.tried)
