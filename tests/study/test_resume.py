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
from study_standin import Blobs

TIMINGS = ["fit_seconds", "predict_seconds", "finished_at"]
HERE = Path(__file__).parent

SOURCES = "[Blobs('a', n=120), Blobs('b', n=120, n_classes=3, seed=1), Blobs('c', n=120, d=4)]"
SPEC = ("StudySpec(datasets=['a', 'b', 'c'], algorithms=['adaboost', 'real-adaboost', "
        "'gentle-adaboost'], resampling=Resampling.of('k-fold', 5), n_rounds=15, "
        "database={database!r})")
SCRIPT = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from study_standin import Blobs
from boostkit.study import Resampling, StudySpec, run_study
run_study({SPEC}, sources={SOURCES})
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
    database = tmp_path / "killed.sqlite"
    process = subprocess.Popen([sys.executable, "-c", SCRIPT.format(database=str(database))],
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

    namespace = {"Blobs": Blobs, "Resampling": Resampling, "StudySpec": StudySpec}
    sources = eval(SOURCES, namespace)  # the script's sources, in this process
    resumed = run_study(eval(SPEC.format(database=str(database)), namespace), sources=sources)
    assert (resumed.computed, resumed.skipped) == (N_CELLS - len(survivors), len(survivors))

    whole = run_study(eval(SPEC.format(database=str(tmp_path / "whole.sqlite")), namespace),
                      sources=sources)
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
