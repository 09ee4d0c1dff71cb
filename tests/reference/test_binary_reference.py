"""Binary results never move: today's models, bit for bit, and today's model files.

Every registered algorithm is fitted on the same seeded spambase rows and fingerprinted
(:mod:`binary_reference`, in a fresh interpreter with OpenBLAS pinned to its AVX2 kernels and
numpy to its baseline code, so that the CPU's code paths cannot pass for a change); the
fingerprints must equal the stored ones. The model files saved by
boostkit 0.1 must load and give the same decision function to the last bit.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import boostkit

from binary_reference import (
    N_ROUNDS,
    REFERENCE,
    SAVED_FILES,
    dataset,
    fingerprint,
    pinned_fingerprints,
    saved_file_predictions,
)

STORED = json.loads(REFERENCE.read_text())


@pytest.fixture(scope="module")
def data():
    return dataset()


@pytest.fixture(scope="module")
def today():
    """Every stored algorithm's fingerprint now, with OpenBLAS and numpy pinned as when they
    were stored."""
    return pinned_fingerprints(sorted(STORED["models"]))


@pytest.mark.parametrize("name", sorted(STORED["models"]))
def test_binary_model_is_bit_identical_to_the_reference(name, today):
    assert today[name] == STORED["models"][name]


def test_the_fingerprint_of_this_process_is_the_pinned_one_where_blas_is_not_used(data):
    # AdaBoost's stumps never call BLAS: pinned or not, the same bits.
    X, y, X_test = data
    model = boostkit.Booster("adaboost", n_rounds=N_ROUNDS, random_state=0).fit(X, y)
    assert fingerprint(model, X_test) == STORED["models"]["adaboost"]


def test_every_binary_algorithm_has_a_reference():
    binary = {name for name in boostkit.get_registry().algorithms()}
    assert set(STORED["models"]) <= binary
    # Algorithms added later (multiclass ones) need no binary fingerprint; today's all have one.
    assert len(STORED["models"]) == 17


def test_saved_binary_model_files_load_and_predict_the_same():
    assert saved_file_predictions() == STORED["saved_files"]
    assert set(STORED["saved_files"]) == set(SAVED_FILES)


def test_saved_binary_model_files_keep_their_classes(data):
    _, y, X_test = data
    model = boostkit.load_model(REFERENCE.parent / "adaboost-v2.npz")
    assert list(model.classes) == sorted(set(y))
    assert set(np.unique(model.predict(X_test))) <= set(model.classes)
