"""Shared fixtures: keep boostkit's process-wide plugin state the same for every test.

By default every test sees the default plugin state: the first-party plugins autoloaded through
the ``boostkit`` entry-point group. A test that changes how plugins are discovered says so:

* environment variables (``BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD``, ``BOOSTKIT_PLUGINS``,
  ``BOOSTKIT_TRACE``) are restored after every test, and the registry is reset only when one of
  them was changed;
* a test that changes discovery in another way (monkeypatched entry points) or that must start
  from a registry built under its own environment requests :func:`fresh_plugins`;
* in-process plugins are registered through :func:`in_process_plugin`, which unregisters them.
"""

from __future__ import annotations

import os
import types

# Matrix products (PAV-AdaBoost's Cmass and its reproductions) go to OpenBLAS, whose kernels sum
# in other orders on AVX-512 and AVX2 CPUs; the figures the pages quote and the stored
# reference models were computed with the AVX2 ones, which every x86-64 machine runs. OpenBLAS reads
# this once, when numpy is first imported, so it must be set before that.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import boostkit  # noqa: E402
from boostkit import plugins  # noqa: E402

# No property test may pass or fail by the clock: on a busy machine, or while numba compiles a
# kernel on its first example, an example or the data's generation can take seconds.
settings.register_profile("boostkit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("boostkit")

PLUGIN_ENV_VARS = ("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD", "BOOSTKIT_PLUGINS", "BOOSTKIT_TRACE")


@pytest.fixture(autouse=True)
def _restore_plugin_env(monkeypatch):
    """Undo any change a test made to the plugin environment variables, and reset if it did.

    Depending on ``monkeypatch`` makes this teardown run before monkeypatch's own, so a change
    made with ``monkeypatch.setenv`` is still visible here and triggers the reset.
    """
    saved = {name: os.environ.get(name) for name in PLUGIN_ENV_VARS}
    yield
    changed = False
    for name, value in saved.items():
        if os.environ.get(name) == value:
            continue
        changed = True
        if value is None:
            del os.environ[name]
        else:
            os.environ[name] = value
    if changed:
        plugins.reset()


@pytest.fixture
def fresh_plugins():
    """Rebuild the registry on first use in this test, and again after it.

    For tests that change discovery (environment variables set in the test body, monkeypatched
    ``importlib.metadata.entry_points``): a registry cached by an earlier test is not reused.
    """
    plugins.reset()
    yield
    plugins.reset()


@pytest.fixture
def in_process_plugin():
    """Register in-process plugins for one test; all are unregistered afterwards.

    Returns ``register(name, components=(), algorithms=(), **hooks)``, which builds a module
    named ``name`` whose discovery hooks add ``components`` and ``algorithms`` (recipes), plus
    any further attributes given as ``hooks`` (already decorated with ``boostkit.hookimpl``, or
    deliberately not), registers it with :func:`boostkit.register_plugin` and returns it.
    """
    registered: list[str] = []

    def register(name, components=(), algorithms=(), **hooks):
        module = types.ModuleType(name)
        if components:

            @boostkit.hookimpl
            def boostkit_register_components(registry):
                for component in components:
                    registry.add_component(component)

            module.boostkit_register_components = boostkit_register_components
        if algorithms:

            @boostkit.hookimpl
            def boostkit_register_algorithms(registry):
                for recipe in algorithms:
                    registry.add_algorithm(recipe)

            module.boostkit_register_algorithms = boostkit_register_algorithms
        for hook_name, function in hooks.items():
            setattr(module, hook_name, function)
        boostkit.register_plugin(module, name=name)
        registered.append(name)
        return module

    yield register
    for name in registered:
        boostkit.unregister_plugin(name)


@pytest.fixture
def noisy_data():
    """``(X, y)``: 200 examples, two features, labels in {-1, +1} from the sign of the first
    feature with 15% flipped, so that no stump fits them and boosting runs its whole budget."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    return X, np.where(rng.random(200) < 0.15, -y, y)


@pytest.fixture
def never_densify(monkeypatch):
    """Make densifying any scipy.sparse matrix or array an error while the test runs."""
    import scipy.sparse as sp

    def refuse(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for name in ("csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array", "coo_array"):
        if hasattr(sp, name):
            monkeypatch.setattr(getattr(sp, name), "toarray", refuse)
            monkeypatch.setattr(getattr(sp, name), "todense", refuse)
