"""The PAV family (Wilbur et al. 2005) on shards: what distributes gives the single-machine
model (same terms, coefficients within 1e-12) on any split of the rows and after a lost shard;
what does not is refused, naming the component and why, before any shard is built."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import distributed as dist
from boostkit.datasets import load
from boostkit.errors import RecipeError

N_ROUNDS = 30  # three cycles over the nine columns: two of them back-fit every term
BACK_FITTING = ("pav-adaboost-finite", "linear-adaboost-finite")


@pytest.fixture(scope="module")
def cancer():
    data = load("breast_cancer_wisconsin", dropna=True)
    return data.X, data.y


@pytest.fixture(scope="module")
def spambase():
    """600 rows of spambase: word frequencies, mostly 0, for naive Bayes's presence."""
    data = load("spambase")
    rows = np.random.default_rng(0).permutation(data.X.shape[0])[:600]
    return data.X[rows], data.binary_target()[rows]


@pytest.fixture(scope="module")
def reference(cancer, spambase):
    X, y = cancer
    models = {name: boostkit.Booster(name, n_rounds=N_ROUNDS).fit(X, y) for name in BACK_FITTING}
    models["optimal-linear-adaboost"] = boostkit.Booster("optimal-linear-adaboost",
                                                         n_rounds=15).fit(*spambase)
    return models


def _data(name, cancer, spambase):
    return spambase if name == "optimal-linear-adaboost" else cancer


def _booster(name, **kwargs):
    return boostkit.Booster(name, n_rounds=15 if name == "optimal-linear-adaboost" else N_ROUNDS,
                            **kwargs)


def _parts(X, y, bounds):
    return [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _even(n, k):
    return np.linspace(0, n, k + 1).astype(int)


def assert_same_terms(a, b, tol, rtol=0.0):
    """Two hypotheses or contributions of one kind, every field equal (numbers and arrays
    within ``tol`` and ``rtol``; a score column's bin edges exactly)."""
    assert type(a) is type(b)
    for field in attrs.fields(type(a)):
        if not field.init:
            continue
        x, z = getattr(a, field.name), getattr(b, field.name)
        if field.name == "thresholds":
            np.testing.assert_array_equal(z, x)
        elif isinstance(x, (float, np.ndarray)):
            np.testing.assert_allclose(z, x, rtol=rtol, atol=tol)
        else:
            assert z == x


def assert_same_model(ref, model, X, tol=1e-12):
    """The same terms (hypotheses and contributions field by field), the records' numbers
    within ``tol``, the same decision function.

    A naive Bayes score's weights ln(p (1-q) / (q (1-p))) are compared to 1e-11 relative as
    well: for a word in nearly every document 1 - p is a difference of nearly equal sums, so
    summing the rows in another order moves it by up to ~1e-12 (measured: 1.1e-12 at most on
    1 to 4 shards); the coefficients and the decision function stay within 1e-13."""
    assert len(model.hypotheses) == len(ref.hypotheses) and len(model.records) == len(ref.records)
    for a, b in zip(ref.hypotheses, model.hypotheses):
        assert_same_terms(a, b, tol, rtol=1e-11)
    for a, b in zip(ref.contributions, model.contributions):
        assert_same_terms(a, b, tol)
    for r, m in zip(ref.records, model.records):
        assert m.hypothesis == r.hypothesis
        assert m.extra == pytest.approx(r.extra, abs=tol)
        np.testing.assert_allclose(m.coefficients, r.coefficients, rtol=0, atol=tol)
        assert m.weighted_error == pytest.approx(r.weighted_error, abs=tol)
        assert m.training_error == pytest.approx(r.training_error, abs=tol)
        assert m.error_bound == pytest.approx(r.error_bound, rel=tol)
    assert model.stop_reason == ref.stop_reason
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), rtol=0,
                               atol=tol)


@pytest.mark.parametrize("recipe", [*BACK_FITTING, "optimal-linear-adaboost"])
@pytest.mark.parametrize("n_shards", [1, 2, 4])
def test_on_shards_the_model_is_the_single_machine_model(cancer, spambase, reference, recipe,
                                                         n_shards):
    X, y = _data(recipe, cancer, spambase)
    model, stats = dist.fit_on_shards(_booster(recipe),
                                      dist.LocalShards(_parts(X, y, _even(len(y), n_shards))))
    ref = reference[recipe]
    if recipe in BACK_FITTING:
        assert sum("replaces" in r.extra for r in ref.records) == N_ROUNDS - X.shape[1]
    assert_same_model(ref, model, X)
    assert stats.rounds == len(ref.records) and stats.replays == 0


@pytest.mark.parametrize("recipe", [*BACK_FITTING, "optimal-linear-adaboost"])
def test_on_uneven_shards(cancer, spambase, reference, recipe):
    X, y = _data(recipe, cancer, spambase)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    bounds = [0, 0, 5, 300, 300, len(y)]  # empty, tiny, one class only, empty, skewed
    model, _ = dist.fit_on_shards(_booster(recipe), dist.LocalShards(_parts(X, y, bounds)))
    assert_same_model(reference[recipe], model, X)


@pytest.mark.parametrize("recipe", [*BACK_FITTING, "optimal-linear-adaboost"])
def test_a_lost_shard_is_replayed_replacements_included(cancer, spambase, reference, recipe):
    X, y = _data(recipe, cancer, spambase)
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 3)))

    def lose(state, record):
        if record.round in (12, 14):  # after rounds that replaced a term, when back-fitting
            shards.lose(record.round % 3)

    model, stats = dist.fit_on_shards(_booster(recipe, callbacks=[lose]), shards)
    assert stats.replays == 2 and stats.replayed_terms == 12 + 14
    assert_same_model(reference[recipe], model, X)


@pytest.mark.parametrize("recipe", [*BACK_FITTING, "optimal-linear-adaboost"])
def test_sample_weights_with_zeros_on_shards(cancer, spambase, recipe):
    X, y = _data(recipe, cancer, spambase)
    w = np.random.default_rng(1).integers(0, 3, len(y)).astype(float)  # a third weigh 0
    booster = boostkit.Booster(recipe, n_rounds=12)
    bounds = [0, 100, 350, len(y)]
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(
        [(X[a:b], y[a:b], w[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]))
    assert_same_model(booster.fit(X, y, sample_weight=w), model, X)


def test_one_vs_rest_over_shards_fits_each_class_as_one_machine():
    data = load("contraceptive")
    booster = boostkit.Booster("pav-adaboost-finite", n_rounds=12, multiclass="one-vs-rest")
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(
        _parts(data.X, data.y, _even(len(data.y), 2))))
    ref = booster.fit(data.X, data.y)
    assert len(model.models) == len(ref.models) == 3
    for a, b in zip(ref.models, model.models):
        assert_same_model(a, b, data.X)


def test_the_shards_keep_raw_values_only_for_a_component_that_reads_them(cancer):
    X, y = cancer
    for recipe, params, kept in [("pav-adaboost-finite", {}, True),
                                 ("pav-adaboost-finite", {"proposal": {"orient": False}}, False),
                                 ("linear-adaboost-finite", {"proposal": {"orient": False}}, True),
                                 ("adaboost", {}, False)]:
        shards = dist.LocalShards(_parts(X, y, _even(len(y), 2)))
        dist.fit_on_shards(boostkit.Booster(recipe, n_rounds=2, params=params), shards)
        assert all((s.values is not None) == kept for s in shards.shards)
        if kept:
            np.testing.assert_array_equal(np.concatenate([s.values for s in shards.shards]), X)


def test_pav_finite_without_orientation_on_shards(cancer):
    X, y = cancer
    booster = boostkit.Booster("pav-adaboost-finite", n_rounds=12,
                               params={"proposal": {"orient": False}})
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 2))))
    assert_same_model(booster.fit(X, y), model, X)


@pytest.mark.parametrize("recipe, params, culprit", [
    ("pav-adaboost", {}, "proposal 'cmass' projects .* quantiles of all the rows"),
    ("pav-adaboost-finite", {"calibration": {"bins": None}},
     r"calibration 'pav' in its pure form \(bins=None\) pools every distinct training score"),
    (boostkit.Recipe(name="nscore-pav", proposal="nscore", calibration="pav",
                     reweighting="exponential"), {}, "proposal 'nscore' chooses the heaviest"),
])
def test_what_needs_every_row_is_refused_naming_it(cancer, recipe, params, culprit):
    X, y = cancer
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 2)))
    with pytest.raises(RecipeError, match=f"cannot run distributed: {culprit}"):
        dist.fit_on_shards(boostkit.Booster(recipe, n_rounds=3, params=params), shards)
    assert shards.plan is None  # refused before any shard was built


def test_pav_without_ordered_cells_is_refused_on_a_candidate_without_rows():
    from boostkit_pav import PavCalibration, Projection

    candidate = boostkit.Candidate(Projection(np.ones(2)),
                                   bin_cells=boostkit.BinCells(0, np.zeros(4, dtype=np.uint8)))
    with pytest.raises(ValueError, match="quantile bins of every training score"):
        PavCalibration().boostkit_calibrate(state=None, candidate=candidate)


def test_a_term_replaced_without_rows_needs_no_removed_values():
    contribution = boostkit.CellContribution(np.zeros(2))
    assert boostkit.Calibrated(contribution, None, (0.0,), replaces=0).replaces == 0
    with pytest.raises(ValueError, match="replaces needs removed_values"):
        boostkit.Calibrated(contribution, np.zeros(3), (0.0,), replaces=0)
    with pytest.raises(ValueError, match="give replaces with them"):
        boostkit.Calibrated(contribution, np.zeros(3), (0.0,), removed_values=np.zeros(3))


def test_a_candidate_without_rows_says_so():
    from boostkit_pav import NaiveBayesScore

    hypothesis = NaiveBayesScore(0.0, np.ones(2), 0.0)
    with pytest.raises(TypeError, match="rows_elsewhere=True"):
        boostkit.Candidate(hypothesis)
    assert not boostkit.Candidate(hypothesis, rows_elsewhere=True).has_rows


def test_reductions_that_are_not_sums_combine_their_own_way():
    from boostkit.plane import combine_reductions
    from boostkit_pav.calibrations import ScoreRange

    answers = [np.array([-1.0, 2.0, -np.inf]), np.array([3.0, -5.0, 0.5])]
    np.testing.assert_array_equal(combine_reductions(ScoreRange(None), answers), [3.0, 2.0, 0.5])
    np.testing.assert_array_equal(combine_reductions(lambda rows: None, answers),
                                  [2.0, -3.0, -np.inf])
