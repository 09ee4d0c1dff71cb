"""Prop. 3 of Scholz 2006 on real data: Ada2Boost in AdaBoost's form with an offset."""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit.datasets import load
from boostkit_pnspace import CoverIndicator, to_adaboost_form


@pytest.fixture(scope="module")
def spambase_model():
    data = load("spambase")
    X, y = data.X, np.where(data.y == data.positive, 1, -1)
    order = np.random.default_rng(0).permutation(y.shape[0])
    train, test = order[:3000], order[3000:]
    model = boostkit.Booster("ada2boost", n_rounds=60).fit(X[train], y[train])
    return model, X[test]


def test_converted_model_predicts_identically(spambase_model):
    model, X_test = spambase_model
    converted = to_adaboost_form(model)
    assert converted.n_rounds == model.n_rounds + 1
    assert np.array_equal(converted.predict(X_test), model.predict(X_test))
    assert converted.decision_function(X_test) == pytest.approx(
        model.decision_function(X_test), rel=1e-12, abs=1e-12)
    assert converted.predict_proba(X_test) == pytest.approx(model.predict_proba(X_test), abs=1e-12)


def test_converted_model_is_in_adaboost_form(spambase_model):
    model, X_test = spambase_model
    converted = to_adaboost_form(model)
    offset, *terms = converted.contributions
    assert all(isinstance(c, boostkit.LinearContribution) for c in converted.contributions)
    assert np.all(converted.hypotheses[0].scores(X_test) == 1.0)  # eq. 4's alpha'_0
    for hypothesis, term, cells in zip(converted.hypotheses[1:], terms, model.contributions):
        assert isinstance(hypothesis, CoverIndicator)
        assert set(np.unique(hypothesis.scores(X_test))) <= {-1.0, 1.0}
        c_cov, c_unc = cells.cell_values[hypothesis.covered], cells.cell_values[1 - hypothesis.covered]
        assert term.alpha == pytest.approx((c_cov - c_unc) / 2) and term.alpha >= 0
    assert offset.alpha == pytest.approx(sum(c.cell_values.sum() / 2 for c in model.contributions))


def test_the_printed_offset_has_a_sign_slip(spambase_model):
    """Literally, avg = (alpha(+1) + alpha(-1))/2 with eq. 2's alpha(-1) = 1/2 ln(n_bar/p_bar)
    flips the uncovered side's term and changes predictions; the corrected offset does not."""
    model, X_test = spambase_model
    literal = np.zeros(X_test.shape[0])
    for hypothesis, contribution in zip(model.hypotheses, model.contributions):
        values = contribution.cell_values
        covered = 1 if values[1] >= values[0] else 0
        alpha_plus, alpha_minus = values[covered], -values[1 - covered]  # eq. 3: c(-1) = -alpha(-1)
        average = (alpha_plus + alpha_minus) / 2
        h = np.where(hypothesis.cells(X_test) == covered, 1.0, -1.0)
        literal += average + (alpha_plus - average) * h
    assert np.mean(np.sign(literal) != np.sign(model.decision_function(X_test))) > 0.05


def test_converted_model_saves_and_loads(spambase_model, tmp_path):
    model, X_test = spambase_model
    converted = to_adaboost_form(model)
    reloaded = boostkit.load_model(converted.save(tmp_path / "adaboost-form.npz"))
    assert np.array_equal(reloaded.decision_function(X_test), converted.decision_function(X_test))
    assert "Prop. 3" in reloaded.recipe.description


def test_only_per_cell_models_convert():
    X, y = np.arange(20.0)[:, None], np.tile([-1, 1], 10)
    adaboost = boostkit.Booster("adaboost", n_rounds=3).fit(X, y)
    with pytest.raises(ValueError, match="per-cell values"):
        to_adaboost_form(adaboost)
