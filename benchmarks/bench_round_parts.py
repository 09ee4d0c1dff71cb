"""Where a batched ``adaboost`` round goes: each part of the batch kernel timed inside it.

The kernel (:func:`boostkit.kernels.rounds.run_batch`) is compiled a second time from its own
source with a read of the processor's cycle counter (``llvm.readcyclecounter``: the TSC on
x86) before each of its parts (:data:`ANCHORS`), each round's cycles per part kept; the
arguments are those of a real fit's batch (``Booster("adaboost")`` on ``make_classification``
data, as ``bench_adaboost.py`` makes it; ``random_state=0``, so the same bins in every run),
captured once and copied for every call. Reported:

* ``kernel_us``: the uninstrumented kernel's CPU time a round (``time.process_time``), median
  of ``--repeats``;
* ``parts_us``: each part's cycles a round, the slowest 5 % of its rounds left out (the TSC
  counts the time another process holds the core), in microseconds at ``--tsc-ghz``; a part
  that ran in only some rounds (the histogram summed over the rows, not carried) is weighed by
  the share of rounds it ran in;
* ``round_us``: a whole ``Booster("adaboost")`` round alone (fits of T and T/10 rounds, the
  difference over 0.9 T), median of ``--repeats``;
* ``digest``: a hash of the batch's outputs (cuts, sides, values, coefficients, numbers,
  weights, margins), to compare two trees' bits.

To compare two versions of the kernels, run this script against each tree in turn
(``PYTHONPATH=<tree>:<tree>/plugins``, each with its own ``NUMBA_CACHE_DIR``), alternating,
and compare the medians: the machine's load then falls on both alike.

Run:  NUMBA_NUM_THREADS=1 python benchmarks/bench_round_parts.py [--size 1000x10] [--repeats 9]
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import statistics
import textwrap
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba import types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

import boostkit  # noqa: E402
from boostkit.kernels import rounds  # noqa: E402


@intrinsic
def _cycles(typingctx):
    def codegen(context, builder, signature, args):
        counter = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), []), "llvm.readcyclecounter")
        return builder.call(counter, [])
    return types.int64(), codegen


@numba.njit(inline="always")
def _lap(laps, t, part, before):
    now = _cycles()
    laps[t, part] += now - before
    return now


#: The parts, in the order their laps are indexed.
PARTS = ("histogram", "search", "calibration", "cells", "factors", "fused pass", "normalisation",
         "stopping")
#: The start of the kernel's line before which each part's lap ends (the part that ends there).
ANCHORS = (
    ("k = search(", 0),
    ("feature, cut = ", 1),
    ("if not (np.isfinite(values[t, 0])", 2),
    ("if from_margins:", 3),
    ("n_off, total, training_error, weighted_error = cell_term_pass(", 4),
    ("if not (total > 0.0 and np.isfinite(total)):", 5),
    ("numbers[t, 0] = weighted_error", 6),
    ("if code != 0:", 7),
)


def instrumented_kernel():
    """run_batch with a lap before each anchor, and a ``laps`` ``(rounds, parts)`` int64
    argument after its own."""
    source = textwrap.dedent(inspect.getsource(rounds.run_batch))
    missing = [anchor for anchor, _ in ANCHORS if anchor not in source]
    if missing:
        raise SystemExit(f"run_batch has none of {missing}: update ANCHORS")
    lines = []
    for line in source.split("\n"):
        stripped, indent = line.strip(), line[:len(line) - len(line.lstrip())]
        lines += [f"{indent}_t = _lap(laps, t, {part}, _t)" for anchor, part in ANCHORS
                  if stripped.startswith(anchor)]
        lines.append(line)
        if stripped.startswith("for t in range(cuts.shape[0]):"):
            lines.append(indent + "    _t = _cycles()")
    text = "\n".join(lines).replace("numbers, stop):", "numbers, stop, laps):", 1)
    namespace = dict(vars(rounds), _lap=_lap, _cycles=_cycles)
    exec(compile(text, "<instrumented run_batch>", "exec"), namespace)
    signature = types.int64(*rounds.BATCH.args, types.int64[:, ::1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numba.NumbaExperimentalFeatureWarning)
        return numba.njit(signature, nogil=True)(namespace["run_batch"])


def captured_arguments(X, y, n_rounds):
    """The arguments of the one batch of ``Booster("adaboost", n_rounds).fit(X, y)``, copied
    before the call."""
    captured = []
    make, kernel = rounds.batch_kernel, rounds.batch_kernel()

    def recording(*args):
        captured.append(tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args))
        return kernel(*args)

    rounds.batch_kernel = lambda: recording
    try:
        boostkit.Booster("adaboost", n_rounds=n_rounds, random_state=0).fit(X, y)
    finally:
        rounds.batch_kernel = make
    if len(captured) != 1:
        raise SystemExit(f"the fit made {len(captured)} batches, not one")
    return captured[0]


def fresh(arguments):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in arguments)


#: The outputs of run_batch whose bits the digest covers: weights, margin, cuts .. numbers.
OUTPUTS = (4, 5, 28, 29, 30, 31, 32, 33)


def main():
    from bench_adaboost import make_data

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1000x10")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--tsc-ghz", type=float, default=2.6,
                        help="the cycle counter's rate (x86: the TSC's, in /proc/cpuinfo)")
    args = parser.parse_args()
    n, d = (int(v) for v in args.size.lower().split("x"))
    X, y, _, _ = make_data(n, d)
    arguments = captured_arguments(X, y, args.rounds)
    kernel = rounds.batch_kernel()
    outputs = fresh(arguments)
    ran = kernel(*outputs)
    digest = hashlib.sha256()
    for i in OUTPUTS:
        digest.update(np.ascontiguousarray(outputs[i]).tobytes())
    timed = instrumented_kernel()
    calls = max(1, 20000 // (n * d // 100 + 1))  # a tenth of a second or so per repeat
    kernel_times, laps = [], []
    for _ in range(args.repeats):
        batch = [fresh(arguments) for _ in range(calls)]
        start = time.process_time()
        for call in batch:
            kernel(*call)
        kernel_times.append((time.process_time() - start) / (calls * ran) * 1e6)
        for call in [fresh(arguments) for _ in range(calls)]:
            lap = np.zeros((args.rounds, len(PARTS)), dtype=np.int64)
            timed(*call, lap)
            laps.append(lap[:ran])
    per_round = np.concatenate(laps) / (args.tsc_ghz * 1e3)  # microseconds
    parts = {}
    for p, name in enumerate(PARTS):
        spent = per_round[:, p]
        ran_in = spent[spent > 0]
        kept = ran_in[ran_in <= np.quantile(ran_in, 0.95)] if ran_in.size else ran_in
        parts[name] = round(float(kept.mean()) * ran_in.size / spent.size if kept.size else 0.0,
                            3)

    def fit(n_rounds):
        start = time.process_time()
        boostkit.Booster("adaboost", n_rounds=n_rounds).fit(X, y)
        return time.process_time() - start

    fit(args.rounds // 10)
    fits = [(fit(args.rounds) - fit(args.rounds // 10)) / (0.9 * args.rounds) * 1e6
            for _ in range(args.repeats)]
    print(json.dumps({"size": args.size, "ran": ran,
                      "kernel_us": round(statistics.median(kernel_times), 3),
                      "parts_us": parts, "sum_of_parts_us": round(sum(parts.values()), 3),
                      "round_us": round(statistics.median(fits), 3),
                      "digest": digest.hexdigest()[:16],
                      "boostkit": os.path.dirname(boostkit.__file__)}))


if __name__ == "__main__":
    main()
