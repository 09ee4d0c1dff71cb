"""Reproduce Tables 1, 2, 3 and 6 of Wilbur et al. 2005 (PAV-AdaBoost).

Run::

    python -m boostkit_pav.reproduce table1|table2|table3|table6|all [--spaces N] [--repeats R] [--seed S]
    python -m boostkit_pav.reproduce reuters [--dataset grain|corn] [--rounds T]

Every number is an 11-point average precision with the paper's rule for tied scores
(:func:`boostkit.metrics.average_precision_11pt`, eq. 37-38), printed next to the paper's.

* Table 1 / Table 2 (section 4.1 / 4.2): four subsets of 100 objects with two given scores.
  PAV-AdaBoost.finite and linear AdaBoost for one round each (s1 then s2), as the paper
  compares them; linear AdaBoost back-fitted until the sum (20) converges is shown too (Table 1:
  its optimum has alpha_1 < 0 and orders the subsets worse, 0.652). The papers' README: the +1
  counts read 1, 50, 51, 99 (Table 1) and 0, 20, 20, 80 (Table 2).
* Table 3 (section 4.3): simulated 3-word spaces (7 document types x 100 copies, each type's
  number of +1 labels uniform on 0..100): the ideal ordering, PAV-AdaBoost and linear AdaBoost
  with binary naive Bayes as weak learner, stump AdaBoost (``real-adaboost``), naive Bayes, and
  random; mean precision and the outperform/equal/fall-below counts between methods. The paper
  does not give the number of boosting rounds; ``--rounds`` (default 10) is used for all three.
* Table 6 (section 6): two 3-D normal distributions (500 + 500 training and as many test points)
  at three distances, the three coordinate projections as the fixed weak hypotheses; PAV- and
  linear AdaBoost.finite to convergence, and the Mahalanobis (Gaussian likelihood ratio)
  classifier the paper shows as the reference for this problem. Test precision over
  ``--repeats`` independent samples, mean and standard deviation.
* ``reuters`` (section 7, Figures 1-2, on a stand-in corpus): the paper's REBASE/MEDLINE data are
  not available, so the same experiment runs on a Reuters-21578 topic (``grain`` or ``corn``,
  from the data directory): Cmass and Nscore boosted by PAV-AdaBoost and by linear AdaBoost
  (Nscore also with an ``xlap`` window), against binary naive Bayes (all terms, and terms of
  weight >= 1 as in section 7) and KNN (K = 60, eq. 49 with IDF). Test precision after the first
  round, at its best round and after the last. Not in ``all``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

import numpy as np

import boostkit
from boostkit.datasets import load_text
from boostkit.metrics import average_precision_11pt

from .learners import local_weights
from .text import Vocabulary

__all__ = [
    "PAPER",
    "reuters",
    "four_subsets",
    "table1",
    "table2",
    "table3",
    "table6",
    "three_word_space",
    "normal_pair",
    "main",
]

# The paper's numbers (Wilbur et al. 2005, Tables 1, 2, 3 and 6).
PAPER = {
    "table1": {"ideal": 0.860, "pav": 0.860, "linear": 0.823},
    "table2": {"ideal": 0.698, "pav": 0.698, "linear": 0.300},
    "table3": {
        "mean": {"ideal": 0.7721, "pav": 0.7321, "linear": 0.7053, "stump": 0.7047, "bayes": 0.7042,
                 "random": 0.5039},
        # outperformed / equalled / fell below, row method against column method
        "counts": {
            "ideal": {"pav": (962, 38, 0), "linear": (993, 7, 0), "stump": (990, 10, 0),
                      "bayes": (993, 7, 0)},
            # The PavAda row prints three entries, for LinAda, StmpAda and Bayes' in that order
            # (it skips its own column); the LinAda and StmpAda rows' first entries mirror them.
            "pav": {"linear": (949, 41, 10), "stump": (885, 37, 78), "bayes": (954, 44, 2)},
            "linear": {"pav": (10, 41, 949), "stump": (220, 534, 246), "bayes": (67, 901, 32)},
            "stump": {"pav": (78, 37, 885), "linear": (246, 534, 220), "bayes": (284, 494, 222)},
            "bayes": {"pav": (2, 44, 954), "linear": (32, 901, 67), "stump": (222, 494, 284)},
        },
    },
    "table6": {
        "set 1": {"mahalanobis": 0.8556, "linear": 0.8341, "pav": 0.8357},
        "set 2": {"mahalanobis": 0.7250, "linear": 0.5950, "pav": 0.6107},
        "set 3": {"mahalanobis": 0.7014, "linear": 0.5568, "pav": 0.5624},
    },
}

# Back-fitting to convergence: a tight tolerance and a generous budget of rounds.
_CONVERGED = {"sum_converged": {"tol": 1e-12}}
_MAX_ROUNDS = 2000


def four_subsets(positives: Sequence[int], s1: Sequence[float], s2: Sequence[float]):
    """``(X, y)`` of sections 4.1-4.2: subsets A-D of 100 objects each, the first
    ``positives[j]`` of subset j labelled +1, and the two scores as the columns of X."""
    X = np.repeat(np.column_stack((s1, s2)).astype(np.float64), 100, axis=0)
    y = np.concatenate([np.where(np.arange(100) < p, 1, -1) for p in positives])
    return X, y


def _finite_pair(X, y):
    """Training precision of PAV-AdaBoost.finite and linear AdaBoost after one round (s1 then s2,
    the paper's comparison), and of linear AdaBoost back-fitted to convergence; the given scores
    are taken as they are (no re-orienting)."""
    as_given = {"proposal": {"orient": False}}
    one_round = X.shape[1]  # one update per scoring function
    pav = boostkit.Booster("pav-adaboost-finite", n_rounds=one_round, params=as_given).fit(X, y)
    linear = boostkit.Booster("linear-adaboost-finite", n_rounds=one_round, params=as_given).fit(X, y)
    converged = boostkit.Booster("linear-adaboost-finite", n_rounds=_MAX_ROUNDS,
                                 params={**as_given, **_CONVERGED}).fit(X, y)
    return {
        "pav": average_precision_11pt(y, pav.decision_function(X)),
        "linear": average_precision_11pt(y, linear.decision_function(X)),
        "linear_converged": average_precision_11pt(y, converged.decision_function(X)),
        "linear_alphas": [r.coefficients[0] for r in linear.records],
        "converged_alphas": [r.coefficients[0] for r in converged.records[-2:]],
    }


def table1() -> dict:
    """Section 4.1, Table 1: no linear combination of s1 and s2 orders A < B < C < D."""
    X, y = four_subsets([1, 50, 51, 99], [3, 1, 4, 5], [1, 2, 4, 3])
    ideal = average_precision_11pt(y, np.repeat([1.0, 2.0, 3.0, 4.0], 100))
    return {"ideal": ideal, **_finite_pair(X, y)}


def table2() -> dict:
    """Section 4.2, Table 2: linear AdaBoost's alphas are 0; PAV finds D > B, C > A."""
    X, y = four_subsets([0, 20, 20, 80], [0, 1, 0, 1], [0, 0, 1, 1])
    ideal = average_precision_11pt(y, np.repeat([0.0, 1.0, 1.0, 2.0], 100))
    return {"ideal": ideal, **_finite_pair(X, y)}


_DOCUMENT_TYPES = np.array(
    [[1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64
)


def three_word_space(rng: np.random.Generator):
    """One simulated space of section 4.3: ``(X, y, positives)``.

    X: the 7 kinds of non-empty documents over three words, 100 identical copies of each (700
    rows of 0/1 word indicators); positives: for each kind an independent uniform draw from
    0..100, that many copies labelled +1.
    """
    positives = rng.integers(0, 101, size=7)
    y = np.concatenate([np.where(np.arange(100) < p, 1, -1) for p in positives])
    return np.repeat(_DOCUMENT_TYPES, 100, axis=0), y, positives


METHODS_TABLE3 = ("ideal", "pav", "linear", "stump", "bayes")


def _naive_bayes_recipe(calibration) -> boostkit.Recipe:
    return boostkit.Recipe(name="naive-bayes-boost", proposal="binary-naive-bayes",
                           calibration=calibration, reweighting="exponential", stopping=("no-edge",))


def table3(n_spaces: int = 1000, seed: int = 0, rounds: int = 10) -> dict:
    """Section 4.3, Table 3: mean precision per method and the pairwise counts.

    Each space is scored on its own training data (section 4 studies what can be learned about
    the training set). A space whose labels are all -1 has no precision and is drawn again.
    Returns ``{"n_spaces", "mean": {method: value}, "counts": {row: {column: (out, equal,
    below)}}, "precisions": (n_spaces, 6) array}``; two precisions within 1e-9 count as equal.
    """
    rng = np.random.default_rng(seed)
    pav_recipe = _naive_bayes_recipe("pav")
    linear_recipe = _naive_bayes_recipe(("sigmoid", {"intercept": False}))
    rows = []
    while len(rows) < n_spaces:
        X, y, positives = three_word_space(rng)
        if positives.sum() == 0:
            continue
        pav = boostkit.Booster(pav_recipe, n_rounds=rounds).fit(X, y)
        linear = boostkit.Booster(linear_recipe, n_rounds=rounds).fit(X, y)
        stump = boostkit.Booster("real-adaboost", n_rounds=rounds).fit(X, y)
        rows.append([
            average_precision_11pt(y, np.repeat(positives, 100).astype(np.float64)),
            average_precision_11pt(y, pav.decision_function(X)),
            average_precision_11pt(y, linear.decision_function(X)),
            average_precision_11pt(y, stump.decision_function(X)),
            # naive Bayes itself: the first weak hypothesis, trained under D_1
            average_precision_11pt(y, pav.hypotheses[0].scores(X)),
            positives.sum() / 700.0,  # random: every rank holds the overall fraction
        ])
    precisions = np.array(rows)
    names = (*METHODS_TABLE3, "random")
    counts = {}
    for i, row in enumerate(METHODS_TABLE3):
        counts[row] = {}
        for j, column in enumerate(METHODS_TABLE3[1:], start=1):
            if i == j:
                continue
            difference = precisions[:, i] - precisions[:, j]
            counts[row][column] = (int((difference > 1e-9).sum()), int((np.abs(difference) <= 1e-9).sum()),
                                   int((difference < -1e-9).sum()))
    return {
        "n_spaces": n_spaces,
        "rounds": rounds,
        "mean": dict(zip(names, precisions.mean(axis=0).tolist())),
        "counts": counts,
        "precisions": precisions,
    }


# Section 6: covariance of N_1 (label +1) and of N_-1 (label -1), and the three sets' means.
_COVARIANCE_POS = np.array([[2.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 2.0]])
_COVARIANCE_NEG = np.array([[6.0, 5.0, 5.0], [5.0, 6.0, 5.0], [5.0, 5.0, 6.0]])
TABLE6_MEANS = {
    "set 1": ((-1.0, -1.0, -1.0), (2.0, 2.0, 2.0)),
    "set 2": ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "set 3": ((0.0, 0.0, 0.0), (0.5, 0.5, 0.5)),
}


def normal_pair(rng: np.random.Generator, mean_pos, mean_neg, n_each: int = 500):
    """``(X, y)``: ``n_each`` points from N_1 (label +1) and from N_-1 (label -1), section 6."""
    X = np.vstack((rng.multivariate_normal(mean_pos, _COVARIANCE_POS, n_each),
                   rng.multivariate_normal(mean_neg, _COVARIANCE_NEG, n_each)))
    return X, np.repeat([1, -1], n_each)


def _mahalanobis_scores(X, y, X_test) -> np.ndarray:
    """The Gaussian log-likelihood ratio of normals fitted to each class (section 6's
    Mahalanobis distance classifier: the optimal discriminator for two fitted normals)."""
    log_ratio = np.zeros(X_test.shape[0])
    for label, sign in ((1, 1.0), (-1, -1.0)):
        points = X[y == label]
        centred = X_test - points.mean(axis=0)
        covariance = np.cov(points.T)
        squared = np.einsum("ij,jk,ik->i", centred, np.linalg.inv(covariance), centred)
        log_ratio += sign * (-0.5 * squared - 0.5 * np.linalg.slogdet(covariance)[1])
    return log_ratio


def table6(repeats: int = 10, seed: int = 0) -> dict:
    """Section 6, Table 6: test precision per set and method, ``{set: {method: (mean, std)}}``.

    Each repeat draws an independent training and test sample for every set. The coordinates
    are the scoring functions; ``score-columns`` negates those that fall with the +1 label, as
    PAV needs scores that rise with it (the +1 class has the lower means here).
    """
    rng = np.random.default_rng(seed)
    values: dict[str, dict[str, list[float]]] = {
        name: {"mahalanobis": [], "linear": [], "pav": []} for name in TABLE6_MEANS
    }
    for _ in range(repeats):
        for name, (mean_pos, mean_neg) in TABLE6_MEANS.items():
            X, y = normal_pair(rng, mean_pos, mean_neg)
            X_test, y_test = normal_pair(rng, mean_pos, mean_neg)
            # the recipes' own stopping rule (sum (20) lower by < 1e-6 per cycle)
            pav = boostkit.Booster("pav-adaboost-finite", n_rounds=_MAX_ROUNDS).fit(X, y)
            linear = boostkit.Booster("linear-adaboost-finite", n_rounds=_MAX_ROUNDS).fit(X, y)
            values[name]["mahalanobis"].append(
                average_precision_11pt(y_test, _mahalanobis_scores(X, y, X_test)))
            values[name]["linear"].append(average_precision_11pt(y_test, linear.decision_function(X_test)))
            values[name]["pav"].append(average_precision_11pt(y_test, pav.decision_function(X_test)))
    return {
        name: {method: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0)
               for method, v in methods.items()}
        for name, methods in values.items()
    }


def _knn_scores(X, y, X_test, k: int = 60) -> np.ndarray:
    """KNN of Wilbur et al. 2005, section 7: the summed similarity (eq. 49 local weights times IDF,
    dot product) of the test document to the +1 documents among its k most similar training
    documents."""
    idf = np.log(X.shape[0] / np.maximum(np.count_nonzero(X, axis=0), 1))
    train = local_weights(X, X.sum(axis=1), 0.0044, 0.7) * idf
    test = local_weights(X_test, X_test.sum(axis=1), 0.0044, 0.7) * idf
    similarity = test @ train.T
    nearest = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
    on_nearest = np.take_along_axis(similarity, nearest, axis=1)
    return np.sum(on_nearest * (y[nearest] > 0), axis=1)


def reuters(dataset: str = "grain", rounds: int = 100, max_terms: int = 3000) -> dict:
    """Section 7's weak learners on ``reuters_<dataset>_train/test`` (needs the data directory).

    Returns ``{"n_terms", "baselines": {name: precision}, "boosted": {name: {"first", "best",
    "best_round", "last"}}}``, test precisions.
    """
    texts, labels = load_text(f"reuters_{dataset}_train")
    test_texts, test_labels = load_text(f"reuters_{dataset}_test")
    vocabulary = Vocabulary.fit(texts, max_terms=max_terms)
    X, X_test = vocabulary.counts(texts), vocabulary.counts(test_texts)
    y, y_test = np.where(labels == "1", 1, -1), np.where(test_labels == "1", 1, -1)

    def fit(proposal, calibration, n_rounds):
        recipe = boostkit.Recipe(name="section-7", proposal=proposal, calibration=calibration,
                                 reweighting="exponential")
        return boostkit.Booster(recipe, n_rounds=n_rounds).fit(X, y)

    baselines = {"knn (K = 60)": average_precision_11pt(y_test, _knn_scores(X, y, X_test))}
    for name, params in (("naive Bayes", {}), ("naive Bayes, |weight| >= 1", {"min_weight": 1.0})):
        bayes = fit(("binary-naive-bayes", params), "pav", 1).hypotheses[0]
        baselines[name] = average_precision_11pt(y_test, bayes.scores(X_test))
    linear = ("sigmoid", {"intercept": False})
    runs = {
        "PAV-AdaBoost, Cmass": ("cmass", "pav"),
        "linear AdaBoost, Cmass": ("cmass", linear),
        "PAV-AdaBoost, Nscore": ("nscore", "pav"),
        "linear AdaBoost, Nscore": ("nscore", linear),
        f"linear AdaBoost, Nscore, xlap = {rounds // 4}": (("nscore", {"xlap": rounds // 4}), linear),
    }
    boosted = {}
    for name, (proposal, calibration) in runs.items():
        model = fit(proposal, calibration, rounds)
        staged = [average_precision_11pt(y_test, f) for f in model.staged_decision_function(X_test)]
        best = int(np.argmax(staged))
        boosted[name] = {"first": staged[0], "best": staged[best], "best_round": best + 1,
                         "last": staged[-1], "rounds": model.n_rounds}
    return {"dataset": dataset, "n_terms": len(vocabulary.terms), "baselines": baselines, "boosted": boosted}


# -- printing --------------------------------------------------------------------------------


def _print_pair(title: str, result: dict, paper: dict) -> None:
    print(title)
    print(f"  {'':22s}{'ours':>8s}{'paper':>8s}")
    rows = (("ideal", "ideal order"), ("pav", "PAV-AdaBoost.finite"), ("linear", "linear AdaBoost"))
    for key, label in rows:
        note = "" if key == "ideal" else "   (one round)"
        print(f"  {label:22s}{result[key]:8.4f}{paper[key]:8.3f}{note}")
    alphas = ", ".join(f"{a:.4g}" for a in result["converged_alphas"])
    print(f"  {'linear, converged':22s}{result['linear_converged']:8.4f}{'':8s}   (alphas {alphas})")


def _slashed(counts) -> str:
    return "/".join(map(str, counts))


def _print_table3(result: dict) -> None:
    paper = PAPER["table3"]
    print(f"Table 3: {result['n_spaces']} simulated three-word spaces, {result['rounds']} boosting rounds")
    print(f"  {'':8s}{'ours':>8s}{'paper':>8s}   outperformed/equalled/fell below (ours | paper)")
    for name in (*METHODS_TABLE3, "random"):
        line = f"  {name:8s}{result['mean'][name]:8.4f}{paper['mean'][name]:8.4f}  "
        if name in result["counts"]:
            line += "  ".join(
                f"{column}: {_slashed(counts)} | {_slashed(paper['counts'][name][column])}"
                for column, counts in result["counts"][name].items()
            )
        print(line)


def _print_table6(result: dict, repeats: int) -> None:
    print(f"Table 6: test precision, mean ± std over {repeats} samples (paper's value in brackets)")
    for name, methods in result.items():
        cells = "  ".join(
            f"{method} {mean:.4f} ± {std:.4f} [{PAPER['table6'][name][method]:.4f}]"
            for method, (mean, std) in methods.items()
        )
        print(f"  {name}: {cells}")


def _print_reuters(result: dict) -> None:
    print(f"Section 7 on Reuters '{result['dataset']}' ({result['n_terms']} terms): test precision")
    for name, value in result["baselines"].items():
        print(f"  {name:40s}{value:8.4f}")
    print(f"  {'':40s}{'first':>8s}{'best':>8s}{'(round)':>9s}{'last':>8s}")
    for name, r in result["boosted"].items():
        print(f"  {name:40s}{r['first']:8.4f}{r['best']:8.4f}{r['best_round']:9d}{r['last']:8.4f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m boostkit_pav.reproduce",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("table1", "table2", "table3", "table6", "all", "reuters"))
    parser.add_argument("--spaces", type=int, default=1000, help="Table 3: simulated spaces (1000)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="boosting rounds: Table 3 (default 10), reuters (default 100)")
    parser.add_argument("--dataset", choices=("grain", "corn"), default="grain",
                        help="reuters: the Reuters-21578 topic (grain)")
    parser.add_argument("--repeats", type=int, default=10, help="Table 6: independent samples (10)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    chosen = ("table1", "table2", "table3", "table6") if args.what == "all" else (args.what,)
    for what in chosen:
        if what == "table1":
            _print_pair("Table 1 (section 4.1), training precision", table1(), PAPER["table1"])
        elif what == "table2":
            _print_pair("Table 2 (section 4.2), training precision", table2(), PAPER["table2"])
        elif what == "table3":
            _print_table3(table3(args.spaces, args.seed, args.rounds or 10))
        elif what == "table6":
            _print_table6(table6(args.repeats, args.seed), args.repeats)
        else:
            _print_reuters(reuters(args.dataset, args.rounds or 100))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
