"""Plugin discovery: the process-wide plugin manager and registry.

Plugins are found through the ``boostkit`` entry-point group, first-party ones included, and loaded
lazily and once, on the first call that needs the registry. Environment variables:

``BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD``
    If set (to anything but ``""`` or ``"0"``), no entry point is loaded unless it is named in
    ``BOOSTKIT_PLUGINS``.
``BOOSTKIT_PLUGINS``
    Comma-separated entry-point names. With autoload on, only these are loaded (an allow-list);
    with autoload off, these are loaded anyway. A name no installed plugin has is reported with a
    :class:`~boostkit.errors.PluginWarning` listing the installed ones.
``BOOSTKIT_STRICT_PLUGINS``
    If set, a broken plugin (or an unknown name in ``BOOSTKIT_PLUGINS``) is an error, as in
    boostkit 0.1, instead of a warning.
``BOOSTKIT_TRACE``
    If set, every hook call (discovery and round hooks) is printed to standard error.

**One broken plugin never takes the rest down.** A plugin that fails to import, declares an
invalid hook implementation (or a function named like a hook without the ``hookimpl`` marker,
which would never be called), or whose discovery hooks raise or register something the registry
refuses (an invalid component, a recipe failing its capability check) is left out whole: the
registry is rebuilt without it, so none of its components or algorithms stay half-registered,
and one :class:`~boostkit.errors.PluginWarning` names its distribution, the error and the fix. :func:`plugin_info` (and ``boostkit plugins``) lists it
with its error.

When two plugins register the same name, the later one in load order loses it. Load order is
fixed: boostkit's built-ins, then the first-party plugins (entry points of the ``boostkit``
distribution), then every other entry point, each group sorted by entry-point name, then plugins
registered in-process, in registration order. So a third-party plugin can never displace a
first-party component or algorithm. A name taken first leaves out only that name of the later
plugin, with a :class:`~boostkit.errors.PluginWarning` naming both plugins: the rest of it works
(a first-party name added in a new release must not take a plugin down whole). For an
*algorithm* name that is the recipe alone. For a *component* name it is the component and the
later plugin's own recipes naming it in any role, listed in the same warning, since they would
otherwise run the other plugin's class. ``BOOSTKIT_STRICT_PLUGINS`` makes any clash an error.

Plugins can also be registered in-process with :func:`register_plugin`, which is how notebooks
and tests add a plugin without packaging it.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import warnings
from importlib import metadata
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginLoadError, PluginWarning, RegistryError
from .registry import Registry

__all__ = [
    "ENTRY_POINT_GROUP",
    "STRICT_ENV_VAR",
    "get_registry",
    "get_plugin_manager",
    "register_plugin",
    "reset",
    "plugin_info",
    "broken_plugins",
    "allow_list_problem",
    "no_algorithms_message",
    "strict_mode",
    "AllowListWarning",
    "tracing_enabled",
    "enable_tracing",
]

ENTRY_POINT_GROUP = "boostkit"
STRICT_ENV_VAR = "BOOSTKIT_STRICT_PLUGINS"
FIRST_PARTY_DISTRIBUTION = "boostkit"
BUILTIN_NAME = "boostkit"

_lock = threading.RLock()
_pm: pluggy.PluginManager | None = None
_registry: Registry | None = None
_extra_plugins: list[tuple[Any, str]] = []
_sources: dict[str, dict[str, str]] = {}
_broken: dict[str, dict[str, str]] = {}
_left_out: dict[str, list[tuple[str, str]]] = {}
_left_out_components: dict[str, dict[str, tuple[str, list[str]]]] = {}
_allow_list_problem: str | None = None


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def tracing_enabled() -> bool:
    """Whether ``BOOSTKIT_TRACE`` asks for every hook call to be printed."""
    return _flag("BOOSTKIT_TRACE")


def strict_mode() -> bool:
    """Whether ``BOOSTKIT_STRICT_PLUGINS`` makes a broken plugin an error instead of a warning."""
    return _flag(STRICT_ENV_VAR)


def enable_tracing(pm: pluggy.PluginManager) -> None:
    """Print every hook call of ``pm`` to standard error, indented by nesting."""
    pm.trace.root.setwriter(lambda text: sys.stderr.write(text))
    pm.enable_tracing()


def _allowed_names() -> set[str] | None:
    raw = os.environ.get("BOOSTKIT_PLUGINS", "")
    names = {n.strip() for n in raw.split(",") if n.strip()}
    return names or None


def _describe(name: str, info: dict[str, str]) -> str:
    return f"plugin {name!r} (distribution {info.get('distribution', '<in-process>')})"


class AllowListWarning(PluginWarning):
    """``BOOSTKIT_PLUGINS`` names a plugin that is not installed."""


class _Failure(Exception):
    """A plugin is broken: ``message`` for the warning, ``error`` to raise in strict mode."""

    def __init__(self, name: str, message: str, error: BaseException):
        super().__init__(message)
        self.name, self.message, self.error = name, message, error


def _load_error(message: str, cause: BaseException) -> PluginLoadError:
    error = PluginLoadError(message)
    error.__cause__ = cause
    return error


class _Build:
    """One construction of the plugin manager and registry, leaving broken plugins out."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.sources: dict[str, dict[str, str]] = {}
        self.broken: dict[str, dict[str, str]] = {}
        # Algorithms left out of plugins that stay in, their names taken by a plugin that loads
        # first: plugin name -> [(algorithm name, why)].
        self.left_out: dict[str, list[tuple[str, str]]] = {}
        # Components left out of plugins that stay in, their names taken by a plugin that loads
        # first: plugin name -> {component name: (why, [recipes of the plugin left out with it])}.
        self.left_out_components: dict[str, dict[str, tuple[str, list[str]]]] = {}
        self.order: list[str] = []  # load order of the plugins still in
        self.entry_point_names: list[str] = []  # every installed entry point, selected or not
        self.allow_list_problem: str | None = None
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs.DiscoverySpecs)
        if tracing_enabled():
            enable_tracing(self.pm)

    def fail(self, failure: _Failure) -> None:
        if self.strict:
            raise failure.error
        info = self.sources.pop(failure.name, {})
        self.broken[failure.name] = {**info, "error": failure.message}
        if failure.name in self.order:
            self.order.remove(failure.name)
        if self.pm.has_plugin(failure.name):
            self.pm.unregister(name=failure.name)

    def add(self, name: str, plugin: Any, info: dict[str, str], where: str) -> None:
        self.sources[name] = info
        unmarked = hookspecs.unmarked_hooks(plugin)
        if unmarked:
            message = hookspecs.unmarked_hooks_message(where, unmarked)
            self.fail(_Failure(name, message, PluginLoadError(message)))
            return
        try:
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            message = f"{where} declares an invalid hook implementation: {exc}"
            self.fail(_Failure(name, message, _load_error(message, exc)))
            return
        self.order.append(name)

    def load_entry_points(self) -> None:
        allowed = _allowed_names()
        autoload = not _flag("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD")

        def first_party(ep) -> bool:
            return ep.dist is not None and ep.dist.name == FIRST_PARTY_DISTRIBUTION

        def key(ep):
            return (not first_party(ep), ep.name, ep.dist.name if ep.dist is not None else "")

        entry_points = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=key)
        self.entry_point_names = sorted({ep.name for ep in entry_points})
        if allowed is not None:
            known = {*self.entry_point_names, BUILTIN_NAME, *(n for _, n in _extra_plugins)}
            unknown = sorted(allowed - known)
            if unknown:
                self.allow_list_problem = (
                    f"BOOSTKIT_PLUGINS names {', '.join(map(repr, unknown))}, but no installed "
                    f"plugin has {'that name' if len(unknown) == 1 else 'these names'}; installed "
                    f"plugins: {', '.join(self.entry_point_names) or 'none'}. Correct the name, "
                    "or unset BOOSTKIT_PLUGINS to load every installed plugin."
                )
        for ep in entry_points:
            if allowed is not None and ep.name not in allowed:
                continue
            if not autoload and allowed is None:
                continue
            dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
            version = ep.dist.version if ep.dist is not None else "?"
            info = {"distribution": dist, "version": version, "entry_point": ep.value}
            where = f"plugin {ep.name!r} (entry point {ep.name} = {ep.value}, distribution {dist})"
            if ep.name in self.sources or ep.name in self.broken:
                other = self.sources.get(ep.name) or self.broken[ep.name]
                if other.get("entry_point") == ep.value and other.get("distribution") == dist:
                    continue  # the same entry point seen twice (a distribution on sys.path twice)
                message = (
                    f"{where} has the name of plugin {ep.name!r} from distribution "
                    f"{other.get('distribution')}, which loads first"
                )
                if self.strict:
                    raise PluginLoadError(message)
                # Keep the first one; report the second under a name of its own.
                self.broken[f"{ep.name} ({dist})"] = {**info, "error": message}
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # any import-time failure is the plugin's, and must name it
                message = f"{where} failed to import: {type(exc).__name__}: {exc}"
                self.sources[ep.name] = info
                self.fail(_Failure(ep.name, message, _load_error(message, exc)))
                continue
            self.add(ep.name, plugin, info, where)

    def check_pending(self) -> None:
        """Leave out, one by one, every plugin implementing a hook that does not exist."""
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin)
                if name is None or name == BUILTIN_NAME:
                    raise PluginLoadError(f"{exc.plugin!r}: {exc}") from exc
                message = f"{_describe(name, self.sources.get(name, {}))}: {exc}"
                self.fail(_Failure(name, message, _load_error(message, exc)))

    def register_all(self) -> Registry:
        """Run every plugin's discovery hooks into a fresh registry, in load order.

        A plugin whose hooks raise or are refused is left out and the registry is built again
        from scratch without it, so nothing it registered stays, and a plugin that depended on
        it is checked again (and left out in turn if it cannot do without it).
        """
        while True:
            try:
                return self._register_once()
            except _Failure as caught:
                failure = caught  # handled outside the except clause: no chained traceback
            if failure.name == BUILTIN_NAME:
                raise failure.error
            self.fail(failure)

    def _register_once(self) -> Registry:
        registry = Registry()
        self.left_out = {}
        self.left_out_components = {}
        plugins = dict(self.pm.list_name_plugin())
        # Components first, from every plugin, so any plugin's recipe may use any plugin's
        # components.
        for hook_name in ("boostkit_register_components", "boostkit_register_algorithms"):
            caller = getattr(self.pm.hook, hook_name)
            implementers = {impl.plugin_name for impl in caller.get_hookimpls()}
            for name in self.order:
                if name not in implementers:
                    continue
                source = _describe(name, self.sources.get(name, {}))
                registry.source = source
                if not self.strict:
                    # A recipe whose name a plugin loading earlier took is left out alone: the
                    # rest of this plugin works (a first-party recipe added later must not take
                    # a third-party plugin down whole).
                    registry.on_algorithm_clash = functools.partial(self._leave_out, name)
                    # A component likewise, with the plugin's own recipes that name it.
                    registry.on_component_clash = functools.partial(
                        self._leave_out_component, name)
                    registry.on_recipe_left_out = functools.partial(self._leave_out_recipe, name)
                single = self.pm.subset_hook_caller(
                    hook_name, remove_plugins=[p for n, p in plugins.items() if n != name]
                )
                try:
                    single(registry=registry)
                except RegistryError as exc:
                    message = str(exc)
                    if "twice" in message:
                        message += (
                            f"; {source} loads later, so it is the one left out (first-party "
                            "plugins load before the others, each group in entry-point name "
                            "order, in-process plugins last)"
                        )
                    raise _Failure(name, message, exc) from None
                except Exception as exc:
                    message = f"{source} raised in {hook_name}: {type(exc).__name__}: {exc}"
                    raise _Failure(name, message, _load_error(message, exc)) from None
        registry.source = "<in-process>"
        registry.on_algorithm_clash = None
        registry.on_component_clash = registry.on_recipe_left_out = None
        return registry

    def _leave_out(self, plugin: str, algorithm: str, message: str) -> None:
        self.left_out.setdefault(plugin, []).append((algorithm, message))

    def _leave_out_component(self, plugin: str, component: str, message: str) -> None:
        self.left_out_components.setdefault(plugin, {})[component] = (message, [])

    def _leave_out_recipe(self, plugin: str, recipe: str, components: list[str]) -> None:
        for component in components:
            self.left_out_components[plugin][component][1].append(recipe)

    def run(self) -> Registry:
        from . import builtins

        self.sources[BUILTIN_NAME] = {
            "distribution": FIRST_PARTY_DISTRIBUTION, "version": _version(),
            "entry_point": "built-in",
        }
        self.pm.register(builtins, name=BUILTIN_NAME)
        self.order.append(BUILTIN_NAME)
        self.load_entry_points()
        for plugin, name in _extra_plugins:
            if self.pm.has_plugin(name) or name in self.broken:
                continue
            info = {"distribution": "<in-process>", "version": "", "entry_point": ""}
            self.add(name, plugin, info, f"in-process plugin {name!r}")
        self.check_pending()
        registry = self.register_all()
        if self.allow_list_problem is not None and self.strict:
            raise PluginLoadError(self.allow_list_problem)
        return registry

    def warn(self) -> None:
        """One :class:`PluginWarning` per broken plugin, and one for an unknown allow-list name."""
        if self.allow_list_problem is not None:
            warnings.warn(self.allow_list_problem, AllowListWarning, stacklevel=5)
        working = [n for n in self.order if n in self.entry_point_names]
        for name, info in self.broken.items():
            warnings.warn(_advice(name, info, working), PluginWarning, stacklevel=5)
        for name, clashes in self.left_out.items():
            for algorithm, message in clashes:
                warnings.warn(_clash_advice(name, algorithm, message), PluginWarning,
                              stacklevel=5)
        for name, components in self.left_out_components.items():
            for component, (message, recipes) in components.items():
                warnings.warn(_component_clash_advice(name, component, message, recipes),
                              PluginWarning, stacklevel=5)


def _advice(name: str, info: dict[str, str], working: list[str]) -> str:
    dist = info.get("distribution", "<in-process>")
    if dist == "<in-process>":
        fix = f"fix it, or remove it with boostkit.unregister_plugin({name!r})"
    else:
        uninstall = (
            "reinstall boostkit (it is a first-party plugin)" if dist == FIRST_PARTY_DISTRIBUTION
            else f"fix or uninstall it (pip uninstall {dist})"
        )
        allow = f"BOOSTKIT_PLUGINS={','.join(working)}" if working else "BOOSTKIT_PLUGINS"
        fix = f"{uninstall}, or load only the plugins you want with {allow}"
    return (
        f"boostkit left out {_describe(name.split(' (')[0], info)} with everything it "
        f"registers: {info['error']}. Every other plugin works. To fix: {fix}. "
        f"Set {STRICT_ENV_VAR}=1 to make this an error."
    )


def _clash_advice(plugin: str, algorithm: str, message: str) -> str:
    return (
        f"boostkit left out algorithm {algorithm!r} of plugin {plugin!r}: {message}. The "
        f"plugin that loads first keeps the name, so {algorithm!r} is its algorithm; the other "
        f"components and algorithms of plugin {plugin!r} work. To fix: name the plugin's "
        "algorithms (and components) with a prefix "
        f"of its own, such as '{plugin.split(' ')[0]}-{algorithm}'. Set {STRICT_ENV_VAR}=1 to "
        "make this an error."
    )


def _component_clash_advice(plugin: str, component: str, message: str,
                            recipes: list[str]) -> str:
    dropped = (
        f"Left out with it: {', '.join(f'algorithm {r!r}' for r in recipes)} (they name "
        f"{component!r}, which would run the other plugin's class). "
        if recipes else ""
    )
    return (
        f"boostkit left out component {component!r} of plugin {plugin!r}: {message}. The "
        f"plugin that loads first keeps the name, so {component!r} is its component. {dropped}"
        f"The other components and algorithms of plugin {plugin!r} work. To fix: name the "
        "plugin's components (and algorithms) with a prefix of its own, such as "
        f"'{plugin.split(' ')[0]}-{component}'. Set {STRICT_ENV_VAR}=1 to make this an error."
    )


def _left_out_entries(clashes: list[tuple[str, str]],
                      components: dict[str, tuple[str, list[str]]]) -> dict[str, str]:
    """``plugin_info``'s ``left_out``: each left-out algorithm, and each left-out component as
    ``"component NAME"`` (component and algorithm names may coincide), to why."""
    out = dict(clashes)
    for component, (message, recipes) in components.items():
        out[f"component {component}"] = message
        for recipe in recipes:
            out.setdefault(recipe, f"uses component {component!r}, left out: {message}")
    return out


def _build(strict: bool | None = None, warn: bool = True):
    build = _Build(strict_mode() if strict is None else strict)
    registry = build.run()
    if warn:
        build.warn()
    return build, registry


def _version() -> str:
    try:
        return metadata.version("boostkit")
    except metadata.PackageNotFoundError:
        return ""


def _describe_source(plugin_name: str) -> str:
    return _describe(plugin_name, _sources.get(plugin_name, {}))


def _ensure() -> tuple[pluggy.PluginManager, Registry]:
    global _pm, _registry, _allow_list_problem
    with _lock:
        if _registry is None:
            # Warnings are issued before anything is cached, so that under
            # `-W error::boostkit.errors.PluginWarning` every use raises, not only the first.
            build, registry = _build()
            _sources.clear()
            _sources.update(build.sources)
            _broken.clear()
            _broken.update(build.broken)
            _left_out.clear()
            _left_out.update(build.left_out)
            _left_out_components.clear()
            _left_out_components.update(build.left_out_components)
            _allow_list_problem = build.allow_list_problem
            _pm, _registry = build.pm, registry
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


def broken_plugins() -> dict[str, dict[str, str]]:
    """The plugins left out because they are broken: name -> distribution, version, entry point
    and ``error`` (what went wrong). Empty when every plugin loaded."""
    _ensure()
    return {name: dict(info) for name, info in sorted(_broken.items())}


def allow_list_problem() -> str | None:
    """Why ``BOOSTKIT_PLUGINS`` is wrong (it names a plugin that is not installed), or ``None``."""
    _ensure()
    return _allow_list_problem


def no_algorithms_message() -> str:
    """Why no algorithm is registered, and how to register some (for an empty registry)."""
    installed = sorted(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))
    listed = ", ".join(installed) or "none"
    allowed = _allowed_names()
    if _flag("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD") and allowed is None:
        return (
            "no algorithm is registered: plugin autoload is off (BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD="
            f"{os.environ.get('BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD')}) and BOOSTKIT_PLUGINS names no "
            "plugin. Unset BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD, or name the plugins to load in "
            f"BOOSTKIT_PLUGINS (installed: {listed})"
        )
    if not installed:
        return (
            "no algorithm is registered: no plugin is installed in the 'boostkit' entry-point "
            "group; reinstall boostkit (pip install --force-reinstall boostkit)"
        )
    if allowed is not None:
        return (
            f"no algorithm is registered: BOOSTKIT_PLUGINS={os.environ.get('BOOSTKIT_PLUGINS')} "
            f"selects no plugin that registers one (installed: {listed}); see `boostkit plugins`"
        )
    return (
        "no algorithm is registered: every plugin that registers one is broken; see "
        "`boostkit plugins`"
    )


def _entry(name: str, info: dict[str, str]) -> dict[str, Any]:
    return {
        "name": name,
        "distribution": info.get("distribution", "<in-process>"),
        "version": info.get("version", ""),
        "entry_point": info.get("entry_point", ""),
    }


def plugin_info() -> list[dict[str, Any]]:
    """Name, distribution, version, hooks, components and algorithms of every plugin, loaded or
    broken: ``status`` is ``"ok"`` or ``"broken"``, and ``error`` says what went wrong with a
    broken one (which registers nothing). ``left_out`` maps each algorithm of a working plugin
    that was left out, its name taken by a plugin loading first, to why; and likewise each
    left-out component, as ``"component NAME"``, with the plugin's algorithms naming it.

    Always runs: in strict mode, where a broken plugin makes :func:`get_registry` raise, the
    plugins are listed as they are without strict mode (and without warnings).
    """
    try:
        pm, registry = _ensure()
        sources, broken, left_out = dict(_sources), dict(_broken), dict(_left_out)
        left_out_components = dict(_left_out_components)
    except (PluginLoadError, RegistryError, PluginWarning):
        build, registry = _build(strict=False, warn=False)
        pm, sources, broken, left_out = build.pm, build.sources, build.broken, build.left_out
        left_out_components = build.left_out_components
    out = []
    for name, plugin in pm.list_name_plugin():
        source = _describe(name, sources.get(name, {}))
        out.append(
            {
                **_entry(name, sources.get(name, {})),
                "status": "ok",
                "error": "",
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
                "left_out": _left_out_entries(left_out.get(name, []),
                                              left_out_components.get(name, {})),
            }
        )
    for name, info in broken.items():
        out.append({**_entry(name, info), "status": "broken", "error": info["error"],
                    "hooks": [], "components": {}, "algorithms": {}, "left_out": {}})
    return sorted(out, key=lambda entry: entry["name"])
