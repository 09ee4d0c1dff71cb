"""The values a compiled batch builds for its rounds without converters (``unchecked``
constructors): equal to the validated constructors' on the numbers a batch gives them, and the
batched models' values of the same public classes, pickled and loaded equal."""

from __future__ import annotations

import pickle

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import boostkit
from boostkit.components import RoundRecord
from boostkit.contributions import CellContribution, LinearContribution
from boostkit_adaboost.stumps import CutStump, Stump

FLOATS = st.floats(allow_nan=False)  # what a batch's tolist() gives (infinities included)
OPTIONAL_FLOATS = st.none() | FLOATS


def _fields(value) -> tuple:
    """Every field of an attrs value with its type, arrays as (dtype, shape, contiguity, bytes)."""
    return tuple((type(v), (v.dtype, v.shape, v.flags.c_contiguous, v.tobytes()))
                 if isinstance(v, np.ndarray) else (type(v), v)
                 for v in (getattr(value, field.name) for field in attrs.fields(type(value))))


@given(st.integers(1, 10_000), st.text(max_size=30), FLOATS, OPTIONAL_FLOATS, OPTIONAL_FLOATS,
       FLOATS, st.lists(FLOATS, max_size=4))
def test_an_unchecked_record_is_the_constructors(round, text, error, z, bound, training_error,
                                                 coefficients):
    checked = RoundRecord(round, text, error, 0.5 - error, z, bound, training_error,
                          coefficients)
    unchecked = RoundRecord.unchecked(round, text, error, 0.5 - error, z, bound,
                                      training_error, tuple(coefficients))
    assert type(unchecked) is RoundRecord
    assert unchecked == checked and _fields(unchecked) == _fields(checked)
    assert pickle.loads(pickle.dumps(unchecked)) == checked


def test_unchecked_records_have_an_extra_dict_each():
    a, b = (RoundRecord.unchecked(t, "h", 0.25, 0.25, None, None, 0.0, (1.0,)) for t in (1, 2))
    assert a.extra == {} and a.extra is not b.extra


@given(st.integers(0, 1_000), FLOATS, FLOATS, FLOATS, st.booleans())
def test_an_unchecked_stump_is_the_constructors(feature, threshold, lo, hi, missing_left):
    checked = Stump(feature, threshold, [lo, hi], missing_left)
    unchecked = Stump.unchecked(feature, threshold, np.array([lo, hi]), missing_left)
    assert type(unchecked) is Stump
    assert unchecked == checked and _fields(unchecked) == _fields(checked)
    assert unchecked.describe() == checked.describe()
    loaded = pickle.loads(pickle.dumps(unchecked))
    assert loaded == checked and _fields(loaded) == _fields(checked)


@given(FLOATS, FLOATS, FLOATS)
def test_unchecked_contributions_are_the_constructors(alpha, lo, hi):
    assert _fields(LinearContribution.unchecked(alpha)) == _fields(LinearContribution(alpha))
    row = np.array([[lo, hi], [0.0, 0.0]])[0]  # a batch's row of cell values, copied
    assert (_fields(CellContribution.unchecked(row.copy()))
            == _fields(CellContribution(row.copy())))


def test_the_cut_stumps_are_the_validated_stumps():
    thresholds = [np.array([0.5, 1.5]), np.array([2.5])]
    made = CutStump(thresholds)
    cut = made.hypothesis(1, 0, [0.25, 0.25], [0.5, 0.0], [-1.0, 1.0])
    assert _fields(cut) == _fields(Stump(1, 2.5, [-1.0, 1.0], True))
    # past the last edge: every value left; no valid cut: the constant stump
    assert _fields(made.hypothesis(0, 2, [0.5, 0.0], [0.5, 0.0], [1.0, -1.0])) == _fields(
        Stump(0, np.inf, [1.0, -1.0], True))
    assert _fields(made.hypothesis(1, -1, [0.5, 0.0], [0.0, 0.5], [-1.0, 1.0])) == _fields(
        Stump(0, np.inf, [-1.0, 1.0]))
    lighter_left = made.hypothesis(0, 1, [0.1, 0.4], [0.0, 0.5], [-0.25, 0.75])
    assert _fields(lighter_left) == _fields(Stump(0, 1.5, [-0.25, 0.75], False))


@pytest.mark.parametrize("recipe", ["adaboost", "real-adaboost", "logitboost"])
def test_a_batched_models_values_are_the_public_classes_and_pickle(recipe):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1, -1)
    batched = boostkit.Booster(recipe, n_rounds=25).fit(X, y)
    one_by_one = boostkit.Booster(recipe, n_rounds=25, compiled_rounds=False).fit(X, y)
    for a, b in [(batched.records, one_by_one.records),
                 (batched.hypotheses, one_by_one.hypotheses),
                 (batched.contributions, one_by_one.contributions)]:
        assert [type(v) for v in a] == [type(v) for v in b]
    assert all(type(r) is RoundRecord for r in batched.records)
    assert all(type(h) is Stump for h in batched.hypotheses)
    assert batched.hypotheses == one_by_one.hypotheses
    assert [r.hypothesis for r in batched.records] == [r.hypothesis for r in one_by_one.records]
    loaded = pickle.loads(pickle.dumps(batched))
    assert loaded == batched
    np.testing.assert_array_equal(loaded.decision_function(X), batched.decision_function(X))


@given(st.integers(0, 50), st.floats(allow_nan=False, allow_infinity=False), FLOATS, FLOATS,
       st.booleans())
def test_a_stumps_description_formats_its_numbers_as_format_specs_do(feature, threshold, lo,
                                                                     hi, missing_left):
    # The scores are %-formatted (faster than a format spec's sign flag): the same text.
    stump = Stump(feature, threshold, [lo, hi], missing_left)
    assert stump.describe() == f"x[{feature}] <= {threshold:.6g} ? {lo:+g} : {hi:+g}"
    assert Stump(feature, np.inf, [lo, hi]).describe() == f"constant {lo:+g}"
    assert (Stump(feature, np.inf, [lo, hi], False).describe()
            == f"x[{feature}] is missing ? {hi:+g} : {lo:+g}")
