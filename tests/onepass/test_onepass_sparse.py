"""Sparse term counts flow through every boostkit_onepass component without being densified.

Barutcuoglu et al. 2007, section 4 boosts over one base classifier per term. The matrix here has
6 000 texts x 1 000 terms: as a dense float64 array it would take 48 MB (the sparse
counts about 2 MB). Two checks:

* scipy's densifying methods (``toarray``, ``todense``) raise during the fits and predictions;
* the peak of Python/numpy allocations (tracemalloc) stays far below the dense size.

The benchmark (``benchmarks/bench_onepass.py``) runs the 10 000 x 20 000 matrix of the issue.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse

import boostkit
from boostkit_onepass import PopbmAbortWarning, collapse, one_pass

N_TEXTS, N_TERMS = 6_000, 1_000


def text_like(n_texts, n_terms, seed=0):
    """Zipf-distributed term counts (30 tokens per text); 200 rare terms occur in positive texts."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n_texts) < 0.3, 1, -1)
    p = 1.0 / np.arange(1, n_terms + 1)
    p /= p.sum()
    tokens = rng.choice(n_terms, size=(n_texts, 30), p=p)
    topical = rng.integers(n_terms // 2, n_terms // 2 + 200, size=(n_texts, 6))
    tokens[y > 0, :6] = topical[y > 0]
    rows = np.repeat(np.arange(n_texts), tokens.shape[1])
    X = sparse.csr_matrix((np.ones(tokens.size), (rows, tokens.ravel())), shape=(n_texts, n_terms))
    X.sum_duplicates()
    return X, y


@pytest.fixture(scope="module")
def texts():
    X, y = text_like(N_TEXTS, N_TERMS)
    X_test, y_test = text_like(500, N_TERMS, seed=1)
    return X, y, X_test, y_test


def _fit_everything(X, y, X_test, tmp_path):
    models = {}
    for algorithm, n_rounds in (("opab", N_TERMS), ("picky-adaboost", N_TERMS),
                                ("popbm", 25), ("naive-bayes", 1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PopbmAbortWarning)
            booster = boostkit.Booster(algorithm, n_rounds=n_rounds, random_state=0)
            models[algorithm] = booster.fit(X, y)
    models["fused"] = one_pass(X, y, gamma_bar=0.01, random_state=0)
    margins = {}
    for name, model in models.items():
        margins[name] = model.decision_function(X_test)
        margins[name + " collapsed"] = collapse(model).decision_function(X_test)
    path = models["opab"].save(tmp_path / "opab.npz")
    margins["loaded"] = boostkit.load_model(path).decision_function(X_test)
    return models, margins


def test_no_component_densifies(texts, tmp_path, monkeypatch):
    X, y, X_test, _ = texts

    def refuse(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sparse.csr_matrix, sparse.csc_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    models, margins = _fit_everything(X, y, X_test, tmp_path)
    assert models["opab"].n_rounds == N_TERMS
    assert 0 < models["picky-adaboost"].n_rounds < N_TERMS
    for name in ("opab", "picky-adaboost", "popbm", "naive-bayes"):
        assert np.allclose(margins[name], margins[name + " collapsed"], atol=1e-9)
    assert np.array_equal(margins["loaded"], margins["opab"])


def test_peak_memory_is_far_below_the_dense_matrix(texts, tmp_path):
    X, y, X_test, _ = texts
    _fit_everything(X[:50], y[:50], X_test[:5], tmp_path)  # compile and import before measuring
    tracemalloc.start()
    try:
        _fit_everything(X, y, X_test, tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    dense_bytes = N_TEXTS * N_TERMS * 8
    assert peak < dense_bytes / 4, f"peak {peak / 1e6:.1f} MB, dense {dense_bytes / 1e6:.0f} MB"


def test_sparse_models_classify_text(texts):
    X, y, X_test, y_test = texts
    nb = boostkit.Booster("naive-bayes").fit(X, y)
    opab = one_pass(X, y, random_state=0)
    for model in (nb, opab):
        assert np.mean(model.predict(X_test) == y_test) > 0.9
