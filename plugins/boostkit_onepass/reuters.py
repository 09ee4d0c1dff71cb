"""The Reuters comparison of Barutcuoglu et al. 2007 (Table 1) on the Reuters data at hand.

The paper used the full ModApte split (9603 training, 3299 test texts) and ten topics; the data
directory holds (see its manifest) Weka's 1/5 subset of ModApte for "corn" and "grain", and the
R8 collection (single-topic ModApte texts of the eight largest topics, Cachopo's preprocessing),
where each topic against the rest is one binary task. Texts become stem counts
(:class:`boostkit_onepass.TermCounts`, stems = first 5 letters), naive Bayes is multinomial,
one-pass AdaBoost and PickyAdaBoost (gamma_bar = 0.001, 0.01, 0.1 as in Table 1) use the counts
as confidences, and the boosters are averaged over 10 random feature orders, as in the paper.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.datasets import load_text

from .fast import OnePass
from .text import TermCounts

GAMMA_BARS = (0.001, 0.01, 0.1)
R8_TOPICS = ("earn", "acq", "money-fx", "crude", "grain", "trade", "interest", "ship")
# Table 1 of the paper (full ModApte): NB, OPAB, Picky(0.001, 0.01, 0.1) test errors.
TABLE1 = {
    "earn": (0.042, 0.023, 0.020, 0.018, 0.027),
    "acq": (0.036, 0.094, 0.065, 0.071, 0.153),
    "money-fx": (0.043, 0.042, 0.041, 0.041, 0.048),
    "crude": (0.026, 0.031, 0.027, 0.026, 0.040),
    "grain": (0.038, 0.021, 0.023, 0.019, 0.018),
    "trade": (0.068, 0.028, 0.028, 0.026, 0.029),
    "interest": (0.026, 0.032, 0.029, 0.032, 0.035),
    "ship": (0.013, 0.018, 0.018, 0.017, 0.016),
    "corn": (0.027, 0.014, 0.014, 0.014, 0.013),
}


def reuters_tasks() -> list[tuple[str, str, str, str]]:
    """``(task, train set, test set, positive label)`` for every task whose data are available."""
    available = set(boostkit.datasets.available())
    tasks = [(topic, f"reuters_{topic}_train", f"reuters_{topic}_test", "1")
             for topic in ("corn", "grain")]
    tasks += [(f"r8-{topic}", "reuters_r8_train", "reuters_r8_test", topic) for topic in R8_TOPICS]
    return [t for t in tasks if t[1] in available and t[2] in available]


@attrs.frozen
class ReutersRow:
    task: str
    n_train: int
    n_test: int
    n_terms: int
    errors: dict  # label -> mean test error
    features: dict  # label -> mean features used
    paper: tuple | None


def run_reuters_task(task: str, train: str, test: str, positive: str, *, n_orders: int = 10,
                     gamma_bars=GAMMA_BARS, prefix_length: int | None = 5) -> ReutersRow:
    texts, labels = load_text(train)
    test_texts, test_labels = load_text(test)
    vectoriser = TermCounts(prefix_length=prefix_length)
    X = vectoriser.fit_transform(texts)
    X_test = vectoriser.transform(test_texts)
    y = np.where(labels == positive, 1, -1)
    y_test = np.where(test_labels == positive, 1, -1)
    names = ["NB", "OPAB", *(f"Picky({g:g})" for g in gamma_bars)]
    errors = {name: [] for name in names}
    features = {name: [] for name in names}
    nb = boostkit.Booster("naive-bayes").fit(X, y)
    errors["NB"].append(np.mean(nb.predict(X_test) != y_test))
    features["NB"].append(nb.hypotheses[0].n_features_used)
    prepared = OnePass(X, y)
    for order in range(n_orders):
        for name, gamma_bar in zip(names[1:], (0.0, *gamma_bars)):
            model = prepared.fit(gamma_bar=gamma_bar, random_state=order)
            errors[name].append(np.mean(model.predict(X_test) != y_test))
            features[name].append(model.hypotheses[0].n_features_used)
    topic = task.removeprefix("r8-")
    return ReutersRow(
        task=task, n_train=X.shape[0], n_test=X_test.shape[0], n_terms=X.shape[1],
        errors={name: float(np.mean(v)) for name, v in errors.items()},
        features={name: float(np.mean(v)) for name, v in features.items()},
        paper=TABLE1.get(topic),
    )


def format_reuters(rows: list[ReutersRow], gamma_bars=GAMMA_BARS) -> str:
    names = ["NB", "OPAB", *(f"Picky({g:g})" for g in gamma_bars)]
    head = f"{'task':>12} {'train':>6} {'test':>5} {'terms':>6} | " + " ".join(
        f"{n:>12}" for n in names)
    lines = [head + " | features used (mean)", "-" * (len(head) + 36)]
    for row in rows:
        errors = " ".join(f"{row.errors[n]:>12.4f}" for n in names)
        counts = " ".join(f"{row.features[n]:.0f}" for n in names)
        lines.append(f"{row.task:>12} {row.n_train:>6} {row.n_test:>5} {row.n_terms:>6} | "
                     f"{errors} | {counts}")
        if row.paper is not None:
            lines.append(f"{'paper':>33} | " + " ".join(f"{v:>12.3f}" for v in row.paper))
    return "\n".join(lines)
