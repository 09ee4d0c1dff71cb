"""Pytest fixtures for plugin authors.

Outside tests, a broken plugin is left out with a :class:`~boostkit.errors.PluginWarning` so that
every other plugin keeps working. In a plugin's own test suite that warning should fail the
run. Load this module as a pytest plugin, in the ``conftest.py`` at the root of your tests::

    pytest_plugins = ["boostkit.testing"]

and request :func:`strict_plugins` in the tests that load plugins, or make it apply to every
test::

    import pytest

    @pytest.fixture(autouse=True)
    def _strict(strict_plugins):
        pass

Equivalently, set ``BOOSTKIT_STRICT_PLUGINS=1`` in your CI's environment.
"""

from __future__ import annotations

import pytest

from . import plugins

__all__ = ["strict_plugins"]


@pytest.fixture
def strict_plugins(monkeypatch):
    """Make a broken plugin an error for one test, as ``BOOSTKIT_STRICT_PLUGINS=1`` does.

    The registry is rebuilt on first use in the test (so a plugin that breaks raises there, with
    the error that names it: :class:`~boostkit.errors.PluginLoadError` or
    :class:`~boostkit.errors.RegistryError`) and again after it.
    """
    monkeypatch.setenv(plugins.STRICT_ENV_VAR, "1")
    plugins.reset()
    yield
    monkeypatch.delenv(plugins.STRICT_ENV_VAR, raising=False)
    plugins.reset()
