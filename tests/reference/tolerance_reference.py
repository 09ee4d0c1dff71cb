"""The tolerance reference: binary models compared round by round, within stated tolerances.

``python tests/reference/tolerance_reference.py`` fits every registered recipe on the reference
datasets (:data:`DATASETS`: seeded rows of bundled real binary data, some held out) and writes
what each model is: ``tolerance_models.json`` (per round the term's description and its
coefficients; per term of the model the structure of the hypothesis and of the contribution;
the test accuracy) and ``tolerance_arrays.npz`` (per model the numbers of its terms, and its
decision function on the held-out rows). A recipe that refuses a dataset (missing values,
categorical columns) has no reference there. ``test_tolerance_reference.py`` fits them again
and compares with :func:`compare`:

* the same term in every round, up to the first round whose two best candidates were within
  the tie tolerance of the stump search (:data:`boostkit.splits.TIE_TOLERANCE`): the search
  chose between them by index, so a change of summation order may choose the other; that round
  is reported ("round t: a tie within 1e-12 between <a> and <b>; later rounds not compared")
  and nothing after it is compared;
* every round's coefficients, and every float or float array of every term, within
  :data:`COEFFICIENT_RTOL` of its largest magnitude;
* the decision function on the held-out rows within :data:`DECISION_RTOL` of the largest
  margin;
* the same test accuracy.

It replaced the bit-for-bit fingerprints of fitted models: a change that moves bits (a new
summation order, weights multiplied per cell instead of computed from the margins) regenerates
it in its own commit, after checking that the stored reference still passes, and says which
results moved and why. Only the model files boostkit 0.1 saved are still compared bit for bit
(:mod:`binary_reference`): they fit nothing.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Callable

# OpenBLAS's kernels as the tests run them (tests/conftest.py), read when numpy is first
# imported: the reference is written with the sums the tests compute.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import attrs  # noqa: E402
import numpy as np  # noqa: E402

import boostkit  # noqa: E402
from boostkit.datasets import load  # noqa: E402
from boostkit.splits import TIE_TOLERANCE  # noqa: E402

HERE = Path(__file__).resolve().parent
MODELS = HERE / "tolerance_models.json"
ARRAYS = HERE / "tolerance_arrays.npz"
N_ROUNDS = 25
COEFFICIENT_RTOL = 1e-10
DECISION_RTOL = 1e-9
#: Two candidates whose losses are this close (relative) are a tie. Twice the search's
#: tolerance: a change of summation order moves the choice only when the gap of the two losses
#: crosses the tolerance, so in the new sums the gap is at the tolerance, on either side of it.
NEAR_TIE = 2 * TIE_TOLERANCE

#: ``name: (rows sampled, rows fitted)``; the rest of the sample is held out. spambase's sample
#: is the saved model files' (:func:`binary_reference.dataset`); breast_cancer_wisconsin has
#: missing values, german_credit categorical columns.
DATASETS = {
    "spambase": (1200, 900),
    "breast_cancer_wisconsin": (699, 500),
    "german_credit": (1000, 750),
}


@attrs.frozen(eq=False)
class Sample:
    """Seeded rows of a reference dataset: ``X, y`` to fit, ``X_test, y_test`` held out."""

    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    features: boostkit.FeatureSchema | None = None


def sample(name: str) -> Sample:
    """The reference rows of dataset ``name`` (a key of :data:`DATASETS`)."""
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {name!r}")
    n_rows, n_fit = DATASETS[name]
    data = load(name)
    rows = np.random.default_rng(0).permutation(data.X.shape[0])[:n_rows]
    X, y = data.X[rows], data.binary_target()[rows]
    return Sample(X[:n_fit], y[:n_fit], X[n_fit:], y[n_fit:], data.features)


def fit(recipe: str, data: Sample, n_rounds: int = N_ROUNDS, observers=()):
    """``recipe`` fitted on ``data``'s rows to fit, as the reference was (``random_state`` 0)."""
    return boostkit.Booster(recipe, n_rounds=n_rounds, random_state=0,
                            observers=list(observers)).fit(data.X, data.y,
                                                           features=data.features)


def flatten(value) -> tuple[object, list[list[float]]]:
    """``(structure, numbers)`` of a component or value: the structure is JSON (names, integers,
    flags, strings, integer arrays) with ``"#"`` where a float was and the shape where a float
    array was; the numbers are the floats, one list per float or float array, in order."""
    numbers: list[list[float]] = []

    def walk(v):
        if isinstance(v, boostkit.Component):
            return {"name": v.name, **{f.name: walk(getattr(v, f.name))
                                       for f in attrs.fields(type(v)) if f.init}}
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            numbers.append(v.ravel().tolist())
            return {"floats": list(v.shape)}
        if isinstance(v, np.ndarray):
            return {"array": v.tolist(), "dtype": v.dtype.str}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        if isinstance(v, (float, np.floating)):
            numbers.append([float(v)])
            return "#"
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if isinstance(v, (int, np.integer)):
            return int(v)
        if v is None or isinstance(v, str):
            return v
        return repr(v)

    return walk(value), numbers


@attrs.frozen(eq=False)
class Snapshot:
    """What the reference holds of one fitted model: ``summary`` (JSON: per round the term's
    description and coefficients, per term the structure of the hypothesis and of the
    contribution and the sizes of its numbers' arrays, the stop reason, the test accuracy),
    ``term_numbers`` (every term's numbers, in order) and ``decision_function`` (on the held-out
    rows)."""

    summary: dict
    term_numbers: np.ndarray
    decision_function: np.ndarray


def snapshot(model, data: Sample) -> Snapshot:
    """The :class:`Snapshot` of a model fitted on ``data``."""
    terms, numbers = [], []
    for hypothesis, contribution in zip(model.hypotheses, model.contributions):
        (h_structure, h_numbers), (c_structure, c_numbers) = flatten(hypothesis), flatten(
            contribution)
        groups = h_numbers + c_numbers
        terms.append({"hypothesis": h_structure, "contribution": c_structure,
                      "sizes": [len(group) for group in groups]})
        numbers += [x for group in groups for x in group]
    summary = {
        "rounds": [{"term": r.hypothesis, "coefficients": list(r.coefficients)}
                   for r in model.records],
        "terms": terms,
        "stop_reason": model.stop_reason,
        "test_accuracy": float(np.mean(model.predict(data.X_test) == data.y_test)),
    }
    return Snapshot(summary, np.array(numbers, dtype=np.float64),
                    np.asarray(model.decision_function(data.X_test), dtype=np.float64))


def relatively_close(expected, got, rtol: float, normwise: bool = False) -> np.ndarray:
    """Elementwise: equal (infinities, NaN with NaN), or within ``rtol`` of the larger magnitude
    of the two values (``normwise``: of the largest magnitude in either array)."""
    a, b = np.asarray(expected, dtype=np.float64), np.asarray(got, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        scale = np.maximum(np.abs(a), np.abs(b))
        if normwise and scale.size:
            scale = np.nanmax(np.where(np.isfinite(scale), scale, np.nan), initial=0.0)
        return (a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= rtol * scale)


@attrs.frozen
class Comparison:
    """What :func:`compare` found: ``failures`` (empty when the model matches) and ``tie``, the
    report of the round after which nothing was compared, or ``None``."""

    failures: tuple[str, ...]
    tie: str | None = None


def _first_far(expected, got, rtol: float, normwise: bool = False) -> str | None:
    expected, got = np.asarray(expected, dtype=np.float64), np.asarray(got, dtype=np.float64)
    if expected.shape != got.shape:
        return f"shape {expected.shape} expected, got {got.shape}"
    close = relatively_close(expected, got, rtol, normwise)
    if close.all():
        return None
    i = int(np.argmin(close.ravel()))
    return (f"{int((~close).sum())} value(s) beyond {rtol:g} relative, first at index {i}: "
            f"expected {expected.ravel()[i]!r}, got {got.ravel()[i]!r}")


def compare(expected: Snapshot, got: Snapshot,
            lowest_two_losses: Callable[[int], tuple[float, float] | None],
            where: str) -> Comparison:
    """Compare today's :class:`Snapshot` of a model with the stored one (``where`` names the
    model: "recipe on dataset").

    Round by round, the terms' descriptions must be equal and the coefficients within
    :data:`COEFFICIENT_RTOL` of the round's largest. At the first round
    whose term differs, ``lowest_two_losses(t)`` gives the two lowest losses of round t's
    search, recomputed by today's code fitted up to round t, or ``None`` when the recipe's
    proposal does not expose them (a stump search does: ``StumpLearner.lowest_two_losses``):
    within :data:`NEAR_TIE` of each other the round is a tie, reported in ``tie``, and nothing
    after it is compared; otherwise, or without them, it fails. Then every term's structure must
    be equal and each of its floats and float arrays within :data:`COEFFICIENT_RTOL` of its
    largest magnitude; the decision function within :data:`DECISION_RTOL` of the largest margin
    on the held-out rows; the test accuracy the same. Errors are relative to an array's scale,
    not to each value: a value that is the difference of two larger ones (a margin whose votes
    cancel, a naive-Bayes score of nearly equal log-likelihoods) carries their rounding. Under
    OpenBLAS's SSE3 or AVX kernels instead of its AVX2 ones, optimal-linear-adaboost's scores
    on spambase moved by up to 9e-9 of themselves, and by 2.5e-11 of their array's largest;
    every decision function by less than 1e-14 of its largest margin.
    """
    failures = []
    rounds_e, rounds_g = expected.summary["rounds"], got.summary["rounds"]
    for t, (e, g) in enumerate(zip(rounds_e, rounds_g), start=1):
        if e["term"] != g["term"]:
            # Nothing after round t is compared; the terms before it are, when every round added
            # one (a back-fitting round replaces an earlier term: term t - 1 may come later).
            if all(len(s.summary["terms"]) == len(s.summary["rounds"]) for s in (expected, got)):
                failures += _compare_terms(expected, got, t - 1, where)
            losses = lowest_two_losses(t)
            if losses is not None and _is_tie(*losses):
                return Comparison(tuple(failures), (
                    f"{where}, round {t}: a tie within {TIE_TOLERANCE:g} between {e['term']} "
                    f"and {g['term']} (losses {losses[0]!r}, {losses[1]!r}); later rounds not "
                    f"compared"))
            why = ("the proposal does not expose its search's two best losses"
                   if losses is None else
                   f"its search's two best losses {losses[0]!r} and {losses[1]!r} are no tie")
            return Comparison((*failures, f"{where}, round {t}: term {e['term']} expected, got "
                                          f"{g['term']} ({why})"))
        far = _first_far(e["coefficients"], g["coefficients"], COEFFICIENT_RTOL, normwise=True)
        if far:
            failures.append(f"{where}, round {t} ({e['term']}): coefficients {far}")
    stop_e, stop_g = expected.summary["stop_reason"], got.summary["stop_reason"]
    if len(rounds_e) != len(rounds_g) or stop_e != stop_g:
        failures.append(f"{where}: {len(rounds_e)} rounds ending {stop_e!r} expected, got "
                        f"{len(rounds_g)} ending {stop_g!r}")
    terms_e, terms_g = expected.summary["terms"], got.summary["terms"]
    if len(terms_e) != len(terms_g):
        failures.append(f"{where}: {len(terms_e)} terms expected, got {len(terms_g)}")
    failures += _compare_terms(expected, got, len(terms_e), where)
    far = _first_far(expected.decision_function, got.decision_function, DECISION_RTOL,
                     normwise=True)
    if far:
        failures.append(f"{where}: decision function on the held-out rows: {far}")
    accuracy_e, accuracy_g = expected.summary["test_accuracy"], got.summary["test_accuracy"]
    if accuracy_e != accuracy_g:
        failures.append(f"{where}: test accuracy {accuracy_e!r} expected, got {accuracy_g!r}")
    return Comparison(tuple(failures))


def _compare_terms(expected: Snapshot, got: Snapshot, n_terms: int, where: str) -> list[str]:
    """Failures of the first ``n_terms`` terms: their structures must be equal, and each of their
    floats and float arrays within :data:`COEFFICIENT_RTOL` of its largest magnitude."""
    failures = []
    start_e = start_g = 0
    terms = zip(expected.summary["terms"][:n_terms], got.summary["terms"][:n_terms])
    for k, (e, g) in enumerate(terms):
        size_e, size_g = sum(e["sizes"]), sum(g["sizes"])
        numbers_e = expected.term_numbers[start_e:start_e + size_e]
        numbers_g = got.term_numbers[start_g:start_g + size_g]
        start_e, start_g = start_e + size_e, start_g + size_g
        if ((e["hypothesis"], e["contribution"], e["sizes"])
                != (g["hypothesis"], g["contribution"], g["sizes"])):
            failures.append(f"{where}, term {k}: hypothesis {e['hypothesis']} and contribution "
                            f"{e['contribution']} expected, got {g['hypothesis']} and "
                            f"{g['contribution']}")
            continue
        bounds = np.cumsum([0, *e["sizes"]])
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            far = _first_far(numbers_e[lo:hi], numbers_g[lo:hi], COEFFICIENT_RTOL, normwise=True)
            if far:
                failures.append(f"{where}, term {k} ({e['hypothesis']['name']}): numbers "
                                f"{lo}..{hi - 1}: {far}")
    return failures


def _is_tie(lowest: float, second: float) -> bool:
    return math.isfinite(second) and second - lowest <= NEAR_TIE * abs(lowest)


class _LowestTwoAtRound:
    """Observer: the proposal's two lowest losses at the start of round ``at`` (under D_t)."""

    def __init__(self, proposal, at: int) -> None:
        self.proposal, self.at, self.losses = proposal, at, None

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        if self.at == 1:
            self.losses = self.proposal.lowest_two_losses(state)

    @boostkit.hookimpl
    def boostkit_round_end(self, state, record):
        if record.round == self.at - 1:
            self.losses = self.proposal.lowest_two_losses(state)


def lowest_two_losses_at(recipe: str, data: Sample, t: int) -> tuple[float, float] | None:
    """The two lowest losses of round ``t``'s search in today's fit of ``recipe`` on ``data``
    (fitted up to round t), or ``None`` when its proposal does not expose them."""
    components = boostkit.get_registry().instantiate(boostkit.Booster(recipe).recipe())
    proposal = next(c for role, c in components if role == "proposal")
    if not hasattr(proposal, "lowest_two_losses"):
        return None
    observer = _LowestTwoAtRound(proposal, t)
    fit(recipe, data, n_rounds=t, observers=[observer])
    return observer.losses


def key(dataset: str, recipe: str) -> str:
    return f"{dataset}/{recipe}"


def reference_models(recipes=None) -> dict[str, Snapshot]:
    """The :class:`Snapshot` of ``recipes`` (default: every registered one) on every reference
    dataset that they accept, keyed by :func:`key`."""
    names = sorted(recipes if recipes is not None else boostkit.get_registry().algorithms())
    snapshots = {}
    for dataset in DATASETS:
        data = sample(dataset)
        for recipe in names:
            try:
                model = fit(recipe, data)
            except (boostkit.DataError, boostkit.RecipeError):
                continue  # the recipe refuses the dataset's missing values or categories
            snapshots[key(dataset, recipe)] = snapshot(model, data)
    return snapshots


def write(snapshots: dict[str, Snapshot]) -> None:
    """Write :data:`MODELS` and :data:`ARRAYS`, each through a temporary file, so that a failed
    write leaves the stored reference as it was."""
    summaries = {name: s.summary for name, s in snapshots.items()}
    arrays = {f"{name}/{field}": getattr(s, field) for name, s in snapshots.items()
              for field in ("term_numbers", "decision_function")}
    models_tmp, arrays_tmp = MODELS.with_suffix(".json.tmp"), ARRAYS.with_suffix(".tmp.npz")
    try:
        models_tmp.write_text(json.dumps(summaries, sort_keys=True, separators=(",", ":")))
        np.savez_compressed(arrays_tmp, **arrays)
        models_tmp.replace(MODELS)
        arrays_tmp.replace(ARRAYS)
    finally:
        models_tmp.unlink(missing_ok=True)
        arrays_tmp.unlink(missing_ok=True)


def stored() -> dict[str, Snapshot]:
    """The stored reference, keyed by :func:`key`."""
    summaries = json.loads(MODELS.read_text())
    with np.load(ARRAYS) as arrays:
        return {name: Snapshot(summary, arrays[f"{name}/term_numbers"],
                               arrays[f"{name}/decision_function"])
                for name, summary in summaries.items()}


if __name__ == "__main__":
    write(reference_models())
    print(f"wrote {MODELS} and {ARRAYS}", file=sys.stderr)
