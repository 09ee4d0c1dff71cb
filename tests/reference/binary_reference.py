"""Fingerprints of binary models, for the test that binary results never move.

``python tests/reference/binary_reference.py`` rewrites ``binary_models.json`` (only when a change
of binary results is intended and stated); ``test_binary_reference.py`` recomputes every
fingerprint and compares. A fingerprint is the SHA-256 of everything a fitted model is made of
(component names, parameters and array bytes of every term), of its round records' numbers, and
of its decision function on held-out rows, so one changed bit anywhere shows.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import attrs
import numpy as np

import boostkit
from boostkit.datasets import load

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "binary_models.json"
N_ROUNDS = 25


def dataset():
    """1 200 seeded rows of spambase (non-negative, so every algorithm applies), 900 to fit."""
    data = load("spambase")
    rows = np.random.default_rng(0).permutation(data.X.shape[0])[:1200]
    X, y = data.X[rows], data.binary_target()[rows]
    return X[:900], y[:900], X[900:]


def _update_value(h, value) -> None:
    if isinstance(value, np.ndarray):
        h.update(f"{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, boostkit.Component):
        _update_component(h, value)
    elif isinstance(value, (list, tuple)):
        h.update(b"[")
        for v in value:
            _update_value(h, v)
        h.update(b"]")
    elif isinstance(value, float):
        h.update(np.float64(value).tobytes())
    else:
        h.update(repr(value).encode())


# Fields hypotheses gained after binary_models.json was written, which change no result: where a
# missing value goes (stumps, ranker, tree nodes) and the category splits of tree nodes. Their
# values are not part of the fingerprint (the decision-function hash still covers every result).
_LATER_FIELDS = frozenset({"missing_left", "categorical", "category_left"})


def _update_component(h, component) -> None:
    h.update(component.name.encode())
    for field in attrs.fields(type(component)):
        if field.init and field.name not in _LATER_FIELDS:
            h.update(field.name.encode())
            _update_value(h, getattr(component, field.name))


def fingerprint(model, X_test) -> dict[str, str]:
    terms = hashlib.sha256()
    for hypothesis, contribution in zip(model.hypotheses, model.contributions):
        _update_component(terms, hypothesis)
        _update_component(terms, contribution)
    records = hashlib.sha256()
    for r in model.records:
        for value in (r.weighted_error, r.edge, r.z, r.error_bound, r.training_error,
                      *r.coefficients):
            _update_value(records, value)
        records.update(f"{r.hypothesis}|{r.stop_reason}".encode())
    margin = np.ascontiguousarray(model.decision_function(X_test), dtype=np.float64)
    return {
        "n_terms": str(len(model.hypotheses)),
        "stop_reason": model.stop_reason,
        "terms": terms.hexdigest(),
        "records": records.hexdigest(),
        "decision_function": hashlib.sha256(margin.tobytes()).hexdigest(),
    }


def fingerprints(names=None) -> dict[str, dict[str, str]]:
    X, y, X_test = dataset()
    out = {}
    for name in sorted(names if names is not None else boostkit.get_registry().algorithms()):
        model = boostkit.Booster(name, n_rounds=N_ROUNDS, random_state=0).fit(X, y)
        out[name] = fingerprint(model, X_test)
    return out


# Two libraries choose their code by CPU, and their choices sum or round differently:
# * matrix products (PAV-AdaBoost's Cmass directions, X @ w) go to OpenBLAS, whose AVX2 and
#   AVX-512 kernels sum in other orders: pinned to its AVX2 kernels, which every x86-64 machine
#   of the CI runs;
# * numpy's ufuncs (np.exp and np.log in the sigmoid calibration, the naive-Bayes and score
#   columns, PN-space's calibration and reweighting) have AVX-512 versions whose last bits
#   differ from the others' (the fingerprints of four algorithms using them, taken on an AVX-512
#   machine, differed on an AVX2 one): pinned to numpy's baseline code by disabling every
#   feature it dispatches on (NPY_DISABLE_CPU_FEATURES).
# numba's kernels compile for the CPU too, but keep the order of their sums and call the C
# library's exp and log: the other thirteen fingerprints were the same on both machines.
# So the fingerprints say whether boostkit's results moved, and not which CPU ran them.
PINNED_BLAS = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "1"}


def pinned_environment() -> dict[str, str]:
    """:data:`PINNED_BLAS`, and numpy held to its baseline code on this CPU."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__
    except ImportError:  # numpy < 2 (pyproject allows 1.24)
        from numpy.core._multiarray_umath import __cpu_dispatch__

    return {**PINNED_BLAS, "NPY_DISABLE_CPU_FEATURES": " ".join(__cpu_dispatch__)}


def pinned_fingerprints(names) -> dict[str, dict[str, str]]:
    """:func:`fingerprints` computed in a fresh interpreter with :func:`pinned_environment`
    (OpenBLAS and numpy read it once, when numpy is first imported)."""
    import os
    import subprocess

    code = ("import json, sys; from binary_reference import fingerprints; "
            "print(json.dumps(fingerprints(sys.argv[1:])))")
    env = {**os.environ, **pinned_environment()}
    done = subprocess.run([sys.executable, "-c", code, *names], cwd=HERE, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# Model files written by boostkit 0.1 (format version 2); they must load and predict the same.
SAVED_FILES = ("adaboost", "real-adaboost", "pav-adaboost", "weightboost")


def saved_file(name: str) -> Path:
    return HERE / f"{name}-v2.npz"


def saved_file_predictions() -> dict[str, str]:
    _, _, X_test = dataset()
    out = {}
    for name in SAVED_FILES:
        margin = boostkit.load_model(saved_file(name)).decision_function(X_test)
        out[name] = hashlib.sha256(np.ascontiguousarray(margin).tobytes()).hexdigest()
    return out


if __name__ == "__main__":
    # The algorithms of the stored reference (the binary ones of boostkit 0.1), or all.
    names = (sorted(json.loads(REFERENCE.read_text())["models"]) if REFERENCE.exists()
             else sorted(boostkit.get_registry().algorithms()))
    reference = {"models": pinned_fingerprints(names), "saved_files": saved_file_predictions()}
    REFERENCE.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n")
    print(f"wrote {REFERENCE}", file=sys.stderr)
