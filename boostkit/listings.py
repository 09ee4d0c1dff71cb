"""What ``boostkit plugins``, ``boostkit recipes`` and ``boostkit components`` print: the
installed plugins, the named recipes and the components, as text or JSON."""

from __future__ import annotations

import json
import sys

from . import plugins
from .capabilities import capabilities_of
from .plugins import get_registry, no_algorithms_message, plugin_info

__all__ = ["capability_text", "print_components", "print_plugins", "print_recipes"]


def print_plugins(as_json: bool) -> int:
    """List every plugin, broken ones with their error; runs whatever state the plugins are in.

    Exit status 0, or 1 in strict mode (``BOOSTKIT_STRICT_PLUGINS``) when a plugin is broken.
    """
    info = plugin_info()
    broken = [plugin for plugin in info if plugin.get("status") == "broken"]
    status = 1 if broken and plugins.strict_mode() else 0
    problem = plugins.allow_list_problem() if not plugins.strict_mode() else None
    if problem is not None:
        print(f"boostkit plugins: warning: {problem}", file=sys.stderr)
    if as_json:
        print(json.dumps(info, indent=2))
        return status
    for plugin in info:
        entry_point = plugin["entry_point"]
        if entry_point in ("", "built-in"):
            where = entry_point or "registered in-process"
        else:
            where = f"entry point {plugin['name'].split(' (')[0]} = {entry_point}"
        print(f"{plugin['name']} {plugin['version']}".rstrip()
              + f"  (distribution {plugin['distribution']}, {where})")
        if plugin.get("status") == "broken":
            print(f"  BROKEN, left out: {plugin['error']}")
            continue
        print(f"  hooks: {', '.join(plugin['hooks']) or 'none'}")
        for title in ("components", "algorithms"):
            table = plugin[title]
            if table:
                print(f"  {title}:")
                width = max(len(name) for name in table)
                for name, detail in table.items():
                    print(f"    {name.ljust(width)}  {detail}".rstrip())
        for name, why in plugin.get("left_out", {}).items():
            # plugin_info() keys a left-out component "component NAME", an algorithm by its name.
            label = name if name.startswith("component ") else f"algorithm {name}"
            print(f"  {label} LEFT OUT: {why}")
    if broken:
        names = ", ".join(plugin["name"] for plugin in broken)
        print(f"\n{len(broken)} broken plugin(s) left out: {names}. Fix or uninstall them, or "
              "choose the plugins to load with BOOSTKIT_PLUGINS=name,name,...")
    return status


def capability_text(cls) -> tuple[str, str]:
    """``(needs, provides)`` of a component class with its default parameters, as text."""
    try:
        needs, provides, _ = capabilities_of(cls())
    except (TypeError, ValueError):  # a component without defaults for every parameter
        needs, provides = getattr(cls, "needs", ()), getattr(cls, "provides", ())
        if not isinstance(needs, frozenset) or not isinstance(provides, frozenset):
            return "depends on parameters", "depends on parameters"
    return ", ".join(sorted(needs)) or "-", ", ".join(sorted(provides)) or "-"


def print_recipes(as_json: bool) -> int:
    """The named recipes: name and paper, then the recipe string; or JSON."""
    registry = get_registry()
    rows = [
        {"name": name, "recipe": recipe.to_string(), "paper": recipe.paper,
         "plugin": registry.source_of(name), **recipe.to_json()}
        for name, recipe in registry.algorithms().items()
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"boostkit recipes: {no_algorithms_message()}", file=sys.stderr)
        return 0
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        print(f"{row['name'].ljust(width)}  {row['paper']}".rstrip())
        print(f"{''.ljust(width)}  {row['recipe']}")
    return 0


def print_components(role: str | None, as_json: bool) -> int:
    """The components (of ``role``, if given): role, needs and provides; or JSON. A role no
    component has is a ValueError."""
    registry = get_registry()
    components = registry.components(role)
    if role is not None and not components:
        raise ValueError(f"no component has role {role!r}")
    rows = []
    for name, cls in components.items():
        needs, provides = capability_text(cls)
        rows.append({"name": name, "role": cls.role, "needs": needs, "provides": provides,
                     "plugin": registry.source_of(name)})
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    headers = ("name", "role", "needs", "provides")
    widths = [max(len(h), *(len(row[h]) for row in rows)) for h in headers]
    for line in (dict(zip(headers, headers)), *rows):
        print("  ".join(str(line[h]).ljust(w) for h, w in zip(headers, widths)).rstrip())
    return 0
