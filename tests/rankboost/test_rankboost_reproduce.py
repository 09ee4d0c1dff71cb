"""``python -m boostkit_rankboost.reproduce``: the slides' examples and their claims on real data
(Yoder 2011)."""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest

from boostkit_rankboost.reproduce import bound_trace, cross_validated_ranking, main, slide_curves


def test_the_slides_tables_give_the_points_the_slides_draw(capsys):
    curves = slide_curves()
    five, eleven = curves["five items"], curves["eleven items"]
    # ROC: P = 3 positives in both tables, N = 2 and N = 8 negatives; the eleven-item table's
    # runs of four tied negatives are one step each, so both tables draw the same ROC curve
    # (Yoder 2011: "ROC doesn't change if ratio P/N changes") ...
    staircase = [(0, 0), (0, Fr(1, 3)), (Fr(1, 2), Fr(1, 3)), (Fr(1, 2), Fr(2, 3)),
                 (1, Fr(2, 3)), (1, 1)]
    assert five["roc"] == staircase and eleven["roc"] == staircase
    # ... while precision-recall shows the extra false positives ("clearly illustrates effect
    # of false positives on performance").
    assert five["pr"] == [(0, 1), (Fr(1, 3), 1), (Fr(1, 3), Fr(1, 2)), (Fr(2, 3), Fr(2, 3)),
                          (Fr(2, 3), Fr(1, 2)), (1, Fr(3, 5))]
    assert eleven["pr"] == [(0, 1), (Fr(1, 3), 1), (Fr(1, 3), Fr(1, 5)), (Fr(2, 3), Fr(1, 3)),
                            (Fr(2, 3), Fr(1, 5)), (1, Fr(3, 11))]
    assert five["auc"] == eleven["auc"] == pytest.approx(0.5)
    assert five["average_precision"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert eleven["average_precision"] == pytest.approx((1 + 1 / 3 + 3 / 11) / 3)
    assert main(["slides"]) == 0
    out = capsys.readouterr().out
    assert "PR (recall, precision): (0, 1) (1/3, 1) (1/3, 1/5) (2/3, 1/3) (2/3, 1/5) (1, 3/11)" in out
    assert "e.g. 2" in out and "1/2" in out


def test_ranking_loss_stays_below_prod_z_on_ionosphere(capsys):
    model, losses, bounds = bound_trace("ionosphere", n_rounds=60)
    assert model.n_rounds == 60
    assert np.all(losses <= bounds + 1e-12)
    assert np.all(np.diff(bounds) < 0)  # every round lowers the bound (r > 0)
    assert losses[-1] < 0.01 < losses[0]
    assert main(["bound", "--rounds", "20"]) == 0
    assert "bound holds every round: True" in capsys.readouterr().out


@pytest.mark.slow
def test_rankboost_ranks_real_data_as_well_as_adaboost():
    """Yoder 2011: RankBoost "does not attempt to directly maximize MAP, but is successful at doing
    this anyhow". Measured (5 folds, 100 rounds; AUC / AP): rankboost vs adaboost on ionosphere
    0.961/0.954 vs 0.954/0.937, breast_cancer_wisconsin 0.994/0.988 vs 0.992/0.982,
    german_credit 0.781/0.589 vs 0.770/0.587, pima_diabetes 0.827/0.714 vs 0.817/0.702,
    spambase 0.980/0.969 vs 0.982/0.972."""
    results = cross_validated_ranking()
    for name in ("ionosphere", "breast_cancer_wisconsin", "german_credit", "pima_diabetes", "spambase"):
        rank_auc, rank_ap = results[name, "rankboost"]
        ada_auc, ada_ap = results[name, "adaboost"]
        assert rank_auc > ada_auc - 0.005 and rank_ap > ada_ap - 0.005
