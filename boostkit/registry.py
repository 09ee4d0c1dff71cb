"""Named components and algorithms (recipes).

The registry is the host's name -> class table, filled by the discovery hooks of every plugin. It
refuses a duplicate or invalid name and names the distribution that brought each side of a clash.
A :class:`Recipe` is plain data (component names per role and their parameters, plus the paper it
comes from), so estimators store names and parameters, never composed classes, and stay
picklable, clonable and grid-searchable.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

import attrs

from .components import ROUND_ROLES, VALUE_ROLES, Component
from .errors import RecipeError, RegistryError

__all__ = ["ComponentSpec", "Recipe", "Registry", "NAME_PATTERN"]

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
               paper="Schapire & Singer (1999), as 000 eq. 10-12")
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


class Registry:
    """Name -> component class and name -> recipe tables, with where each came from."""

    def __init__(self) -> None:
        self._components: dict[str, tuple[type[Component], str]] = {}
        self._algorithms: dict[str, tuple[Recipe, str]] = {}
        self.source = "<in-process>"  # set by the plugin manager around each plugin's hook

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
        if name in self._components:
            other, source = self._components[name]
            if other is cls:
                return
            raise RegistryError(
                f"component name {name!r} registered twice: by {source} "
                f"({other.__module__}.{other.__qualname__}) and by {self.source} "
                f"({cls.__module__}.{cls.__qualname__})"
            )
        self._components[name] = (cls, self.source)

    def add_algorithm(self, recipe: Recipe) -> None:
        """Register a named recipe after checking its components exist and fit their roles."""
        if not isinstance(recipe, Recipe):
            raise RegistryError(
                f"{self.source}: add_algorithm expects a boostkit.Recipe, got {recipe!r}"
            )
        if not NAME_PATTERN.match(recipe.name):
            raise RegistryError(f"{self.source}: algorithm name {recipe.name!r} is invalid")
        if recipe.name in self._algorithms:
            raise RegistryError(
                f"algorithm name {recipe.name!r} registered twice: by "
                f"{self._algorithms[recipe.name][1]} and by {self.source}"
            )
        self.check_recipe(recipe)
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
            raise RecipeError(
                f"unknown algorithm {name!r}; registered: {', '.join(sorted(self._algorithms))}"
            ) from None

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
        """Build the component instances of a recipe (validating their parameters)."""
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
        return built
