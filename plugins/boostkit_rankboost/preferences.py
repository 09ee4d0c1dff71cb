"""General RankBoost over an explicit preference set built from graded relevance within groups.

Yoder 2011, slides "RankBoost" and "Example": D(x0, x1) > 0 if x0 should be ranked
below x1, 0 otherwise, sum D = 1. :func:`preference_pairs` builds that set from graded relevance
within groups (query ids): every pair of examples of one group with different relevance, the
less relevant one as x0. The slides' second example (rank(x1) < rank(x2) = rank(x3)) has two
such pairs, so D = 1/2 on each: the table's 1/3 entries do not sum to 1 (a slip; the slide
itself requires sum D = 1).

The engine boosts examples with labels in {-1, +1} and knows nothing of pairs or groups
(``Booster.fit(X, y, sample_weight)`` has no ``group``), so :func:`fit_preferences` hands it the
*roles* of the examples: a row for every example that is some pair's x0 (label -1) and a row for
every example that is some pair's x1 (label +1); an example in the middle of a group's ranking
gets one row of each. Freund et al. (2003) write r = sum_x h(x) pi(x) with
pi(x) = sum_{x0} D(x0, x) - sum_{x1} D(x, x1); the two rows carry the two sums as weights, so the
histogram kernel, the rank stumps and ``rankboost-alpha`` work unchanged, and the
``preference-pairs`` reweighting recomputes the row weights from the pairs every round.

The pairs reach the reweighting through :func:`using_preferences`, a context variable set around
the engine's fit (the engine has no per-fit argument for them; see the plugin docs). Without one,
``preference-pairs`` takes all (negative, positive) pairs of the training data: the bipartite
preference set, explicitly.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator, Mapping, Sequence

import attrs
import numpy as np

import boostkit
from boostkit.data import MAX_BINS, check_features
from boostkit.registry import ComponentSpec

__all__ = [
    "BYTES_PER_PAIR",
    "DEFAULT_MAX_PAIRS",
    "PairBudgetError",
    "PreferenceSet",
    "active_preferences",
    "count_pairs",
    "fit_preferences",
    "pairs_recipe",
    "preference_pairs",
    "role_preferences",
    "using_preferences",
]

DEFAULT_MAX_PAIRS = 10_000_000
# Two int64 row indices and D_1(p): what the reweighting keeps per pair.
BYTES_PER_PAIR = 24
_NORMALIZATIONS = ("pairs", "groups")


class PairBudgetError(boostkit.DataError):
    """The preference set would need more pairs than the memory budget allows."""


@attrs.frozen
class PreferenceSet:
    """Pairs over the rows given to the engine: row ``lower[p]`` should rank below ``upper[p]``.

    ``weight`` is D_1(p) (positive, summing to 1); ``n_rows`` the number of rows. Every lower
    row must be labelled -1 and every upper row +1 in the data the engine fits.
    """

    lower: np.ndarray = attrs.field(eq=False)
    upper: np.ndarray = attrs.field(eq=False)
    weight: np.ndarray = attrs.field(eq=False)
    n_rows: int

    @property
    def n_pairs(self) -> int:
        return self.lower.shape[0]

    def row_weights(self) -> np.ndarray:
        """Half the D_1-weight of the pairs each row takes part in (sums to 1)."""
        return 0.5 * (np.bincount(self.lower, self.weight, self.n_rows)
                      + np.bincount(self.upper, self.weight, self.n_rows))


_ACTIVE: contextvars.ContextVar[PreferenceSet | None] = contextvars.ContextVar(
    "boostkit_rankboost_preferences", default=None
)


@contextlib.contextmanager
def using_preferences(preferences: PreferenceSet) -> Iterator[PreferenceSet]:
    """Make ``preferences`` the preference set of the ``preference-pairs`` fits in this block."""
    token = _ACTIVE.set(preferences)
    try:
        yield preferences
    finally:
        _ACTIVE.reset(token)


def active_preferences() -> PreferenceSet | None:
    """The preference set of :func:`using_preferences`, or ``None`` outside one."""
    return _ACTIVE.get()


def _relevance_and_groups(relevance, group) -> tuple[np.ndarray, np.ndarray]:
    rel = np.asarray(relevance)
    if rel.ndim != 1:
        raise boostkit.DataError(f"relevance must be 1-D, got an array of shape {rel.shape}")
    try:
        rel = rel.astype(np.float64)
    except (TypeError, ValueError):
        raise boostkit.DataError("relevance must be numeric (larger = ranked higher)") from None
    if not np.isfinite(rel).all():
        raise boostkit.DataError("relevance contains NaN or infinite values")
    if group is None:
        return rel, np.zeros(rel.shape[0], dtype=np.intp)
    groups = np.asarray(group)
    if groups.ndim != 1 or groups.shape[0] != rel.shape[0]:
        raise boostkit.DataError(
            f"group must give a query id for every example ({rel.shape[0]} values), got shape "
            f"{groups.shape}; LightGBM-style group sizes convert with "
            "np.repeat(np.arange(len(sizes)), sizes)"
        )
    return rel, np.unique(groups, return_inverse=True)[1].ravel()


def count_pairs(relevance, group=None) -> int:
    """The number of preference pairs: sum over groups of (n_g^2 - sum_l n_{g,l}^2) / 2.

    Computed from the counts of (group, relevance level), without building a pair.
    """
    rel, codes = _relevance_and_groups(relevance, group)
    _, level_counts = np.unique(np.column_stack((codes, rel)), axis=0, return_counts=True)
    group_counts = np.bincount(codes)
    return int((np.sum(group_counts.astype(np.int64) ** 2)
                - np.sum(level_counts.astype(np.int64) ** 2)) // 2)


def _budget_error(n_pairs: int, max_pairs: int) -> PairBudgetError:
    mib = n_pairs * BYTES_PER_PAIR / 2**20
    return PairBudgetError(
        f"the preference set would hold {n_pairs:,} pairs (about {mib:,.0f} MiB at "
        f"{BYTES_PER_PAIR} bytes a pair), more than max_pairs={max_pairs:,}. With two relevance "
        "levels use the bipartite form instead (algorithm 'rankboost', or BoostRanker without "
        "group=): it keeps the pair distribution factorised, O(n) per round and no pairs. "
        "Otherwise fit per group (smaller groups have quadratically fewer pairs) or raise max_pairs."
    )


def preference_pairs(relevance, group=None, sample_weight=None, *, normalize: str = "pairs",
                     max_pairs: int = DEFAULT_MAX_PAIRS):
    """All pairs (x0, x1) of one group with relevance(x0) < relevance(x1), and D_1 over them.

    Parameters
    ----------
    relevance:
        Graded relevance per example (larger = ranked higher), e.g. 0..4, or two labels.
    group:
        A query id per example; pairs are only formed within a group. ``None``: one group.
    sample_weight:
        Optional non-negative example weights; D_1(x0, x1) is proportional to w(x0) w(x1)
        (uniform over the pairs by default). Pairs of weight 0 are dropped.
    normalize:
        ``"pairs"`` (default): D_1 sums to 1 over all pairs; ``"groups"``: every group with pairs
        gets the same total weight (each query counts alike, however many pairs it has).
    max_pairs:
        Memory budget: more pairs raise :class:`PairBudgetError` before any is built.

    Returns
    -------
    lower, upper, weight:
        Example indices of x0 and x1 (int64), and D_1 (float64, sums to 1).
    """
    if normalize not in _NORMALIZATIONS:
        raise ValueError(f"normalize must be one of {_NORMALIZATIONS}, got {normalize!r}")
    rel, codes = _relevance_and_groups(relevance, group)
    n = rel.shape[0]
    weights = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if weights.shape != (n,) or not np.isfinite(weights).all() or (weights < 0).any():
        raise boostkit.DataError(f"sample_weight must be {n} finite non-negative values")
    # Sort by (group, relevance): the examples below an example in its group are then the
    # stretch from its group's start to the start of its own relevance level.
    order = np.lexsort((rel, codes))
    positions = np.arange(n)
    new_group = np.r_[True, codes[order][1:] != codes[order][:-1]]
    new_level = new_group | np.r_[True, rel[order][1:] != rel[order][:-1]]
    group_start = np.maximum.accumulate(np.where(new_group, positions, 0))
    level_start = np.maximum.accumulate(np.where(new_level, positions, 0))
    n_below = (level_start - group_start).astype(np.int64)
    n_pairs = int(n_below.sum())
    if n_pairs > max_pairs:
        raise _budget_error(n_pairs, max_pairs)
    if n_pairs == 0:
        raise boostkit.DataError(
            "there are no preference pairs: every group has a single relevance level"
        )
    first_of_run = np.repeat(np.cumsum(n_below) - n_below, n_below)
    lower = order[np.repeat(group_start, n_below) + (np.arange(n_pairs) - first_of_run)]
    upper = order[np.repeat(positions, n_below)]
    weight = weights[lower] * weights[upper]
    kept = weight > 0
    lower, upper, weight = lower[kept], upper[kept], weight[kept]
    if weight.shape[0] == 0:
        raise boostkit.DataError("every preference pair has weight 0 (sample_weight)")
    if normalize == "groups":
        pair_group = codes[lower]
        group_total = np.bincount(pair_group, weight)
        weight = weight / group_total[pair_group] / np.count_nonzero(group_total)
    return lower.astype(np.int64), upper.astype(np.int64), weight / weight.sum()


def role_preferences(n_examples: int, lower: np.ndarray, upper: np.ndarray,
                     weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, PreferenceSet]:
    """Rows for the roles of the examples, and the pairs re-indexed to them.

    Returns ``(lower_examples, upper_examples, preferences)``: the rows are first one per
    example that is some pair's x0 (``lower_examples``, label -1), then one per example that is
    some pair's x1 (``upper_examples``, label +1).
    """
    lower_examples = np.flatnonzero(np.bincount(lower, minlength=n_examples))
    upper_examples = np.flatnonzero(np.bincount(upper, minlength=n_examples))
    preferences = PreferenceSet(
        lower=np.searchsorted(lower_examples, lower).astype(np.int64),
        upper=(lower_examples.shape[0] + np.searchsorted(upper_examples, upper)).astype(np.int64),
        weight=np.asarray(weight, dtype=np.float64),
        n_rows=int(lower_examples.shape[0] + upper_examples.shape[0]),
    )
    return lower_examples, upper_examples, preferences


def pairs_recipe(algorithm: str | boostkit.Recipe,
                 params: Mapping[str, Mapping] | None = None) -> boostkit.Recipe:
    """``algorithm``'s recipe with the ``preference-pairs`` reweighting (and ``params`` applied).

    Any RankBoost recipe's proposal, calibration and stopping rules work on the rows of
    :func:`role_preferences`; only the reweighting must know the pairs.
    """
    recipe = boostkit.Booster(algorithm).recipe()
    if recipe.reweighting.name != "preference-pairs":
        recipe = attrs.evolve(recipe, reweighting=ComponentSpec("preference-pairs"))
    return recipe.with_params(params) if params else recipe


def fit_preferences(X, relevance, group=None, *, algorithm: str | boostkit.Recipe = "rankboost-pairs",
                    n_rounds: int = 100, sample_weight=None, normalize: str = "pairs",
                    max_pairs: int = DEFAULT_MAX_PAIRS, params: Mapping[str, Mapping] | None = None,
                    max_bins: int = MAX_BINS, n_jobs: int = 1, random_state: int | None = None,
                    observers: Sequence = ()) -> boostkit.BoostModel:
    """General RankBoost: boost a ranking of ``X`` from graded ``relevance`` within ``group``.

    Builds the preference set (:func:`preference_pairs`, refusing more than ``max_pairs`` pairs),
    gives the engine one row per role of each example (:func:`role_preferences`) with the role
    weights of D_1 as sample weights, and runs ``algorithm`` with the ``preference-pairs``
    reweighting (:func:`pairs_recipe`) while the preference set is active. The returned model
    scores examples: ``model.decision_function(X_new)`` is F_T, higher = ranked higher.
    """
    X = check_features(X)
    if X.shape[0] != np.asarray(relevance).shape[0]:
        raise boostkit.DataError(
            f"X has {X.shape[0]} rows but relevance has {np.asarray(relevance).shape[0]} values"
        )
    lower, upper, weight = preference_pairs(relevance, group, sample_weight,
                                            normalize=normalize, max_pairs=max_pairs)
    lower_examples, upper_examples, preferences = role_preferences(X.shape[0], lower, upper, weight)
    rows = np.concatenate((X[lower_examples], X[upper_examples]))
    labels = np.repeat([-1.0, 1.0], (lower_examples.shape[0], upper_examples.shape[0]))
    booster = boostkit.Booster(pairs_recipe(algorithm, params), n_rounds=n_rounds,
                               max_bins=max_bins, n_jobs=n_jobs, random_state=random_state,
                               observers=observers)
    with using_preferences(preferences):
        return booster.fit(rows, labels, preferences.row_weights())
