"""Reproductions of Tables 1, 2, 3 and 6 of Wilbur et al. 2005 (python -m
boostkit_pav.reproduce ...), checked against the paper's numbers.

Table 3 with the paper's 1000 spaces and Table 6 with 10 samples are marked slow; the default
run uses 100 spaces and 3 samples, with tolerances widened for the larger sampling noise.
"""

from __future__ import annotations

import pytest

from boostkit_pav import reproduce
from boostkit_pav.reproduce import PAPER, table1, table2, table3, table6


def test_table1_pav_finds_the_ideal_order_in_one_round_and_linear_does_not():
    result = table1()
    assert result["ideal"] == pytest.approx(0.860, abs=5e-4)
    assert result["pav"] == result["ideal"]
    assert result["linear"] == pytest.approx(PAPER["table1"]["linear"], abs=5e-4)
    # to convergence linear AdaBoost does no better: its optimum has alpha_1 < 0
    assert result["linear_converged"] < result["linear"]
    assert result["converged_alphas"][0] < 0 < result["converged_alphas"][1]


def test_table2_linear_alphas_are_zero_and_pav_reaches_the_ideal_order():
    result = table2()
    assert result["ideal"] == pytest.approx(0.698, abs=5e-4)
    assert result["pav"] == result["ideal"]
    assert result["linear"] == pytest.approx(0.300, abs=1e-12)
    assert result["linear_alphas"] == [0.0, 0.0]


def check_table3(result, tolerance, random_tolerance):
    mean, paper = result["mean"], PAPER["table3"]["mean"]
    # ideal, naive Bayes and random do not depend on the boosting; linear and stump AdaBoost
    # converge within the rounds. The paper's PAV-AdaBoost (0.7321) stops short of the ideal
    # order far more often than ours (see docs/algorithms/pav.md): only the ordering is checked.
    for method in ("ideal", "linear", "stump", "bayes"):
        assert mean[method] == pytest.approx(paper[method], abs=tolerance), method
    assert mean["random"] == pytest.approx(paper["random"], abs=random_tolerance)
    assert mean["ideal"] >= mean["pav"] > max(mean["linear"], mean["stump"], mean["bayes"]) > mean["random"]
    counts, n = result["counts"], result["n_spaces"]
    # no method ever beats the ideal order; PAV-AdaBoost beats the others in the large majority
    for column in ("pav", "linear", "stump", "bayes"):
        assert counts["ideal"][column][2] == 0
    for column in ("linear", "stump", "bayes"):
        assert counts["pav"][column][0] >= 0.8 * n
    # every pair of counts adds up, and each pair is reported from both sides
    assert counts["linear"]["bayes"] == counts["bayes"]["linear"][::-1]
    assert all(sum(c) == n for row in counts.values() for c in row.values())


def test_table3_on_100_spaces():
    check_table3(table3(n_spaces=100, seed=0), tolerance=0.03, random_tolerance=0.03)


@pytest.mark.slow
def test_table3_on_1000_spaces_as_in_the_paper():
    # the issue's +-0.005; random (the mean label rate) has a larger spread over spaces
    check_table3(table3(n_spaces=1000, seed=0), tolerance=0.005, random_tolerance=0.008)


def check_table6(result, tolerance_sd, floor):
    for name, methods in result.items():
        paper = PAPER["table6"][name]
        for method in ("linear", "pav"):
            mean, sd = methods[method]
            # the paper reports one sample: its value should lie within the spread of ours
            assert abs(mean - paper[method]) <= tolerance_sd * max(sd, floor), (name, method)
        # the paper: the Mahalanobis classifier, ideal for two normals, is best in every set
        assert methods["mahalanobis"][0] > max(methods["linear"][0], methods["pav"][0])


def test_table6_on_three_samples():
    check_table6(table6(repeats=3, seed=0), tolerance_sd=3.0, floor=0.015)


@pytest.mark.slow
def test_table6_on_ten_samples():
    check_table6(table6(repeats=10, seed=1), tolerance_sd=2.5, floor=0.01)


def test_the_command_line_prints_every_table(capsys):
    assert reproduce.main(["table2"]) == 0
    out = capsys.readouterr().out
    assert "PAV-AdaBoost.finite" in out and "0.6985" in out and "0.300" in out
    with pytest.raises(SystemExit):
        reproduce.main(["table9"])
