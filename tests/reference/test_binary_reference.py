"""The model files saved by boostkit 0.1 load and give the same decision function to the last
bit (:mod:`binary_reference`). Fitted models are compared within stated tolerances by
``test_tolerance_reference.py``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import boostkit

from binary_reference import REFERENCE, SAVED_FILES, dataset, saved_file_predictions

STORED = json.loads(REFERENCE.read_text())


@pytest.fixture(scope="module")
def data():
    return dataset()


def test_saved_binary_model_files_load_and_predict_the_same():
    assert saved_file_predictions() == STORED["saved_files"]
    assert set(STORED["saved_files"]) == set(SAVED_FILES)


def test_saved_binary_model_files_keep_their_classes(data):
    _, y, X_test = data
    model = boostkit.load_model(REFERENCE.parent / "adaboost-v2.npz")
    assert list(model.classes) == sorted(set(y))
    assert set(np.unique(model.predict(X_test))) <= set(model.classes)
