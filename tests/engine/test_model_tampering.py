"""Model files are untrusted input: a tampering corpus built from a saved model.

Every tampered file must either be refused with a :class:`boostkit.ModelFormatError` or load a
model that predicts exactly as the original (margins, labels and probabilities), and loading may
never allocate more than a small multiple of the file's size (a zip bomb must not blow up
memory). The corpus is built from binary, native multi-class, categorical, one-vs-rest and
drop-in models.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import stat
import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boostkit
import boostkit.sklearn
from boostkit.datasets import load
from boostkit.errors import BoostkitError, ModelFormatError

KEY = "__model__"


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    """``{name: (model, path, X)}``: fitted models, their files and the rows they predict on.

    The multi-class labels are text, so that they are not the column indices a multi-label
    model's classes are."""
    data = load("breast_cancer_wisconsin", dropna=True)
    X, y = data.X, data.binary_target()
    grades = np.array(["high", "low", "mid"])[np.digitize(X[:, 0], [3.5, 6.5])]
    frame = pd.DataFrame(X[:, 1:], columns=list(data.feature_names[1:]))
    frame["grade"] = pd.Categorical(grades)
    folder = tmp_path_factory.mktemp("originals")
    models = {
        "adaboost": (boostkit.Booster("adaboost", n_rounds=8).fit(X, y), X),
        "weightboost": (boostkit.Booster("weightboost", n_rounds=5).fit(X, y), X),
        "samme": (boostkit.Booster("samme", n_rounds=6).fit(X[:, 1:], grades), X[:, 1:]),
        "adaboost-mh": (boostkit.Booster("adaboost-mh", n_rounds=6).fit(X[:, 1:], grades),
                        X[:, 1:]),
        "categorical": (boostkit.Booster("real-adaboost", n_rounds=6).fit(frame, y), frame),
        "one-vs-rest": (boostkit.Booster("adaboost", n_rounds=4, multiclass="one-vs-rest")
                        .fit(X[:, 1:], grades), X[:, 1:]),
        # The drop-in saves its fitted boostkit model (``model_.save``).
        "drop-in": (boostkit.sklearn.AdaBoostClassifier(n_estimators=5, random_state=0)
                    .fit(X[:, 1:], grades).model_, X[:, 1:]),
    }
    return {name: (model, model.save(folder / f"{name}.npz"), rows)
            for name, (model, rows) in models.items()}


def _predictions(model, X) -> tuple[np.ndarray, ...]:
    """Margins, probabilities and the predicted labels' positions in ``classes``.

    Positions, not labels: a file whose labels are replaced by other labels, distinct and sorted,
    holds a model some fit gives (one on those labels), which no check can tell from the
    original; its labels are the file's business, its predictions are not."""
    labels = model.predict(X)
    if not model.multilabel:
        labels = np.searchsorted(model.classes, labels)
    return model.decision_function(X), model.predict_proba(X), labels


def _same_predictions(loaded, model, X) -> bool:
    return loaded.multilabel == model.multilabel and all(
        np.array_equal(a, b) for a, b in zip(_predictions(loaded, X), _predictions(model, X)))


def _members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write(path, members: dict[str, bytes], compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, blob in members.items():
            archive.writestr(name, blob)


def _npy(array) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=True)
    return out.getvalue()


def _structure(members) -> dict:
    return json.loads(np.load(io.BytesIO(members[f"{KEY}.npy"])).tobytes())


def _with_structure(members, structure) -> dict:
    blob = np.frombuffer(json.dumps(structure).encode(), dtype=np.uint8)
    return {**members, f"{KEY}.npy": _npy(blob)}


def _array_keys(structure) -> list[str]:
    """Every array key the components of ``structure`` name."""
    found, stack = [], [structure]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found += list(value.get("arrays", {}).values()) if isinstance(
                value.get("arrays"), dict) else []
            stack += list(value.values())
        elif isinstance(value, list):
            stack += value
    return [k for k in found if isinstance(k, str)]


def _edits(structure):
    """(name, edited structure) pairs: field edits and type swaps of the JSON."""
    def edit(fn):
        s = json.loads(json.dumps(structure))
        fn(s)
        return s

    boost = lambda s: s["models"][0] if "models" in s else s  # noqa: E731
    first = lambda s: boost(s)["rounds"][0]  # noqa: E731
    yield "feature -1", edit(lambda s: first(s)["hypothesis"]["params"].update(feature=-1))
    yield "feature 1.5", edit(lambda s: first(s)["hypothesis"]["params"].update(feature=1.5))
    yield "feature huge", edit(lambda s: first(s)["hypothesis"]["params"].update(feature=10**6))
    yield "feature text", edit(lambda s: first(s)["hypothesis"]["params"].update(feature="3"))
    yield "alpha NaN", edit(lambda s: first(s)["contribution"]["params"].update(alpha=float("nan")))
    yield "alpha inf", edit(lambda s: first(s)["contribution"]["params"].update(alpha=float("inf")))
    yield "alpha text", edit(lambda s: first(s)["contribution"]["params"].update(alpha="big"))
    yield "n_features 0", edit(lambda s: boost(s).update(n_features=0))
    yield "n_features 1", edit(lambda s: boost(s).update(n_features=1))
    yield "n_features text", edit(lambda s: boost(s).update(n_features="9"))
    yield "margin columns", edit(lambda s: boost(s).update(margin_columns=7))
    yield "multilabel", edit(lambda s: s.update(multilabel=True))
    yield "multilabel text", edit(lambda s: s.update(multilabel="yes"))
    yield "multilabel number", edit(lambda s: s.update(multilabel=1))
    yield "margin columns true", edit(lambda s: boost(s).update(margin_columns=True))
    yield "rounds emptied", edit(lambda s: boost(s).update(rounds=[]))
    yield "records emptied", edit(lambda s: boost(s).update(records=[]))
    yield "last round dropped", edit(lambda s: boost(s)["rounds"].pop())
    yield "rounds renumbered", edit(lambda s: boost(s)["records"][0].update(round=2))
    yield "record of text", edit(lambda s: boost(s)["records"][0].update(edge="0.4"))
    yield "replaces a later term", edit(
        lambda s: boost(s)["records"][0]["extra"].update(replaces=1))
    yield "stop reason a number", edit(lambda s: boost(s).update(stop_reason=3))
    yield "no features key", edit(lambda s: boost(s).pop("features"))
    yield "unknown recipe component", edit(
        lambda s: boost(s)["recipe"]["calibration"].update(name="nosuch"))
    yield "unknown key with arrays", edit(
        lambda s: s.update(junk=[{"arrays": {"a": k}} for k in _array_keys(s)]))
    yield "version text", edit(lambda s: s.update(version="3"))
    yield "version future", edit(lambda s: s.update(version=99))
    yield "kind", edit(lambda s: s.update(kind="forest"))
    yield "no rounds key", edit(lambda s: boost(s).pop("rounds"))
    yield "rounds a dict", edit(lambda s: boost(s).update(rounds={}))
    yield "unknown component", edit(lambda s: first(s)["hypothesis"].update(component="nosuch"))
    yield "contribution as hypothesis", edit(
        lambda s: first(s).update(hypothesis=first(s)["contribution"]))
    yield "array key elsewhere", edit(
        lambda s: first(s)["hypothesis"]["arrays"].update(cell_scores="classes"))
    yield "best round 0", edit(lambda s: boost(s).update(best_round=0))
    yield "records text", edit(lambda s: boost(s).update(records="none"))
    yield "pickled marker", edit(
        lambda s: first(s)["hypothesis"]["params"].update(feature={"__pickled__": "classes"}))

    def deep(s):
        child = first(s)["contribution"]
        for _ in range(50):
            child = {"component": "linear", "params": {}, "arrays": {}, "children": {"inner": child}}
        first(s)["contribution"] = child

    yield "deep nesting", edit(deep)


def _corpus(path):
    """(name, members or raw bytes) of every tampered variant of the file at ``path``."""
    raw = path.read_bytes()
    members = _members(path)
    structure = _structure(members)
    for fraction in (0.1, 0.5, 0.9, 0.99):
        yield f"truncated {fraction}", raw[: int(len(raw) * fraction)]
    rng = np.random.default_rng(0)
    for k in range(12):
        flipped = bytearray(raw)
        flipped[int(rng.integers(len(raw)))] ^= 0xFF
        yield f"byte flip {k}", bytes(flipped)
    yield "npy renamed", _npy(np.arange(10.0))
    yield "empty", b""
    yield "json garbage", {**members, f"{KEY}.npy": _npy(np.frombuffer(b"{not json", np.uint8))}
    yield "json not a dict", _with_structure(members, [1, 2, 3])
    for name, edited in _edits(structure):
        yield name, _with_structure(members, edited)
    for key in [k for k in members if k != f"{KEY}.npy"][:6]:
        yield f"dropped {key}", {k: v for k, v in members.items() if k != key}
        yield f"wrong shape {key}", {**members, key: _npy(np.zeros((3, 4)))}
        yield f"wrong dtype {key}", {**members, key: _npy(np.array(["a", "b"]))}
        yield f"pickled {key}", {**members, key: _npy(np.array([object(), 1], dtype=object))}
    classes = np.load(io.BytesIO(members["classes.npy"]))
    yield "classes three", {**members, "classes.npy": _npy(np.array([0, 1, 2]))}
    yield "classes one", {**members, "classes.npy": _npy(np.array([0]))}
    yield "classes repeated", {**members, "classes.npy": _npy(classes[np.zeros_like(classes,
                                                                                  dtype=int)])}
    yield "classes reversed", {**members, "classes.npy": _npy(classes[::-1])}
    yield "classes NaN", {**members,
                          "classes.npy": _npy(np.r_[np.nan, np.arange(1.0, len(classes))])}
    yield "classes indices", {**members, "classes.npy": _npy(np.arange(len(classes)))}
    yield "pickle payload", {**members, f"{KEY}.npy": pickle.dumps({"format": "boostkit-model"})}


def _materialise(tmp_path, name, variant):
    path = tmp_path / f"{abs(hash(name))}.npz"
    if isinstance(variant, bytes):
        path.write_bytes(variant)
    else:
        _write(path, variant)
    return path


@pytest.mark.parametrize("model_name", ["adaboost", "weightboost", "samme", "adaboost-mh",
                                        "categorical", "one-vs-rest", "drop-in"])
def test_every_tampered_file_is_refused_or_predicts_as_the_original(originals, tmp_path,
                                                                     model_name):
    model, path, X = originals[model_name]
    outcomes = {"refused": 0, "same": 0}
    for name, variant in _corpus(path):
        tampered = _materialise(tmp_path, name, variant)
        try:
            loaded = boostkit.load_model(tampered)
        except ModelFormatError:
            outcomes["refused"] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{name}: {type(exc).__name__} escaped: {exc}")
        assert _same_predictions(loaded, model, X), name
        outcomes["same"] += 1
    assert outcomes["refused"] > 40


@pytest.mark.parametrize("model_name", ["adaboost", "weightboost", "samme", "adaboost-mh",
                                        "categorical", "one-vs-rest", "drop-in"])
def test_every_untampered_file_loads_to_the_same_predictions(originals, model_name):
    model, path, X = originals[model_name]
    loaded = boostkit.load_model(path)
    assert type(loaded) is type(model)
    assert _same_predictions(loaded, model, X)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.classes, model.classes)


def _paths(value, path=()):
    """The path of every node of a JSON value (the root's, ``()``, left out)."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        yield path + (key,)
        yield from _paths(item, path + (key,))


JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.floats(), st.text(max_size=3),
    st.sampled_from([10**20, -0.0, [], {}, [0, 1], {"component": "linear"}, "classes"]),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_one_edit_of_the_structure_is_refused_or_loads_a_model(originals, tmp_path, data):
    # Replacing or deleting any one node of the JSON: a ModelFormatError, or a model whose
    # predictions are computed or refused by boostkit (a relabelled or re-thresholded model is
    # one some fit could give: the corpus above checks that what is kept predicts the same).
    name = data.draw(st.sampled_from(["categorical", "one-vs-rest", "weightboost"]))
    _, path, X = originals[name]
    members = _members(path)
    structure = _structure(members)
    where = data.draw(st.sampled_from(sorted(_paths(structure), key=repr)))
    parent = structure
    for key in where[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and data.draw(st.booleans()):
        del parent[where[-1]]
    else:
        parent[where[-1]] = data.draw(JSON_VALUES)
    tampered = _materialise(tmp_path, repr(where), _with_structure(members, structure))
    try:
        loaded = boostkit.load_model(tampered)
    except ModelFormatError:
        return
    try:
        _predictions(loaded, X)
    except BoostkitError:
        pass


def _categories(variant):
    """A tampering of the categorical model's category array (``grade``, the last column)."""
    def tamper(members, s):
        last = len(s["features"]["names"]) - 1
        return {**members, f"features.categories.{last}.npy": _npy(np.asarray(variant))}

    return tamper


@pytest.mark.parametrize("tamper", [
    _categories(["mid", "low", "high"]),  # unsorted
    _categories(["high", "high", "mid"]),  # repeated
    _categories([np.nan, 1.0, 2.0]),  # NaN
    _categories([f"c{k:03d}" for k in range(300)]),  # more than max_bins (255 at most)
    lambda members, s: _with_structure(members, {**s, "features": {
        **s["features"], "names": [s["features"]["names"][0]] + s["features"]["names"][:-1]}}),
], ids=["unsorted", "repeated", "NaN", "longer than max_bins", "duplicate feature names"])
def test_tampered_categories_and_feature_names_are_refused(originals, tmp_path, tamper):
    _, path, _ = originals["categorical"]
    members = _members(path)
    tampered = _materialise(tmp_path, "categories", tamper(members, _structure(members)))
    with pytest.raises(ModelFormatError, match="categor|feature names|names"):
        boostkit.load_model(tampered)


def _zeros_npy(n_values: int) -> bytes:
    """An ``.npy`` of ``n_values`` float64 zeros (which deflate to almost nothing)."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = (n_values,)
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, header)
    return out.getvalue() + bytes(8 * n_values)


def _peak_bytes_of_load(path) -> tuple[int, Exception | None]:
    """The peak of memory traced while loading ``path``, and the error it raised."""
    tracemalloc.start()
    error = None
    try:
        boostkit.load_model(path)
    except Exception as exc:  # noqa: BLE001 - returned to the test
        error = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, error


def test_a_zip_bomb_is_refused_without_allocating_it(originals, tmp_path):
    members = _members(originals["adaboost"][1])
    bomb = _zeros_npy(20_000_000)  # 160 MB of float64 zeros, deflated to 160 kB
    path = tmp_path / "bomb.npz"
    _write(path, {**members, "classes.npy": bomb}, zipfile.ZIP_DEFLATED)
    del bomb
    assert path.stat().st_size < 500_000
    peak, error = _peak_bytes_of_load(path)
    assert isinstance(error, ModelFormatError)
    assert "would unpack to 160,000," in str(error)
    assert peak < 20 * path.stat().st_size


# Random bytes do not deflate: an entry of them, never read, makes the file as large as each of
# the deflated arrays beside it, so that no array alone is larger than the file.
PAD = 1 << 18


def _padded(members: dict[str, bytes]) -> dict[str, bytes]:
    return {**members, "pad.npy": np.random.default_rng(0).bytes(PAD + 4096)}


def test_arrays_under_an_unknown_key_are_refused_unread(originals, tmp_path):
    members = _members(originals["adaboost"][1])
    structure = _structure(members)
    structure["junk"] = [{"arrays": {"values": f"junk.{k}"}} for k in range(300)]
    zeros = _zeros_npy(PAD // 8)
    junk = {f"junk.{k}.npy": zeros for k in range(300)}  # 79 MB unpacked
    path = tmp_path / "junk.npz"
    _write(path, _padded({**_with_structure(members, structure), **junk}), zipfile.ZIP_DEFLATED)
    size = path.stat().st_size
    assert len(zeros) < size < 500_000
    peak, error = _peak_bytes_of_load(path)
    assert isinstance(error, ModelFormatError), error
    assert "unknown entry 'junk'" in str(error)
    assert peak < 20 * size


def test_the_arrays_of_a_file_unpack_to_no_more_than_the_file_in_total(originals, tmp_path):
    members = _members(originals["adaboost"][1])
    zeros = _zeros_npy(PAD // 8)
    scores = [k for k in members if k.endswith(".h.cell_scores.npy")]
    assert len(scores) == 8
    path = tmp_path / "total.npz"
    _write(path, _padded({**members, **{k: zeros for k in scores}}), zipfile.ZIP_DEFLATED)
    size = path.stat().st_size
    assert len(zeros) < size < 2 * len(zeros)  # each array fits the file; two do not
    peak, error = _peak_bytes_of_load(path)
    assert isinstance(error, ModelFormatError), error
    assert f"more than the {size:,} bytes of the whole file in total" in str(error)
    # One array read costs about three times its size at its peak (numpy reads it in chunks);
    # all eight would stay resident, 8 x 262 kB.
    assert peak < 5 * size


@pytest.mark.parametrize("shape", [(10**11,), (10**6, 10**6), (2**62, 4)])
def test_an_npy_header_declaring_an_absurd_shape_is_refused_before_allocating(originals, tmp_path,
                                                                              shape):
    members = _members(originals["adaboost"][1])
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = shape
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, header)
    path = tmp_path / "shape.npz"
    _write(path, {**members, "classes.npy": out.getvalue() + bytes(16)})
    peak, error = _peak_bytes_of_load(path)
    assert isinstance(error, ModelFormatError), repr(error)
    assert f"array 'classes' declares shape {shape}" in str(error)
    assert peak < 20 * path.stat().st_size


def test_unreferenced_arrays_are_never_read(originals, tmp_path):
    model, path, X = originals["adaboost"]
    members = _members(path)
    members["junk.npy"] = b"\x00" * 100  # not even an array: never opened
    tampered = tmp_path / "junk.npz"
    _write(tampered, members)
    np.testing.assert_array_equal(boostkit.load_model(tampered).decision_function(X),
                                  model.decision_function(X))


def test_saved_files_honour_the_umask(originals, tmp_path):
    previous = os.umask(0o027)
    try:
        path = originals["adaboost"][0].save(tmp_path / "model.npz")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_damaged_npy_header_is_a_corrupt_array(originals, tmp_path):
    # numpy parses a header that is no Python literal with the tokenizer, whose error is
    # neither a ValueError nor a SyntaxError.
    members = _members(originals["adaboost"][1])
    header = members["classes.npy"]
    members["classes.npy"] = header.replace(b"'shape': (", b"'shape': \xc3", 1)
    path = tmp_path / "header.npz"
    _write(path, members)
    with pytest.raises(ModelFormatError, match="array 'classes' is corrupt"):
        boostkit.load_model(path)


def test_an_entry_flagged_as_encrypted_is_a_corrupt_file(originals, tmp_path):
    # One bit of the zip's central directory: zipfile then asks for a password (RuntimeError).
    raw = bytearray(originals["adaboost"][1].read_bytes())
    raw[raw.index(b"PK\x01\x02") + 8] |= 0x01
    path = tmp_path / "encrypted.npz"
    path.write_bytes(bytes(raw))
    with pytest.raises(ModelFormatError, match="encrypted"):
        boostkit.load_model(path)
