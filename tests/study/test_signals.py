"""Stopping a ``--n-jobs 2`` study from outside: SIGTERM (the driver terminates its workers,
closes the database and exits 143) and SIGKILL (the workers notice their driver is gone and exit
on their own). Either way the finished cells stay in the database and a rerun computes only the
others.

The study runs in a subprocess (tests/study/gated_study.py) whose cells on the five-feature
dataset wait for a gate file, so the study is surely still running when the signal comes; the
test opens the gate before the rerun. The waits are bounded polls, never timing assertions.

Two moments are set up on purpose: a Ctrl-C while a worker process is still starting up (it
must not print a KeyboardInterrupt traceback nor break the pool), and a signal handled by
another thread of the driver than the main thread while the main thread waits for the workers
(it must still stop the study, not be left pending until a cell finishes).
"""

from __future__ import annotations

import contextlib
import ctypes
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
    starting = tmp_path / "starting"
    argv = [sys.executable, str(HERE / "gated_study.py"), "study", "--datasets",
            ",".join(map(str, files)), "--algorithms",
            "adaboost,adaboost stopping+=waits-on-five-features name=gated",
            "--folds", "2", "--rounds", "3", "--no-progress", "--output", str(out)]
    started = []

    def start(n_jobs: int, hold_starting_workers: bool = False) -> subprocess.Popen:
        # Its own session: Ctrl-C is simulated as a terminal sends it, to the whole group.
        extra = {}
        if hold_starting_workers:  # gated_study.py: the workers stop while they start up
            starting.mkdir()
            extra = {"BOOSTKIT_TEST_STARTING": str(starting)}
        process = subprocess.Popen([*argv, "--n-jobs", str(n_jobs)], env={**env, **extra},
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        started.append(process)
        return process

    class Study:
        pass

    s = Study()
    s.start, s.gate, s.database, s.total = start, gate, out / "study.sqlite", len(files) * 2 * 2
    s.starting = starting
    yield s
    for process in started:  # a failed test leaves nothing running, workers included
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


def _send(driver: subprocess.Popen, signum: int) -> None:
    if signum == signal.SIGINT:  # Ctrl-C: the terminal signals the driver and its workers
        os.killpg(driver.pid, signum)
    else:
        driver.send_signal(signum)


def _stop_and_check(study, signum: int, first_cells: int = 1, send=_send
                    ) -> tuple[int, str, int]:
    """Start the study, signal its driver (``send(driver, signum)``) once ``first_cells`` cells
    are written, check no child process of it survives; return its exit status, its standard
    error and the number of cells written."""
    driver = study.start(2)
    _wait_until(lambda: _cell_count(study.database) >= first_cells or driver.poll() is not None,
                f"{first_cells} cells written")
    assert driver.poll() is None, driver.communicate()
    # The two workers (and multiprocessing's resource tracker) are started by now.
    workers = _wait_until(lambda: {i for i in map(_identity, _children(driver.pid)) if i}
                          if len(_children(driver.pid)) >= 2 else None, "two worker processes")
    assert len(workers) >= 2
    send(driver, signum)
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


def _signal_set(pid: int, field: str) -> set[int]:
    """A signal set of process ``pid`` from /proc/<pid>/status: ``ShdPnd`` (sent to it, not
    yet delivered), ``SigBlk`` (blocked by its main thread); empty once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return set()
    bits = int(next(line for line in status.splitlines() if line.startswith(field)).split()[1],
               16)
    return {number + 1 for number in range(64) if bits >> number & 1}


def test_ctrl_c_while_the_workers_start_up_stops_the_study_without_a_traceback(study):
    """The workers inherit the terminal's Ctrl-C before their initializer can ignore it: one
    still importing would raise KeyboardInterrupt there, print its traceback and break the pool
    under the driver. They start with SIGINT blocked instead: the signal waits, pending. Here it
    reaches a starting worker first, then the whole group."""
    driver = study.start(2, hold_starting_workers=True)
    _wait_until(lambda: any(study.starting.iterdir()) or driver.poll() is not None,
                "a worker process starting up")
    assert driver.poll() is None, driver.communicate()
    starting = sorted(map(int, os.listdir(study.starting)))
    workers = {i for i in map(_identity, starting) if i}
    interrupted = study.starting / f"{starting[0]}.interrupted"
    os.kill(starting[0], signal.SIGINT)
    _wait_until(lambda: interrupted.exists() or signal.SIGINT in (
        _signal_set(starting[0], "ShdPnd") & _signal_set(starting[0], "SigBlk")),
        "the worker interrupted, or the signal blocked and pending in it")
    assert not interrupted.exists()
    os.killpg(driver.pid, signal.SIGINT)
    out, err = driver.communicate(timeout=BOUND)
    _wait_until(lambda: not any(_identity(ident[0]) == ident for ident in workers),
                "every worker gone")
    assert not list(study.starting.glob("*.interrupted")), err
    assert "Traceback" not in err, err
    assert driver.returncode == 130 and "boostkit study: interrupted" in err, err
    assert _cell_count(study.database) == 0


def _state(pid: int, tid: int) -> str:
    """The scheduler state of thread ``tid`` of ``pid`` (S: asleep), '' once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.rindex(")") + 2:].split()[0]


def _signal_another_thread(driver: subprocess.Popen, signum: int) -> None:
    """Once the driver's main thread sleeps (waiting for its workers), send ``signum`` to
    another of its threads (the process pool's): its Python handler is run there, and the
    main thread's wait is not interrupted by it."""
    tgkill = getattr(ctypes.CDLL(None, use_errno=True), "tgkill", None)
    if tgkill is None:
        pytest.skip("this C library has no tgkill")
    _wait_until(lambda: _state(driver.pid, driver.pid) == "S", "the driver waiting")
    others = sorted(int(task.name) for task in Path(f"/proc/{driver.pid}/task").iterdir()
                    if int(task.name) != driver.pid)
    assert others and tgkill(driver.pid, others[0], signum) == 0, ctypes.get_errno()


def test_a_signal_handled_by_another_thread_of_the_driver_still_stops_the_study(study):
    """Signals reach Python's handlers in the main thread only when it runs: one the kernel
    delivered to another thread, or to the main thread just before it blocked, would be left
    pending while the driver waits for two cells that never finish. The driver wakes to run
    it."""
    every_free_cell = study.total - 2  # the two gated cells hold both workers
    got, err, written = _stop_and_check(study, signal.SIGTERM, every_free_cell,
                                        send=_signal_another_thread)
    assert got == 143 and "boostkit study: terminated" in err, err
    assert written == every_free_cell
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
