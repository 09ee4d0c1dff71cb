"""The model files boostkit 0.1 saved, for the test that they load and predict the same.

``python tests/reference/binary_reference.py`` rewrites ``binary_models.json``: the SHA-256 of
each stored file's decision function on held-out spambase rows (:func:`dataset`). The files fit
nothing: loading and predicting is the same arithmetic whatever the fit does, so they stay fixed
bit for bit. Fitted models are compared within stated tolerances instead
(:mod:`tolerance_reference`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

import boostkit
from boostkit.datasets import load

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "binary_models.json"


def dataset():
    """1 200 seeded rows of spambase, split as when the files were saved: ``(X, y, X_test)``,
    the files' models fitted on the first 900."""
    data = load("spambase")
    rows = np.random.default_rng(0).permutation(data.X.shape[0])[:1200]
    X, y = data.X[rows], data.binary_target()[rows]
    return X[:900], y[:900], X[900:]


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
    REFERENCE.write_text(json.dumps({"saved_files": saved_file_predictions()}, indent=1,
                                    sort_keys=True) + "\n")
    print(f"wrote {REFERENCE}", file=sys.stderr)
