"""A study killed with SIGKILL mid-run resumes: rerun, it computes only the missing cells and
ends with the values of an uninterrupted run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boostkit.study import ResultStore, Resampling, StudySpec, run_study
from study_data import write_blobs

TIMINGS = ["fit_seconds", "predict_seconds", "finished_at"]

SPEC = ("StudySpec(datasets={datasets!r}, algorithms=['adaboost', 'real-adaboost', "
        "'gentle-adaboost'], resampling=Resampling.of('k-fold', 5), n_rounds=15, "
        "database={database!r})")
SCRIPT = """
from boostkit.study import Resampling, StudySpec, run_study
run_study({spec})
"""
N_CELLS = 3 * 3 * 5


def count(database: Path) -> int:
    if not database.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            return db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_study_killed_mid_run_resumes_with_only_the_missing_cells(tmp_path):
    datasets = [str(write_blobs(tmp_path / "a.csv", n=120)),
                str(write_blobs(tmp_path / "b.csv", n=120, n_classes=3, seed=1)),
                str(write_blobs(tmp_path / "c.csv", n=120, d=4))]

    def spec(database):
        return SPEC.format(datasets=datasets, database=str(database))

    database = tmp_path / "killed.sqlite"
    process = subprocess.Popen([sys.executable, "-c", SCRIPT.format(spec=spec(database))],
                               env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    try:
        while count(database) < 5:
            assert process.poll() is None, "the study ended before it could be killed"
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL
    with ResultStore(database, readonly=True) as store:
        survivors = store.read_frame().set_index(["dataset", "algorithm", "fold"])
    assert 5 <= len(survivors) < N_CELLS  # killed mid-run, with some cells written

    namespace = {"Resampling": Resampling, "StudySpec": StudySpec}
    resumed = run_study(eval(spec(database), namespace))  # the script's study, in this process
    assert (resumed.computed, resumed.skipped) == (N_CELLS - len(survivors), len(survivors))

    whole = run_study(eval(spec(tmp_path / "whole.sqlite"), namespace))
    assert whole.computed == N_CELLS
    with ResultStore(database, readonly=True) as store:
        final, final_curves = store.read_frame(), store.read_curves()
    with ResultStore(whole.database, readonly=True) as store:
        expected, expected_curves = store.read_frame(), store.read_curves()
    # The cells written before the kill were not computed again.
    again = final.set_index(["dataset", "algorithm", "fold"]).loc[survivors.index]
    assert again["finished_at"].equals(survivors["finished_at"])
    assert final.drop(columns=TIMINGS).equals(expected.drop(columns=TIMINGS))
    assert final_curves.equals(expected_curves)
