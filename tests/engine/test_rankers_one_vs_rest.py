"""Rankers in one-vs-rest: each class's margins are given their offset before the argmax.

A ranking recipe (a component provides ``"pairwise-loss"``) learns F up to a constant per
class, so the argmax of raw per-class margins picks the class of the largest arbitrary
offset. One-vs-rest gives each class's ranker the offset b_l minimising the exponential loss
on the training examples; the per-class AUCs, which ignore offsets, do not change.
"""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit.datasets import load
from boostkit.errors import ModelFormatError
from boostkit.metrics import macro_roc_auc, roc_auc
from boostkit.model import read_model_file, write_model_file
from boostkit.multiclass import OneVsRestModel, exponential_offset


@pytest.fixture(scope="module")
def contraceptive():
    data = load("contraceptive")
    rows = np.random.default_rng(0).permutation(len(data.y))
    return data, rows[:1000], rows[1000:]


def _fit(name, data, rows, **params):
    return boostkit.Booster(name, n_rounds=50, multiclass="auto", random_state=0,
                            **params).fit(data.X[rows], data.y[rows], features=data.features)


def test_rankboost_one_vs_rest_predicts_better_than_the_majority_class(contraceptive):
    """The issue's reproducer: without offsets rankboost reached the majority class's share."""
    data, train, test = contraceptive
    model = _fit("rankboost", data, train)
    majority = np.max(np.unique(data.y[test], return_counts=True)[1]) / len(test)
    accuracy = np.mean(model.predict(data.X[test]) == data.y[test])
    assert accuracy > majority + 0.05
    # the per-class scores are the rankers' own, shifted: each class's AUC is unchanged
    raw = np.column_stack([m.decision_function(data.X[test]) for m in model.models])
    F = model.decision_function(data.X[test])
    np.testing.assert_allclose(F - raw, np.broadcast_to(model.offsets, F.shape), rtol=0,
                               atol=1e-12)
    assert macro_roc_auc(data.y[test], F, model.classes) == pytest.approx(
        macro_roc_auc(data.y[test], raw, model.classes), abs=1e-12)


def test_a_classifier_one_vs_rest_has_no_offsets(contraceptive):
    data, train, test = contraceptive
    model = _fit("adaboost", data, train)
    assert model.offsets is None
    np.testing.assert_array_equal(
        model.decision_function(data.X[test]),
        np.column_stack([m.decision_function(data.X[test]) for m in model.models]))


def test_the_offset_minimises_the_exponential_loss():
    rng = np.random.default_rng(3)
    F = rng.normal(size=200) * 3 + 40.0  # an arbitrary offset, as a ranker's
    y = np.where(rng.random(200) < 0.3, 1.0, -1.0)
    w = rng.random(200)
    b = exponential_offset(F, y, w)

    def loss(offset):
        return np.sum(w * np.exp(-y * (F - 40.0 + offset)))

    # computed in log space: the margins' 40 would overflow nothing, but e^{800} would
    assert np.isfinite(b)
    shifted = b + 40.0
    assert loss(shifted) <= min(loss(shifted - 1e-4), loss(shifted + 1e-4))
    assert np.isfinite(exponential_offset(F * 30, y, w))


def test_the_offset_is_taken_on_the_training_examples_of_positive_weight(contraceptive):
    data, train, _ = contraceptive
    weights = np.ones(len(train))
    weights[:100] = 0.0
    weighted = boostkit.Booster("rankboost", n_rounds=10, multiclass="auto").fit(
        data.X[train], data.y[train], weights, features=data.features)
    removed = boostkit.Booster("rankboost", n_rounds=10, multiclass="auto").fit(
        data.X[train][100:], data.y[train][100:], features=data.features)
    np.testing.assert_array_equal(weighted.offsets, removed.offsets)


def test_multilabel_rankers_decide_each_label_after_its_offset(contraceptive):
    data, train, test = contraceptive
    Y = np.column_stack([data.y == c for c in ("1", "2", "3")]).astype(int)
    model = boostkit.Booster("rankboost", n_rounds=20, multiclass="auto").fit(
        data.X[train], Y[train], features=data.features)
    assert model.multilabel and model.offsets.shape == (3,)
    predicted = model.predict(data.X[test])
    np.testing.assert_array_equal(predicted, model.decision_function(data.X[test]) > 0)
    assert all(roc_auc(np.where(Y[test][:, l] > 0, 1.0, -1.0),
                       model.decision_function(data.X[test])[:, l]) > 0.5 for l in range(3))


def test_offsets_round_trip_and_tampered_offsets_are_refused(contraceptive, tmp_path):
    data, train, test = contraceptive
    model = _fit("rankboost", data, train)
    path = model.save(tmp_path / "ranker.bkm")
    loaded = boostkit.load_model(path)
    assert isinstance(loaded, OneVsRestModel)
    np.testing.assert_array_equal(loaded.offsets, model.offsets)
    np.testing.assert_array_equal(loaded.predict(data.X[test]), model.predict(data.X[test]))
    structure, arrays, _ = read_model_file(path)
    for bad in ([1.0, 2.0], [1.0, "x", 2.0], [1.0, float("nan"), 2.0], "1.0"):
        tampered = write_model_file(tmp_path / "tampered.bkm", {**structure, "offsets": bad},
                                    dict(arrays))
        with pytest.raises(ModelFormatError, match="offsets"):
            boostkit.load_model(tampered)
