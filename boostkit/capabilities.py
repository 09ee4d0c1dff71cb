"""Capabilities: what components need from each other, and the check that refuses a clash.

A component declares, as sets of capability names,

* ``needs``: what must be true of the rest of the recipe (or of the data) for it to work, e.g. a
  constant-alpha calibration needs hypotheses with values in {-1, +1};
* ``provides``: what it guarantees, e.g. a stump learner's hypotheses give {-1, +1} scores and a
  partition into two cells;
* ``withdraws`` (wrappers only): what the component it wraps provides but the wrapped result no
  longer does, e.g. a regularizer that scales each term by a factor in (0, 1] takes away "unit
  coefficients".

Components may also name ``shared_params``: parameters that must agree across the recipe (a
regularizer's beta and the reweighting derived for it), checked by :func:`check_shared_params`.

They are class attributes, or properties when they depend on the component's parameters (a PAV
calibration that back-fits earlier terms no longer provides the running margin). The check runs
on the instantiated recipe before any data is touched, and on the data (sparse input, missing
values), and names the two components that clash and why. Every combination it accepts
is fitted in the test suite, so a capability is never decoration: declare what your component
really relies on.

The engine defines the vocabulary every plugin shares (:data:`ENGINE_CAPABILITIES`); a plugin adds
its own with ``registry.add_capability(Capability(...))`` in ``boostkit_register_components``.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import attrs

from .errors import RecipeError

__all__ = [
    "Capability",
    "ENGINE_CAPABILITIES",
    "REAL_SCORES",
    "SIGN_SCORES",
    "CELLS",
    "TWO_CELLS",
    "RUNNING_MARGIN",
    "UNIT_COEFFICIENTS",
    "POTENTIAL",
    "SPARSE_INPUT",
    "MISSING_VALUES",
    "MULTICLASS",
    "PAIRWISE_LOSS",
    "binary_only_components",
    "check_capabilities",
    "check_shared_params",
    "check_sparse_input",
    "handles_missing_values",
    "capabilities_of",
]

REAL_SCORES = "real-scores"
SIGN_SCORES = "sign-scores"
CELLS = "cells"
TWO_CELLS = "two-cells"
RUNNING_MARGIN = "running-margin"
UNIT_COEFFICIENTS = "unit-coefficients"
POTENTIAL = "potential"
SPARSE_INPUT = "sparse-input"
MISSING_VALUES = "missing-values"
MULTICLASS = "multiclass"
PAIRWISE_LOSS = "pairwise-loss"

_ROLES = ("proposal", "proposal-wrapper", "calibration", "calibration-wrapper", "reweighting",
          "stopping", "observer")


def _provider_role(instance, attribute, value):
    if value not in _ROLES:
        raise ValueError(f"provider must be one of {', '.join(_ROLES)}, got {value!r}")


@attrs.frozen
class Capability:
    """A named promise one component makes and another relies on.

    ``meaning`` completes the sentence "X needs ..." in error messages; ``provider`` is the role
    that normally provides it, whose component is named when it is missing.
    """

    name: str
    meaning: str
    provider: str = attrs.field(validator=_provider_role)


ENGINE_CAPABILITIES = (
    Capability(REAL_SCORES, "real scores h(x) for every example", "proposal"),
    Capability(SIGN_SCORES, "hypotheses with values in {-1, +1}", "proposal"),
    Capability(CELLS, "hypotheses that partition the input into cells", "proposal"),
    Capability(TWO_CELLS, "boolean hypotheses: a partition into exactly two cells", "proposal"),
    Capability(
        RUNNING_MARGIN,
        "the running margin F_{t-1}(x) of terms added in order, never re-fitted, so that the "
        "model's margin at prediction is the one seen in training",
        "calibration",
    ),
    Capability(
        UNIT_COEFFICIENTS,
        "every term the hypothesis' own output h_t(x) with coefficient 1 (over +-1 hypotheses, "
        "a margin then counts agreeing votes)",
        "calibration",
    ),
    Capability(
        POTENTIAL, "a potential (Weights.log_potential) that gives Z_t and the bound prod Z_t",
        "reweighting",
    ),
    Capability(SPARSE_INPUT, "handles sparse (CSR) input without densifying it", "proposal"),
    Capability(MISSING_VALUES, "handles missing values (NaN) in X", "proposal"),
    Capability(
        MULTICLASS,
        "handles C > 1 margin columns: labels as an (n, C) sign matrix, weights over (example, "
        "class) pairs, margins of shape (n, C)",
        "proposal",
    ),
    Capability(
        PAIRWISE_LOSS,
        "a loss over pairs of examples (which one scores higher), blind to the offset of F: the "
        "sign of F then carries no class decision (a ranker)",
        "reweighting",
    ),
)

# The roles that see labels, weights or margins, and so must handle C > 1 margin columns for a
# recipe to run natively on three or more classes or multi-label data.
_MULTICLASS_ROLES = ("proposal", "proposal-wrapper", "calibration", "calibration-wrapper",
                     "reweighting", "stopping")


def capabilities_of(component) -> tuple[frozenset, frozenset, frozenset]:
    """``(needs, provides, withdraws)`` of a component instance, as frozensets."""
    return (
        frozenset(getattr(component, "needs", ())),
        frozenset(getattr(component, "provides", ())),
        frozenset(getattr(component, "withdraws", ())),
    )


def _label(role: str, component) -> str:
    return f"{role} {component.name!r}"


def _describe(names: Iterable[str]) -> str:
    names = sorted(names)
    return ", ".join(names) if names else "nothing"


def check_capabilities(recipe_name: str, components: Sequence[tuple[str, object]],
                       known: dict) -> None:
    """Refuse a recipe in which some component needs what the others do not provide.

    ``components`` are the ``(role, instance)`` pairs of an instantiated recipe, wrappers in
    recipe order; ``known`` maps capability names to :class:`Capability`. A wrapper's
    ``provides`` adds to what the component it wraps provides and its ``withdraws`` takes away,
    so the effective capabilities of a role are those of the whole chain.
    """
    declared = {}
    for role, component in components:
        declared[id(component)] = capabilities_of(component)
        for name in set().union(*declared[id(component)]):
            if name not in known:
                raise RecipeError(
                    f"recipe {recipe_name!r}: {_label(role, component)} declares the unknown "
                    f"capability {name!r}; known capabilities: {_describe(known)}"
                )
    provided: dict[str, tuple[str, object]] = {}  # capability -> the (role, component) giving it
    withdrawn: dict[str, tuple[str, object]] = {}
    for base_role, wrapper_role in (("proposal", "proposal-wrapper"),
                                    ("calibration", "calibration-wrapper")):
        chain = [(r, c) for r, c in components if r == base_role]
        # The first wrapper of the recipe is outermost: apply from the innermost out.
        chain += [(r, c) for r, c in reversed(components) if r == wrapper_role]
        for role, component in chain:
            _, provides, withdraws = declared[id(component)]
            for name in withdraws:
                if name in provided:
                    withdrawn[name] = (role, component)
                    del provided[name]
            for name in provides:
                provided[name] = (role, component)
                withdrawn.pop(name, None)
    for role, component in components:
        if role not in ("proposal", "proposal-wrapper", "calibration", "calibration-wrapper"):
            for name in declared[id(component)][1]:
                provided.setdefault(name, (role, component))
    for role, component in components:
        for name in sorted(declared[id(component)][0]):
            if name in provided:
                continue
            capability = known[name]
            reason = f"{_label(role, component)} needs {capability.meaning} ({name!r}), "
            if name in withdrawn:
                w_role, w_component = withdrawn[name]
                reason += f"and {_label(w_role, w_component)} takes it away"
            else:
                others = [(r, c) for r, c in components if r == capability.provider]
                if others:
                    o_role, other = others[0]
                    reason += (
                        f"which {_label(o_role, other)} does not provide (it provides: "
                        f"{_describe(declared[id(other)][1])})"
                    )
                else:
                    reason += f"and the recipe has no {capability.provider} that provides it"
            raise RecipeError(f"recipe {recipe_name!r} cannot work: {reason}")


def check_shared_params(recipe_name: str, components: Sequence[tuple[str, object]]) -> None:
    """Refuse a recipe in which two components that share a parameter (``shared_params``) give
    it different values, naming both."""
    first: dict[str, tuple[str, object]] = {}
    for role, component in components:
        for name in getattr(component, "shared_params", ()):
            if name not in first:
                first[name] = (role, component)
                continue
            o_role, other = first[name]
            mine, theirs = getattr(component, name), getattr(other, name)
            if mine != theirs:
                raise RecipeError(
                    f"recipe {recipe_name!r} cannot work: {_label(role, component)} has "
                    f"{name}={mine!r} but {_label(o_role, other)} has {name}={theirs!r}; the two "
                    f"share {name!r}, so give both the same value"
                )


def check_sparse_input(recipe_name: str, components: Sequence[tuple[str, object]]) -> None:
    """Refuse sparse training data when the recipe's proposal cannot read it without densifying."""
    for role, component in components:
        if role == "proposal" and SPARSE_INPUT not in capabilities_of(component)[1]:
            raise RecipeError(
                f"recipe {recipe_name!r}: X is a sparse matrix, and {_label(role, component)} "
                f"does not handle sparse input ({SPARSE_INPUT!r}); pass X.toarray() or use a "
                "proposal that does"
            )


def binary_only_components(components: Sequence[tuple[str, object]]) -> list[tuple[str, object]]:
    """The ``(role, component)`` pairs of a recipe that do not provide ``"multiclass"``.

    Observers only watch rounds and are never counted. An empty list means the recipe runs
    natively on several margin columns; otherwise it runs on them only as one-vs-rest.
    """
    return [(role, component) for role, component in components
            if role in _MULTICLASS_ROLES and MULTICLASS not in capabilities_of(component)[1]]


def handles_missing_values(components: Sequence[tuple[str, object]]) -> bool:
    """Whether the recipe's proposal declares that it reads NaN in X as missing values."""
    return any(role == "proposal" and MISSING_VALUES in capabilities_of(component)[1]
               for role, component in components)
