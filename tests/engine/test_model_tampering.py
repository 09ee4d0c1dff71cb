"""Model files are untrusted input: a tampering corpus built from a saved model.

Every tampered file must either be refused with a :class:`boostkit.ModelFormatError` or load a
model that predicts exactly as the original, and loading may never allocate more than a small
multiple of the file's size (a zip bomb must not blow up memory).
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
import pytest

import boostkit
from boostkit.datasets import load
from boostkit.errors import ModelFormatError

KEY = "__model__"


@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    data = load("breast_cancer_wisconsin", dropna=True)
    X, y = data.X, data.binary_target()
    folder = tmp_path_factory.mktemp("originals")
    models = {
        "adaboost": boostkit.Booster("adaboost", n_rounds=8).fit(X, y),
        "weightboost": boostkit.Booster("weightboost", n_rounds=5).fit(X, y),
        "samme": boostkit.Booster("samme", n_rounds=6).fit(X, np.arange(len(y)) % 3),
    }
    return X, {name: (model, model.save(folder / f"{name}.npz")) for name, model in models.items()}


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


def _edits(structure):
    """(name, edited structure) pairs: field edits and type swaps of the JSON."""
    def edit(fn):
        s = json.loads(json.dumps(structure))
        fn(s)
        return s

    first = lambda s: s["rounds"][0]  # noqa: E731
    yield "feature -1", edit(lambda s: first(s)["hypothesis"]["params"].update(feature=-1))
    yield "feature 1.5", edit(lambda s: first(s)["hypothesis"]["params"].update(feature=1.5))
    yield "feature huge", edit(lambda s: first(s)["hypothesis"]["params"].update(feature=10**6))
    yield "feature text", edit(lambda s: first(s)["hypothesis"]["params"].update(feature="3"))
    yield "alpha NaN", edit(lambda s: first(s)["contribution"]["params"].update(alpha=float("nan")))
    yield "alpha inf", edit(lambda s: first(s)["contribution"]["params"].update(alpha=float("inf")))
    yield "alpha text", edit(lambda s: first(s)["contribution"]["params"].update(alpha="big"))
    yield "n_features 0", edit(lambda s: s.update(n_features=0))
    yield "n_features 1", edit(lambda s: s.update(n_features=1))
    yield "n_features text", edit(lambda s: s.update(n_features="9"))
    yield "margin columns", edit(lambda s: s.update(margin_columns=7))
    yield "multilabel", edit(lambda s: s.update(multilabel=True))
    yield "version text", edit(lambda s: s.update(version="3"))
    yield "version future", edit(lambda s: s.update(version=99))
    yield "kind", edit(lambda s: s.update(kind="forest"))
    yield "no rounds key", edit(lambda s: s.pop("rounds"))
    yield "rounds a dict", edit(lambda s: s.update(rounds={}))
    yield "unknown component", edit(lambda s: first(s)["hypothesis"].update(component="nosuch"))
    yield "contribution as hypothesis", edit(
        lambda s: first(s).update(hypothesis=first(s)["contribution"]))
    yield "array key elsewhere", edit(
        lambda s: first(s)["hypothesis"]["arrays"].update(cell_scores="classes"))
    yield "best round 0", edit(lambda s: s.update(best_round=0))
    yield "records text", edit(lambda s: s.update(records="none"))
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
    yield "classes three", {**members, "classes.npy": _npy(np.array([0, 1, 2]))}
    yield "classes one", {**members, "classes.npy": _npy(np.array([0]))}
    yield "pickle payload", {**members, f"{KEY}.npy": pickle.dumps({"format": "boostkit-model"})}


def _materialise(tmp_path, name, variant):
    path = tmp_path / f"{abs(hash(name))}.npz"
    if isinstance(variant, bytes):
        path.write_bytes(variant)
    else:
        _write(path, variant)
    return path


@pytest.mark.parametrize("model_name", ["adaboost", "weightboost", "samme"])
def test_every_tampered_file_is_refused_or_predicts_as_the_original(originals, tmp_path,
                                                                     model_name):
    X, models = originals
    model, path = models[model_name]
    expected = model.decision_function(X)
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
        assert np.array_equal(loaded.decision_function(X), expected), name
        outcomes["same"] += 1
    assert outcomes["refused"] > 40


def test_a_zip_bomb_is_refused_without_allocating_it(originals, tmp_path):
    _, models = originals
    members = _members(models["adaboost"][1])
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = (200_000_000,)  # 1.6 GB of float64 zeros, deflated to a few MB
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, header)
    bomb = out.getvalue() + bytes(1_600_000_000)
    path = tmp_path / "bomb.npz"
    _write(path, {**members, "classes.npy": bomb}, zipfile.ZIP_DEFLATED)
    del bomb
    assert path.stat().st_size < 5_000_000
    tracemalloc.start()
    with pytest.raises(ModelFormatError, match="would unpack to 1,600,000,"):
        boostkit.load_model(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 20 * path.stat().st_size


def test_unreferenced_arrays_are_never_read(originals, tmp_path):
    X, models = originals
    model, path = models["adaboost"]
    members = _members(path)
    members["junk.npy"] = b"\x00" * 100  # not even an array: never opened
    tampered = tmp_path / "junk.npz"
    _write(tampered, members)
    np.testing.assert_array_equal(boostkit.load_model(tampered).decision_function(X),
                                  model.decision_function(X))


def test_saved_files_honour_the_umask(originals, tmp_path):
    _, models = originals
    previous = os.umask(0o027)
    try:
        path = models["adaboost"][0].save(tmp_path / "model.npz")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
