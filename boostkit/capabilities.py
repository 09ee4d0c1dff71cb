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
calibration that back-fits earlier terms no longer provides the running margin);
``Component.capabilities(**params)`` reads them from the class either way. The check runs
on the instantiated recipe before any data is touched, and on the data (sparse input, missing
values), and names the two components that clash and why. Every combination it accepts
is fitted in the test suite, so a capability is never decoration: declare what your component
really relies on.

**Data requirements** are capabilities too, provided by no component but by the data: their
``provider`` is ``"data"`` and their ``accepts`` says, value by value, whether a feature value
meets them (:data:`NON_NEGATIVE_FEATURES`, :data:`COUNT_FEATURES`, :data:`BINARY_FEATURES`). A
component that needs one is refused on training data that fail it, before fitting, by
:func:`check_data_requirements`, naming the component, the column and the first value that
fails. Missing values (NaN) are not held against a requirement (a recipe that takes them says so
with ``"missing-values"``), and neither are the implicit zeros of a sparse X when the
requirement accepts 0.

**Label requirements** are provided by the labels (``provider`` ``"labels"``):
:data:`SINGLE_LABEL`, one class per example, is needed by the components of a softmax over
classes (SAMME, multinomial LogitBoost); on a multi-label indicator matrix such a recipe is
refused before fitting (:func:`binary_only_components`), or run as one-vs-rest.

The engine defines the vocabulary every plugin shares (:data:`ENGINE_CAPABILITIES`); a plugin adds
its own with ``registry.add_capability(Capability(...))`` in ``boostkit_register_components``.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import attrs
import numpy as np

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
    "CATEGORICAL_FEATURES",
    "NON_NEGATIVE_FEATURES",
    "COUNT_FEATURES",
    "BINARY_FEATURES",
    "MULTICLASS",
    "SINGLE_LABEL",
    "PAIRWISE_LOSS",
    "DISTRIBUTED",
    "binary_only_components",
    "check_distributed",
    "check_capabilities",
    "check_shared_params",
    "check_sparse_input",
    "handles_missing_values",
    "check_categorical_input",
    "check_data_requirements",
    "capabilities_of",
    "is_ranker",
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
CATEGORICAL_FEATURES = "categorical-features"
MULTICLASS = "multiclass"
SINGLE_LABEL = "single-label"
PAIRWISE_LOSS = "pairwise-loss"
DISTRIBUTED = "distributed"
NON_NEGATIVE_FEATURES = "non-negative-features"
COUNT_FEATURES = "count-features"
BINARY_FEATURES = "binary-features"

_ROLES = ("proposal", "proposal-wrapper", "calibration", "calibration-wrapper", "reweighting",
          "stopping", "observer")
#: The provider of a data requirement: the training data, checked by check_data_requirements.
DATA = "data"
#: The provider of a label requirement: the training labels, checked by binary_only_components.
LABELS = "labels"


def _provider_role(instance, attribute, value):
    if value not in (*_ROLES, DATA, LABELS):
        raise ValueError(
            f"provider must be one of {', '.join((*_ROLES, DATA, LABELS))}, got {value!r}")


def _accepts(instance, attribute, value):
    if (value is None) != (instance.provider != DATA):
        raise ValueError(
            "a data requirement (provider 'data') needs accepts, a function of an array of "
            f"feature values; capability {instance.name!r} has provider {instance.provider!r} "
            f"and accepts={value!r}"
        )


@attrs.frozen
class Capability:
    """A named promise one component makes and another relies on.

    ``meaning`` completes the sentence "X needs ..." in error messages; ``provider`` is the role
    that normally provides it, whose component is named when it is missing, ``"data"`` for a
    requirement on the training data, or ``"labels"`` for one on the training labels. ``accepts`` (data requirements only) maps a float64 array
    of feature values to a boolean array, True where a value meets the requirement.
    """

    name: str
    meaning: str
    provider: str = attrs.field(validator=_provider_role)
    accepts: Callable[[np.ndarray], np.ndarray] | None = attrs.field(
        default=None, validator=_accepts, kw_only=True)


def _non_negative(values: np.ndarray) -> np.ndarray:
    return values >= 0.0


def _counts(values: np.ndarray) -> np.ndarray:
    return (values >= 0.0) & (values == np.floor(values))


def _binary(values: np.ndarray) -> np.ndarray:
    return (values == 0.0) | (values == 1.0)


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
        CATEGORICAL_FEATURES,
        "handles categorical columns (category indices 0..K-1 with no order, "
        "data.features.categorical) by their categories rather than as numbers",
        "proposal",
    ),
    Capability(
        MULTICLASS,
        "handles C > 1 margin columns: labels as an (n, C) sign matrix, weights over (example, "
        "class) pairs, margins of shape (n, C)",
        "proposal",
    ),
    Capability(
        SINGLE_LABEL,
        "one class per example (y a 1-D array of labels), not a multi-label indicator matrix",
        LABELS,
    ),
    Capability(NON_NEGATIVE_FEATURES, "non-negative features (every value of X >= 0)", DATA,
               accepts=_non_negative),
    Capability(COUNT_FEATURES, "count features (every value of X a whole number >= 0)", DATA,
               accepts=_counts),
    Capability(BINARY_FEATURES, "binary features (every value of X 0 or 1)", DATA,
               accepts=_binary),
    Capability(
        DISTRIBUTED,
        "runs on every data plane (boostkit.plane), so in a distributed fit: the proposal "
        "chooses from state.class_histogram() and gives bin_cells, the calibration reads cell "
        "sums alone, the reweighting has a row form (boostkit_row_weights), stopping rules and "
        "observers read the round records",
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
            capability = known[name]
            # data and labels: checked on them (check_data_requirements, binary_only_components)
            if name in provided or capability.provider in (DATA, LABELS):
                continue
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


def binary_only_components(components: Sequence[tuple[str, object]],
                           multilabel: bool = False) -> list[tuple[str, object]]:
    """The ``(role, component)`` pairs of a recipe that do not provide ``"multiclass"`` or, for
    a multi-label indicator matrix (``multilabel``), that need :data:`SINGLE_LABEL`.

    Observers only watch rounds and are never counted. An empty list means the recipe runs
    natively on several margin columns; otherwise it runs on them only as one-vs-rest.
    """
    def blocks(role, component) -> bool:
        needs, provides, _ = capabilities_of(component)
        return ((role in _MULTICLASS_ROLES and MULTICLASS not in provides)
                or (multilabel and SINGLE_LABEL in needs))

    return [(role, component) for role, component in components if blocks(role, component)]


def is_ranker(components: Sequence[tuple[str, object]]) -> bool:
    """Whether an instantiated recipe ranks rather than classifies: a component provides
    :data:`PAIRWISE_LOSS`, a loss over pairs of examples blind to the offset of the margin F,
    so that the sign of F (or, over several classes, their argmax) decides nothing."""
    return any(PAIRWISE_LOSS in capabilities_of(component)[1] for _, component in components)


def handles_missing_values(components: Sequence[tuple[str, object]]) -> bool:
    """Whether the recipe's proposal declares that it reads NaN in X as missing values."""
    return any(role == "proposal" and MISSING_VALUES in capabilities_of(component)[1]
               for role, component in components)


def check_categorical_input(recipe_name: str, components: Sequence[tuple[str, object]],
                            features) -> None:
    """Refuse categorical columns when the recipe's proposal would read their category indices
    as numbers (it does not provide ``"categorical-features"``)."""
    if not features.categorical.any():
        return
    for role, component in components:
        if role == "proposal" and CATEGORICAL_FEATURES not in capabilities_of(component)[1]:
            j = int(np.argmax(features.categorical))
            raise RecipeError(
                f"recipe {recipe_name!r}: column {features.column(j)} is categorical, and "
                f"{_label(role, component)} does not handle categorical columns "
                f"({CATEGORICAL_FEATURES!r}): it would read category indices as numbers. Use "
                "a proposal that does (stump, tree), or encode the column yourself (e.g. one-hot) "
                "and pass categorical_features=None"
            )


def check_data_requirements(recipe_name: str, components: Sequence[tuple[str, object]], X,
                            known: dict, features=None) -> None:
    """Refuse training data that fail a data requirement (provider ``"data"``) some component of
    the recipe needs, naming the component, the column and the first value that fails it.

    ``X`` is the fit's float64 array or CSR matrix, ``known`` maps capability names to
    :class:`Capability`, ``features`` (a :class:`boostkit.features.FeatureSchema`, optional)
    names the columns. NaN (a missing value) passes.
    """
    for role, component in components:
        for name in sorted(capabilities_of(component)[0]):
            capability = known[name]
            if capability.provider != DATA:
                continue
            found = _first_failure(X, capability.accepts)
            if found is None:
                continue
            row, column, value = found
            label = str(column) if features is None else features.column(column)
            raise RecipeError(
                f"recipe {recipe_name!r} cannot work on this X: {_label(role, component)} needs "
                f"{capability.meaning} ({name!r}), and column {label} holds {value!r} (row "
                f"{row}); transform that column, or use a {role} that does not need {name!r}"
            )


def _first_failure(X, accepts) -> tuple[int, int, float] | None:
    """``(row, column, value)`` of a value of X that ``accepts`` refuses: the first in row-major
    order, for a sparse X the first stored one, else the first implicit zero."""
    if hasattr(X, "tocsr"):  # sparse: the stored values, and the implicit zeros if 0 fails
        ok = accepts(X.data) | np.isnan(X.data)
        if ok.all():
            if X.nnz == X.shape[0] * X.shape[1] or accepts(np.zeros(1))[0]:
                return None
            has_implicit_zero = np.diff(X.indptr) < X.shape[1]
            row = int(np.argmax(has_implicit_zero))
            stored = X.indices[X.indptr[row]:X.indptr[row + 1]]
            column = int(np.setdiff1d(np.arange(X.shape[1]), stored)[0])
            return row, column, 0.0
        k = int(np.argmax(~ok))
        row = int(np.searchsorted(X.indptr, k, side="right") - 1)
        return row, int(X.indices[k]), float(X.data[k])
    ok = accepts(X) | np.isnan(X)
    if ok.all():
        return None
    row, column = np.unravel_index(int(np.argmax(~ok)), X.shape)
    return int(row), int(column), float(X[row, column])


def check_distributed(recipe_name: str, components: Sequence[tuple[str, object]]) -> None:
    """Refuse a recipe for a distributed fit when one of its components does not provide
    ``"distributed"``: it would need every example at once, and is never run by gathering the
    data onto one machine. The message names the component and what it lacks: its own
    ``distributed_refusal`` (a component whose parameters decide it says why, and what would
    distribute), else what its role would need."""
    what = {
        "proposal": "chooses its hypothesis from the examples themselves, not from the class "
                    "histogram of all rows (state.class_histogram())",
        "proposal-wrapper": "inspects candidates example by example",
        "calibration": "needs the examples' outputs, not only per-cell sums",
        "calibration-wrapper": "needs the examples' outputs or margins",
        "reweighting": "has no row form (boostkit_row_weights)",
        "stopping": "reads more than the round records",
        "observer": "reads more than the round records",
    }
    for role, component in components:
        if DISTRIBUTED not in capabilities_of(component)[1]:
            reason = (getattr(component, "distributed_refusal", None)
                      or what.get(role, "does not support it"))
            raise RecipeError(
                f"recipe {recipe_name!r} cannot run distributed: {_label(role, component)} "
                f"{reason} (it does not provide {DISTRIBUTED!r}). "
                "Its data would have to be gathered onto one machine, which a distributed fit "
                "never does: fit it with boostkit.Booster on data that fit in memory, or use a "
                "recipe of distributed components (docs/distributed.md lists them)"
            )
