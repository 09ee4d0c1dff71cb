"""LogitBoost (FHT Algorithm 3) on shards: the single-machine model on any split of the rows.

``logit-stump`` chooses from the class histograms of w and of w|z| summed where the rows live
(``state.class_histogram()``, ``state.reduce``), ``logit-step`` from the chosen cells' sums and
``logit-weights`` has a row form, so the whole recipe distributes; the sums are added in
another order than on one machine, so the models agree to rounding (same terms, coefficients
and decision functions within 1e-12 of their scale). Multinomial LogitBoost fits one stump per
class from the rows and is refused, naming its proposal.
"""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit import distributed as dist
from boostkit.errors import RecipeError


def _parts(X, y, n_shards):
    bounds = np.linspace(0, len(y), n_shards + 1).astype(int)
    return dist.LocalShards([(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])])


def assert_close_models(ref, model, tol=1e-12):
    """The same cuts in every round; cell scores, coefficients and decision values within
    ``tol`` of their array's largest magnitude."""
    assert len(model.hypotheses) == len(ref.hypotheses)
    for a, b in zip(ref.hypotheses, model.hypotheses):
        assert (a.feature, a.threshold, a.missing_left) == (b.feature, b.threshold,
                                                            b.missing_left)
        scale = np.abs(a.cell_scores).max()
        np.testing.assert_allclose(b.cell_scores, a.cell_scores, rtol=0, atol=tol * scale)
    for r, m in zip(ref.records, model.records):
        scale = np.abs(r.coefficients).max()
        np.testing.assert_allclose(m.coefficients, r.coefficients, rtol=0, atol=tol * scale)
        assert m.training_error == pytest.approx(r.training_error, abs=tol)
    assert model.stop_reason == ref.stop_reason


@pytest.mark.parametrize("n_shards", [1, 2, 4])
def test_logitboost_on_shards_is_the_single_machine_model(cancer, n_shards):
    X, y = cancer  # with missing values: the stumps learn their side
    booster = boostkit.Booster("logitboost", n_rounds=30)
    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(booster, _parts(X, y, n_shards))
    assert_close_models(ref, model)
    scale = np.abs(ref.decision_function(X)).max()
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), rtol=0,
                               atol=1e-12 * scale)
    for r, m in zip(ref.records, model.records):
        assert m.error_bound == pytest.approx(r.error_bound, rel=1e-12)
    assert stats.rounds == 30


def test_logitboost_on_the_pairs_of_three_classes(contraceptive):
    X, y = contraceptive
    booster = boostkit.Booster("logitboost", n_rounds=20)
    ref = booster.fit(X, y)
    model, _ = dist.fit_on_shards(booster, _parts(X, y, 3))
    assert_close_models(ref, model)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_multinomial_logitboost_is_refused_naming_its_proposal(cancer):
    X, y = cancer
    with pytest.raises(RecipeError, match="multinomial-stumps"):
        dist.fit_on_shards(boostkit.Booster("multinomial-logitboost", n_rounds=5),
                           _parts(X, y, 2))
