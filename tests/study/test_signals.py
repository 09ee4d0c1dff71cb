"""Stopping a ``--n-jobs 2`` study from outside: SIGTERM (the driver terminates its workers,
closes the database and exits 143) and SIGKILL (the workers notice their driver is gone and exit
on their own). Either way the finished cells stay in the database and a rerun computes only the
others.

The study runs in a subprocess (tests/study/gated_study.py) whose cells on the five-feature
dataset wait for a gate file, so the study is surely still running when the signal comes; the
test opens the gate before the rerun. The waits are bounded polls, never timing assertions.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boostkit.study import ResultStore, StoreError
from study_data import write_blobs

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

HERE = Path(__file__).parent
#: Bounds of the polls (seconds): generous, for a loaded machine; the tests take far less.
BOUND = 120


def _children(pid: int) -> set[int]:
    """The child processes of ``pid``, from /proc/<pid>/task/*/children."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass
    return found


def _identity(pid: int) -> tuple | None:
    """(pid, start time) of a live (not zombie) process, else None: a pid reused by another
    process meanwhile does not count as the same one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return None if fields[0] in ("Z", "X") else (pid, fields[19])


def _wait_until(condition, what: str):
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"not within {BOUND} s: {what}")


def _cell_count(database: Path) -> int:
    try:
        with ResultStore(database, readonly=True) as store:
            return len(store.rows())
    except (StoreError, sqlite3.Error):  # not created yet, or its tables not yet
        return 0


@pytest.fixture
def study(tmp_path):
    """``start(n_jobs)`` runs the study in a subprocess; ``files``, ``gate``, ``database``."""
    data = tmp_path / "data"
    data.mkdir()
    # Four free datasets first (their cells finish), then one whose cells wait at the gate.
    files = [write_blobs(data / f"free{i}.csv", n=60, d=3, seed=i) for i in range(4)]
    files.append(write_blobs(data / "held.csv", n=60, d=5, seed=9))
    gate = tmp_path / "gate"
    out = tmp_path / "out"
    env = {**os.environ, "BOOSTKIT_TEST_GATE": str(gate), "NUMBA_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
               [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])}
    argv = [sys.executable, str(HERE / "gated_study.py"), "study", "--datasets",
            ",".join(map(str, files)), "--algorithms",
            "adaboost,adaboost stopping+=waits-on-five-features name=gated",
            "--folds", "2", "--rounds", "3", "--no-progress", "--output", str(out)]
    started = []

    def start(n_jobs: int) -> subprocess.Popen:
        # Its own session: Ctrl-C is simulated as a terminal sends it, to the whole group.
        process = subprocess.Popen([*argv, "--n-jobs", str(n_jobs)], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        started.append(process)
        return process

    class Study:
        pass

    s = Study()
    s.start, s.gate, s.database, s.total = start, gate, out / "study.sqlite", len(files) * 2 * 2
    yield s
    for process in started:  # a failed test leaves nothing running
        if process.poll() is None:
            process.kill()
            process.communicate()


def _stop_and_check(study, signum: int) -> tuple[int, str, int]:
    """Start the study, signal its driver once a cell is written, check no child process of it
    survives; return its exit status, its standard error and the number of cells written."""
    driver = study.start(2)
    _wait_until(lambda: _cell_count(study.database) >= 1 or driver.poll() is not None,
                "a first cell written")
    assert driver.poll() is None, driver.communicate()
    # The two workers (and multiprocessing's resource tracker) are started by now.
    workers = _wait_until(lambda: {i for i in map(_identity, _children(driver.pid)) if i}
                          if len(_children(driver.pid)) >= 2 else None, "two worker processes")
    assert len(workers) >= 2
    if signum == signal.SIGINT:  # Ctrl-C: the terminal signals the driver and its workers
        os.killpg(driver.pid, signum)
    else:
        driver.send_signal(signum)
    out, err = driver.communicate(timeout=BOUND)
    _wait_until(lambda: not any(_identity(ident[0]) == ident for ident in workers),
                "every worker gone")
    assert "Traceback" not in err, err
    written = _cell_count(study.database)
    assert 1 <= written < study.total
    return driver.returncode, err, written


def _rerun_completes_the_rest(study, written: int) -> None:
    study.gate.touch()
    rerun = study.start(1)
    out, err = rerun.communicate(timeout=BOUND)
    assert rerun.returncode == 0, err
    assert (f"{study.total - written} cells computed now, {written} finished before"
            in " ".join(out.split()))
    assert _cell_count(study.database) == study.total


@pytest.mark.parametrize("signum, status, word", [(signal.SIGTERM, 143, "terminated"),
                                                   (signal.SIGINT, 130, "interrupted")])
def test_sigterm_or_ctrl_c_stops_the_workers_keeps_the_cells_and_exits_128_plus_signal(
        study, signum, status, word):
    got, err, written = _stop_and_check(study, signum)
    assert got == status and f"boostkit study: {word}" in err, err
    _rerun_completes_the_rest(study, written)


def test_after_a_sigkill_of_the_driver_the_workers_exit_on_their_own(study):
    status, err, written = _stop_and_check(study, signal.SIGKILL)
    assert status == -signal.SIGKILL
    _rerun_completes_the_rest(study, written)


def test_sigterm_stops_a_compare_writes_what_finished_and_exits_143(tmp_path):
    """``boostkit compare`` is the one-dataset study: SIGTERM stops it as Ctrl-C does, the
    algorithms that finished are written (their cells in the database, the table and files),
    and the status is 143; a rerun computes only the rest."""
    held = write_blobs(tmp_path / "held.csv", n=60, d=5, seed=9)
    gate, out = tmp_path / "gate", tmp_path / "out"
    env = {**os.environ, "BOOSTKIT_TEST_GATE": str(gate), "NUMBA_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
               [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])}
    argv = [sys.executable, str(HERE / "gated_study.py"), "compare", str(held), "--algorithms",
            "adaboost", "--recipe", "adaboost stopping+=waits-on-five-features name=gated",
            "--folds", "2", "--rounds", "3", "--no-progress", "--no-plots", "--output", str(out)]
    driver = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        database = out / "results.sqlite"
        _wait_until(lambda: _cell_count(database) >= 2 or driver.poll() is not None,
                    "adaboost's two cells written")
        assert driver.poll() is None, driver.communicate()
        driver.send_signal(signal.SIGTERM)
        stdout, err = driver.communicate(timeout=BOUND)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 143, err
    assert "Traceback" not in err, err
    assert _cell_count(database) == 2
    assert (out / "results.csv").exists()
    gate.touch()
    rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=BOUND)
    assert rerun.returncode == 0, rerun.stderr
    assert _cell_count(database) == 4
