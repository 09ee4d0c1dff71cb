"""``python -m boostkit_additive.reproduce hastie``: ESL's simulated data (10.2) with stumps.

The fast test runs the whole pipeline on fewer examples and rounds; the slow one is the
reproduction itself (2 000 training, 10 000 test examples, 400 rounds), checked against the
published figures within the tolerances of :data:`boostkit_additive.reproduce.CHECKS`.
"""

from __future__ import annotations

import numba
import pytest

from boostkit_additive import reproduce


def test_a_short_run_prints_and_writes_the_table(tmp_path, capsys):
    output = tmp_path / "hastie.md"
    assert reproduce.main(["hastie", "--rounds", "20", "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    assert output.read_text(encoding="utf-8").strip() == printed.strip()
    for label, recipe, _ in reproduce.ALGORITHMS:
        assert f"| {label} | `{recipe}` |" in printed
    assert "scikit-learn AdaBoostClassifier" in printed


def test_boosting_beats_a_single_stump_after_a_few_rounds():
    rows = {row.label: row for row in reproduce.hastie(rounds=30, n_train=600, n_test=2000,
                                                       with_sklearn=False)}
    stump = rows["single stump"].test_error
    assert 0.35 < stump < 0.5
    for label in ("Discrete AdaBoost", "Real AdaBoost", "Gentle AdaBoost", "LogitBoost"):
        assert rows[label].rounds == 30
        assert rows[label].test_error < stump - 0.05, label


def test_a_bad_round_count_is_refused():
    with pytest.raises(SystemExit):
        reproduce.main(["hastie", "--rounds", "0"])


@pytest.mark.slow
@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="a reproduction; slow without the JIT")
def test_the_hastie_reproduction_matches_the_published_figures():
    rows = {row.label: row for row in reproduce.hastie(rounds=400)}
    print("\n" + reproduce.format_table(list(rows.values())))
    tolerance = reproduce.CHECKS
    # A single stump: ESL's 45.8 %.
    stump = rows["single stump"].test_error
    assert abs(stump - reproduce.PUBLISHED["single stump"]) <= tolerance["stump"]
    # Discrete AdaBoost: scikit-learn's AdaBoostClassifier on the same split (ESL's 5.8 % is not
    # reached by either; see the module docstring and docs/algorithms/additive.md).
    sklearn = rows["scikit-learn AdaBoostClassifier (SAMME)"].test_error
    assert abs(rows["Discrete AdaBoost"].test_error - sklearn) <= tolerance["sklearn"]
    # Real, Gentle AdaBoost and LogitBoost: near ESL's 5.8 %, and all better than Discrete
    # AdaBoost, as FHT find with stumps.
    for label in ("Real AdaBoost", "Gentle AdaBoost", "LogitBoost"):
        error = rows[label].test_error
        assert abs(error - reproduce.PUBLISHED["Discrete AdaBoost"]) <= tolerance["esl"], label
        assert error < rows["Discrete AdaBoost"].test_error, label
