"""Plugin discovery: the process-wide plugin manager and registry.

Plugins are found through the ``boostkit`` entry-point group, first-party ones included, and loaded
lazily and once, on the first call that needs the registry. Environment variables:

``BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD``
    If set (to anything but ``""`` or ``"0"``), no entry point is loaded unless it is named in
    ``BOOSTKIT_PLUGINS``.
``BOOSTKIT_PLUGINS``
    Comma-separated entry-point names. With autoload on, only these are loaded (an allow-list);
    with autoload off, these are loaded anyway.
``BOOSTKIT_TRACE``
    If set, every hook call (discovery and round hooks) is printed to standard error.

Plugins can also be registered in-process with :func:`register_plugin`, which is how notebooks
and tests add a plugin without packaging it.
"""

from __future__ import annotations

import os
import sys
import threading
from importlib import metadata
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginLoadError, RegistryError
from .registry import Registry

__all__ = [
    "ENTRY_POINT_GROUP",
    "get_registry",
    "get_plugin_manager",
    "register_plugin",
    "reset",
    "plugin_info",
    "tracing_enabled",
    "enable_tracing",
]

ENTRY_POINT_GROUP = "boostkit"

_lock = threading.RLock()
_pm: pluggy.PluginManager | None = None
_registry: Registry | None = None
_extra_plugins: list[tuple[Any, str]] = []
_sources: dict[str, dict[str, str]] = {}


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def tracing_enabled() -> bool:
    """Whether ``BOOSTKIT_TRACE`` asks for every hook call to be printed."""
    return _flag("BOOSTKIT_TRACE")


def enable_tracing(pm: pluggy.PluginManager) -> None:
    """Print every hook call of ``pm`` to standard error, indented by nesting."""
    pm.trace.root.setwriter(lambda text: sys.stderr.write(text))
    pm.enable_tracing()


def _allowed_names() -> set[str] | None:
    raw = os.environ.get("BOOSTKIT_PLUGINS", "")
    names = {n.strip() for n in raw.split(",") if n.strip()}
    return names or None


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allowed = _allowed_names()
    autoload = not _flag("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD")
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if allowed is not None and ep.name not in allowed:
            continue
        if not autoload and allowed is None:
            continue
        if pm.has_plugin(ep.name):
            continue
        dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
        version = ep.dist.version if ep.dist is not None else "?"
        where = f"plugin {ep.name!r} (entry point {ep.name} = {ep.value}, distribution {dist})"
        try:
            plugin = ep.load()
        except Exception as exc:  # any import-time failure is the plugin's, and must name it
            raise PluginLoadError(f"{where} failed to import: {type(exc).__name__}: {exc}") from exc
        try:
            pm.register(plugin, name=ep.name)
        except pluggy.PluginValidationError as exc:
            raise PluginLoadError(f"{where} declares an invalid hook implementation: {exc}") from exc
        _sources[ep.name] = {"distribution": dist, "version": version, "entry_point": ep.value}


def _build() -> tuple[pluggy.PluginManager, Registry]:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs.DiscoverySpecs)
    if tracing_enabled():
        enable_tracing(pm)
    from . import builtins

    pm.register(builtins, name="boostkit")
    _sources["boostkit"] = {"distribution": "boostkit", "version": _version(), "entry_point": "built-in"}
    _load_entry_points(pm)
    for plugin, name in _extra_plugins:
        if not pm.has_plugin(name):
            try:
                pm.register(plugin, name=name)
            except pluggy.PluginValidationError as exc:
                raise PluginLoadError(
                    f"in-process plugin {name!r} declares an invalid hook implementation: {exc}"
                ) from exc
            _sources.setdefault(name, {"distribution": "<in-process>", "version": "", "entry_point": ""})
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginLoadError(f"{exc.plugin!r}: {exc}") from exc
    registry = Registry()
    # Components first, from every plugin, so any plugin's recipe may use any plugin's components.
    for hook_name in ("boostkit_register_components", "boostkit_register_algorithms"):
        caller = getattr(pm.hook, hook_name)
        for impl in caller.get_hookimpls():  # registration order
            source = _describe_source(impl.plugin_name)
            registry.source = source
            single = pm.subset_hook_caller(
                hook_name, remove_plugins=[p for p in pm.get_plugins() if p is not impl.plugin]
            )
            try:
                single(registry=registry)
            except RegistryError:
                raise
            except Exception as exc:
                raise PluginLoadError(
                    f"{source} raised in {hook_name}: {type(exc).__name__}: {exc}"
                ) from exc
    registry.source = "<in-process>"
    return pm, registry


def _version() -> str:
    try:
        return metadata.version("boostkit")
    except metadata.PackageNotFoundError:
        return ""


def _describe_source(plugin_name: str) -> str:
    info = _sources.get(plugin_name, {})
    dist = info.get("distribution", "<in-process>")
    return f"plugin {plugin_name!r} (distribution {dist})"


def _ensure() -> tuple[pluggy.PluginManager, Registry]:
    global _pm, _registry
    with _lock:
        if _registry is None:
            _pm, _registry = _build()
        return _pm, _registry


def get_registry() -> Registry:
    """The process-wide registry, loading plugins on first use."""
    return _ensure()[1]


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide discovery plugin manager, loading plugins on first use."""
    return _ensure()[0]


def register_plugin(plugin: Any, name: str | None = None) -> None:
    """Register a plugin object (a module or any object with discovery hookimpls) in-process.

    The registry is rebuilt on next use. Use this in notebooks and tests; packaged plugins are
    found through the ``boostkit`` entry-point group instead.
    """
    name = name or getattr(plugin, "__name__", None) or repr(plugin)
    with _lock:
        _extra_plugins.append((plugin, name))
        _invalidate()


def unregister_plugin(name: str) -> None:
    """Remove an in-process plugin registered with :func:`register_plugin`."""
    with _lock:
        _extra_plugins[:] = [(p, n) for p, n in _extra_plugins if n != name]
        _sources.pop(name, None)
        _invalidate()


def _invalidate() -> None:
    global _pm, _registry
    _pm = _registry = None


def reset() -> None:
    """Forget loaded plugins so the next use reloads them (after changing the env variables)."""
    with _lock:
        _invalidate()


def plugin_info() -> list[dict[str, Any]]:
    """Name, distribution, version, hooks, components and algorithms of every loaded plugin."""
    pm, registry = _ensure()
    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        info = _sources.get(name, {})
        source = _describe_source(name)
        out.append(
            {
                "name": name,
                "distribution": info.get("distribution", "<in-process>"),
                "version": info.get("version", ""),
                "entry_point": info.get("entry_point", ""),
                "hooks": sorted(h.name for h in pm.get_hookcallers(plugin) or ()),
                "components": {
                    n: cls.role
                    for n, cls in registry.components().items()
                    if registry.source_of(n) == source
                },
                "algorithms": {
                    n: r.paper for n, r in registry.algorithms().items()
                    if registry.source_of(n) == source
                },
            }
        )
    return out
