"""The compiled forms of the AdaBoost family's components (boostkit_compiled_form) against values
computed by hand: the stump's searches (weighted error, Z, gentle's squared error) and the
stump each builds, constant-alpha's, domain-partition's and gentle-step's cell values,
exponential's factors, no-edge's reasons; and where the stump declines."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.compiled import (CALIBRATION, REWEIGHTING, STOPPING, CompiledCalibration,
                               CompiledProposal, CompiledReweighting, CompiledStopping,
                               compile_form)
from boostkit.criteria import z_loss
from boostkit.engine import BoostState
from boostkit.data import TrainingData
from boostkit.kernels.splits import lowest_error_cut
from boostkit.splits import TIE_TOLERANCE, histogram, valid_splits
from boostkit_adaboost.coefficients import constant_alpha_values, domain_partition_values
from boostkit_adaboost.reweighting import exponential_log_factors
from boostkit_adaboost.stopping import no_edge_code
from boostkit_adaboost.stumps import Stump, StumpLearner, compiled_search
from boostkit_additive.gentle import gentle_step_values

# Two features, three bins each (class weights: [..., 0] negatives, [..., 1] positives).
HIST = np.array([
    [[0.30, 0.05], [0.05, 0.10], [0.00, 0.00]],   # feature 0: cut after bin 0 errs 0.05 + 0.05
    [[0.10, 0.10], [0.10, 0.10], [0.05, 0.05]],   # feature 1: no better than a coin
])
VALID = np.ones((2, 2), dtype=bool)
VALID[0, 1] = False  # feature 0's bin 2 is empty: nothing on the right of a cut after bin 1


def _search(criterion, hist=HIST, valid=VALID):
    scores = np.empty((hist.shape[0], hist.shape[1] - 1))
    sides, cell_scores = np.empty((2, 2)), np.empty(2)
    k = compiled_search(criterion)(np.ascontiguousarray(hist), valid, scores, sides, cell_scores,
                                   np.zeros(0))
    return k, scores, sides, cell_scores


def test_the_error_search_finds_the_cut_of_least_weighted_error():
    k, _, sides, cell_scores = _search("error")
    assert k == 0  # feature 0, after bin 0: errs 0.05 + 0.05; feature 1's best 0.1 + 0.15
    np.testing.assert_allclose(sides, [[0.30, 0.05], [0.05, 0.10]])  # neg (l, r), pos (l, r)
    np.testing.assert_array_equal(cell_scores, [-1.0, 1.0])  # majorities: left -, right +


def _check_the_cut_of_lowest_error_cut(hist, valid):
    # The same cut and the same sides, bit for bit, as the engine's search.
    d, n_bins, _ = hist.shape
    expected_sides = np.empty((2, 2))
    expected = lowest_error_cut(hist, valid, TIE_TOLERANCE, np.empty((d, n_bins - 1)),
                                expected_sides)
    k, _, sides, _ = _search("error", hist=hist, valid=valid)
    assert k == expected
    if k >= 0:
        np.testing.assert_array_equal(sides, expected_sides)


@settings(max_examples=200)
@given(st.integers(1, 9), st.integers(2, 40), st.integers(2, 80), st.integers(0, 2**32 - 1),
       st.booleans())
@example(d=9, n_bins=4, n=9, seed=33, sparse=True)  # a cut of error 0, ~1e-17 as totals' rest
def test_the_error_search_chooses_the_cut_of_lowest_error_cut(d, n_bins, n, seed, sparse):
    # On the histograms of rows (every feature's bins sum to the same totals), including cuts
    # whose right side as the class totals' rest errs by an ulp.
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins - 1, (d, n)).astype(np.uint8)
    weights = rng.random(n) ** 4  # spread over orders of magnitude, as boosting's weights
    if sparse:
        weights[rng.random(n) < 0.5] = 0.0
    weights[0] = 1.0
    weights /= weights.sum()
    is_pos = rng.integers(0, 2, n).astype(np.uint8)
    hist = histogram(codes, weights, is_pos, n_bins)
    counts = np.stack([np.bincount(row, minlength=n_bins) for row in codes]).astype(np.int64)
    valid = np.ascontiguousarray(valid_splits(counts))
    _check_the_cut_of_lowest_error_cut(hist, valid)


def test_the_error_search_takes_the_first_of_two_perfect_splits():
    # Features 1 and 2 both separate the classes: error exactly 0 on suffix sums. Feature 1
    # sums its negatives in another order than feature 0, so the totals' rest leaves it 5.6e-17
    # and feature 2 (summed as feature 0) an exact 0: the first, feature 1's, is still chosen.
    weights = np.array([0.64, 0.27, 0.04, 0.02, 0.81, 0.91])
    weights /= weights.sum()
    is_pos = np.array([0, 0, 0, 1, 1, 1], dtype=np.uint8)
    codes = np.array([[1, 1, 1, 0, 2, 2],    # feature 0: negatives between positives
                      [1, 0, 0, 2, 2, 2],    # feature 1: negatives in bins 0 and 1
                      [0, 0, 0, 1, 2, 2]],   # feature 2: negatives in bin 0
                     dtype=np.uint8)
    hist = histogram(codes, weights, is_pos, 4)
    valid = np.ones((3, 3), dtype=bool)
    total_neg = hist[0, :, 0].sum()
    assert total_neg - (hist[1, 0, 0] + hist[1, 1, 0]) > 0.0  # the totals' rest errs
    assert lowest_error_cut(hist, valid, TIE_TOLERANCE, np.empty((3, 3)), np.empty((2, 2))) == 4
    _check_the_cut_of_lowest_error_cut(hist, valid)
    k, _, sides, _ = _search("error", hist=hist, valid=valid)
    assert k == 4 and sides[1, 0] == 0.0 and sides[0, 1] == 0.0  # nothing on the wrong side


def test_the_z_search_scores_two_sqrt_products():
    # ``scores`` is scratch: the loss is the chosen cut's, from the sides it returns.
    k, _, sides, _ = _search("z")
    z = 2 * (math.sqrt(0.30 * 0.05) + math.sqrt(0.05 * 0.10))
    assert k == 0 and z_loss(sides[1], sides[0]) == pytest.approx(z)


def test_the_squared_error_search_scores_what_a_cell_mean_leaves():
    k, _, sides, _ = _search("squared-error")

    def left(n, p):
        return (n + p) - (p - n) ** 2 / (n + p)

    loss = sum(left(n, p) for n, p in zip(sides[0], sides[1]))
    assert k == 0 and loss == pytest.approx(left(0.30, 0.05) + left(0.05, 0.10))


def test_without_a_valid_cut_the_search_gives_the_constant_stump():
    k, _, sides, cell_scores = _search("error", valid=np.zeros((2, 2), dtype=bool))
    assert k == -1
    np.testing.assert_allclose(sides, [[0.35, 0.0], [0.15, 0.0]])
    np.testing.assert_array_equal(cell_scores, [-1.0, -1.0])  # the empty cell: a tie, -1


def test_an_unknown_criterion_has_no_search():
    assert compiled_search("gini") is None


def _state(X, y, **data_options):
    data = TrainingData(X, y, None, max_bins=255, rng=np.random.default_rng(0), **data_options)
    return BoostState(data=data, weights=data.initial_weights, margin=np.zeros(len(y)),
                      n_rounds=1, rng=np.random.default_rng(0), hook=None, n_jobs=1)


def test_the_stumps_form_builds_the_stump_of_the_cut_and_reuses_it():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    state = _state(X, np.array([0, 0, 1, 1]))
    form = StumpLearner().boostkit_compiled_form(state=state)
    assert isinstance(form, CompiledProposal) and form.search("error") is compiled_search("error")
    scores = [-1.0, 1.0]
    stump = form.hypothesis(0, 1, [0.5, 0.0], [0.0, 0.5], scores)
    assert stump == Stump(0, state.data.binned.thresholds[0][1], scores, True)
    np.testing.assert_array_equal(stump.cells(X), [0, 0, 1, 1])
    assert form.hypothesis(0, 1, [0.5, 0.0], [0.0, 0.5], scores) is stump
    assert form.hypothesis(0, 1, [0.1, 0.0], [0.0, 0.5], scores).missing_left is False
    constant = form.hypothesis(0, -1, [0.5, 0.0], [0.5, 0.0], [-1.0, -1.0])
    assert constant.describe() == "constant -1"


@pytest.mark.parametrize("case", ["missing", "categorical", "tie_order", "classes"])
def test_the_stump_declines_what_its_search_does_not_cover(case):
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    options, learner = {}, StumpLearner()
    if case == "missing":
        X[0, 0] = np.nan
        options["allow_missing"] = True
    elif case == "categorical":
        options["features"] = boostkit.FeatureSchema.learn(X, [0])[0]
    elif case == "tie_order":
        learner = StumpLearner(tie_order=lambda state: (lambda counts, depth: np.zeros(1)))
    else:
        y = np.array([0, 1, 2, 1])
    assert learner.boostkit_compiled_form(state=_state(X, y, **options)) is None


def _values(function, wneg, wpos, cell_scores, params, n_coefficients):
    values, coefficients = np.empty(2), np.empty(n_coefficients)
    compile_form(function, CALIBRATION)(np.array(wneg), np.array(wpos), np.array(cell_scores, dtype=float),
                                        np.atleast_1d(np.array(params, dtype=float)), values,
                                        coefficients)
    return values, coefficients


def test_constant_alpha_values():
    values, (alpha,) = _values(constant_alpha_values, [0.6, 0.1], [0.1, 0.2], [-1.0, 1.0],
                               0.0, 1)
    eps = 0.1 + 0.1  # left labelled -1 errs on its positives, right +1 on its negatives
    assert alpha == pytest.approx(0.5 * math.log((1 - eps) / eps))
    np.testing.assert_allclose(values, [-alpha, alpha])
    values, _ = _values(constant_alpha_values, [0.6, 0.1], [0.1, 0.2], [-1.0, 0.5], 0.0, 1)
    assert np.isnan(values[1])  # a score that is not +-1: the batch stops with an error


def test_domain_partition_and_gentle_step_values():
    s = 0.01
    values, coefficients = _values(domain_partition_values, [0.6, 0.1], [0.1, 0.2], [-1, 1], s, 2)
    np.testing.assert_allclose(values, [0.5 * math.log(0.11 / 0.61), 0.5 * math.log(0.21 / 0.11)])
    np.testing.assert_array_equal(values, coefficients)
    values, coefficients = _values(gentle_step_values, [0.6, 0.0], [0.2, 0.0], [-1, -1], 0.0, 2)
    np.testing.assert_allclose(values, [(0.2 - 0.6) / 0.8, 0.0])  # an empty cell: 0


def test_exponential_factors_and_no_edge_codes():
    out = np.empty((2, 2))
    compile_form(exponential_log_factors, REWEIGHTING)(np.array([0.3, -0.2]), np.zeros(0), out)
    np.testing.assert_array_equal(out, [[0.3, -0.3], [-0.2, 0.2]])
    stop = compile_form(no_edge_code, STOPPING)
    params = np.array([0.0])
    assert stop(1, 0.0, 0.5, 0.0, params) == 1  # perfect fit
    assert stop(1, 0.5, 1.0, 0.3, params) == 2  # no edge
    assert stop(1, 0.2, 1.0 - 1e-13, 0.3, params) == 2  # Z_t ~ 1: no progress
    assert stop(1, 0.2, np.nan, 0.3, params) == 0  # no potential: Z_t is not asked
    assert stop(1, 0.45, 0.9, 0.3, np.array([0.1])) == 2  # edge 0.05 <= min_edge


def test_the_components_answer_with_their_roles_forms():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    state = _state(X, np.array([0, 0, 1, 1]))
    from boostkit_adaboost import ConstantAlpha, DomainPartition, ExponentialReweighting, NoEdge
    from boostkit_additive import GentleStep

    for component, kind, criterion in ((ConstantAlpha(), CompiledCalibration, "error"),
                                       (DomainPartition(), CompiledCalibration, "z"),
                                       (GentleStep(), CompiledCalibration, "squared-error")):
        form = component.boostkit_compiled_form(state=state)
        assert isinstance(form, kind) and form.criterion == criterion
    assert isinstance(ExponentialReweighting().boostkit_compiled_form(state=state),
                      CompiledReweighting)
    form = NoEdge(min_edge=0.1).boostkit_compiled_form(state=state)
    assert isinstance(form, CompiledStopping) and form.reasons == ("perfect-fit", "no-edge")
    assert form.params.tolist() == [0.1]
