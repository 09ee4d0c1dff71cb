"""The statistics of a study: equal to scipy.stats, scikit-posthocs, statsmodels and baycomp on
the same matrix; Demšar's (JMLR 7, 2006) worked examples reproduced; clear errors for bad input."""

from __future__ import annotations

import sys
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from boostkit.study.stats import (
    ScoreMatrix,
    StatsError,
    compare,
    holm_adjusted,
    iman_davenport,
    score_matrix,
)

stats = pytest.importorskip("scipy.stats")
posthocs = pytest.importorskip("scikit_posthocs")
multitest = pytest.importorskip("statsmodels.stats.multitest")


def statsmodels_holm(p_values):
    """statsmodels' Holm adjustment, without the full garbage collection it runs on every call
    (0.4 s in the test process)."""
    with mock.patch("gc.collect"):
        return multitest.multipletests(p_values, method="holm")[1]

# Demšar 2006, Table 6: AUC of C4.5 (m = 0), C4.5 with m tuned, with cf tuned, and with both, on
# 14 UCI datasets, as printed; and the ranks the table prints beside them, in parentheses.
NAMES = ("C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf")
DATASETS = ("adult (sample)", "breast cancer", "breast cancer wisconsin", "cmc", "ionosphere",
            "iris", "liver disorders", "lung cancer", "lymphography", "mushroom", "primary tumor",
            "rheum", "voting", "wine")
AUC = np.array([
    [0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.975, 0.975], [0.957, 0.978, 0.946, 0.970],
])
PRINTED_RANKS = np.array([
    [4, 3, 2, 1], [1, 2, 3, 4], [4, 1, 2, 3], [4, 1, 3, 2], [4, 2, 3, 1], [1, 2.5, 4, 2.5],
    [3, 2, 4, 1], [2.5, 2.5, 4, 1], [4, 3, 2, 1], [2.5, 2.5, 2.5, 2.5], [4, 2.5, 1, 2.5],
    [3, 2, 4, 1], [4, 1, 2, 3], [3, 1, 4, 2],
])


def demsar(values=AUC, higher_is_better=True, columns=(0, 1, 2, 3)) -> ScoreMatrix:
    return ScoreMatrix(values[:, list(columns)], DATASETS, [NAMES[j] for j in columns],
                       "roc_auc" if higher_is_better else "rank", higher_is_better)


@pytest.mark.parametrize("alpha, q, cd", [(0.05, 2.569, 1.25), (0.10, 2.291, 1.12)])
def test_demsar_table_6_ranks_critical_difference_and_groups(alpha, q, cd):
    # Section 3.2.2 from the ranks Table 6 prints (the printed AUCs tie on voting, where the
    # paper's unrounded values did not): average ranks 3.143, 2.000, 2.893, 1.964; q_0.05 = 2.569
    # and CD = 1.25 (no pair differs); q_0.10 = 2.291 and CD = 1.12, where C4.5 is worse than
    # C4.5+m and C4.5+m+cf and C4.5+cf belongs to neither group for sure.
    result = compare(demsar(PRINTED_RANKS, higher_is_better=False), alpha=alpha)
    np.testing.assert_allclose(result.average_ranks, [3.143, 2.000, 2.893, 1.964], atol=5e-4)
    assert result.nemenyi.q_alpha == pytest.approx(q, abs=5e-4)
    assert result.critical_difference == pytest.approx(cd, abs=5e-3)
    if alpha == 0.05:
        assert result.cliques == (("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"),)
    else:
        assert result.cliques == (("C4.5+m+cf", "C4.5+m", "C4.5+cf"), ("C4.5+cf", "C4.5"))


def test_demsar_friedman_and_iman_davenport():
    # The paper's chi2_F = 9.28 applies its formula (no correction for ties); scipy divides it by
    # the tie factor 1 - sum(t^3 - t) / (N k (k^2 - 1)), the mean of scipy's per-row tiecorrect.
    result = compare(demsar(PRINTED_RANKS, higher_is_better=False))
    ties = np.mean([stats.tiecorrect(row) for row in PRINTED_RANKS])
    assert result.friedman.chi2 * ties == pytest.approx(9.28, abs=5e-3)
    assert result.friedman.df == 3
    # F_F = 13 * 9.28 / (14 * 3 - 9.28) = 3.69 with 3 and 39 degrees of freedom.
    paper = iman_davenport(9.28, 14, 4)
    assert paper.F == pytest.approx(3.69, abs=5e-3) and (paper.df1, paper.df2) == (3, 39)
    assert paper.p_value < 0.05  # the paper rejects: F(3, 39) at 0.05 is 2.85
    assert result.iman_davenport == iman_davenport(result.friedman.chi2, 14, 4)


def test_demsar_printed_aucs_tie_on_voting():
    # From the printed AUCs: C4.5 and C4.5+m rank as in the paper; C4.5+cf and C4.5+m+cf share
    # ranks 2 and 3 on voting (0.975 both), 0.5 / 14 from the paper's ranks each.
    result = compare(demsar())
    np.testing.assert_allclose(result.average_ranks,
                               [3.143, 2.000, 2.893 + 0.5 / 14, 1.964 - 0.5 / 14], atol=5e-4)


def test_demsar_wilcoxon_example():
    # Section 3.1.3 (Table 2: C4.5 against C4.5+m): R+ = 93, R- = 12, so T = 12 <= 21, the
    # critical value for N = 14 at 0.05; C4.5+m better on 10, equal on 2, worse on 2 datasets.
    result = compare(demsar(columns=(0, 1)), baseline="C4.5")
    test = result.wilcoxon_holm["C4.5+m"]
    assert test.statistic == 12 and test.direction == "better"
    assert test.p_value < 0.05 and test.significant  # one test: Holm changes nothing
    assert test.p_holm == test.p_value
    assert result.win_tie_loss == {"C4.5+m": (10, 2, 2)}
    assert result.friedman is None and result.iman_davenport is None
    assert any("two algorithms" in note for note in result.notes)


@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_q_alpha_equals_demsar_table_5a(alpha):
    printed = {0.05: [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164],
               0.10: [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]}[alpha]
    rng = np.random.default_rng(0)
    for k, q in zip(range(2, 11), printed):
        matrix = ScoreMatrix(rng.random((5, k)), [f"d{i}" for i in range(5)],
                             [f"a{j}" for j in range(k)])
        assert compare(matrix, alpha=alpha).nemenyi.q_alpha == pytest.approx(q, abs=1.5e-3)


# Up to 8 datasets scipy's Wilcoxon test with ties runs an exact permutation test, from 14 the
# normal approximation: both, without the 2^13 permutations of 13 datasets.
scores = (st.integers(3, 8) | st.integers(14, 25)).flatmap(lambda n: st.integers(3, 6).flatmap(
    lambda k: arrays(np.float64, (n, k), elements=st.sampled_from([0.5, 0.6, 0.7, 0.75, 0.8,
                                                                   0.9, 0.95, 1.0]))))


@settings(max_examples=20, deadline=None)
@given(values=scores, higher=st.booleans(), alpha=st.sampled_from([0.05, 0.1]))
def test_statistics_equal_the_libraries(values, higher, alpha):
    n, k = values.shape
    names = [f"a{j}" for j in range(k)]
    matrix = ScoreMatrix(values, [f"d{i}" for i in range(n)], names, "score", higher)
    result = compare(matrix, baseline="a0", alpha=alpha)
    signed = -values if higher else values
    np.testing.assert_allclose(result.average_ranks,
                               stats.rankdata(signed, axis=1).mean(axis=0))
    if np.all(values == values[:, :1]):
        assert (result.friedman.chi2, result.friedman.p_value) == (0.0, 1.0)
    else:
        expected = stats.friedmanchisquare(*values.T)
        assert result.friedman.chi2 == pytest.approx(expected.statistic)
        assert result.friedman.p_value == pytest.approx(expected.pvalue)
    p_values = posthocs.posthoc_nemenyi_friedman(values).to_numpy()
    np.testing.assert_allclose(result.nemenyi.p_values, p_values)
    # The critical difference and the pairwise p-values say the same thing (up to rounding at
    # the boundary), and no clique holds a pair that differs.
    gaps = np.abs(result.average_ranks[:, None] - result.average_ranks[None, :])
    clear = np.abs(gaps - result.critical_difference) > 1e-9
    assert np.array_equal((gaps > result.critical_difference)[clear], (p_values < alpha)[clear])
    for clique in result.cliques:
        index = [names.index(name) for name in clique]
        assert (p_values[np.ix_(index, index)] >= alpha).all()
    # An algorithm equal to the baseline everywhere (p = 1) stays in Holm's family of k - 1.
    raw = [stats.wilcoxon(values[:, j], values[:, 0], zero_method="zsplit").pvalue
           for j in range(1, k)]
    adjusted = statsmodels_holm(raw)
    for name, p, p_holm in zip(names[1:], raw, adjusted):
        test = result.wilcoxon_holm[name]
        assert test.p_value == pytest.approx(p)
        assert test.p_holm == pytest.approx(p_holm)
        assert test.significant == (test.p_holm < alpha)
        d = (values[:, names.index(name)] - values[:, 0]) * (1 if higher else -1)
        assert (test.wins, test.ties, test.losses) == ((d > 0).sum(), (d == 0).sum(),
                                                       (d < 0).sum())


def test_holm_adjusted_by_hand_and_as_statsmodels():
    # Sorted: 0.01 x 4, 0.03 x 3, 0.04 x 2 (raised to the 0.09 before it), 0.2 x 1.
    np.testing.assert_allclose(holm_adjusted([0.01, 0.04, 0.03, 0.2]), [0.04, 0.09, 0.09, 0.2])
    np.testing.assert_array_equal(holm_adjusted([0.5, 0.6]), [1.0, 1.0])  # capped at 1
    np.testing.assert_array_equal(holm_adjusted([0.02, 0.02, 0.5]), [0.06, 0.06, 0.5])  # ties
    rng = np.random.default_rng(3)
    for p in (rng.random(7), rng.random(30) ** 4, np.array([1e-300, 0.3, 1.0])):
        np.testing.assert_allclose(holm_adjusted(p), statsmodels_holm(p), rtol=1e-15)


def test_bayesian_signed_rank_equals_baycomp():
    baycomp = pytest.importorskip("baycomp")
    result = compare(demsar(columns=(0, 3)), baseline="C4.5", rope=0.01)
    left, rope, right = baycomp.SignedRankTest.probs(AUC[:, 0], AUC[:, 3], rope=0.01,
                                                     random_state=0)
    test = result.bayesian["C4.5+m+cf"]
    assert (test.p_better, test.p_equivalent, test.p_worse) == pytest.approx((right, rope, left))
    assert test.p_better > 0.9  # C4.5+m+cf is better by more than 0.01 AUC on most datasets


def test_bayesian_test_is_skipped_without_baycomp(monkeypatch):
    monkeypatch.setitem(sys.modules, "baycomp", None)  # import baycomp raises ImportError
    result = compare(demsar(), baseline="C4.5", rope=0.01)
    assert result.bayesian is None
    assert any("baycomp is not installed" in note for note in result.notes)


def test_degenerate_rankings():
    # Every algorithm ties on every dataset: chi2 = 0 and p = 1, where scipy would divide 0 by 0.
    same = compare(ScoreMatrix(np.full((4, 3), 0.7), list("wxyz"), ["a", "b", "c"]))
    assert (same.friedman.chi2, same.friedman.p_value) == (0.0, 1.0)
    assert (same.iman_davenport.F, same.iman_davenport.p_value) == (0.0, 1.0)
    assert same.cliques == (("a", "b", "c"),)
    # The same order on every dataset: chi2 = N (k - 1), so F_F's denominator is 0: F = inf.
    agree = compare(ScoreMatrix([[0.7, 0.8, 0.9]] * 4, list("wxyz"), ["a", "b", "c"]))
    assert agree.friedman.chi2 == pytest.approx(8.0)
    assert (agree.iman_davenport.F, agree.iman_davenport.p_value) == (float("inf"), 0.0)


def test_lower_is_better_ranks_the_lowest_first():
    values = np.array([[0.1, 0.3, 0.2], [0.2, 0.4, 0.3], [0.1, 0.5, 0.4]])
    matrix = ScoreMatrix(values, ["x", "y", "z"], ["a", "b", "c"], "log_loss", False)
    result = compare(matrix, baseline="b")
    np.testing.assert_allclose(result.average_ranks, [1, 3, 2])
    assert result.ranking == [("a", 1.0), ("c", 2.0), ("b", 3.0)]
    assert result.win_tie_loss == {"a": (3, 0, 0), "c": (3, 0, 0)}


def test_identical_algorithms_are_equal_not_significant():
    values = np.array([[0.8, 0.8, 0.7], [0.9, 0.9, 0.6], [0.7, 0.7, 0.75]])
    result = compare(ScoreMatrix(values, ["x", "y", "z"], ["a", "a2", "b"]), baseline="a")
    same = result.wilcoxon_holm["a2"]
    assert (same.p_value, same.p_holm, same.direction, same.significant) == (1.0, 1.0, "equal",
                                                                             False)
    # Zero differences split evenly: R+ = R- = (1 + 2 + 3) / 2, so T = 3 (Demšar 2006, 3.1.3).
    assert same.statistic == 3
    assert (same.wins, same.ties, same.losses) == (0, 3, 0)


# -- bad input ------------------------------------------------------------------------------


def test_too_few_algorithms_or_datasets():
    with pytest.raises(StatsError, match=r"at least 2 algorithms and 2 datasets, got 1 "):
        compare(ScoreMatrix([[0.5], [0.6]], ["x", "y"], ["a"]))
    with pytest.raises(StatsError, match=r"got 3 algorithm\(s\) .* and 1 dataset"):
        compare(ScoreMatrix([[0.5, 0.6, 0.7]], ["x"], ["a", "b", "c"]))


def test_nan_scores_are_refused_by_name():
    with pytest.raises(StatsError, match=r"finite, got nan for 'b' on 'y'"):
        ScoreMatrix([[0.5, 0.6], [0.7, np.nan]], ["x", "y"], ["a", "b"])


def test_shape_and_names_must_agree():
    with pytest.raises(StatsError, match=r"shape \(n_datasets, n_algorithms\) = \(2, 3\)"):
        ScoreMatrix([[0.5, 0.6], [0.7, 0.8]], ["x", "y"], ["a", "b", "c"])
    with pytest.raises(StatsError, match="algorithms must be distinct"):
        ScoreMatrix([[0.5, 0.6], [0.7, 0.8]], ["x", "y"], ["a", "a"])


def test_unknown_baseline_alpha_rope_and_matrix():
    matrix = demsar()
    with pytest.raises(StatsError, match=r"baseline 'C5' is not among the algorithms \['C4.5'"):
        compare(matrix, baseline="C5")
    with pytest.raises(StatsError, match=r"alpha must be in \(0, 1\), got 5"):
        compare(matrix, alpha=5)
    with pytest.raises(StatsError, match="rope must be a number >= 0 with a baseline"):
        compare(matrix, rope=0.01)
    with pytest.raises(StatsError, match="rope must be a number >= 0 with a baseline"):
        compare(matrix, baseline="C4.5", rope=-1)
    with pytest.raises(StatsError, match="matrix must be a ScoreMatrix .* got ndarray"):
        compare(AUC)


# -- from a study's cells --------------------------------------------------------------------


def cells(rows):
    """A cells frame: (dataset, algorithm, fold, status, accuracy) rows, one resample/seed."""
    frame = pd.DataFrame(rows, columns=["dataset", "algorithm", "fold", "status", "accuracy"])
    frame["resample"], frame["repeat"], frame["seed"] = "2-fold", 0, 0
    frame["log_loss"] = 1 - frame["accuracy"]
    return frame


def full(datasets=("d1", "d2", "d3"), algorithms=("a", "b")):
    return [(d, a, f, "done", 0.5 + 0.1 * i + 0.01 * f + 0.05 * j)
            for i, d in enumerate(datasets) for j, a in enumerate(algorithms) for f in (0, 1)]


def test_score_matrix_means_over_folds():
    matrix = score_matrix(cells(full()))
    assert matrix.datasets == ("d1", "d2", "d3") and matrix.algorithms == ("a", "b")
    np.testing.assert_allclose(matrix.values, [[0.505, 0.555], [0.605, 0.655], [0.705, 0.755]])
    assert matrix.higher_is_better and matrix.dropped == {}
    loss = score_matrix(cells(full()), metric="log_loss")
    assert not loss.higher_is_better
    np.testing.assert_allclose(loss.values, 1 - matrix.values)


def test_score_matrix_drops_a_dataset_missing_a_result_and_says_so():
    rows = full()
    rows[rows.index(("d2", "b", 1, "done", 0.5 + 0.1 + 0.01 + 0.05))] = ("d2", "b", 1, "failed",
                                                                        None)
    matrix = score_matrix(cells(rows))
    assert matrix.datasets == ("d1", "d3")
    assert matrix.dropped == {"d2": "no accuracy for every cell of b (1 of 2 cells)"}
    result = compare(matrix)
    assert result.notes[0] == "dataset d2 left out: no accuracy for every cell of b (1 of 2 cells)"
    # An algorithm with no cell at all on a dataset.
    rows = [row for row in full() if not (row[0] == "d3" and row[1] == "a")]
    assert score_matrix(cells(rows)).dropped == {
        "d3": "no accuracy for every cell of a (0 of 2 cells)"}


def test_score_matrix_bad_input():
    frame = cells(full(datasets=("d1", "d2")))
    with pytest.raises(StatsError, match=r"frame must be a pandas DataFrame .* got list"):
        score_matrix(full())
    with pytest.raises(StatsError, match=r"metric 'f1' is none of \['accuracy'"):
        score_matrix(frame, metric="f1")
    with pytest.raises(StatsError, match="log_loss is lower-is-better, got higher_is_better=True"):
        score_matrix(frame, metric="log_loss", higher_is_better=True)
    with pytest.raises(StatsError, match=r"lacks \['fold'\]"):
        score_matrix(frame.drop(columns="fold"))
    with pytest.raises(StatsError, match=r"algorithms \['c'\] have no cell in the frame"):
        score_matrix(frame, algorithms=["a", "c"])
    rows = [row if row[0] != "d2" or row[1] != "b" else (*row[:3], "done", None)
            for row in full(datasets=("d1", "d2"))]
    with pytest.raises(StatsError, match=r"at least 2 datasets .* got 1; dropped: \{'d2'"):
        score_matrix(cells(rows))


def test_score_matrix_keeps_the_algorithms_asked_for():
    matrix = score_matrix(cells(full(algorithms=("a", "b", "c"))), algorithms=["c", "a"])
    assert matrix.algorithms == ("c", "a")
    np.testing.assert_allclose(matrix.values[:, 0] - matrix.values[:, 1], 0.1)


def test_the_statistics_page_example_prints_what_the_page_shows(tmp_path, monkeypatch):
    # docs/statistics.md runs Demšar's tables through compare; its output block is the run's.
    import contextlib
    import io
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "statistics.md").read_text("utf-8")
    block = r"((?:(?!```).)*)```"
    code, shown = re.search(rf"```python\n{block}\n\n```text\n{block}", page, re.S).groups()
    assert code.startswith("import numpy")
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/statistics.md", "exec"), {})
    assert printed.getvalue() == shown
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cd-demsar-2006.png",
                                                          "cd-demsar-2006.svg"]


def test_score_matrix_reads_a_results_database(tmp_path):
    # The frame a study's ResultStore gives, failed cells included: the same matrix.
    from boostkit.study import ResultStore
    from boostkit.study.store import CELL_COLUMNS

    with ResultStore(tmp_path / "r.sqlite") as store:
        for dataset, algorithm, fold, status, accuracy in full():
            row = dict.fromkeys(CELL_COLUMNS)
            row.update(dataset=dataset, algorithm=algorithm, recipe=algorithm, resample="2-fold",
                       repeat=0, fold=fold, seed=0, status=status, accuracy=accuracy)
            store.write_cell(row)
        row.update(dataset="d4", status="failed", error="ValueError: no", accuracy=None)
        store.write_cell(row)
    with ResultStore(tmp_path / "r.sqlite", readonly=True) as store:
        matrix = score_matrix(store.read_frame())
    expected = score_matrix(cells(full()))
    np.testing.assert_array_equal(matrix.values, expected.values)
    assert matrix.datasets == expected.datasets
    assert matrix.dropped == {"d4": "no accuracy for every cell of a (0 of 1 cells), "
                                    "b (0 of 1 cells)"}


def test_a_missing_library_names_the_study_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scikit_posthocs", None)
    with pytest.raises(ImportError, match=r"scikit_posthocs.*pip install 'boostkit\[study\]'"):
        compare(demsar())


def test_an_algorithm_without_any_result_is_left_out_and_named():
    # Failed (or could not run) on every dataset: comparing the others beats comparing nothing.
    rows = full() + [(d, "c", f, "failed", None) for d in ("d1", "d2", "d3") for f in (0, 1)]
    matrix = score_matrix(cells(rows))
    assert matrix.algorithms == ("a", "b") and matrix.datasets == ("d1", "d2", "d3")
    why = "no finished cell with a value of accuracy (6 cells: 6 failed)"
    assert matrix.left_out == {"c": why}
    assert f"algorithm c left out: {why}" in compare(matrix).notes
    # With one algorithm left, the error names the one left out.
    lone = score_matrix(cells([row for row in rows if row[1] != "b"]))
    with pytest.raises(StatsError, match=r"got 1 algorithm\(s\) \['a'\] .* left out without "
                                         r"results: \{'c'"):
        compare(lone)
    # Asked for by name, it is not left out: every dataset lacks it, which is an error.
    with pytest.raises(StatsError, match="at least 2 datasets"):
        score_matrix(cells(rows), algorithms=["a", "c"])
