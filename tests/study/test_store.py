"""The results database: round trip, resume bookkeeping, and clear errors for a second writer,
a newer schema and a corrupt file -- none of which changes the file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from boostkit.study import ResultStore, StoreError
from boostkit.study.store import CELL_COLUMNS, CURVE_COLUMNS, SCHEMA_VERSION


def row(**changes):
    base = {name: None for name in CELL_COLUMNS}
    base.update(dataset="d", algorithm="adaboost", recipe="proposal=stump", resample="2-fold",
                repeat=0, fold=0, seed=0, status="done", accuracy=0.75, roc_auc=0.8,
                rounds=3, data_hash="abc", finished_at="2026-01-01T00:00:00+00:00")
    base.update(changes)
    return base


def test_round_trip(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.write_cell(row(), [(1, 0.3, 0.4), (2, 0.2, 0.35)])
        store.write_cell(row(fold=1, status="failed", error="ValueError: no", accuracy=None))
    with ResultStore(path, readonly=True) as store:
        frame = store.read_frame()
        curves = store.read_curves()
        assert list(frame.columns) == list(CELL_COLUMNS)
        assert list(curves.columns) == list(CURVE_COLUMNS)
        assert frame["status"].tolist() == ["done", "failed"]
        assert frame["accuracy"].iloc[0] == 0.75 and frame["accuracy"].isna().iloc[1]
        assert curves["test_error"].tolist() == [0.4, 0.35]
        assert set(store.finished()) == {("d", "adaboost", "2-fold", 0, 0, 0),
                                         ("d", "adaboost", "2-fold", 0, 1, 0)}
        for name in ("cells.csv", "cells.parquet"):
            store.export(tmp_path / name)
        store.export(tmp_path / "curves.csv", table="curves")
    import pandas as pd

    back = pd.read_parquet(tmp_path / "cells.parquet")
    assert back["accuracy"].iloc[0] == 0.75 and back["error"].iloc[1] == "ValueError: no"
    assert pd.read_csv(tmp_path / "cells.csv")["status"].tolist() == ["done", "failed"]
    assert len(pd.read_csv(tmp_path / "curves.csv")) == 2
    with ResultStore(path, readonly=True) as store:
        with pytest.raises(StoreError, match=r"writes .csv or .parquet files, got 'x.json'"):
            store.export(tmp_path / "x.json")


def test_the_database_is_in_wal_mode(tmp_path):
    path = tmp_path / "r.sqlite"
    ResultStore(path).close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_cell_is_written_whole_or_not_at_all(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.write_cell(row(), [(1, 0.3, 0.4)])
        with pytest.raises(sqlite3.IntegrityError):  # the same key again
            store.write_cell(row(), [(5, 0.1, 0.1)])
        assert len(store.rows()) == 1 and len(store.curve_rows()) == 1


def test_a_second_writer_is_refused_while_the_first_holds_the_database(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.write_cell(row())
        code = ("import sys; from boostkit.study import ResultStore\n"
                f"ResultStore({str(path)!r})")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert result.returncode != 0
        assert "is being written by process" in result.stderr
        assert str(__import__("os").getpid()) in result.stderr
        # Reading goes on while a study writes.
        with ResultStore(path, readonly=True) as reader:
            assert len(reader.rows()) == 1
    with ResultStore(path) as again:  # released on close
        assert len(again.rows()) == 1


def test_a_database_of_a_newer_schema_is_refused_and_kept(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.write_cell(row())
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
               (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    before = path.read_bytes()
    for readonly in (False, True):
        with pytest.raises(StoreError, match=f"written by a newer boostkit \\(results schema "
                                             f"{SCHEMA_VERSION + 1}"):
            ResultStore(path, readonly=readonly)
    assert path.read_bytes() == before


def test_a_corrupt_file_is_refused_and_kept(tmp_path):
    path = tmp_path / "r.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    before = path.read_bytes()
    for readonly in (False, True):
        with pytest.raises(StoreError, match="not a boostkit results database"):
            ResultStore(path, readonly=readonly)
    assert path.read_bytes() == before


def test_another_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "r.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE people (name TEXT)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"not a boostkit results database \(tables \['people'\]"):
        ResultStore(path)


def test_reading_a_missing_database(tmp_path):
    with pytest.raises(StoreError, match="no results database at"):
        ResultStore(tmp_path / "none.sqlite", readonly=True)
