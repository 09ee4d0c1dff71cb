"""Blocks of examples on threads that degrade gracefully when the machine is busy.

The kernels that go over every example each round and may use several threads (the class and
pair histograms, the exponential weights) split the examples into a fixed list of blocks, run a
``nogil`` numba kernel on each block and combine the blocks' results in block order. (A
histogram of wide data of moderate size gives its tasks groups of features instead, each over
every example: :func:`boostkit.kernels.histogram.by_feature_groups`; :func:`run_blocks` runs
those tasks the same way.)
:func:`run_blocks` runs the blocks on Python threads, and the choice is deliberate:

* numba's ``parallel=True`` loops hand each thread a fixed share of the iterations and end
  with a barrier that spins (measured with the ``omp`` and ``workqueue`` layers; ``tbb`` is not
  installed here). When another process holds one of two cores, the thread that is not running
  keeps its share, and the others spin at the barrier waiting for it: a 1 000 000 x 20
  histogram took 30 to 40 ms on two threads against 9 ms on one (numba's dynamic chunks,
  ``set_parallel_chunksize``, were worse still; ``OMP_WAIT_POLICY=passive`` helped two blocks
  but not eight).
* Here every thread, the caller's included, claims the next unclaimed block until none is
  left (dynamic scheduling, one shared counter), so a thread that is not running holds at most
  one block. The caller then waits for the others without spinning (``threading.Event``), which
  leaves its core to them, and runs again itself a block still out after ``PATIENCE`` times its
  own time per block, so a thread descheduled for a whole time slice costs one block, not a
  slice. Every task may therefore run twice, and the late run may still be going after the
  caller has moved on: a task writes nothing but arrays of its own, which it returns (a late
  run's result is dropped; :class:`SpareArrays` keeps such arrays between calls).

The price is Python's GIL, which a thread holds while it claims or hands in a block: on a
machine loaded beyond its cores, a thread descheduled while holding it holds up the others for
a time slice, so there two threads are about as fast as one, not faster
(``docs/performance.md``). And a pass at the memory's pace gains little from a second thread
wherever the memory, not the core, is what limits it.

So each pass keeps its :class:`Pace` (per call site, the task's code, and number of examples):
the wall time of its calls on threads and on the caller's thread alone, and it runs the next
call the faster way, trying the other way now and then (after a number of calls that doubles
while the choice holds) to see whether the machine has changed. Both ways run the same blocks
in the same order, or the pass's serial form of them (``alone``: a histogram adds each block
to its total at once instead of keeping an array per block), so they give the same numbers.
Where threads pay, they are used; where they do not, as on a busy machine or in a pass that
the memory bandwidth limits, a pass costs about its serial time. (Judging a call on threads by
the CPU time of the caller's own blocks would need no serial calls, but that time grows with
the memory traffic of the other thread: it called a pass at the memory's pace 1.9x faster on
threads where it was 1.06x.)

The blocks never depend on which thread ran which block, so results are the same from run to
run; the histograms' blocks (:func:`block_bounds`) depend on the number of examples only, so
they are also the same for every ``n_jobs > 1``.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from typing import Callable

import numpy as np

__all__ = ["block_bounds", "run_blocks", "run_blocks_settled", "Pace", "SpareArrays", "ADAPTIVE",
           "MAX_BLOCKS", "MIN_BLOCK_ROWS", "MIN_THREADED_ROWS", "MIN_THREADED_UPDATES",
           "histogram_threads", "row_threads"]

#: At most this many blocks: enough that a thread holding one is a small share of the work,
#: few enough that combining the blocks' results (a histogram each) stays cheap.
MAX_BLOCKS = 8
#: Fewest examples per block: below it the hand-over between threads (tens of microseconds)
#: costs more than the block's work.
MIN_BLOCK_ROWS = 8192
#: Fewest histogram updates (examples x features) worth other threads: below it the blocks run on
#: the caller's thread, the same blocks, so the same numbers (about 0.5 ms of work, against tens
#: of microseconds per hand-over, which two blocks of a few thousand rows do not repay).
MIN_THREADED_UPDATES = 1 << 20
#: Fewest examples per block worth other threads for a pass of a few nanoseconds per example
#: (the exponential weights): smaller blocks run on the caller's thread, with the same numbers.
MIN_THREADED_ROWS = 1 << 16
#: A block still out after this many times the caller's time per block is run again by the
#: caller.
PATIENCE = 1.5
#: Whether each call site's :class:`Pace` may move its blocks to the caller's thread when threads
#: do not pay (tests that must exercise the threads turn it off).
ADAPTIVE = True


def histogram_threads(codes: np.ndarray, n_jobs: int) -> int:
    """The threads a histogram of the ``(d, n)`` bin ``codes`` runs its blocks on: ``n_jobs``,
    or 1 below :data:`MIN_THREADED_UPDATES` updates."""
    return n_jobs if codes.shape[0] * codes.shape[1] >= MIN_THREADED_UPDATES else 1


def row_threads(n: int, n_jobs: int) -> int:
    """The threads a pass of a few nanoseconds per example runs the :func:`block_bounds` blocks
    of ``n`` examples on: ``n_jobs``, or 1 when the blocks are under :data:`MIN_THREADED_ROWS`."""
    if n_jobs == 1:
        return 1
    return n_jobs if n // len(block_bounds(n)) >= MIN_THREADED_ROWS else 1


def block_bounds(n: int) -> list[tuple[int, int]]:
    """The blocks ``[(start, stop), ...]`` of ``n`` examples: consecutive, in order, at most
    :data:`MAX_BLOCKS` of at least :data:`MIN_BLOCK_ROWS` (one block when ``n`` is smaller)."""
    n_blocks = max(1, min(MAX_BLOCKS, n // MIN_BLOCK_ROWS))
    return [(k * n // n_blocks, (k + 1) * n // n_blocks) for k in range(n_blocks)]


class SpareArrays:
    """Arrays of one shape for blocks to fill, kept between calls of a kernel.

    A new array per block can cost more than the block's work (the 400 KB histograms of a
    100 000 x 100 round: page faults on memory the allocator hands back to the system each
    time, 1.8x the serial histogram), so a block takes a spare one and the caller gives the
    results back once it has combined them. A block run again for a thread that is not running
    takes an array of its own; the late run's array is dropped, never given back, so no two
    runs ever share one.
    """

    def __init__(self):
        self.shape: tuple | None = None
        self.free: list[np.ndarray] = []

    def take(self, shape: tuple) -> np.ndarray:
        """A float64 array of ``shape`` (its contents are stale)."""
        try:
            spare = self.free.pop()  # atomic under the GIL
        except IndexError:
            return np.empty(shape)
        return spare if spare.shape == shape else np.empty(shape)

    def give(self, arrays) -> None:
        """Keep ``arrays`` (of one shape, which no one uses any more) for later calls."""
        arrays = list(arrays)
        shape = arrays[0].shape
        if shape != self.shape:  # one shape only: the fit in progress
            self.shape, self.free = shape, []
        self.free.extend(arrays)


class Pace:
    """Whether one pass runs its blocks on threads or on the caller's thread, from their times.

    :meth:`use_threads` chooses the way whose calls have been faster, once both are known (the
    first four calls alternate, threads first; the first call each way is not counted: it pays
    for the first use of threads and arrays), except on a try of the other way, due
    :data:`FIRST_TRY` calls after the last change of choice and then after twice as many calls
    each time a try confirms the choice (up to :data:`MAX_TRY`).
    :meth:`record` keeps each way's time as the mean of its last time and the new one.
    """

    #: Calls between a change of choice and the next try of the other way.
    FIRST_TRY = 8
    #: The most calls between two tries.
    MAX_TRY = 512

    __slots__ = ("times", "warm", "calls", "next_try", "interval", "trying")

    def __init__(self):
        self.times: list = [None, None]  # seconds per call: [on the caller's thread, on threads]
        self.warm = [False, False]  # whether a call has been made that way
        self.calls = 0
        self.interval = self.FIRST_TRY
        self.next_try = 0
        self.trying = False

    def faster_on_threads(self) -> bool:
        """The current choice: threads unless a call on the caller's thread was faster."""
        serial, threaded = self.times
        return serial is None or threaded is None or threaded < serial

    def use_threads(self) -> bool:
        """Whether the next call runs on threads."""
        self.calls += 1
        serial, threaded = self.times
        if serial is None or threaded is None:  # alternate until both are known
            return self.calls % 2 == 1
        choice = threaded < serial
        self.trying = self.calls >= self.next_try
        return not choice if self.trying else choice

    def record(self, on_threads: bool, elapsed: float) -> None:
        """Keep the time of a call just made (``on_threads`` or not)."""
        if not self.warm[on_threads]:
            self.warm[on_threads] = True
            return
        known = None not in self.times  # a choice was made before this call
        before = self.faster_on_threads()
        last = self.times[on_threads]
        self.times[on_threads] = elapsed if last is None else 0.5 * (last + elapsed)
        if None in self.times:
            return
        changed = known and self.faster_on_threads() != before
        if changed:
            self.interval = self.FIRST_TRY
        elif self.trying:  # the try confirmed the choice: try less often
            self.interval = min(2 * self.interval, self.MAX_TRY)
        if self.trying or changed or not known:
            self.next_try = self.calls + self.interval + 1
        self.trying = False


#: Each pass's pace, by (the task's code, the number of examples); kept for the last
#: :data:`MAX_PACES` passes seen.
_PACES: dict = {}
MAX_PACES = 64


def _pace(task: Callable, size: int) -> Pace:
    key = (task.__code__, size)
    pace = _PACES.get(key)
    if pace is None:
        if len(_PACES) >= MAX_PACES:
            _PACES.clear()  # a process that has fitted many sizes starts afresh
        pace = _PACES.setdefault(key, Pace())
    return pace


class _Job:
    """One call of :func:`run_blocks`: the blocks to claim and the results delivered so far."""

    def __init__(self, task: Callable, n_tasks: int):
        self.task = task
        self.n_tasks = n_tasks
        self.claim = itertools.count().__next__  # atomic under the GIL
        self.results: list = [None] * n_tasks
        self.delivered = [False] * n_tasks
        self.left = n_tasks
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.error: BaseException | None = None

    def work(self) -> int:
        """Run unclaimed blocks until none is left; the number run."""
        ran = 0
        while True:
            k = self.claim()
            if k >= self.n_tasks:
                return ran
            try:
                result = self.task(k)
            except BaseException as exc:  # raised in the caller (run_blocks)
                self.error = exc
                self.finished.set()
                return ran
            self.deliver(k, result)
            ran += 1

    def deliver(self, k: int, result) -> None:
        with self.lock:
            if self.delivered[k]:
                return  # a block run twice: the first result is kept (both are the same)
            self.results[k] = result
            self.delivered[k] = True
            self.left -= 1
            if self.left == 0:
                self.finished.set()


class _Helpers:
    """The helper threads, started on first use and kept for the process (daemons)."""

    def __init__(self):
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def ensure(self, n: int) -> None:
        with self.lock:
            while len(self.threads) < n:
                thread = threading.Thread(target=self._serve, name="boostkit-blocks", daemon=True)
                thread.start()
                self.threads.append(thread)

    def _serve(self) -> None:
        while True:
            self.jobs.get().work()


_HELPERS = _Helpers()


def run_blocks(task: Callable[[int], object], n_tasks: int, n_jobs: int, size: int = 0,
               alone: Callable[[], list] | None = None) -> list:
    """``[task(0), ..., task(n_tasks - 1)]``, run on ``n_jobs`` threads (the caller's included).

    ``task(k)`` must release the GIL for its work (a ``nogil`` numba kernel) to run in parallel,
    and must write nothing but the new arrays it returns: it may be run more than once on the
    same block, at the same time, and a late run may outlive this call. The caller runs again
    a block that another thread has held for ``PATIENCE`` times the caller's own time per block
    (at once, if the caller got no block), so a thread that is not running holds up nobody. An
    exception in a task is raised in the caller. ``size`` (the number of examples the blocks
    cover) tells the pass's :class:`Pace` calls of one fit from those of another: with
    :data:`ADAPTIVE`, all blocks run on the caller's thread when that has been faster.

    ``alone`` is the blocks' serial form, for a pass whose blocks cost more one after another
    than one call over them all (each block's histogram in an array of its own, combined
    afterwards): whenever every block would run on the caller's thread, ``alone()`` runs
    instead, and its list is returned in place of the blocks' results. It must give what the
    caller makes of those results, bit for bit: the one combined histogram, say, as a list of
    one, which the caller's combining leaves as it is.
    """
    return run_blocks_settled(task, n_tasks, n_jobs, size, alone)[0]


def run_blocks_settled(task: Callable[[int], object], n_tasks: int, n_jobs: int, size: int = 0,
                       alone: Callable[[], list] | None = None) -> tuple[list, bool]:
    """:func:`run_blocks`, and whether every run of every task has ended: ``False`` when the
    caller ran a block again, whose first run may still be going. A task that reads arrays
    the caller would hand to later calls (:class:`SpareArrays`) may keep them only then."""

    def on_the_callers_thread() -> list:
        return [task(k) for k in range(n_tasks)] if alone is None else alone()

    if n_jobs <= 1 or n_tasks <= 1:
        return on_the_callers_thread(), True
    pace = _pace(task, size) if ADAPTIVE else None
    start = time.perf_counter()
    if pace is not None and not pace.use_threads():
        results = on_the_callers_thread()
        pace.record(False, time.perf_counter() - start)
        return results, True
    helpers = min(n_jobs, n_tasks) - 1
    _HELPERS.ensure(helpers)
    job = _Job(task, n_tasks)
    for _ in range(helpers):
        _HELPERS.jobs.put(job)
    ran = job.work()
    settled = True
    if not job.finished.is_set() and (
            ran == 0 or not job.finished.wait(PATIENCE * (time.perf_counter() - start) / ran)):
        for k in range(n_tasks):
            if not job.delivered[k]:
                settled = False
                job.deliver(k, task(k))
    if job.error is not None:
        raise job.error
    if pace is not None:
        pace.record(True, time.perf_counter() - start)
    return job.results, settled
