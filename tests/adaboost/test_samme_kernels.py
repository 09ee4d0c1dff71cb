"""The kernels of SAMME's weights (boostkit_adaboost.multiclass_kernels) against numpy
references, and samme-weights against the distribution it computes written with numpy."""

from __future__ import annotations

import types

import numpy as np
import pytest
from boostkit_adaboost.multiclass import SammeWeights
from boostkit_adaboost.multiclass_kernels import gather_true_pairs, scatter_true_pairs


def random_pairs(n, n_classes, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, n_classes)), rng.integers(0, n_classes, size=n)


@pytest.mark.parametrize("n, n_classes", [(0, 3), (1, 2), (57, 3), (1000, 7)])
def test_gather_true_pairs_reads_each_rows_label_entry(n, n_classes):
    pairs, labels = random_pairs(n, n_classes, n)
    out = np.full(n, np.nan)
    gather_true_pairs(pairs, labels, out)
    np.testing.assert_array_equal(out, pairs[np.arange(n), labels])


@pytest.mark.parametrize("n, n_classes", [(0, 3), (1, 2), (57, 3), (1000, 7)])
def test_scatter_true_pairs_writes_the_label_entries_and_zeros(n, n_classes):
    values, labels = random_pairs(n, n_classes, n + 1)
    values = values[:, 0]
    out = np.full((n, n_classes), np.nan)  # stale contents must be overwritten
    scatter_true_pairs(values, labels, out)
    expected = np.zeros((n, n_classes))
    expected[np.arange(n), labels] = values
    np.testing.assert_array_equal(out, expected)
    off_labels = np.ones((n, n_classes), dtype=bool)
    off_labels[np.arange(n), labels] = False
    assert not np.signbit(out[off_labels]).any()  # +0.0, as np.zeros gives


def test_samme_weights_are_d1_exp_minus_true_margin_normalised():
    """D(i, y_i) proportional to D_1(i) exp(-F(x_i, y_i)), 0 off the true-label pairs; the log
    potential is log sum_i D_1(i) exp(-F(x_i, y_i)) (Zhu et al. 2009, Algorithm 2, 2(d))."""
    n, n_classes = 500, 4
    margin, labels = random_pairs(n, n_classes, 9)
    margin *= 30.0  # large margins: computed in log space
    sample_weight = np.random.default_rng(10).dirichlet(np.ones(n))
    sample_weight[::9] = 0.0
    sample_weight /= sample_weight.sum()
    data = types.SimpleNamespace(n_columns=n_classes, n_samples=n, labels=labels,
                                 sample_weight=sample_weight, y=np.zeros((n, n_classes)))
    component = SammeWeights()
    d1 = component.boostkit_initial_weights(data=data)
    state = types.SimpleNamespace(data=data, margin=margin, initial_weights=d1, n_jobs=1)
    answer = component.boostkit_reweight(state=state)
    true_margin = margin[np.arange(n), labels]
    log_terms = np.where(sample_weight > 0, np.log(np.where(sample_weight > 0, sample_weight, 1))
                         - true_margin, -np.inf)
    top = log_terms.max()
    expected = np.zeros((n, n_classes))
    expected[np.arange(n), labels] = np.exp(log_terms - top) / np.exp(log_terms - top).sum()
    np.testing.assert_allclose(answer.weights, expected, rtol=1e-10, atol=1e-300)
    assert answer.log_potential == pytest.approx(top + np.log(np.exp(log_terms - top).sum()),
                                                 rel=1e-12)
