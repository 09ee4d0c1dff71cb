"""The results database of a study: an SQLite file (stdlib :mod:`sqlite3`, WAL mode).

One row per finished cell in ``cells``, its per-round learning curves in ``curves``, the
arrays a spec with ``keep_scores`` keeps per cell in ``kept`` (``boostkit compare``'s scores,
staged curves and weights), and the schema version in ``meta``. Only the process that runs a
study writes, one transaction per cell as soon as it finishes, so a study stopped by Ctrl-C
or ``kill -9`` loses only the cells in flight. A second writer is refused while the first holds the lock, as are a database of a
newer schema and a file that is not one; none of these touches the file.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from ..errors import BoostkitError

__all__ = ["CELL_COLUMNS", "CURVE_COLUMNS", "KEY_COLUMNS", "ResultStore", "StoreError",
           "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

KEY_COLUMNS = ("dataset", "algorithm", "resample", "repeat", "fold", "seed")

#: The ``cells`` table: column name -> SQL type.
CELL_COLUMNS = {
    "dataset": "TEXT", "algorithm": "TEXT", "recipe": "TEXT", "resample": "TEXT",
    "repeat": "INTEGER", "fold": "INTEGER", "seed": "INTEGER",
    "status": "TEXT", "error": "TEXT",
    "accuracy": "REAL", "balanced_accuracy": "REAL", "roc_auc": "REAL", "log_loss": "REAL",
    "fit_seconds": "REAL", "predict_seconds": "REAL", "rounds": "INTEGER",
    "stop_reason": "TEXT", "model_bytes": "INTEGER",
    "n_train": "INTEGER", "n_test": "INTEGER", "n_classes": "INTEGER",
    "prediction_hash": "TEXT", "boostkit_version": "TEXT", "plugin_versions": "TEXT",
    "data_hash": "TEXT", "finished_at": "TEXT",
}
CURVE_COLUMNS = (*KEY_COLUMNS, "round", "train_error", "test_error")


_KEPT_TABLE = (f"CREATE TABLE IF NOT EXISTS kept ({', '.join(KEY_COLUMNS)}, name TEXT, "
               f"value BLOB, PRIMARY KEY ({', '.join(KEY_COLUMNS)}, name))")


def _array_bytes(value) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return buffer.getvalue()


class StoreError(BoostkitError):
    """The results database cannot be opened or written as asked."""


def _lock(path: Path):
    """An exclusive advisory lock on ``<database>.lock`` holding the writer's PID. The OS
    releases it when the process dies, however it dies, so ``kill -9`` leaves no stale lock."""
    lock_path = path.with_name(path.name + ".lock")
    handle = open(lock_path, "a+")
    try:
        if sys.platform == "win32":
            import msvcrt
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StoreError(
            f"the results database {path} is being written by process {holder} (lock file "
            f"{lock_path}); one study at a time writes a database: wait for it to finish, or "
            "give another --db"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


class ResultStore:
    """A study's results database at ``path``.

    ``ResultStore(path)`` opens it for writing (creating it), holding an exclusive lock until
    :meth:`close`; ``ResultStore(path, readonly=True)`` reads a database that exists, even
    while a study writes it. Use it as a context manager.
    """

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        self._lock = None
        if readonly:
            if not self.path.is_file():
                raise StoreError(f"no results database at {self.path}")
            self._db = self._connect(f"file:{self.path}?mode=ro", uri=True)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(self.path)
            try:
                self._db = self._connect(str(self.path))
            except BaseException:
                self._lock.close()
                raise
        try:
            self._check_schema()
            if not readonly:  # a database of a boostkit before the kept table gets one
                self._db.execute(_KEPT_TABLE)
        except BaseException:
            self.close()
            raise

    def _connect(self, target: str, uri: bool = False) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(target, uri=uri, isolation_level=None)
            if not self.readonly:
                db.execute("PRAGMA journal_mode=WAL")
                # A committed cell survives a crash of the process (WAL + NORMAL survives
                # process death; only a power loss may drop the last cells).
                db.execute("PRAGMA synchronous=NORMAL")
            return db
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a boostkit results database (SQLite says: "
                             f"{exc}); it was left as it is") from None

    def _check_schema(self) -> None:
        try:
            tables = {row[0] for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables and not self.readonly:
                self._create()
                return
            if "meta" not in tables:
                raise StoreError(f"{self.path} is an SQLite database but not a boostkit results "
                                 f"database (tables {sorted(tables)}); it was left as it is")
            row = self._db.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a boostkit results database or is corrupt "
                             f"(SQLite says: {exc}); it was left as it is") from None
        version = int(row[0]) if row else None
        if version is None or version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer boostkit (results schema {version}; this "
                f"version reads schema {SCHEMA_VERSION} and older): upgrade boostkit to read it; "
                "it was left as it is"
            )

    def _create(self) -> None:
        columns = ", ".join(f"{name} {kind}" for name, kind in CELL_COLUMNS.items())
        key = ", ".join(KEY_COLUMNS)
        with self._transaction():
            self._db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            self._db.execute(f"CREATE TABLE cells ({columns}, PRIMARY KEY ({key}))")
            self._db.execute(
                f"CREATE TABLE curves ({', '.join(KEY_COLUMNS)}, round INTEGER, "
                f"train_error REAL, test_error REAL, PRIMARY KEY ({key}, round))")
            self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                             (str(SCHEMA_VERSION),))

    def _transaction(self):
        db = self._db

        class _Transaction:
            def __enter__(self):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind, value, traceback):
                db.execute("COMMIT" if kind is None else "ROLLBACK")
        return _Transaction()

    # -- writing --------------------------------------------------------------------------------
    def write_cell(self, row: Mapping, curves: Iterable[tuple[int, float, float]] = (),
                   kept: Mapping[str, np.ndarray] | None = None) -> None:
        """Write one finished cell, its curve ((round, train error, test error) per round) and
        the arrays ``kept`` for it (name -> array, stored as ``.npy`` bytes) in one
        transaction: either all are in the database or none."""
        if self.readonly:
            raise StoreError(f"{self.path} was opened read-only")
        unknown = set(row) - set(CELL_COLUMNS)
        if unknown:
            raise StoreError(f"a cell has no column(s) {sorted(unknown)}")
        names = list(CELL_COLUMNS)
        key = tuple(row[name] for name in KEY_COLUMNS)
        with self._transaction():
            self._db.execute(
                f"INSERT INTO cells ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                [row.get(name) for name in names])
            self._db.executemany(
                f"INSERT INTO curves VALUES ({', '.join('?' * len(CURVE_COLUMNS))})",
                [(*key, t, train, test) for t, train, test in curves])
            self._db.executemany(
                f"INSERT INTO kept VALUES ({', '.join('?' * (len(KEY_COLUMNS) + 2))})",
                [(*key, name, _array_bytes(value)) for name, value in (kept or {}).items()])

    def set_meta(self, key: str, value) -> None:
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                             (key, json.dumps(value)))

    def clear(self, status: str | None = None) -> None:
        """Remove every cell (or those of ``status``) with its curve and kept arrays (the meta
        table stays)."""
        key = ", ".join(KEY_COLUMNS)
        chosen = "" if status is None else (
            f" WHERE ({key}) IN (SELECT {key} FROM cells WHERE status = ?)")
        with self._transaction():
            for table in ("curves", "kept", "cells"):
                self._db.execute(f"DELETE FROM {table}{chosen}",
                                 () if status is None else (status,))

    # -- reading --------------------------------------------------------------------------------
    def get_meta(self, key: str):
        """The value :meth:`set_meta` stored under ``key``, or ``None``."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def kept(self) -> dict[tuple, dict[str, np.ndarray]]:
        """The kept arrays, by cell key then name (none in a database without them)."""
        if not self._db.execute("SELECT name FROM sqlite_master WHERE name = 'kept'").fetchone():
            return {}
        found: dict[tuple, dict[str, np.ndarray]] = {}
        for *key, name, value in self._db.execute("SELECT * FROM kept"):
            found.setdefault(tuple(key), {})[name] = np.load(io.BytesIO(value),
                                                             allow_pickle=False)
        return found

    def finished(self) -> dict[tuple, tuple[str, str]]:
        """The key of every recorded cell -> (its recipe, its data hash)."""
        key = ", ".join(KEY_COLUMNS)
        return {tuple(row[:-2]): (row[-2], row[-1]) for row in self._db.execute(
            f"SELECT {key}, recipe, data_hash FROM cells")}

    def rows(self) -> list[dict]:
        """Every cell as a dict, in key order."""
        cursor = self._db.execute(f"SELECT * FROM cells ORDER BY {', '.join(KEY_COLUMNS)}")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor]

    def curve_rows(self) -> list[tuple]:
        return self._db.execute(
            f"SELECT * FROM curves ORDER BY {', '.join(KEY_COLUMNS)}, round").fetchall()

    def read_frame(self):
        """The ``cells`` table as a pandas DataFrame (columns :data:`CELL_COLUMNS`)."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=list(CELL_COLUMNS))

    def read_curves(self):
        """The ``curves`` table as a pandas DataFrame (columns :data:`CURVE_COLUMNS`)."""
        import pandas as pd

        return pd.DataFrame(self.curve_rows(), columns=list(CURVE_COLUMNS))

    def export(self, path: str | os.PathLike, table: str = "cells") -> Path:
        """Write ``table`` (``"cells"`` or ``"curves"``) to a ``.csv`` or ``.parquet`` file
        (Parquet needs pyarrow), atomically."""
        path = Path(path)
        if table not in ("cells", "curves"):
            raise StoreError(f"table must be 'cells' or 'curves', got {table!r}")
        if path.suffix not in (".csv", ".parquet"):
            raise StoreError(f"export writes .csv or .parquet files, got {path.name!r}")
        frame = self.read_frame() if table == "cells" else self.read_curves()
        partial = path.with_name(f".{path.name}.partial")
        try:
            if path.suffix == ".csv":
                frame.to_csv(partial, index=False)
            else:
                frame.to_parquet(partial, index=False)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
        return path

    def close(self) -> None:
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()
            self._db = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
