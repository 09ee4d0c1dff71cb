"""Statistics for comparing algorithms over many datasets (Demšar 2006; Benavoli et al. 2017).

:func:`score_matrix` turns a study's cells into one score per dataset and algorithm (the mean
over folds, repeats and seeds); :func:`compare` ranks the algorithms on every dataset and tests
the ranks:

- average ranks, ties sharing the average of the ranks they span (Demšar 2006, section 3.2.2);
- the Friedman test (:func:`scipy.stats.friedmanchisquare`, which corrects the statistic for
  ties) and the Iman–Davenport F statistic derived from it (Demšar 2006, section 3.2.2);
- the Nemenyi post-hoc test: pairwise p-values from
  :func:`scikit_posthocs.posthoc_nemenyi_friedman`, and the critical difference
  CD = q_alpha sqrt(k (k + 1) / (6 N)), q_alpha the studentized range quantile
  (:data:`scipy.stats.studentized_range`) over sqrt 2 (Demšar 2006, section 3.2.2); the
  cliques are the runs of algorithms, in rank order, that no test tells apart;
- against a baseline: Wilcoxon signed-rank tests (:func:`scipy.stats.wilcoxon`, zero
  differences split between the two sums as Demšar 2006, section 3.1.3 says) with Holm's
  step-down correction (:func:`holm_adjusted`), win/tie/loss counts,
  and, given a region of practical equivalence, the Bayesian signed-rank test
  (:class:`baycomp.SignedRankTest`; Benavoli et al. 2017) when baycomp is installed.

Needs the ``study`` extra (``pip install 'boostkit[study]'``); the Bayesian test needs baycomp.
docs/statistics.md says which library does what and why, and reproduces Demšar's worked example.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import attrs
import numpy as np

from ..errors import BoostkitError

__all__ = [
    "BAYES_SAMPLES",
    "BayesianSignedRank",
    "Comparison",
    "Friedman",
    "ImanDavenport",
    "METRIC_DIRECTIONS",
    "Nemenyi",
    "PairedTest",
    "ScoreMatrix",
    "StatsError",
    "compare",
    "holm_adjusted",
    "iman_davenport",
    "score_matrix",
]

#: Whether a higher value is better, for each metric of a study's cells.
METRIC_DIRECTIONS = {
    "accuracy": True, "balanced_accuracy": True, "roc_auc": True, "log_loss": False,
    "fit_seconds": False, "predict_seconds": False, "model_bytes": False,
}

#: Posterior samples of the Bayesian signed-rank test (baycomp's default), drawn from a fixed
#: seed so that a comparison is reproducible.
BAYES_SAMPLES = 50_000

# The columns that identify one cell of a dataset and algorithm (see boostkit.study.store).
_CELL_KEY = ("resample", "repeat", "fold", "seed")


class StatsError(BoostkitError, ValueError):
    """Scores that cannot be compared as asked (too few algorithms or datasets, NaN scores, an
    unknown metric or baseline)."""


def _require(module: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"boostkit.study.stats needs {module.split('.')[0]}, which is not installed: "
            "pip install 'boostkit[study]'"
        ) from exc


def _names(value) -> tuple[str, ...]:
    return tuple(str(name) for name in value)


def _matrix(value) -> np.ndarray:
    return np.array(value, dtype=np.float64)


@attrs.frozen
class ScoreMatrix:
    """One score per dataset (row) and algorithm (column): ``values[i, j]`` is algorithm j's
    mean ``metric`` on dataset i. ``dropped`` maps each dataset left out of the comparison to
    why (an algorithm without a result there); ``left_out`` each algorithm of the cells left
    out because it has no result on any dataset."""

    values: np.ndarray = attrs.field(converter=_matrix, eq=False)
    datasets: tuple[str, ...] = attrs.field(converter=_names)
    algorithms: tuple[str, ...] = attrs.field(converter=_names)
    metric: str = "accuracy"
    higher_is_better: bool = True
    dropped: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    left_out: Mapping[str, str] = attrs.field(factory=dict, converter=dict)

    def __attrs_post_init__(self):
        shape = (len(self.datasets), len(self.algorithms))
        if self.values.shape != shape:
            raise StatsError(f"values must have shape (n_datasets, n_algorithms) = {shape}, "
                             f"got {self.values.shape}")
        for what, names in (("datasets", self.datasets), ("algorithms", self.algorithms)):
            if len(set(names)) != len(names):
                raise StatsError(f"{what} must be distinct, got {list(names)}")
        bad = np.argwhere(~np.isfinite(self.values))
        if bad.size:
            i, j = bad[0]
            raise StatsError(
                f"values must be finite, got {self.values[i, j]} for {self.algorithms[j]!r} on "
                f"{self.datasets[i]!r} ({len(bad)} non-finite score(s) in all); leave the "
                "dataset or the algorithm out"
            )


def _direction(metric: str, higher_is_better: bool | None) -> bool:
    known = METRIC_DIRECTIONS.get(metric)
    if higher_is_better is None:
        if known is None:
            raise StatsError(f"metric {metric!r} is none of {list(METRIC_DIRECTIONS)}: say "
                             "whether higher is better with higher_is_better=")
        return known
    if known is not None and bool(higher_is_better) != known:
        raise StatsError(f"{metric} is {'higher' if known else 'lower'}-is-better, got "
                         f"higher_is_better={higher_is_better}")
    return bool(higher_is_better)


def score_matrix(frame, metric: str = "accuracy", higher_is_better: bool | None = None, *,
                 algorithms: Sequence[str] | None = None) -> ScoreMatrix:
    """The mean ``metric`` of each (dataset, algorithm) over its folds, repeats and seeds.

    ``frame``: a study's cells (:meth:`boostkit.study.ResultStore.read_frame`); only cells whose
    ``status`` is ``"done"`` count. ``higher_is_better`` defaults to the metric's direction
    (:data:`METRIC_DIRECTIONS`); ``algorithms`` keeps those, in that order (default: every
    algorithm of the frame, in order of appearance, except those without a finished cell with a
    value anywhere, which :attr:`ScoreMatrix.left_out` names).

    Every algorithm is compared on the same cells: a dataset where an algorithm lacks a finished
    cell with a value that another algorithm has (a failed fit, an undefined ROC AUC, a cell not
    run yet) is dropped, and :attr:`ScoreMatrix.dropped` says why. Fewer than two datasets left
    raises :class:`StatsError` naming the algorithms at fault.
    """
    higher_is_better = _direction(metric, higher_is_better)
    if not hasattr(frame, "columns"):
        raise StatsError("frame must be a pandas DataFrame of a study's cells "
                         f"(ResultStore.read_frame()), got {type(frame).__name__}")
    missing = [c for c in ("dataset", "algorithm", "status", metric, *_CELL_KEY)
               if c not in frame.columns]
    if missing:
        raise StatsError(f"frame must have the cells table's columns; it lacks {missing}")
    present = list(dict.fromkeys(frame["algorithm"]))
    done = frame[(frame["status"] == "done") & frame[metric].notna()]
    left_out = {}
    if algorithms is None:
        algorithms = [a for a in present if (done["algorithm"] == a).any()]
        for name in present:
            if name not in algorithms:
                statuses = frame.loc[frame["algorithm"] == name, "status"].value_counts()
                counts = ", ".join(f"{n} {status}" for status, n in statuses.items())
                left_out[name] = (f"no finished cell with a value of {metric} "
                                  f"({int(statuses.sum())} cells: {counts})")
        frame = frame[frame["algorithm"].isin(algorithms)]
    else:
        algorithms = list(algorithms)
        unknown = [a for a in algorithms if a not in present]
        if unknown:
            raise StatsError(f"algorithms {unknown} have no cell in the frame; its algorithms "
                             f"are {present}")
        frame = frame[frame["algorithm"].isin(algorithms)]
    done = done[done["algorithm"].isin(algorithms)]
    rows, datasets, dropped = [], [], {}
    for dataset, cells in frame.groupby("dataset", sort=False):
        wanted = set(cells[list(_CELL_KEY)].itertuples(index=False, name=None))
        have = done[done["dataset"] == dataset]
        means, lacking = [], []
        for algorithm in algorithms:
            mine = have[have["algorithm"] == algorithm]
            keys = set(mine[list(_CELL_KEY)].itertuples(index=False, name=None))
            if keys != wanted:
                lacking.append(f"{algorithm} ({len(keys)} of {len(wanted)} cells)")
            means.append(mine[metric].astype(float).mean())
        if lacking:
            dropped[str(dataset)] = f"no {metric} for every cell of {', '.join(lacking)}"
        else:
            rows.append(means)
            datasets.append(str(dataset))
    if len(datasets) < 2:
        raise StatsError(
            f"a comparison needs at least 2 datasets where every algorithm has a {metric}, got "
            f"{len(datasets)}; dropped: {dropped or 'none'}"
        )
    return ScoreMatrix(np.array(rows), datasets, algorithms, metric, higher_is_better, dropped,
                       left_out)


@attrs.frozen
class Friedman:
    """The Friedman test of equal average ranks: chi-square statistic (tie-corrected, as
    :func:`scipy.stats.friedmanchisquare` computes it), p-value and degrees of freedom k - 1."""

    chi2: float
    p_value: float
    df: int


@attrs.frozen
class ImanDavenport:
    """The Iman–Davenport statistic F_F = (N - 1) chi2 / (N (k - 1) - chi2) (Demšar 2006,
    section 3.2.2), F-distributed with (df1, df2) = (k - 1, (k - 1)(N - 1))."""

    F: float
    p_value: float
    df1: int
    df2: int


def iman_davenport(chi2: float, n_datasets: int, n_algorithms: int) -> ImanDavenport:
    """Iman and Davenport's correction of a Friedman ``chi2`` on ``n_datasets`` (N) and
    ``n_algorithms`` (k) (Demšar 2006, section 3.2.2). Ranks that agree on every dataset (chi2 =
    N (k - 1)) give F = inf and p = 0."""
    stats = _require("scipy.stats")
    n, k = n_datasets, n_algorithms
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denominator = n * (k - 1) - chi2
    if denominator <= 0:
        return ImanDavenport(float("inf"), 0.0, df1, df2)
    F = (n - 1) * chi2 / denominator
    return ImanDavenport(float(F), float(stats.f.sf(F, df1, df2)), df1, df2)


@attrs.frozen
class Nemenyi:
    """The Nemenyi test at level ``alpha``: ``q_alpha`` (the studentized range quantile over
    sqrt 2), the ``critical_difference`` of average ranks, and the pairwise ``p_values``
    (k x k, in the matrix's algorithm order)."""

    alpha: float
    q_alpha: float
    critical_difference: float
    p_values: np.ndarray = attrs.field(eq=False)


@attrs.frozen
class PairedTest:
    """An algorithm against the baseline over the datasets: the Wilcoxon signed-rank
    ``statistic`` T = min(R+, R-) and its ``p_value``, ``p_holm`` after Holm's correction over
    every algorithm tested, ``significant`` (p_holm < alpha), ``direction`` (``"better"``,
    ``"worse"`` or ``"equal"``: which of R+ and R- is larger), and the datasets where it
    ``wins``, ``ties`` (equal mean scores) and ``losses``."""

    algorithm: str
    statistic: float
    p_value: float
    p_holm: float
    significant: bool
    direction: str
    wins: int
    ties: int
    losses: int


@attrs.frozen
class BayesianSignedRank:
    """The Bayesian signed-rank test of an algorithm against the baseline (Benavoli et al.
    2017): the posterior probabilities that it is better by more than ``rope``, within ``rope``
    of it (practically equivalent), and worse by more than ``rope``."""

    algorithm: str
    rope: float
    p_better: float
    p_equivalent: float
    p_worse: float


@attrs.frozen
class Comparison:
    """What :func:`compare` found; per-algorithm values follow ``matrix.algorithms``.

    ``friedman`` and ``iman_davenport`` are ``None`` with two algorithms (the paired tests
    against the baseline are then the test); ``wilcoxon_holm`` (algorithm -> :class:`PairedTest`)
    is empty without a baseline; ``bayesian`` is ``None`` unless a ``rope`` was given and baycomp
    is installed. ``notes`` say what was left out and why, for a report to print.
    """

    matrix: ScoreMatrix
    alpha: float
    average_ranks: np.ndarray = attrs.field(eq=False)
    friedman: Friedman | None
    iman_davenport: ImanDavenport | None
    nemenyi: Nemenyi
    cliques: tuple[tuple[str, ...], ...]
    baseline: str | None = None
    wilcoxon_holm: Mapping[str, PairedTest] = attrs.field(factory=dict, converter=dict)
    bayesian: Mapping[str, BayesianSignedRank] | None = None
    notes: tuple[str, ...] = ()

    @property
    def ranking(self) -> list[tuple[str, float]]:
        """(algorithm, average rank), best first; equal ranks keep the matrix's order."""
        order = np.argsort(self.average_ranks, kind="stable")
        return [(self.matrix.algorithms[j], float(self.average_ranks[j])) for j in order]

    @property
    def critical_difference(self) -> float:
        return self.nemenyi.critical_difference

    @property
    def win_tie_loss(self) -> dict[str, tuple[int, int, int]]:
        """algorithm -> (wins, ties, losses) against the baseline."""
        return {name: (t.wins, t.ties, t.losses) for name, t in self.wilcoxon_holm.items()}


def _cliques(names: Sequence[str], ranks: np.ndarray, p_values: np.ndarray,
             alpha: float) -> tuple[tuple[str, ...], ...]:
    """The maximal runs of two or more algorithms, in rank order, of which no pair differs
    significantly: the groups a CD diagram joins (Demšar 2006, section 3.2.4)."""
    order = np.argsort(ranks, kind="stable")
    cliques, reached = [], 0
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and all(p_values[order[i], order[end + 1]] >= alpha
                                           for i in range(start, end + 1)):
            end += 1
        if end > start and end + 1 > reached:
            cliques.append(tuple(names[j] for j in order[start:end + 1]))
            reached = end + 1
    return tuple(cliques)


def holm_adjusted(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979; Demšar 2006, section 3.2.2): with the m
    p-values in increasing order, p_(i) becomes max over j <= i of min(1, (m - j + 1) p_(j)); a
    test is rejected at level alpha when its adjusted p-value is below alpha. The values of
    ``statsmodels.stats.multitest.multipletests(method="holm")``, without its full garbage
    collection on every call (0.4 s in a process holding many objects)."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(steps, 1.0)
    return adjusted


def _paired(matrix: ScoreMatrix, baseline: str, alpha: float) -> dict[str, PairedTest]:
    stats = _require("scipy.stats")
    sign = 1.0 if matrix.higher_is_better else -1.0
    base = matrix.values[:, matrix.algorithms.index(baseline)]
    others = [name for name in matrix.algorithms if name != baseline]
    rows = []
    for name in others:
        # Positive differences: the algorithm does better than the baseline.
        d = sign * (matrix.values[:, matrix.algorithms.index(name)] - base)
        two_sided = stats.wilcoxon(d, zero_method="zsplit")
        # R+ is the one-sided statistic whatever the p-value's method: the cheapest one.
        r_plus = stats.wilcoxon(d, zero_method="zsplit", alternative="greater",
                                method="approx").statistic
        r_minus = d.size * (d.size + 1) / 2 - r_plus
        direction = "better" if r_plus > r_minus else "worse" if r_plus < r_minus else "equal"
        rows.append((name, float(two_sided.statistic), float(two_sided.pvalue), direction, d))
    p_holm = holm_adjusted([row[2] for row in rows])
    return {
        name: PairedTest(name, statistic, p, float(adjusted), bool(adjusted < alpha), direction,
                         int(np.sum(d > 0)), int(np.sum(d == 0)), int(np.sum(d < 0)))
        for (name, statistic, p, direction, d), adjusted in zip(rows, p_holm)
    }


def _bayesian(matrix: ScoreMatrix, baseline: str, rope: float, baycomp
              ) -> dict[str, BayesianSignedRank]:
    base = matrix.values[:, matrix.algorithms.index(baseline)]
    results = {}
    for name in matrix.algorithms:
        if name == baseline:
            continue
        scores = matrix.values[:, matrix.algorithms.index(name)]
        # baycomp's (left, rope, right): the second argument's scores lower, equivalent, higher.
        left, equivalent, right = baycomp.SignedRankTest.probs(
            base, scores, rope=rope, nsamples=BAYES_SAMPLES, random_state=0)
        better, worse = (right, left) if matrix.higher_is_better else (left, right)
        results[name] = BayesianSignedRank(name, rope, float(better), float(equivalent),
                                           float(worse))
    return results


def compare(matrix: ScoreMatrix, *, baseline: str | None = None, alpha: float = 0.05,
            rope: float | None = None) -> Comparison:
    """Rank the algorithms of ``matrix`` on each dataset and test the ranks (module docstring).

    ``baseline``: the algorithm the others are tested against (Wilcoxon–Holm, win/tie/loss, and
    the Bayesian signed-rank test); ``alpha``: the level of the Nemenyi test, the cliques and
    the Holm correction; ``rope``: the half-width of the region of practical equivalence, in
    the metric's units (e.g. 0.01 for one point of accuracy), which asks for the Bayesian test.
    """
    if not isinstance(matrix, ScoreMatrix):
        raise StatsError(f"matrix must be a ScoreMatrix (see score_matrix), got "
                         f"{type(matrix).__name__}")
    n, k = matrix.values.shape
    if k < 2 or n < 2:
        left_out = f"; left out without results: {matrix.left_out}" if matrix.left_out else ""
        raise StatsError(f"a comparison needs at least 2 algorithms and 2 datasets, got {k} "
                         f"algorithm(s) {list(matrix.algorithms)} and {n} dataset(s){left_out}")
    if not 0 < alpha < 1:
        raise StatsError(f"alpha must be in (0, 1), got {alpha}")
    if baseline is not None and baseline not in matrix.algorithms:
        raise StatsError(f"baseline {baseline!r} is not among the algorithms "
                         f"{list(matrix.algorithms)}")
    if rope is not None and (baseline is None or not rope >= 0):
        raise StatsError(f"rope must be a number >= 0 with a baseline, got rope={rope!r} and "
                         f"baseline={baseline!r}")
    stats = _require("scipy.stats")
    posthocs = _require("scikit_posthocs")
    notes = [f"algorithm {name} left out: {why}" for name, why in matrix.left_out.items()]
    notes += [f"dataset {name} left out: {why}" for name, why in matrix.dropped.items()]

    # Rank 1 is the best; ties share the average of the ranks they span.
    signed = -matrix.values if matrix.higher_is_better else matrix.values
    average_ranks = stats.rankdata(signed, axis=1, method="average").mean(axis=0)

    friedman = davenport = None
    if k == 2:
        notes.append("no Friedman test with two algorithms: the Wilcoxon signed-rank test "
                     "against the baseline compares them (Demšar 2006, section 3.1.3)")
    else:
        if np.all(matrix.values == matrix.values[:, :1]):
            # Every dataset ties every algorithm: no rank differs (scipy would divide 0 by 0).
            chi2, p = 0.0, 1.0
        else:
            chi2, p = stats.friedmanchisquare(*matrix.values.T)
        friedman = Friedman(float(chi2), float(p), k - 1)
        davenport = iman_davenport(float(chi2), n, k)

    q_alpha = float(stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2))
    p_values = posthocs.posthoc_nemenyi_friedman(signed).to_numpy()
    nemenyi = Nemenyi(alpha, q_alpha, q_alpha * float(np.sqrt(k * (k + 1) / (6 * n))), p_values)

    paired, bayesian = {}, None
    if baseline is not None:
        paired = _paired(matrix, baseline, alpha)
    if rope is not None:
        try:
            import baycomp
        except ImportError:
            notes.append("no Bayesian signed-rank test: baycomp is not installed "
                         "(pip install baycomp)")
        else:
            bayesian = _bayesian(matrix, baseline, float(rope), baycomp)
    return Comparison(matrix, alpha, average_ranks, friedman, davenport, nemenyi,
                      _cliques(matrix.algorithms, average_ranks, p_values, alpha), baseline,
                      paired, bayesian, tuple(notes))
