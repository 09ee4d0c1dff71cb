"""The source of Barutcuoglu et al. 2007, sections 3.1-3.2, on which PickyAdaBoost beats AdaBoost.

y is uniform in {-1, +1}; x_1, ..., x_n independently equal y with probability 1/2 + gamma; x_{n+1}
equals y unless x_1 = ... = x_n = -y. The base classifiers are b_i(x) = x_i, taken in the order
b_1, ..., b_{n+1}. The distribution is finite, so both algorithms are run *exactly*: every
pattern (x, y) of {-1, +1}^{n+1} x {-1, +1} is one training example whose sample weight is its
probability (0 for the patterns D never produces), so the engine's D_1 is the source itself and a
model's training error is its error under D.

Closed forms: Lemma 7 (PickyAdaBoost: (1/2 - gamma)^n), Lemma 11 / eq. (5) (AdaBoost:
Pr[B(n, 1/2 - gamma) > A]), the rough lower bound (6), and Claim 12 (the ratio is 2^{Omega(n)}).
"""

from __future__ import annotations

import itertools
import math

import attrs
import numpy as np

import boostkit


def construction_source(n: int, gamma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, probability)``: all 2^(n+1) patterns for each label, with their probabilities."""
    if not 0.0 < gamma < 0.5:
        raise ValueError(f"gamma must be in (0, 1/2), got {gamma!r}")
    patterns = np.array(list(itertools.product((-1.0, 1.0), repeat=n + 1)))
    X = np.concatenate([patterns, patterns])
    y = np.repeat([-1.0, 1.0], patterns.shape[0])
    agree = (X[:, :n] == y[:, None]).sum(axis=1)
    probability = 0.5 * (0.5 + gamma) ** agree * (0.5 - gamma) ** (n - agree)
    consistent = X[:, n] == np.where(agree > 0, y, -y)  # x_{n+1} = -y iff no x_i agrees
    return X, y, np.where(consistent, probability, 0.0)


def picky_threshold(n: int, gamma: float) -> float:
    """A gamma_bar with gamma < gamma_bar <= 1/2 - (1/2 - gamma)^n (section 3.2): the midpoint."""
    return 0.5 * (gamma + 0.5 - (0.5 - gamma) ** n)


def construction_recipes(gamma_bar: float) -> tuple[boostkit.Recipe, boostkit.Recipe]:
    """One-pass AdaBoost and PickyAdaBoost(gamma_bar) in the given order, alpha as in Fig. 1.

    ``constant-alpha`` (boostkit_adaboost, by name) with ``smoothing=0`` gives the exact
    alpha_t = 1/2 ln((1 - eps_t) / eps_t).
    """
    adaboost = boostkit.Recipe(
        name="construction-adaboost", proposal=("ordered-pool", {"order": "given", "base": "sign"}),
        calibration=("constant-alpha", {"smoothing": 0.0}), reweighting="exponential",
        paper="Barutcuoglu et al. 2007, section 3.2",
    )
    picky = attrs.evolve(adaboost, name="construction-picky-adaboost",
                         proposal_wrappers=(("picky", {"gamma_bar": gamma_bar}),))
    return adaboost, picky


def adaboost_error_formula(n: int, gamma: float) -> float:
    """AdaBoost's error after one pass: Pr[B(n, 1/2 - gamma) > A] (Lemma 11, eq. 5)."""
    A = n / 2 + math.log(2 ** n - 1) / (2 * math.log((1 + 2 * gamma) / (1 - 2 * gamma)))
    return sum(math.comb(n, i) * (0.5 - gamma) ** i * (0.5 + gamma) ** (n - i)
               for i in range(math.floor(A) + 1, n + 1))


def adaboost_lower_bound(n: int, gamma: float) -> float:
    """The rough lower bound (6): (1/2 - gamma)^n sum_{i=0}^{n - floor(A) - 1} C(n, i)."""
    A = n / 2 + math.log(2 ** n - 1) / (2 * math.log((1 + 2 * gamma) / (1 - 2 * gamma)))
    return (0.5 - gamma) ** n * sum(math.comb(n, i) for i in range(n - math.floor(A)))


@attrs.frozen
class ConstructionRow:
    """Errors under D after one pass, run exactly by the engine and from the closed forms."""

    n: int
    gamma: float
    gamma_bar: float
    picky_error: float
    adaboost_error: float
    picky_formula: float
    adaboost_formula: float
    adaboost_bound: float
    picky_rounds: int
    last_alpha: float

    @property
    def ratio(self) -> float:
        return self.adaboost_error / self.picky_error


def run_construction(n: int, gamma: float = 0.38,
                     gamma_bar: float | None = None) -> ConstructionRow:
    """Run both algorithms exactly on the source (every pattern weighted by its probability)."""
    gamma_bar = picky_threshold(n, gamma) if gamma_bar is None else gamma_bar
    X, y, probability = construction_source(n, gamma)
    adaboost, picky = construction_recipes(gamma_bar)
    errors, models = [], []
    for recipe in (picky, adaboost):
        model = boostkit.Booster(recipe, n_rounds=n + 1).fit(X, y, sample_weight=probability)
        wrong = y * model.decision_function(X) <= 0
        errors.append(float(probability[wrong].sum()))
        models.append(model)
    return ConstructionRow(
        n=n, gamma=gamma, gamma_bar=gamma_bar, picky_error=errors[0], adaboost_error=errors[1],
        picky_formula=(0.5 - gamma) ** n, adaboost_formula=adaboost_error_formula(n, gamma),
        adaboost_bound=adaboost_lower_bound(n, gamma), picky_rounds=models[0].n_rounds,
        last_alpha=models[1].records[-1].coefficients[0],
    )


def construction_table(ns=range(3, 16), gamma: float = 0.38) -> list[ConstructionRow]:
    return [run_construction(n, gamma) for n in ns]


def format_construction(rows: list[ConstructionRow]) -> str:
    header = (f"{'n':>3} {'Picky (exact)':>14} {'(1/2-g)^n':>11} {'AdaBoost (exact)':>17} "
              f"{'eq. (5)':>11} {'bound (6)':>11} {'ratio':>9} {'log2(ratio)/n':>13}")
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r.n:>3} {r.picky_error:>14.6g} {r.picky_formula:>11.6g} {r.adaboost_error:>17.6g} "
            f"{r.adaboost_formula:>11.6g} {r.adaboost_bound:>11.4g} {r.ratio:>9.4g} "
            f"{math.log2(r.ratio) / r.n:>13.3f}"
        )
    return "\n".join(lines)
