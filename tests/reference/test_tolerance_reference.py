"""Binary models match the tolerance reference, and the comparison bites.

Every stored model (:mod:`tolerance_reference`: every registered recipe on each reference
dataset it accepts) is fitted again and compared: the same terms round by round (up to a round
whose two best candidates tie), coefficients within 1e-10 relative, decision functions within
1e-9, the same test accuracy. The comparator's own tests perturb a stored model and show that
each tolerance fails beyond it and passes within it, that a changed term fails unless the
round's search had a tie, and that a real tie is found by recomputing the round.
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.splits import TIE_TOLERANCE

from tolerance_reference import (
    COEFFICIENT_RTOL,
    DATASETS,
    DECISION_RTOL,
    Sample,
    compare,
    fit,
    lowest_two_losses_at,
    relatively_close,
    sample,
    snapshot,
    stored,
)

STORED = stored()


@pytest.fixture(scope="module")
def samples():
    return {name: sample(name) for name in DATASETS}


def _today(name: str, samples) -> tuple:
    dataset, recipe = name.split("/")
    data = samples[dataset]
    return snapshot(fit(recipe, data), data), (lambda t: lowest_two_losses_at(recipe, data, t))


@pytest.mark.parametrize("name", sorted(STORED))
def test_binary_model_matches_the_tolerance_reference(name, samples):
    got, lowest_two = _today(name, samples)
    found = compare(STORED[name], got, lowest_two, name)
    assert not found.failures, "\n".join(found.failures)
    if found.tie is not None:
        warnings.warn(found.tie, stacklevel=1)


def test_the_reference_covers_every_dataset_and_only_registered_recipes():
    registered = set(boostkit.get_registry().algorithms())
    datasets = {name.split("/")[0] for name in STORED}
    assert datasets == set(DATASETS)
    assert {name.split("/")[1] for name in STORED} <= registered
    # Every recipe fits the numeric data, and stump learners also those with missing values
    # and categories.
    assert {name.split("/")[1] for name in STORED if name.startswith("spambase/")} >= {
        "adaboost", "real-adaboost", "pav-adaboost", "weightboost", "rankboost", "logitboost"}
    for dataset in ("breast_cancer_wisconsin", "german_credit"):
        assert f"{dataset}/adaboost" in STORED and f"{dataset}/weightboost" in STORED


# The comparator, on spambase's AdaBoost model (stumps, whose search exposes its losses) and
# Ada2Boost's (two coefficients per round).

@pytest.fixture(scope="module")
def adaboost(samples):
    return _today("spambase/adaboost", samples)


def _perturbed(snap, *, coefficient=None, number=None, decision=None, accuracy=None):
    """``snap`` with round 5's first coefficient, term 5's first number or the decision function
    of row 7 multiplied by (1 + the given relative change), or another test accuracy."""
    summary = {**snap.summary, "rounds": [dict(r) for r in snap.summary["rounds"]]}
    numbers, margins = snap.term_numbers.copy(), snap.decision_function.copy()
    if coefficient is not None:
        old = summary["rounds"][4]["coefficients"]
        summary["rounds"][4]["coefficients"] = [old[0] * (1 + coefficient), *old[1:]]
    if number is not None:
        k = sum(sum(term["sizes"]) for term in snap.summary["terms"][:5])
        numbers[k] *= 1 + number
    if decision is not None:
        margins[7] *= 1 + decision
    if accuracy is not None:
        summary["test_accuracy"] = accuracy
    return attrs.evolve(snap, summary=summary, term_numbers=numbers, decision_function=margins)


def _no_search(t):
    raise AssertionError("the terms are the same: no round's search is recomputed")


def test_the_stored_model_matches_itself_and_todays_fit(adaboost):
    got, _ = adaboost
    assert compare(STORED["spambase/adaboost"], got, _no_search, "adaboost").failures == ()
    assert compare(got, got, _no_search, "adaboost").failures == ()


@pytest.mark.parametrize("field", ["coefficient", "number"])
def test_a_coefficient_moved_by_1e_8_relative_fails_and_by_1e_12_passes(adaboost, field):
    got, _ = adaboost
    far = compare(_perturbed(got, **{field: 1e-8}), got, _no_search, "adaboost")
    assert len(far.failures) == 1
    assert "beyond 1e-10 relative" in far.failures[0]
    assert ("round 5" if field == "coefficient" else "term 5") in far.failures[0]
    assert compare(_perturbed(got, **{field: 1e-12}), got, _no_search, "adaboost").failures == ()


def test_a_decision_function_moved_by_1e_8_relative_fails_and_by_1e_11_passes(adaboost):
    got, _ = adaboost
    far = compare(_perturbed(got, decision=1e-8), got, _no_search, "adaboost")
    assert len(far.failures) == 1
    assert "decision function" in far.failures[0] and "index 7" in far.failures[0]
    assert compare(_perturbed(got, decision=1e-11), got, _no_search, "adaboost").failures == ()


def test_another_test_accuracy_fails(adaboost):
    got, _ = adaboost
    accuracy = got.summary["test_accuracy"] + 1 / got.decision_function.shape[0]
    far = compare(_perturbed(got, accuracy=accuracy), got, _no_search, "adaboost")
    assert len(far.failures) == 1 and "test accuracy" in far.failures[0]


def _swapped(snap, t):
    """``snap`` with the terms of rounds t and t + 1 swapped."""
    rounds = [dict(r) for r in snap.summary["rounds"]]
    rounds[t - 1]["term"], rounds[t]["term"] = rounds[t]["term"], rounds[t - 1]["term"]
    return attrs.evolve(snap, summary={**snap.summary, "rounds": rounds})


def test_a_swapped_term_without_a_tie_fails_naming_round_and_terms(adaboost):
    got, lowest_two = adaboost
    expected = _swapped(got, 3)
    found = compare(expected, got, lowest_two, "adaboost on spambase")
    assert found.tie is None and len(found.failures) == 1
    message = found.failures[0]
    assert message.startswith("adaboost on spambase, round 3: term ")
    assert expected.summary["rounds"][2]["term"] in message
    assert got.summary["rounds"][2]["term"] in message
    assert "are no tie" in message


def test_a_changed_term_fails_when_the_proposal_does_not_expose_its_losses(samples):
    got, lowest_two = _today("spambase/weightboost", samples)
    assert lowest_two(3) is None  # trees: no two-best search
    found = compare(_swapped(got, 3), got, lowest_two, "weightboost")
    assert len(found.failures) == 1 and "does not expose" in found.failures[0]


def test_the_lowest_loss_of_a_round_is_the_weighted_error_of_its_stump(adaboost, samples):
    got, lowest_two = adaboost
    model = fit("adaboost", samples["spambase"], n_rounds=4)
    for t in (1, 4):
        lowest, second = lowest_two(t)
        assert lowest == pytest.approx(model.records[t - 1].weighted_error, rel=1e-12)
        assert second > lowest * (1 + TIE_TOLERANCE)


@pytest.mark.parametrize("dataset", ["spambase", "breast_cancer_wisconsin"])
def test_a_changed_term_at_a_tie_passes_and_says_which_round(samples, dataset):
    # A copy of round 1's feature appended as the last column: its stumps tie with the
    # original's, which the search takes (the lower index). A reference that took the copy
    # differs at round 1, a tie; later rounds are not compared. breast_cancer_wisconsin has
    # missing values: the search of binned data.
    data = samples[dataset]
    first = fit("adaboost", data, n_rounds=1).hypotheses[0].feature
    copy = data.X.shape[1]
    tied = Sample(np.column_stack([data.X, data.X[:, first]]), data.y,
                  np.column_stack([data.X_test, data.X_test[:, first]]), data.y_test)
    got = snapshot(fit("adaboost", tied), tied)
    lowest, second = lowest_two_losses_at("adaboost", tied, 1)
    # Equal up to the order of the sums (a missing-value bin's are the node's total minus the
    # values').
    assert second - lowest <= TIE_TOLERANCE * lowest
    on_copy = attrs.evolve(fit("adaboost", tied, n_rounds=1).hypotheses[0], feature=copy)
    rounds = [dict(r) for r in got.summary["rounds"]]
    rounds[0]["term"] = on_copy.describe()
    rounds[1]["coefficients"] = [c * 2 for c in rounds[1]["coefficients"]]  # not compared
    expected = attrs.evolve(got, summary={**got.summary, "rounds": rounds},
                            decision_function=got.decision_function * 2)
    found = compare(expected, got, lambda t: lowest_two_losses_at("adaboost", tied, t),
                    "adaboost")
    assert found.failures == ()
    assert found.tie.startswith(f"adaboost, round 1: a tie within 1e-12 between "
                                f"{on_copy.describe()} and {got.summary['rounds'][0]['term']}")
    assert found.tie.endswith("later rounds not compared")


def test_relative_closeness_is_symmetric_and_treats_equal_specials_as_equal():
    a = np.array([1.0, -2.0, 0.0, np.inf, np.nan, 1e-300])
    b = a * (1 + 0.5 * COEFFICIENT_RTOL)
    b[2:5] = a[2:5]
    assert relatively_close(a, b, COEFFICIENT_RTOL).all()
    assert relatively_close(b, a, COEFFICIENT_RTOL).all()
    assert not relatively_close([0.0], [1e-300], COEFFICIENT_RTOL).any()
    # Normwise (decision functions): relative to the largest margin.
    assert relatively_close([100.0, 1e-9], [100.0, 2e-9], DECISION_RTOL, normwise=True).all()
    assert not relatively_close([100.0, 1e-9], [100.0, 2e-9], DECISION_RTOL).all()


def test_a_search_of_one_cut_has_no_second_loss():
    X = np.repeat([[0.0], [1.0]], 10, axis=0)
    y = np.tile([0, 1], 10)
    one_cut = Sample(X, y, X, y)
    lowest, second = lowest_two_losses_at("adaboost", one_cut, 1)
    assert lowest == pytest.approx(0.5) and second == np.inf


def test_a_tie_still_reports_the_rounds_and_terms_before_it(adaboost):
    got, _ = adaboost
    expected = _swapped(_perturbed(got, coefficient=1e-8, number=1e-8), 8)
    found = compare(expected, got, lambda t: (0.25, 0.25), "adaboost")
    assert found.tie.startswith("adaboost, round 8: a tie")
    assert len(found.failures) == 2
    assert "round 5" in found.failures[0] and "term 5" in found.failures[1]


def test_a_failed_write_leaves_the_stored_reference_as_it_was(adaboost, monkeypatch, tmp_path):
    import tolerance_reference

    got, _ = adaboost
    models, arrays = tmp_path / "models.json", tmp_path / "arrays.npz"
    monkeypatch.setattr(tolerance_reference, "MODELS", models)
    monkeypatch.setattr(tolerance_reference, "ARRAYS", arrays)
    tolerance_reference.write({"spambase/adaboost": got})
    before = models.read_bytes(), arrays.read_bytes()

    def full_disk(*args, **kwargs):
        raise OSError("no space left on device")

    monkeypatch.setattr(np, "savez_compressed", full_disk)
    with pytest.raises(OSError, match="no space"):
        tolerance_reference.write({"spambase/adaboost": _perturbed(got, coefficient=1.0)})
    assert (models.read_bytes(), arrays.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arrays.npz", "models.json"]
    stored_again = tolerance_reference.stored()["spambase/adaboost"]
    assert compare(stored_again, got, _no_search, "adaboost").failures == ()
