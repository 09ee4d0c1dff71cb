"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeats: int) -> float:
    """The median wall time of ``repeats`` calls of ``fn()``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_medians(fns, repeats: int) -> list[float]:
    """The median wall time of each of ``fns`` over ``repeats`` rounds in which every one is
    called once, in turn: the load of a shared machine then falls on all of them alike."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [statistics.median(out) for out in times]
