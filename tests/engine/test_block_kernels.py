"""Blocks of examples on threads (boostkit.kernels.blocks) and the kernels that run in them, each
against a naive numpy reference or the serial kernel applied block by block."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from boostkit.kernels import blocks, boosting
from boostkit.kernels.blocks import (MAX_BLOCKS, MIN_BLOCK_ROWS, block_bounds, run_blocks,
                                     run_blocks_settled)
from boostkit.kernels.boosting import (
    exponential_weights,
    exponential_weights_parallel,
    sum_and_min,
)
from boostkit.kernels import histogram
from boostkit.kernels.histogram import (
    _TILE,
    by_feature_groups,
    class_histogram,
    feature_tasks,
    class_histogram_block,
    class_histogram_parallel,
    pair_histogram,
    pair_histogram_block,
    pair_histogram_parallel,
    split_pair_weights,
)

N = MAX_BLOCKS * MIN_BLOCK_ROWS + 123  # the most blocks, of uneven sizes


@pytest.fixture(params=["threads", "caller"])
def where_blocks_run(request, monkeypatch):
    """Both ways a parallel kernel runs its blocks: on the threads, or all on the caller's
    thread (inputs too small to repay a hand-over), which must give the same numbers."""
    threshold = 0 if request.param == "threads" else 1 << 62
    monkeypatch.setattr(blocks, "MIN_THREADED_UPDATES", threshold)
    monkeypatch.setattr(boosting, "MIN_THREADED_ROWS", threshold)
    monkeypatch.setattr(blocks, "MIN_THREADED_ROWS", threshold)  # row_threads
    monkeypatch.setattr(blocks, "ADAPTIVE", False)  # threads every call, even where they lose
    return request.param


class DecidedPace(blocks.Pace):
    """A :class:`~boostkit.kernels.blocks.Pace` whose choice the test makes (``threads``), not
    the machine's timings: a busy machine, or a kernel compiling on its first call, must not
    change what a test checks. ``ways`` lists how each call ran (``T``, ``S``)."""

    __slots__ = ("threads", "ways")

    def __init__(self):
        super().__init__()
        self.threads = True
        self.ways = ""

    def use_threads(self) -> bool:
        self.calls += 1
        return self.threads

    def record(self, on_threads: bool, elapsed: float) -> None:
        self.ways += "T" if on_threads else "S"


@pytest.fixture
def decided_pace(monkeypatch):
    """The one pace of every paced pass in the test, a :class:`DecidedPace`."""
    pace = DecidedPace()
    monkeypatch.setattr(blocks, "_pace", lambda task, size: pace)
    return pace


@pytest.mark.parametrize("n", [0, 1, MIN_BLOCK_ROWS - 1, 2 * MIN_BLOCK_ROWS, 5 * MIN_BLOCK_ROWS + 7,
                               N, 10**6 + 3])
def test_blocks_cover_the_examples_in_order(n):
    bounds = block_bounds(n)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    assert 1 <= len(bounds) <= MAX_BLOCKS
    if len(bounds) > 1:
        assert min(stop - start for start, stop in bounds) >= MIN_BLOCK_ROWS


@pytest.mark.parametrize("n_jobs", [1, 2, 3, 8])
def test_run_blocks_returns_every_result_in_block_order(n_jobs):
    assert run_blocks(lambda k: k * k, 11, n_jobs) == [k * k for k in range(11)]
    assert run_blocks(lambda k: -k, 5, n_jobs) == [0, -1, -2, -3, -4]


def test_an_error_in_a_block_is_raised_in_the_caller():
    def task(k):
        if k == 3:
            raise ZeroDivisionError("block 3")
        return k

    with pytest.raises(ZeroDivisionError, match="block 3"):
        run_blocks(task, 6, 2)
    assert run_blocks(lambda k: k, 4, 2) == [0, 1, 2, 3]  # still works


def test_the_caller_runs_again_a_block_a_stalled_thread_holds():
    # The first block a helper thread takes stalls it (as if descheduled) until released; the
    # caller must not wait for it: it runs that block itself and returns.
    release = threading.Event()
    claimed = threading.Event()
    caller = threading.get_ident()
    stalled = []

    def task(k):
        if threading.get_ident() != caller and not stalled:
            stalled.append(k)
            claimed.set()
            release.wait(30)
        else:
            claimed.wait(30)  # the caller's first block lasts until the helper has one
        return 10 * k

    try:
        assert run_blocks_settled(task, 4, 2) == ([0, 10, 20, 30], False)  # the stall goes on
        assert stalled, "the helper thread claimed no block"
        assert not release.is_set()  # returned while the helper was still stalled
    finally:
        release.set()


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_blocks_that_all_ran_once_are_settled(n_jobs):
    ran = []
    results, settled = run_blocks_settled(lambda k: ran.append(k) or k, 6, n_jobs)
    assert results == list(range(6)) and settled
    assert sorted(ran) == list(range(6))  # each block once: no run can still be going


def random_binned(n, d=5, n_bins=20, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(d, n), dtype=np.uint8)
    weights = rng.exponential(size=n) * 10.0 ** rng.integers(-8, 3, size=n)
    is_pos = rng.integers(0, 2, size=n).astype(np.uint8)
    return codes, weights, is_pos


def reference_histogram(codes, weights, columns, n_bins, n_columns):
    out = np.zeros((codes.shape[0], n_bins, n_columns))
    for f in range(codes.shape[0]):
        np.add.at(out[f], (codes[f], columns), weights)
    return out


def test_class_histogram_block_matches_reference():
    codes, weights, is_pos = random_binned(5000)
    out = np.full((codes.shape[0], 20, 2), np.nan)  # stale contents must be overwritten
    assert class_histogram_block(codes, weights, is_pos, out, 1000, 4321) is out
    expected = reference_histogram(codes[:, 1000:4321], weights[1000:4321], is_pos[1000:4321], 20, 2)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("n_jobs", [2, 3])
def test_class_histogram_parallel_adds_the_serial_histograms_of_the_blocks_in_order(n_jobs, where_blocks_run):
    codes, weights, is_pos = random_binned(N)
    out = np.full((codes.shape[0], 20, 2), np.nan)  # stale contents must be overwritten
    class_histogram_parallel(codes, weights, is_pos, out, n_jobs)
    expected = np.zeros_like(out)
    part = np.empty_like(out)
    for start, stop in block_bounds(N):
        class_histogram(codes[:, start:stop], weights[start:stop], is_pos[start:stop], part)
        expected += part
    np.testing.assert_array_equal(out, expected)  # bit for bit, whatever the thread count
    np.testing.assert_allclose(out, reference_histogram(codes, weights, is_pos, 20, 2),
                               rtol=1e-12, atol=0)


def test_wide_histograms_of_moderate_size_split_their_features():
    assert by_feature_groups(np.zeros((13, 1000), dtype=np.uint8))  # four groups of features
    assert not by_feature_groups(np.zeros((12, 1000), dtype=np.uint8))
    assert by_feature_groups(np.zeros((100, histogram.FEATURE_TASKS_MAX_ROWS), dtype=np.uint8))
    assert not by_feature_groups(np.zeros((100, histogram.FEATURE_TASKS_MAX_ROWS + 1),
                                          dtype=np.uint8))
    # a feature's codes not adjacent in memory: each task would copy all of them
    assert not by_feature_groups(np.asfortranarray(np.zeros((100, 1000), dtype=np.uint8)))


@pytest.mark.parametrize("d", [13, 16, 33, 70, 166])
@pytest.mark.parametrize("n_jobs", [1, 2, 3, 8])
def test_feature_tasks_are_consecutive_groups_of_four_features(d, n_jobs):
    spans = feature_tasks(d, n_jobs)
    assert spans[0][0] == 0 and spans[-1][1] == d
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(start % 4 == 0 for start, _ in spans)
    assert len(spans) <= 4 * n_jobs and len(spans) >= min(-(-d // 4), 4 * n_jobs) // 2


@pytest.mark.parametrize("c", [3, 20])  # both loops of pair_histogram
def test_pair_histogram_parallel_by_feature_groups_is_the_serial_histogram(c, where_blocks_run):
    codes, _, _ = random_binned(3001, d=22)
    rng = np.random.default_rng(c)
    signed = np.empty((codes.shape[1], c, 2))
    split_pair_weights(rng.random((codes.shape[1], c)),
                       (rng.random((codes.shape[1], c)) < 0.3).astype(np.uint8), signed)
    assert by_feature_groups(codes)
    expected = np.empty((codes.shape[0], 20, c, 2))
    pair_histogram(codes, signed, expected)
    for n_jobs in (2, 3):
        out = np.full_like(expected, np.nan)
        pair_histogram_parallel(codes, signed, out, n_jobs)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n_jobs", [2, 3, 8])
@pytest.mark.parametrize("d, n_columns", [(13, 2), (33, 2), (70, 2), (21, 4)])
def test_class_histogram_parallel_by_feature_groups_is_the_serial_histogram(
        n_jobs, d, n_columns, where_blocks_run):
    # Tasks of one or several groups of four features, the last one short (33 features: nine
    # groups; 70: eighteen, 4.5 per thread on four threads), each summing every example in
    # order: class_histogram's numbers bit for bit, on threads or on the caller's thread.
    codes, weights, _ = random_binned(3001, d=d)  # several tiles: the test below
    columns = np.random.default_rng(d).integers(0, n_columns, size=codes.shape[1]).astype(np.uint8)
    assert by_feature_groups(codes)
    expected = np.empty((d, 20, n_columns))
    class_histogram(codes, weights, columns, expected)
    for _ in range(2):  # and the same numbers from a second call
        out = np.full_like(expected, np.nan)  # stale contents must be overwritten
        class_histogram_parallel(codes, weights, columns, out, n_jobs)
        np.testing.assert_array_equal(out, expected)
    np.testing.assert_allclose(expected, reference_histogram(codes, weights, columns, 20,
                                                             n_columns), rtol=1e-12, atol=0)


def test_class_histogram_parallel_by_feature_groups_on_the_callers_thread(monkeypatch,
                                                                         decided_pace):
    # The serial form, chosen where threads were slower: the same numbers (over two tiles and
    # some examples more, so every task goes over several tiles).
    monkeypatch.setattr(blocks, "MIN_THREADED_UPDATES", 0)
    codes, weights, is_pos = random_binned(2 * _TILE + 77, d=29)
    expected = np.empty((29, 20, 2))
    class_histogram(codes, weights, is_pos, expected)
    out = np.empty_like(expected)
    class_histogram_parallel(codes, weights, is_pos, out, 2)
    np.testing.assert_array_equal(out, expected)
    decided_pace.threads = False  # the caller's thread was faster
    alone = np.full_like(expected, np.nan)
    class_histogram_parallel(codes, weights, is_pos, alone, 2)
    np.testing.assert_array_equal(alone, expected)
    assert decided_pace.ways == "TS"


def test_class_histogram_parallel_of_class_indices(where_blocks_run):
    # SAMME's path: the class index in place of the sign, one column per class.
    codes, weights, _ = random_binned(N)
    labels = np.random.default_rng(1).integers(0, 4, size=N)
    out = np.empty((codes.shape[0], 20, 4))
    class_histogram_parallel(codes, weights, labels, out, 2)
    np.testing.assert_allclose(out, reference_histogram(codes, weights, labels, 20, 4),
                               rtol=1e-12, atol=0)


@pytest.mark.parametrize("c", [3, 7])  # both loops of pair_histogram
def test_pair_histogram_parallel_adds_the_serial_histograms_of_the_blocks_in_order(c, where_blocks_run):
    codes, _, _ = random_binned(N)
    rng = np.random.default_rng(c)
    weights = rng.random((N, c))
    is_pos = (rng.random((N, c)) < 0.3).astype(np.uint8)
    signed = np.empty((N, c, 2))
    split_pair_weights(weights, is_pos, signed)
    expected = np.zeros((codes.shape[0], 20, c, 2))
    for start, stop in block_bounds(N):
        part = np.empty_like(expected)
        pair_histogram(codes[:, start:stop], signed[start:stop], part)
        expected += part
    for n_jobs in (2, 3):
        out = np.full_like(expected, np.nan)
        pair_histogram_parallel(codes, signed, out, n_jobs)
        np.testing.assert_array_equal(out, expected)


def test_pair_histogram_block_is_the_serial_kernel_on_the_block():
    codes, _, _ = random_binned(5000)
    rng = np.random.default_rng(5)
    signed = np.empty((5000, 3, 2))
    split_pair_weights(rng.random((5000, 3)), (rng.random((5000, 3)) < 0.5).astype(np.uint8),
                       signed)
    expected = np.empty((codes.shape[0], 20, 3, 2))
    pair_histogram(np.ascontiguousarray(codes[:, 700:3100]), signed[700:3100], expected)
    np.testing.assert_array_equal(pair_histogram_block(codes, signed, 20, 700, 3100), expected)


@pytest.mark.parametrize("n_jobs", [2, 3])
def test_exponential_weights_parallel_agree_with_the_serial_kernel(n_jobs, where_blocks_run):
    rng = np.random.default_rng(3)
    margin = 30.0 * rng.normal(size=N)
    y = rng.choice([-1.0, 1.0], size=N)
    d1 = rng.exponential(size=N)
    d1[::7] = 0.0
    d1 /= d1.sum()
    serial = np.empty(N)
    serial_log = exponential_weights(margin, y, d1, serial)
    out = np.full(N, np.nan)
    log_potential = exponential_weights_parallel(margin, y, d1, out, n_jobs)
    np.testing.assert_allclose(out, serial, rtol=1e-12, atol=0)
    assert out[::7].max() == 0.0
    assert log_potential == pytest.approx(serial_log, rel=1e-12)
    for _ in range(3):  # the same bits whichever thread ran which block
        again = np.empty(N)
        assert exponential_weights_parallel(margin, y, d1, again, n_jobs) == log_potential
        np.testing.assert_array_equal(again, out)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 1001])
def test_sum_and_min_matches_numpy(n):
    values = np.random.default_rng(n).normal(size=n)
    total, smallest = sum_and_min(values)
    assert total == pytest.approx(values.sum(), rel=1e-12, abs=1e-12)
    assert smallest == (values.min() if n else np.inf)
    values[n // 2:] = np.nan
    if n:
        assert np.isnan(sum_and_min(values)[0])


def test_helper_threads_are_kept_for_the_process():
    run_blocks(lambda k: k, 4, 3)
    count = len(blocks._HELPERS.threads)
    run_blocks(lambda k: k, 4, 3)
    assert len(blocks._HELPERS.threads) == count >= 2


def test_spare_arrays_are_reused_for_one_shape_only():
    spares = blocks.SpareArrays()
    first = spares.take((3, 4))
    assert first.shape == (3, 4) and first.dtype == np.float64
    spares.give([first])
    assert spares.take((3, 4)) is first
    assert spares.take((3, 4)) is not first  # taken already: a new one
    spares.give([first])
    assert spares.take((5,)).shape == (5,)  # another shape: never a spare of the wrong one
    spares.give([np.empty(7)])
    assert spares.free and all(a.shape == (7,) for a in spares.free)


def test_small_histograms_run_their_blocks_on_the_callers_thread():
    small = np.zeros((20, 40_000), dtype=np.uint8)  # 800 000 updates: two blocks, one thread
    large = np.zeros((20, 60_000), dtype=np.uint8)
    assert len(block_bounds(small.shape[1])) == 4
    assert blocks.histogram_threads(small, 2) == 1
    assert blocks.histogram_threads(large, 2) == 2


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf - inf
@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_the_engine_checks_in_blocks_agree_with_the_serial_kernels(n_jobs, where_blocks_run):
    from boostkit.kernels.boosting import all_finite, all_finite_parallel, sum_and_min_parallel

    rng = np.random.default_rng(5)
    w = rng.exponential(size=N)
    w /= w.sum()
    total, smallest = sum_and_min_parallel(w, n_jobs)
    assert total == pytest.approx(sum_and_min(w)[0], rel=1e-13) and smallest == w.min()
    assert all_finite_parallel(w, n_jobs) and all_finite(w)
    for bad in (np.nan, np.inf, -np.inf):
        spoilt = w.copy()
        spoilt[N - 5] = bad  # in the last block
        assert not all_finite_parallel(spoilt, n_jobs)
        assert np.isnan(sum_and_min_parallel(spoilt, n_jobs)[0]) == np.isnan(bad)
    w[3] = -1e-3
    assert sum_and_min_parallel(w, n_jobs)[1] == -1e-3


def _calls(pace, n, threads_time, serial_time):
    """Make ``n`` calls through ``pace`` taking the given times; the ways they ran."""
    ways = []
    for _ in range(n):
        on_threads = pace.use_threads()
        pace.record(on_threads, threads_time if on_threads else serial_time)
        ways.append("T" if on_threads else "S")
    return "".join(ways)


def test_a_pace_runs_the_faster_way_and_tries_the_other_less_often_while_it_stays_slower():
    pace = blocks.Pace()
    first = blocks.Pace.FIRST_TRY
    # Two calls each way (the first ones not counted), then threads (faster), with a try of
    # the caller's thread after 8 calls, then 16, 32, ...
    ways = _calls(pace, 4 + first + 1 + 2 * first + 1, threads_time=1.0, serial_time=2.0)
    assert ways == "TSTS" + "T" * first + "S" + "T" * 2 * first + "S"
    assert pace.interval == 4 * first


def test_the_first_call_each_way_is_not_counted():
    pace = blocks.Pace()
    pace.use_threads()
    pace.record(True, 100.0)  # threads started, arrays first touched: not a fair time
    pace.use_threads()
    pace.record(False, 2.0)
    assert pace.times == [None, None]
    assert _calls(pace, 3, threads_time=1.0, serial_time=2.0) == "TST"


def test_a_pace_moves_to_the_callers_thread_when_threads_become_slower_and_back():
    pace = blocks.Pace()
    first = blocks.Pace.FIRST_TRY
    _calls(pace, 4 + first + 1, threads_time=1.0, serial_time=2.0)  # threads, tried once
    # The machine gets busy: calls on threads now take 4.0. The mean of 1.0 and 4.0 is above
    # the caller's 2.0 at once: the next calls run on the caller's thread, trying threads
    # after FIRST_TRY calls.
    ways = _calls(pace, 1 + first + 1, threads_time=4.0, serial_time=2.0)
    assert ways == "T" + "S" * first + "T"
    assert pace.interval == 2 * first  # the try confirmed the caller's thread
    # Quiet again: the next try of threads wins, and threads stay.
    ways = _calls(pace, 2 * first + 1 + 4, threads_time=0.5, serial_time=2.0)
    assert ways == "S" * (2 * first) + "T" + "TTTT"
    assert pace.interval == first


def test_paces_are_kept_per_pass_and_size(monkeypatch):
    monkeypatch.setattr(blocks, "_PACES", {})

    def task(k):
        return k

    run_blocks(task, 4, 2, size=100)
    run_blocks(task, 4, 2, size=200)
    run_blocks(lambda k: k, 4, 2, size=100)
    assert len(blocks._PACES) == 3
    assert blocks._PACES[(task.__code__, 100)].calls == 1


def test_a_pass_that_is_faster_on_the_callers_thread_runs_there_with_the_same_results(
        decided_pace):
    caller = threading.get_ident()
    where = []

    def task(k):
        where.append(threading.get_ident())
        return k * k

    decided_pace.threads = False
    for _ in range(3):
        assert run_blocks_settled(task, 6, 2, size=6) == ([k * k for k in range(6)], True)
    assert set(where) == {caller} and decided_pace.ways == "SSS"


def test_pacing_off_keeps_every_call_on_threads(monkeypatch):
    monkeypatch.setattr(blocks, "ADAPTIVE", False)
    monkeypatch.setattr(blocks, "_PACES", {})
    run_blocks(lambda k: k, 4, 2)
    assert not blocks._PACES


def test_the_serial_form_runs_in_place_of_the_blocks_on_the_callers_thread(monkeypatch):
    monkeypatch.setattr(blocks, "_PACES", {})
    ran = []

    def task(k):
        ran.append(k)
        return k

    def alone():
        return [sum(range(6))]

    assert run_blocks(task, 6, 1, alone=alone) == [15]  # one thread: the serial form
    assert run_blocks_settled(task, 6, 2, size=6, alone=alone) == ([0, 1, 2, 3, 4, 5], True)
    assert run_blocks_settled(task, 6, 2, size=6, alone=alone) == ([15], True)  # paced: caller
    assert ran == [0, 1, 2, 3, 4, 5]  # the blocks ran once, on threads; never with the form


@pytest.mark.parametrize("n_rows, strided", [
    (N, False),  # blocks of one tile, summed a group of features at a time
    (3 * MIN_BLOCK_ROWS + 5, False),
    (MAX_BLOCKS * (_TILE + 1000), False),  # blocks of two tiles
    (N, True),  # codes not adjacent in memory
])
def test_class_histogram_parallel_on_the_callers_thread_is_the_blocks_added_in_order(
        monkeypatch, decided_pace, n_rows, strided):
    # The serial form of the paced pass, chosen where threads were slower, against the same
    # blocks summed on threads: bit for bit, with stale spare arrays from the calls before.
    # (Chosen by the test: a pace that measured would take threads again whenever the first
    # serial call, which compiles its kernel, took a few seconds.)
    monkeypatch.setattr(blocks, "MIN_THREADED_UPDATES", 0)
    codes, weights, is_pos = random_binned(n_rows)
    if strided:
        codes = np.asfortranarray(codes)
    on_threads = np.empty((codes.shape[0], 20, 2))
    class_histogram_parallel(codes, weights, is_pos, on_threads, 2)
    decided_pace.threads = False  # the caller's thread was faster
    for _ in range(3):
        alone = np.full_like(on_threads, np.nan)
        class_histogram_parallel(codes, weights, is_pos, alone, 2)
        np.testing.assert_array_equal(alone, on_threads)
    assert decided_pace.ways == "TSSS"
