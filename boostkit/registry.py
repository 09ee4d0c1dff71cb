"""Named components and algorithms (recipes).

The registry is the host's name -> class table, filled by the discovery hooks of every plugin. It
refuses a duplicate or invalid name and names the distribution that brought each side of a clash.
A :class:`Recipe` is plain data (component names per role and their parameters, plus the paper it
comes from), so estimators store names and parameters, never composed classes, and stay
picklable, clonable and grid-searchable.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Iterator, Mapping

import attrs

from .capabilities import Capability, check_capabilities, check_shared_params
from .components import ROUND_ROLES, VALUE_ROLES, Component
from .errors import RecipeError, RegistryError
from .hookspecs import unmarked_hooks, unmarked_hooks_message

__all__ = ["ComponentSpec", "Recipe", "Registry", "NAME_PATTERN", "compose", "parse_recipe"]

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def _frozen_params(params: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise RecipeError(f"component parameters must be a mapping, got {type(params).__name__}")
    return dict(params)


@attrs.frozen
class ComponentSpec:
    """A component name with the parameters to instantiate it with."""

    name: str
    params: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_params, hash=False)

    @classmethod
    def of(cls, value: ComponentSpec | str | tuple) -> ComponentSpec:
        """Accept ``"name"``, ``("name", {params})`` or a :class:`ComponentSpec`."""
        if isinstance(value, ComponentSpec):
            return value
        if isinstance(value, str):
            return cls(value)
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
            return cls(value[0], value[1])
        raise RecipeError(
            "a component must be given as 'name', ('name', {params}) or ComponentSpec, "
            f"got {value!r}"
        )

    def with_params(self, params: Mapping[str, Any]) -> ComponentSpec:
        return ComponentSpec(self.name, {**self.params, **params})

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params)}

    def to_string(self) -> str:
        """``name`` or ``name(key=value, ...)``, as recipe strings write it."""
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.params.items())})"


def _spec(value) -> ComponentSpec:
    return ComponentSpec.of(value)


def _specs(values) -> tuple[ComponentSpec, ...]:
    if isinstance(values, (str, ComponentSpec)):
        values = (values,)
    return tuple(ComponentSpec.of(v) for v in values)


# Single slots are keyed by role; list slots by component name (so "no-edge" -> "no_edge").
_SINGLE_SLOTS = ("proposal", "calibration", "reweighting")
_LIST_SLOTS = {
    "proposal_wrappers": "proposal-wrapper",
    "calibration_wrappers": "calibration-wrapper",
    "stopping": "stopping",
    "observers": "observer",
}


@attrs.frozen
class Recipe:
    """An algorithm as data: which component plays which role, with which parameters.

    Single roles take one component each (``proposal``, ``calibration``, ``reweighting``). Wrappers
    are applied in the order given, the first one outermost. Every stopping rule is consulted
    after each round, and the engine also stops after ``n_rounds``.

    Example::

        Recipe(name="real-adaboost", proposal="stump", calibration="domain-partition",
               reweighting="exponential", stopping=("no-edge",),
               paper="Schapire & Singer (1999), as Wilbur et al. 2005, eq. 10-12")
    """

    name: str
    proposal: ComponentSpec = attrs.field(converter=_spec)
    calibration: ComponentSpec = attrs.field(converter=_spec)
    reweighting: ComponentSpec = attrs.field(converter=_spec)
    stopping: tuple[ComponentSpec, ...] = attrs.field(default=(), converter=_specs)
    proposal_wrappers: tuple[ComponentSpec, ...] = attrs.field(default=(), converter=_specs)
    calibration_wrappers: tuple[ComponentSpec, ...] = attrs.field(default=(), converter=_specs)
    observers: tuple[ComponentSpec, ...] = attrs.field(default=(), converter=_specs)
    paper: str = ""
    description: str = ""

    def slots(self) -> Iterator[tuple[str, str, ComponentSpec]]:
        """Yield ``(key, role, spec)`` for every component; ``key`` addresses its parameters.

        The key is the role for single slots and the component name with ``-`` replaced by
        ``_`` for wrappers, stopping rules and observers (``"no_edge"``).
        """
        for role in _SINGLE_SLOTS:
            yield role, role, getattr(self, role)
        for attr, role in _LIST_SLOTS.items():
            for spec in getattr(self, attr):
                yield spec.name.replace("-", "_"), role, spec

    def with_params(self, overrides: Mapping[str, Mapping[str, Any]]) -> Recipe:
        """A copy whose components get extra parameters, keyed as in :meth:`slots`."""
        keys = {key for key, _, _ in self.slots()}
        unknown = set(overrides) - keys
        if unknown:
            raise RecipeError(
                f"recipe {self.name!r} has no component slot {sorted(unknown)}; "
                f"expected one of {sorted(keys)}"
            )
        changes: dict[str, Any] = {}
        for role in _SINGLE_SLOTS:
            if role in overrides:
                changes[role] = getattr(self, role).with_params(overrides[role])
        for attr in _LIST_SLOTS:
            specs = getattr(self, attr)
            key_of = [s.name.replace("-", "_") for s in specs]
            if any(k in overrides for k in key_of):
                changes[attr] = tuple(
                    s.with_params(overrides[k]) if k in overrides else s
                    for s, k in zip(specs, key_of)
                )
        return attrs.evolve(self, **changes)

    def to_string(self) -> str:
        """The recipe as a recipe string (:func:`parse_recipe` reads it back)::

            proposal=stump+picky(gamma_bar=0.1) calibration=pav reweighting=exponential stopping=no-edge

        A chain lists the proposal (or calibration) first, then its wrappers from the innermost
        out; ``stopping`` and ``observers`` list their components joined by ``+``.
        """
        def chain(base: ComponentSpec, wrappers: tuple[ComponentSpec, ...]) -> str:
            return "+".join(s.to_string() for s in (base, *reversed(wrappers)))

        items = [
            f"proposal={chain(self.proposal, self.proposal_wrappers)}",
            f"calibration={chain(self.calibration, self.calibration_wrappers)}",
            f"reweighting={self.reweighting.to_string()}",
        ]
        for attr in ("stopping", "observers"):
            if getattr(self, attr):
                items.append(f"{attr}={'+'.join(s.to_string() for s in getattr(self, attr))}")
        return " ".join(items)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        for role in _SINGLE_SLOTS:
            out[role] = getattr(self, role).to_json()
        for attr in _LIST_SLOTS:
            out[attr] = [s.to_json() for s in getattr(self, attr)]
        out["paper"] = self.paper
        out["description"] = self.description
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Recipe:
        def spec(d):
            return ComponentSpec(d["name"], d.get("params", {}))

        kwargs: dict[str, Any] = {role: spec(data[role]) for role in _SINGLE_SLOTS}
        for attr in _LIST_SLOTS:
            kwargs[attr] = tuple(spec(d) for d in data.get(attr, ()))
        return cls(
            name=data["name"],
            paper=data.get("paper", ""),
            description=data.get("description", ""),
            **kwargs,
        )


def _chain(value, slot: str) -> list[ComponentSpec]:
    """``value`` as a list [component, wrapper, ...], wrappers from the innermost out."""
    if isinstance(value, list) or (isinstance(value, tuple) and not (
            len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], Mapping))):
        specs = [ComponentSpec.of(v) for v in value]
    else:
        specs = [ComponentSpec.of(value)]
    if not specs:
        raise RecipeError(f"{slot} must name at least one component, got an empty list")
    return specs


def compose(base: Recipe | None = None, *, name: str | None = None, proposal=None,
            calibration=None, reweighting=None, stopping=None, observers=None) -> Recipe:
    """A recipe from components given by role, optionally replacing roles of ``base``.

    ``proposal`` and ``calibration`` take one component or a list whose first item is the
    proposal (calibration) and whose further items are wrappers, each wrapping what comes before
    it: ``calibration=["pav", ("input-dependent", {"beta": 0.5})]`` is PAV calibration inside
    WeightBoost's regularizer. ``stopping`` and ``observers`` take a list that replaces the
    base's. A component is ``"name"``, ``("name", {params})`` or a :class:`ComponentSpec`.
    Without ``base``, proposal, calibration and reweighting are required.

    The name defaults to the base's when nothing is replaced, else to the recipe string
    (:meth:`Recipe.to_string`), so a modified recipe never passes for the paper's.
    """
    changes: dict[str, Any] = {}
    for slot, wrappers, value in (("proposal", "proposal_wrappers", proposal),
                                  ("calibration", "calibration_wrappers", calibration)):
        if value is not None:
            chain = _chain(value, slot)
            changes[slot] = chain[0]
            changes[wrappers] = tuple(reversed(chain[1:]))
    if reweighting is not None:
        changes["reweighting"] = ComponentSpec.of(reweighting)
    for slot, value in (("stopping", stopping), ("observers", observers)):
        if value is not None:
            changes[slot] = _specs(value)
    if base is None:
        missing = [r for r in _SINGLE_SLOTS if r not in changes]
        if missing:
            raise RecipeError(
                f"a recipe needs a {' and a '.join(missing)}: give them, or start from a "
                "registered algorithm"
            )
        recipe = Recipe(name="custom", **changes)
    elif not changes:
        return base if name is None else attrs.evolve(base, name=name)
    else:
        recipe = attrs.evolve(base, paper="", description=f"{base.name} with components replaced",
                              **changes)
    return attrs.evolve(recipe, name=name if name is not None else recipe.to_string())


def _split_top(text: str, separators: str, what: str) -> list[str]:
    """Split ``text`` at ``separators`` outside parentheses; refuse unbalanced parentheses."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise RecipeError(f"unbalanced ')' in {what} {text!r}")
        if depth == 0 and char in separators:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise RecipeError(f"unbalanced '(' in {what} {text!r}")
    parts.append("".join(current))
    return parts


_SPEC_TEXT = re.compile(r"^\s*([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\s*(?:\((.*)\))?\s*$", re.S)


def _literal(text: str):
    # Numbers, booleans, None, quoted strings and tuples as Python writes them; a bare word
    # (metric=roc_auc) is a string.
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _parse_spec(text: str) -> ComponentSpec:
    match = _SPEC_TEXT.match(text)
    if match is None:
        raise RecipeError(
            f"cannot read component {text!r}: expected name or name(key=value, ...), names "
            "being lower-case words joined by '-'"
        )
    name, inner = match.groups()
    params: dict[str, Any] = {}
    if inner is not None and inner.strip():
        for item in _split_top(inner, ",", f"the parameters of {name!r}"):
            key, sep, value = item.partition("=")
            key = key.strip()
            if not sep or not key.isidentifier():
                raise RecipeError(
                    f"cannot read parameter {item.strip()!r} of {name!r}: expected key=value"
                )
            params[key] = _literal(value.strip())
    return ComponentSpec(name, params)


def parse_recipe(text: str, algorithm=None) -> Recipe:
    """Read a recipe string: an optional registered algorithm to start from, then ``slot=...``.

    ::

        proposal=stump+picky(gamma_bar=0.1) calibration=asymmetric-beta reweighting=stratification
        weightboost calibration=pav+input-dependent(beta=0.5) name=pav-weightboost
        adaboost stopping+=validation(patience=10)

    Slots are ``proposal`` and ``calibration`` (the component, then ``+`` and its wrappers from
    the innermost out), ``reweighting``, ``stopping`` and ``observers`` (components joined by
    ``+`` or ``,``; ``stopping=`` alone removes every stopping rule; ``+=`` adds to the base's), and
    ``name``. Parameter values are Python literals, or plain words read as strings.
    ``algorithm`` looks up the starting algorithm by name (``Registry.algorithm``).
    """
    if not isinstance(text, str) or not text.strip():
        raise RecipeError(f"a recipe string must be a non-empty string, got {text!r}")
    items = [item for item in _split_top(text.strip(), " \t\n", "recipe") if item]
    base = None
    if "=" not in items[0].split("(")[0]:
        if algorithm is None:
            raise RecipeError(f"recipe {text!r} starts from {items[0]!r}, but no registry was given")
        base = algorithm(items[0].strip())
        items = items[1:]
    slots: dict[str, Any] = {}
    name = None
    for item in items:
        key, sep, value = item.partition("=")
        append = key.endswith("+")
        key = key.rstrip("+").strip()
        if not sep or key not in ("proposal", "calibration", "reweighting", "stopping",
                                  "observers", "name"):
            raise RecipeError(
                f"cannot read {item!r} in recipe {text!r}: expected slot=components, the slot "
                "being proposal, calibration, reweighting, stopping, observers or name"
            )
        if key in slots or (key == "name" and name is not None):
            raise RecipeError(f"slot {key!r} given twice in recipe {text!r}")
        if key == "name":
            name = value
            continue
        # Rules and observers are a set of components, so a comma reads as naturally as '+'.
        separators = "+," if key in ("stopping", "observers") else "+"
        specs = [_parse_spec(s) for s in _split_top(value, separators, key)] if value else []
        if append:
            if key not in ("stopping", "observers"):
                raise RecipeError(f"'+=' adds stopping rules or observers, not to {key!r}")
            specs = [*(getattr(base, key) if base is not None else ()), *specs]
        elif key == "reweighting":
            if len(specs) != 1:
                raise RecipeError(f"reweighting takes one component, got {value!r}")
            specs = specs[0]
        elif key in ("proposal", "calibration") and not specs:
            raise RecipeError(f"{key} needs a component in recipe {text!r}")
        slots[key] = specs
    return compose(base, name=name, **slots)


class Registry:
    """Name -> component class and name -> recipe tables, with where each came from."""

    def __init__(self) -> None:
        self._components: dict[str, tuple[type[Component], str]] = {}
        self._algorithms: dict[str, tuple[Recipe, str]] = {}
        self._capabilities: dict[str, tuple[Capability, str]] = {}
        self.source = "<in-process>"  # set by the plugin manager around each plugin's hook
        #: ``fn(name, message)`` called for an algorithm name another source registered first,
        #: which is then left out; ``None`` (the default) refuses it with a RegistryError.
        self.on_algorithm_clash: Callable[[str, str], None] | None = None
        #: ``fn(name, message)`` called for a component name another source registered first,
        #: which is then left out, and with it every later recipe of the same source naming it
        #: (in any role), each told to ``on_recipe_left_out(recipe_name, component_names)``;
        #: ``None`` (the default) refuses the component with a RegistryError.
        self.on_component_clash: Callable[[str, str], None] | None = None
        self.on_recipe_left_out: Callable[[str, list[str]], None] | None = None
        self._left_out_components: dict[str, set[str]] = {}  # source -> component names

    # -- registration -------------------------------------------------------------------------
    def add_component(self, cls: type[Component]) -> None:
        """Register a component class under its ``name``; refuse duplicates and bad names."""
        if not (isinstance(cls, type) and issubclass(cls, Component)):
            raise RegistryError(
                f"{self.source}: add_component expects a subclass of boostkit.Component, "
                f"got {cls!r}"
            )
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise RegistryError(
                f"{self.source}: component {cls.__qualname__} has invalid name {name!r}; "
                "expected lower-case words joined by '-', like 'stump' or 'constant-alpha'"
            )
        role = getattr(cls, "role", None)
        if role not in ROUND_ROLES + VALUE_ROLES:
            raise RegistryError(
                f"{self.source}: component {name!r} has no role; subclass one of the role bases "
                "in boostkit.components (Proposal, Calibration, Reweighting, ...)"
            )
        if not attrs.has(cls):
            raise RegistryError(
                f"{self.source}: component {name!r} must be an attrs class (@attrs.define or "
                "@attrs.frozen) so its parameters can be listed, validated and saved"
            )
        unmarked = unmarked_hooks(cls)
        if unmarked:
            raise RegistryError(unmarked_hooks_message(
                f"{self.source}: component {name!r} ({cls.__module__}.{cls.__qualname__})",
                unmarked))
        if name in self._components:
            other, source = self._components[name]
            if other is cls:
                return
            message = (
                f"component name {name!r} registered twice: by {source} "
                f"({other.__module__}.{other.__qualname__}) and by {self.source} "
                f"({cls.__module__}.{cls.__qualname__})"
            )
            if self.on_component_clash is None or source == self.source:
                raise RegistryError(message)
            # Another plugin took the name first: this component is left out, and so are this
            # source's recipes naming it (they would run the other plugin's class).
            self._left_out_components.setdefault(self.source, set()).add(name)
            self.on_component_clash(name, message)
            return
        self._components[name] = (cls, self.source)

    def add_capability(self, capability: Capability) -> None:
        """Define a capability name that components may declare in ``needs``/``provides``."""
        if not isinstance(capability, Capability):
            raise RegistryError(
                f"{self.source}: add_capability expects a boostkit.Capability, got {capability!r}"
            )
        if not NAME_PATTERN.match(capability.name):
            raise RegistryError(f"{self.source}: capability name {capability.name!r} is invalid")
        if capability.name in self._capabilities:
            other, source = self._capabilities[capability.name]
            if other == capability:
                return
            raise RegistryError(
                f"capability {capability.name!r} defined twice: by {source} and by {self.source}"
            )
        self._capabilities[capability.name] = (capability, self.source)

    def capabilities(self) -> dict[str, Capability]:
        return {n: c for n, (c, _) in sorted(self._capabilities.items())}

    def add_algorithm(self, recipe: Recipe) -> None:
        """Register a named recipe after checking its components exist, fit their roles and
        provide each other what they need.

        A name already taken is refused with a :class:`~boostkit.errors.RegistryError` naming
        both sources, unless ``on_algorithm_clash`` is set and another source took it: the
        recipe is then left out and ``on_algorithm_clash(name, message)`` told (plugin
        discovery warns, and keeps the rest of the plugin). A recipe naming a component of its
        own source that was left out (see ``on_component_clash``) is left out too, and
        ``on_recipe_left_out(name, component_names)`` told."""
        if not isinstance(recipe, Recipe):
            raise RegistryError(
                f"{self.source}: add_algorithm expects a boostkit.Recipe, got {recipe!r}"
            )
        if not NAME_PATTERN.match(recipe.name):
            raise RegistryError(f"{self.source}: algorithm name {recipe.name!r} is invalid")
        if recipe.name in self._algorithms:
            first = self._algorithms[recipe.name][1]
            message = (f"algorithm name {recipe.name!r} registered twice: by {first} and by "
                       f"{self.source}")
            if self.on_algorithm_clash is None or first == self.source:
                raise RegistryError(message)
            # Another plugin took the name first: this recipe alone is left out.
            self.on_algorithm_clash(recipe.name, message)
            return
        left_out = self._left_out_components.get(self.source, set())
        lost = sorted({spec.name for _, _, spec in recipe.slots()} & left_out)
        if lost:
            if self.on_recipe_left_out is None:
                raise RegistryError(
                    f"{self.source}: recipe {recipe.name!r} uses component(s) {lost}, left out "
                    "of this plugin because another plugin took the name first"
                )
            self.on_recipe_left_out(recipe.name, lost)
            return
        self.instantiate(recipe)
        self._algorithms[recipe.name] = (recipe, self.source)

    # -- lookup -------------------------------------------------------------------------------
    def component(self, name: str, role: str | None = None) -> type[Component]:
        """The class registered as ``name``; with ``role``, also check it plays that role."""
        try:
            cls, _ = self._components[name]
        except KeyError:
            known = sorted(n for n, (c, _) in self._components.items() if role in (None, c.role))
            raise RecipeError(
                f"unknown {role or 'component'} {name!r}; registered: {', '.join(known) or 'none'}"
            ) from None
        if role is not None and cls.role != role:
            raise RecipeError(f"component {name!r} is a {cls.role}, not a {role}")
        return cls

    def components(self, role: str | None = None) -> dict[str, type[Component]]:
        return {n: c for n, (c, _) in sorted(self._components.items()) if role in (None, c.role)}

    def algorithm(self, name: str) -> Recipe:
        try:
            return self._algorithms[name][0]
        except KeyError:
            if not self._algorithms:  # nothing to choose from: say why, and how to load some
                from .plugins import no_algorithms_message

                raise RecipeError(
                    f"unknown algorithm {name!r}: {no_algorithms_message()}") from None
            raise RecipeError(
                f"unknown algorithm {name!r}; registered: {', '.join(sorted(self._algorithms))}"
            ) from None

    def resolve(self, algorithm: str | Recipe) -> Recipe:
        """A :class:`Recipe` from a registered name, a recipe string or a recipe."""
        if isinstance(algorithm, Recipe):
            return algorithm
        if isinstance(algorithm, str):
            if "=" in algorithm or not NAME_PATTERN.match(algorithm.strip()):
                return parse_recipe(algorithm, self.algorithm)
            return self.algorithm(algorithm)
        raise RecipeError(
            "algorithm must be a registered name, a recipe string or a boostkit.Recipe, "
            f"got {algorithm!r}"
        )

    def algorithms(self) -> dict[str, Recipe]:
        return {n: r for n, (r, _) in sorted(self._algorithms.items())}

    def source_of(self, name: str) -> str:
        """Which plugin registered the component or algorithm ``name``."""
        if name in self._components:
            return self._components[name][1]
        if name in self._algorithms:
            return self._algorithms[name][1]
        raise KeyError(name)

    # -- recipes ------------------------------------------------------------------------------
    def check_recipe(self, recipe: Recipe) -> None:
        """Refuse a recipe whose components are unknown or in the wrong role."""
        for key, role, spec in recipe.slots():
            try:
                self.component(spec.name, role)
            except RecipeError as exc:
                raise RecipeError(f"recipe {recipe.name!r}, slot {key!r}: {exc}") from None

    def instantiate(self, recipe: Recipe) -> list[tuple[str, Component]]:
        """Build the component instances of a recipe, validating their parameters and checking
        that each gets the capabilities it needs (:func:`boostkit.capabilities.check_capabilities`).
        """
        self.check_recipe(recipe)
        built = []
        for key, role, spec in recipe.slots():
            cls = self.component(spec.name, role)
            fields = {a.name for a in attrs.fields(cls) if a.init}
            unknown = set(spec.params) - fields
            if unknown:
                raise RecipeError(
                    f"recipe {recipe.name!r}: component {spec.name!r} has no parameter "
                    f"{sorted(unknown)}; its parameters are {sorted(fields) or 'none'}"
                )
            try:
                built.append((role, cls(**spec.params)))
            except (TypeError, ValueError) as exc:
                raise RecipeError(
                    f"recipe {recipe.name!r}: bad parameters for {spec.name!r}: {exc}"
                ) from exc
        check_capabilities(recipe.name, built, self.capabilities())
        check_shared_params(recipe.name, built)
        return built
