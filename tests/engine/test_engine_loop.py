"""The boosting loop (boostkit.engine.Booster): reproducibility, threads, round records and
argument checks (DESIGN.md, "Data and speed": same seed, same model, bit for bit)."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import datasets
from boostkit_adaboost import Stump

RECORD_FIELDS = ["round", "hypothesis", "weighted_error", "edge", "z", "error_bound",
                 "training_error", "coefficients", "stop_reason", "extra"]


@pytest.fixture(scope="module")
def german_credit():
    data = datasets.load("german_credit", encode="onehot")
    return data.X, data.y


def fit(X, y, algorithm="real-adaboost", **booster):
    return boostkit.Booster(algorithm, **{"n_rounds": 30, "random_state": 7, **booster}).fit(X, y)


@pytest.mark.parametrize("algorithm", ["adaboost", "real-adaboost"])
def test_same_seed_gives_a_bit_identical_model(german_credit, algorithm):
    X, y = german_credit
    first, second = fit(X, y, algorithm), fit(X, y, algorithm)
    assert first.n_rounds == 30
    assert first.records == second.records
    assert first.hypotheses == second.hypotheses
    assert first.decision_function(X).tobytes() == second.decision_function(X).tobytes()


@pytest.mark.parametrize("algorithm", ["adaboost", "real-adaboost"])
def test_two_threads_give_the_same_model_as_one(german_credit, algorithm):
    """The same stumps in the same order, and equal numbers up to rounding.

    Two threads sum the histograms in another order; german_credit has stumps of exactly equal
    loss (the complementary one-hot columns foreign_worker=no / =yes), and best_split's tie
    tolerance must keep rounding from choosing between them.
    """
    X, y = german_credit
    serial, parallel = fit(X, y, algorithm, n_jobs=1), fit(X, y, algorithm, n_jobs=2)
    assert parallel.n_rounds == serial.n_rounds == 30
    assert [r.hypothesis for r in parallel.records] == [r.hypothesis for r in serial.records]
    for a, b in zip(serial.records, parallel.records):
        for field in ("weighted_error", "z", "error_bound", "training_error"):
            assert getattr(b, field) == pytest.approx(getattr(a, field), rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(
            sorted(b.coefficients), sorted(a.coefficients), rtol=1e-12, atol=1e-15
        )
    for stage_serial, stage_parallel in zip(serial.staged_decision_function(X),
                                            parallel.staged_decision_function(X)):
        np.testing.assert_allclose(stage_parallel, stage_serial, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("algorithm", ["adaboost", "real-adaboost", "weightboost"])
def test_threads_give_the_one_thread_model_bit_for_bit_on_wide_data(monkeypatch, algorithm):
    """musk2 (6 598 x 166) on threads: its histograms give each thread groups of features
    (``by_feature_groups``), which sum every example in order, and its passes over 6 598
    examples run on one thread, so two threads give the one-thread model exactly. Both fits sum
    every round's histogram, round by round (a compiled batch runs on one thread only)."""
    from boostkit.kernels import blocks, histogram

    monkeypatch.setattr(blocks, "MIN_THREADED_UPDATES", 0)  # threads for every histogram
    monkeypatch.setattr(blocks, "ADAPTIVE", False)
    data = datasets.load("musk2")
    assert histogram.by_feature_groups(np.zeros((data.X.shape[1], data.X.shape[0]), np.uint8))
    exact = {"n_rounds": 12, "histogram": "exact", "compiled_rounds": False}
    serial = fit(data.X, data.y, algorithm, n_jobs=1, **exact)
    parallel = fit(data.X, data.y, algorithm, n_jobs=2, **exact)
    assert parallel.records == serial.records
    assert (parallel.decision_function(data.X).tobytes()
            == serial.decision_function(data.X).tobytes())


def test_all_cores_is_accepted(german_credit):
    X, y = german_credit
    assert fit(X, y, n_jobs=-1, n_rounds=3).n_rounds == 3


def test_records_have_the_documented_fields(german_credit):
    X, y = german_credit
    model = fit(X, y)
    assert [f.name for f in attrs.fields(boostkit.RoundRecord)] == RECORD_FIELDS
    assert [r.round for r in model.records] == list(range(1, model.n_rounds + 1))
    bound = 1.0
    for record in model.records:
        assert isinstance(record.hypothesis, str) and record.hypothesis
        assert 0.0 <= record.weighted_error <= 1.0
        assert record.edge == 0.5 - record.weighted_error
        bound *= record.z
        assert record.error_bound == pytest.approx(bound, rel=1e-9)  # prod_s Z_s, Wilbur et al. 2005, Theorem 1
        assert 0.0 <= record.training_error <= 1.0
        assert all(math.isfinite(c) for c in record.coefficients)
        assert len(record.coefficients) == 2  # one value per stump side (Wilbur et al. 2005, eq. 10-11)
    assert model.error_bound == model.records[-1].error_bound


def test_stop_reason_only_on_the_last_record(german_credit):
    X, y = german_credit
    model = fit(X, y)
    assert model.stop_reason == "max-rounds"
    assert [r.stop_reason for r in model.records[:-1]] == [None] * (model.n_rounds - 1)
    assert model.records[-1].stop_reason == "max-rounds"


def test_early_stop_is_recorded_on_the_last_record():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = boostkit.Booster("adaboost", n_rounds=10).fit(X, [0, 0, 1, 1])
    assert model.n_rounds == 1
    assert model.stop_reason == "perfect-fit"
    assert model.records[-1].stop_reason == "perfect-fit"


def test_staged_decision_function_ends_at_the_decision_function(german_credit):
    X, y = german_credit
    model = fit(X, y, n_rounds=5)
    stages = list(model.staged_decision_function(X))
    assert len(stages) == 5
    np.testing.assert_array_equal(stages[-1], model.decision_function(X))
    assert not np.array_equal(stages[0], stages[-1])


@pytest.mark.parametrize("n_rounds", [0, -3, 2.5, True, "10"])
def test_bad_round_budget_is_refused(n_rounds):
    with pytest.raises(ValueError, match="n_rounds must be a positive integer"):
        boostkit.Booster(n_rounds=n_rounds)


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, False])
def test_bad_thread_count_is_refused(n_jobs):
    with pytest.raises(ValueError, match="n_jobs must be a positive integer or -1"):
        boostkit.Booster(n_jobs=n_jobs)


# -- back-fitting: a round may re-fit an earlier term (Wilbur et al. 2005, section 3.3) ------------


@attrs.define
class _AlternatingStumps(boostkit.Proposal):
    """Proposes the stumps x[0] <= 0 and x[1] <= 0 in turn, forever."""

    name = "test-alternating-stumps"

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        feature = (state.round - 1) % 2
        hypothesis = Stump(feature, 0.0, np.array([-1.0, 1.0]))
        return boostkit.Candidate(hypothesis, state.data.X)


@attrs.define
class _BackfittedCells(boostkit.Calibration):
    """Schapire-Singer cell values, re-fitting the earlier term of the same stump if there is one."""

    name = "test-backfitted-cells"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        previous = next((j for j, h in enumerate(state.hypotheses)
                         if h.feature == candidate.hypothesis.feature), None)
        removed = None
        margin = state.margin
        if previous is not None:  # D_t without the old term: weights from F - c_old
            removed = state.contributions[previous].values(candidate, state.margin)
            margin = state.margin - removed
        d = state.data.sample_weight * np.exp(-state.data.y * margin)
        d /= d.sum()
        cells = candidate.cells
        wpos = np.bincount(cells, d * (state.data.y > 0), minlength=2)
        wneg = np.bincount(cells, d * (state.data.y < 0), minlength=2)
        values = 0.5 * np.log((wpos + 1e-12) / (wneg + 1e-12))  # the exact minimiser
        return boostkit.Calibrated(boostkit.CellContribution(values), values[cells], tuple(values),
                                   replaces=previous, removed_values=removed)


def test_a_backfitting_round_replaces_the_earlier_term(in_process_plugin, noisy_data):
    X, y = noisy_data
    in_process_plugin("backfit", components=(_AlternatingStumps, _BackfittedCells))
    recipe = boostkit.Recipe(name="backfit", proposal="test-alternating-stumps",
                             calibration="test-backfitted-cells", reweighting="exponential")
    model = boostkit.Booster(recipe, n_rounds=8).fit(X, y)
    assert len(model.records) == 8 and model.n_rounds == 2
    assert [h.feature for h in model.hypotheses] == [0, 1]
    # The margins the engine kept equal the two final terms: the last record's training error
    # is the error of the model's decision function.
    y_signed = np.where(y == model.classes[1], 1.0, -1.0)
    assert model.records[-1].training_error == pytest.approx(
        np.mean(y_signed * model.decision_function(X) <= 0), abs=1e-12)
    # Coordinate descent on a convex potential: the bound never increases.
    bounds = [r.error_bound for r in model.records]
    assert all(b <= a + 1e-12 for a, b in zip(bounds, bounds[1:]))


def test_replacing_a_missing_term_is_refused():
    # With rows, a replacement needs the replaced term's values; removed values need a term.
    with pytest.raises(ValueError, match="replaces needs removed_values"):
        boostkit.Calibrated(boostkit.LinearContribution(1.0), np.zeros(3), (1.0,), replaces=0)
    with pytest.raises(ValueError, match="give replaces with them"):
        boostkit.Calibrated(boostkit.LinearContribution(1.0), np.zeros(3), (1.0,),
                            removed_values=np.zeros(3))
    # Without rows (a distributed fit) the data plane removes the old term where the rows live.
    assert boostkit.Calibrated(boostkit.LinearContribution(1.0), None, (1.0,),
                               replaces=0).replaces == 0


@attrs.define
class _HugePotential(boostkit.Reweighting):
    """Uniform weights, and a potential of e^1000: beyond what a float holds."""

    name = "test-huge-potential"

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        n = state.data.n_samples
        return boostkit.Weights(np.full(n, 1.0 / n), log_potential=1000.0 * state.round)


def test_a_potential_beyond_float_range_records_an_infinite_bound(in_process_plugin, noisy_data):
    X, y = noisy_data
    in_process_plugin("huge", components=(_HugePotential,))
    recipe = boostkit.Recipe(name="huge", proposal="stump", calibration="constant-alpha",
                             reweighting="test-huge-potential")
    model = boostkit.Booster(recipe, n_rounds=2).fit(X, y)
    assert [r.error_bound for r in model.records] == [math.inf, math.inf]
    assert [r.z for r in model.records] == [math.inf, math.inf]
