"""The model file: a versioned, non-executable archive, written atomically and read as untrusted
input.

A model file (format version 5) is one ``.npz`` archive (a zip of ``.npy`` arrays) holding the
arrays of every component and one uint8 array ``__model__`` with the JSON structure
:class:`boostkit.model.BoostModel` describes itself by (its module docstring lists what it
holds). This module writes and reads that archive: :func:`write_model_file` (atomically, through
:func:`write_atomically`), :func:`read_model_file`, :func:`model_file_size` (the bytes ``save``
writes, without writing them), and pickling of foreign objects, which is explicit on both sides.

Pickles: a value that is neither JSON nor a numeric or string array (a fitted scikit-learn
estimator in a hypothesis, an estimator object among a recipe's parameters) is refused by
``save``, unless ``save(path, allow_pickle=True)``: it is then pickled into one uint8 array
entry, referenced from the JSON as ``{"__pickled__": key}`` and listed under the structure's
``"pickled"`` key. Such a file loads only with ``allow_pickle=True``; without it, loading stops
before anything is unpickled.

A file is untrusted input (:func:`read_model_file`): only the arrays the entries ``save``
writes reference are read (an unknown entry naming an array is refused before any is read),
and together they may unpack to no more bytes than the file itself, nor may an ``.npy`` header
declare more than its entry holds (boostkit writes arrays uncompressed, so a zip bomb is refused
before it is inflated). What the structure must then hold is checked where the model is rebuilt
(:meth:`boostkit.model.BoostModel.load`). Whatever fails is a :class:`boostkit.ModelFormatError`
naming the file.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import reprlib
import tempfile
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .errors import ModelFormatError

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "model_file_size", "read_model_file",
           "write_atomically", "write_model_file"]

FORMAT_NAME = "boostkit-model"
FORMAT_VERSION = 5
_JSON_KEY = "__model__"
_PICKLED = "__pickled__"  # {"__pickled__": key}: a pickled object, in the array entry ``key``


class _Pickler:
    """What ``save`` does with a foreign object (neither JSON nor a plain array): refuse it,
    naming where it is and the two ways out, or, when ``allow``, pickle it into ``arrays``."""

    def __init__(self, arrays: dict[str, np.ndarray], allow: bool = False):
        self.arrays, self.allow, self.keys = arrays, allow, []

    def __call__(self, value: Any, where: str) -> dict:
        kind = f"{type(value).__module__}.{type(value).__qualname__}"
        if not self.allow:
            # A plain array reaches here only from inside a list or dict: arrays are saved as
            # a field's whole value.
            what = ("a numpy array inside a list or dict (an array is saved only as a field's "
                    "whole value: give it a field of its own)"
                    if isinstance(value, np.ndarray) and value.dtype != object else
                    f"{type(value).__name__} is not a JSON value or a numeric or string array "
                    f"({kind})")
            raise ModelFormatError(
                f"cannot save {where}: {what}. "
                "Either use a component whose fields are JSON values and numpy arrays (it then "
                "saves itself without pickle: make the value None, a bool, int, float or str, a "
                "list or dict of them, a numpy array of numbers or strings, or a registered "
                "hypothesis or contribution; see 'Saving models: what a component may hold' in "
                "docs/plugins.md), or save with allow_pickle=True: the object is pickled into "
                "the file, which then loads only with allow_pickle=True (unpickling runs code: "
                "only load files you trust)"
            )
        try:
            blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise ModelFormatError(f"cannot save {where}: pickling the {kind} failed: {exc}") from exc
        key = f"{_PICKLED}.{len(self.keys)}"
        self.arrays[key] = np.frombuffer(blob, dtype=np.uint8)
        self.keys.append(key)
        return {_PICKLED: key}


def _unpickled(value: Any, arrays: Mapping, allow_pickle: bool, path) -> Any:
    """``value`` (a JSON structure) with every ``{"__pickled__": key}`` replaced by its object;
    refuses, before unpickling anything, unless ``allow_pickle``."""
    if isinstance(value, list):
        return [_unpickled(v, arrays, allow_pickle, path) for v in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {_PICKLED}:
        if not allow_pickle:
            raise ModelFormatError(_pickle_refusal(path))
        try:
            return pickle.loads(arrays[value[_PICKLED]].tobytes())
        except KeyError:
            raise ModelFormatError(f"{path}: the pickled entry {value[_PICKLED]!r} is missing") from None
    return {k: _unpickled(v, arrays, allow_pickle, path) for k, v in value.items()}


def _pickle_refusal(path) -> str:
    return (
        f"{path} holds pickled Python objects (saved with allow_pickle=True), and loading them "
        "runs code: load it with allow_pickle=True only if you trust where the file comes from"
    )



#: How deep value components may nest in a model file (a term holding a term ...).
_MAX_DEPTH = 8


def _with_pickled(structure: dict, pickler: _Pickler) -> dict:
    """``structure``, listing the pickled entries under ``"pickled"`` if there are any (a file
    without them is written exactly as before)."""
    return {**structure, "pickled": pickler.keys} if pickler.keys else structure


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _file_entries(structure: dict, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The archive's entries in the order they are written: the JSON header, then the arrays."""
    header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **structure}
    # A structure built afresh has no cycles: the encoder need not look for them.
    blob = np.frombuffer(json.dumps(header, check_circular=False).encode("utf-8"),
                         dtype=np.uint8)
    return {_JSON_KEY: blob, **arrays}


# Sizes fixed by the zip format (PKWARE's APPNOTE.TXT, sections 4.3.7, 4.3.12, 4.3.14-16,
# 4.5.3), as Python's zipfile writes them to a seekable file: a local header, with the zip64
# extra field numpy asks for (``force_zip64``) holding the two sizes; a central directory
# entry, with a zip64 extra field only for values beyond ZIP64_LIMIT; the end record, preceded
# by the zip64 end record and its locator beyond ZIP_FILECOUNT_LIMIT entries or ZIP64_LIMIT.
_LOCAL_HEADER = 30 + 20
_CENTRAL_ENTRY = 46
_END_RECORD = 22
_ZIP64_END = 56 + 20
#: Bytes of an ``.npy`` header, by the (dtype, shape, C order) of the array it describes.
_npy_headers: dict[tuple, int] = {}


def _npy_header_bytes(array: np.ndarray) -> int:
    # numpy writes an array that is not C-contiguous but Fortran-contiguous in Fortran order
    key = (array.dtype, array.shape,
           array.ndim < 2 or array.flags.c_contiguous or not array.flags.f_contiguous)
    size = _npy_headers.get(key)
    if size is None:
        fields = np.lib.format.header_data_from_array_1_0(array)
        buffer = io.BytesIO()
        np.lib.format.write_array_header_1_0(buffer, fields)
        size = _npy_headers[key] = buffer.tell()
    return size


def model_file_size(model) -> int:
    """The number of bytes ``model.save(path)`` writes (a :class:`BoostModel` or a
    :class:`boostkit.multiclass.OneVsRestModel`), computed from the archive's format without
    writing it: the same JSON structure and arrays, the ``.npy`` header of each, and the zip
    records around them. A model ``save`` refuses (a foreign object that would need pickling)
    raises the same :class:`boostkit.ModelFormatError`."""
    entries = _file_entries(*model._file_contents())
    limit = zipfile.ZIP64_LIMIT
    directory = offset = 0  # the central directory's size, the local entries' size
    for key, array in entries.items():
        if array.dtype.hasobject:
            raise ModelFormatError(f"cannot size an object array entry {key!r}")
        name = len(key.encode("utf-8")) + 4  # key + ".npy"
        stored = _npy_header_bytes(array) + array.nbytes
        # the central entry's zip64 extra field: both sizes, then the local header's offset
        extra = (16 if stored > limit else 0) + (8 if offset > limit else 0)
        directory += _CENTRAL_ENTRY + name + (4 + extra if extra else 0)
        offset += _LOCAL_HEADER + name + stored
    if len(entries) > zipfile.ZIP_FILECOUNT_LIMIT or offset > limit or directory > limit:
        directory += _ZIP64_END
    return offset + directory + _END_RECORD


def write_atomically(path: str | os.PathLike, write) -> Path:
    """Write a file at ``path`` with ``write(fh)`` (a binary file object) atomically: into a
    temporary file beside the target, synced, then renamed over it, so a failed write leaves
    nothing half-written (and an older file of that name as it was)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file private (0600); the file honours the umask like any other.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_model_file(path: str | os.PathLike, structure: dict, arrays: dict[str, np.ndarray]) -> Path:
    """Write a model's JSON ``structure`` and ``arrays`` to ``path`` atomically
    (:func:`write_atomically`), so a failed save leaves nothing half-written."""
    entries = _file_entries(structure, arrays)
    return write_atomically(path, lambda fh: np.savez(fh, **entries))


def read_model_file(path: str | os.PathLike,
                    allow_pickle: bool = False) -> tuple[dict, dict[str, np.ndarray], int]:
    """``(structure, arrays, version)`` of a model file, checked up to its format version.

    The file is untrusted input: only the arrays the entries ``save`` writes reference are
    read (an unknown entry naming an array is refused before any is read), and together they
    may not unpack to more bytes than the file itself holds, nor may an ``.npy`` header declare
    more data than its entry holds (boostkit writes arrays uncompressed), so a small file cannot
    make ``load`` allocate a large one (a zip bomb). Pickled objects (a file saved with
    ``allow_pickle=True``) are unpickled in the structure when ``allow_pickle``; otherwise such
    a file is refused before anything is unpickled.
    """
    path = Path(path)
    size = path.stat().st_size  # FileNotFoundError is the caller's business
    try:
        archive = zipfile.ZipFile(path)
    except _ZIP_ERRORS as exc:
        raise ModelFormatError(
            f"{path} is not a boostkit model file (corrupt or not an .npz archive): {exc}"
        ) from exc
    with archive:
        read = _ArrayReader(archive, size, path)
        try:
            blob = read(_JSON_KEY)
        except KeyError:
            raise ModelFormatError(
                f"{path} is an .npz archive but not a boostkit model (no {_JSON_KEY})"
            ) from None
        try:
            structure = json.loads(blob.tobytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ModelFormatError(f"{path}: the model structure is corrupt: {exc}") from exc
        if not isinstance(structure, dict) or structure.get("format") != FORMAT_NAME:
            raise ModelFormatError(f"{path} is not a boostkit model file")
        version = structure.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ModelFormatError(f"{path}: invalid format version {version!r}")
        if version > FORMAT_VERSION:
            raise ModelFormatError(
                f"{path} was written in model format version {version}, newer than this boostkit "
                f"reads ({FORMAT_VERSION}); upgrade boostkit to load it"
            )
        pickled = structure.get("pickled")  # written only when there are pickled objects
        if "pickled" in structure and not (
                isinstance(pickled, list) and pickled
                and all(isinstance(k, str) and k.startswith(f"{_PICKLED}.") for k in pickled)):
            raise ModelFormatError(f"{path}: 'pickled' must list the file's pickled entries, "
                                   f"got {reprlib.repr(pickled)}")
        if pickled and not allow_pickle:
            raise ModelFormatError(_pickle_refusal(path))
        members = {name[:-4] for name in archive.namelist() if name.endswith(".npy")}
        _check_entries(structure, members, path)
        arrays = {}
        for key in _referenced_keys(structure):
            try:
                arrays[key] = read(key)
            except KeyError:
                pass  # a missing array is named where the structure needs it
    return _unpickled(structure, arrays, allow_pickle, path), arrays, version


# What a damaged archive raises from zipfile (a RuntimeError asking for the password of an
# entry flagged encrypted), zlib and numpy's .npy reader (which parses a damaged header with
# the tokenizer, hence TokenError).
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, ValueError,
               EOFError, NotImplementedError, UnicodeDecodeError, OverflowError, SyntaxError,
               tokenize.TokenError, RuntimeError)


class _ArrayReader:
    """Reads the arrays of one model file, refusing any that would unpack to more than the file
    itself, alone or together with those read before it: boostkit writes them uncompressed,
    so the arrays of a file it wrote unpack to less than the file in total, and a small file
    cannot make ``load`` allocate a large one (a zip bomb, or many arrays each within bounds)."""

    def __init__(self, archive: zipfile.ZipFile, size: int, path):
        self.archive, self.size, self.path = archive, size, path
        self.budget = size  # what the arrays may still unpack to

    def __call__(self, key: str) -> np.ndarray:
        """The array ``key`` (KeyError when absent)."""
        info, path = self.archive.getinfo(f"{key}.npy"), self.path
        if info.file_size > self.size:
            raise ModelFormatError(
                f"{path}: array {key!r} would unpack to {info.file_size:,} bytes, more than the "
                f"{self.size:,} of the whole file: refused (boostkit writes arrays uncompressed)"
            )
        if info.file_size > self.budget:
            raise ModelFormatError(
                f"{path}: array {key!r} would bring the arrays read to "
                f"{self.size - self.budget + info.file_size:,} bytes, more than the "
                f"{self.size:,} bytes of the whole file in total: refused (boostkit writes "
                "arrays uncompressed)"
            )
        self.budget -= info.file_size
        try:
            with self.archive.open(info) as fh:
                self._check_header(fh, info.file_size, key)
            with self.archive.open(info) as fh:
                return np.lib.format.read_array(fh, allow_pickle=False)
        except _ZIP_ERRORS as exc:
            raise ModelFormatError(f"{path}: array {key!r} is corrupt: {exc}") from exc

    def _check_header(self, fh, entry_size: int, key: str) -> None:
        """Refuse an ``.npy`` header declaring more data than its entry holds, before numpy
        allocates it (a shape of (10**11,) would be a bare MemoryError)."""
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
        else:  # 3.0 only differs for structured dtypes with non-Latin-1 names: none here
            raise ModelFormatError(f"{self.path}: array {key!r} is in .npy version {version}, "
                                   "which no boostkit model file uses")
        declared = math.prod(shape) * dtype.itemsize
        if declared > entry_size - fh.tell():
            raise ModelFormatError(
                f"{self.path}: array {key!r} declares shape {shape} of {dtype} "
                f"({declared:,} bytes), but its entry holds {entry_size - fh.tell():,}"
            )


#: The entries ``save`` writes at the top of a model's structure, by kind (the one-vs-rest
#: ``models`` are boosted models' structures).
_ENTRIES = {
    "boost": frozenset({"format", "version", "kind", "n_features", "multilabel",
                        "margin_columns", "recipe", "stop_reason", "best_round", "rounds",
                        "records", "features", "pickled"}),
    "one-vs-rest": frozenset({"format", "version", "kind", "multilabel", "models", "offsets",
                              "pickled"}),
}


def _scopes(structure: Mapping) -> list[tuple[str, Mapping, frozenset]]:
    """``(where, structure, known entries)`` of the model and, for one-vs-rest, its models."""
    if structure.get("kind") != "one-vs-rest":
        return [("", structure, _ENTRIES["boost"])]
    models = structure.get("models")
    return [("", structure, _ENTRIES["one-vs-rest"])] + [
        (f"of models[{l}] ", model, _ENTRIES["boost"])
        for l, model in enumerate(models if isinstance(models, list) else [])
        if isinstance(model, dict)
    ]


def _check_entries(structure: Mapping, members: set[str], path) -> None:
    """Refuse an entry ``save`` never writes that names one of the file's arrays, before any
    is read: only the known entries' arrays are ever read, and no model has such an entry."""
    for where, scope, known in _scopes(structure):
        for key, value in scope.items():
            if key in known:
                continue
            stack = [value]
            while stack:
                item = stack.pop()
                if isinstance(item, dict):
                    stack += list(item.keys()) + list(item.values())
                elif isinstance(item, list):
                    stack += item
                elif isinstance(item, str) and item in members:
                    raise ModelFormatError(
                        f"{path}: the unknown entry {key!r} {where}names the file's array "
                        f"{item!r}; no model has it (refused before reading any array)"
                    )


def _referenced_keys(structure) -> list[str]:
    """The array keys a model structure names in the entries ``save`` writes: its classes,
    every component's ``arrays``, the feature schema's and every pickled object, in one walk
    (nesting beyond :data:`_MAX_DEPTH` is refused later)."""
    keys = ["classes"]
    if isinstance(structure.get("models"), list):  # one-vs-rest: one prefix per class
        keys += [f"m{l}.classes" for l in range(len(structure["models"]))]
    stack = [(v, 1) for _, scope, known in _scopes(structure)
             for k, v in scope.items() if k in known and k != "models"]
    while stack:
        value, depth = stack.pop()
        if depth > 4 * _MAX_DEPTH + 8:
            continue
        if isinstance(value, dict):
            if set(value) == {_PICKLED} and isinstance(value[_PICKLED], str):
                keys.append(value[_PICKLED])
            named = value.get("arrays")
            if isinstance(named, dict):
                keys += [k for k in named.values() if isinstance(k, str)]
            stack += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]
    return list(dict.fromkeys(keys))
