"""The binary class histogram kernel alone (``boostkit.kernels.histogram``): its time per update,
how far it is from the memory bound, and two threads against one, in one run.

No other library exposes its histogram on its own, so the peers are measured here, in the same
process and interleaved with the kernel, after warming numba's JIT, with thread counts pinned:

* the bandwidth bound: one streaming pass that reads the kernel's inputs once (the codes, the
  weights and the classes); "of bound" is that pass's time over the kernel's, 1.0 meaning the
  kernel runs at the speed of memory;
* threads: :func:`class_histogram_parallel` with ``n_jobs = 1`` (on the caller's thread) and
  ``n_jobs = 2``, and the one-thread speed-up of each over the serial :func:`class_histogram`;
  where it splits the features among the threads (``by_feature_groups``: wide data of moderate
  size), also its other way, blocks of examples (:func:`class_histogram_by_blocks`), on two
  threads;
* the simplest two-thread split, for reference: two serial :func:`class_histogram` calls at
  once, each over half of the features on a thread of its own. There are no blocks and one
  hand-over. It shows what two threads gain on this data at the moment, on a shared machine
  whose second core and memory come and go;
* repeated codes: :func:`class_histogram` on the same codes rearranged so that no example's code
  repeats in the 32 examples after it, for each feature. A bin updated again before its last
  store has reached the cache makes the next load wait for it. If that bound the kernel, this
  run would be faster.

Codes are quantile bins (255) of ``make_classification`` data, the weights AdaBoost-like
(exponential in a random margin, normalised). Medians over ``--repeats``; the machine is shared,
so compare the ratios of one run rather than absolute times across runs.

Run:  python benchmarks/bench_histogram.py                    (1 000 000 x 20 and 100 000 x 100)
      python benchmarks/bench_histogram.py --busy             (one core kept busy meanwhile)
      python benchmarks/bench_histogram.py --sizes 100000x20 --repeats 5   (smoke)
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("NUMBA_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from bench_adaboost import busy_core, make_data, parse_sizes  # noqa: E402
from timing import median_time  # noqa: E402

from boostkit.kernels.histogram import (  # noqa: E402
    by_feature_groups,
    class_histogram,
    class_histogram_by_blocks,
    class_histogram_parallel,
)

N_BINS = 255


def binned(n: int, d: int):
    """``(codes, weights, is_pos)``: 255 quantile bins per feature, AdaBoost-like weights."""
    X, y, _, _ = make_data(n, d)
    codes = np.empty((d, n), dtype=np.uint8)
    for f in range(d):
        edges = np.quantile(X[:, f], np.linspace(0.0, 1.0, N_BINS + 1)[1:-1])
        codes[f] = np.searchsorted(edges, X[:, f])
    sign = np.where(y == 1, 1.0, -1.0)
    margin = X[:, 0] + np.random.default_rng(0).normal(size=n)
    weights = np.exp(-sign * margin)
    weights /= weights.sum()
    return codes, weights, (y == 1).astype(np.uint8)


@numba.njit(cache=True, nogil=True)
def read_inputs(codes, weights, is_pos):
    """Read every input byte once (the memory bound of a pass over them); a checksum."""
    total = 0
    for f in range(codes.shape[0]):
        row = codes[f]
        for i in range(row.shape[0]):
            total += row[i]
    for i in range(is_pos.shape[0]):
        total += is_pos[i]
    return total + weights.sum()


def without_repeats(codes: np.ndarray, gap: int = 32) -> np.ndarray:
    """Each feature's codes reordered so that no code repeats within ``gap`` examples: the sorted
    codes are dealt lane by lane to the examples i = lane (mod 64), so examples under 64 apart
    are about n / 64 apart in sorted order, more than a quantile bin holds. Checked."""
    lanes = 64
    by_lane = np.argsort(np.arange(codes.shape[1]) % lanes, kind="stable")
    out = np.empty_like(codes)
    out[:, by_lane] = np.sort(codes, axis=1)
    for lag in range(1, gap + 1):
        if (out[:, lag:] == out[:, :-lag]).any():
            raise ValueError(f"a code repeats {lag} examples later: a bin holds more than "
                             f"about n / {lanes} examples")
    return out


def bench_size(n: int, d: int, repeats: int) -> list[str]:
    codes, weights, is_pos = binned(n, d)
    out = np.empty((d, N_BINS, 2))
    spread = without_repeats(codes)
    halves = (codes[: d // 2], codes[d // 2:])
    half_outs = (np.empty((d // 2, N_BINS, 2)), np.empty((d - d // 2, N_BINS, 2)))
    helper = ThreadPoolExecutor(1)

    def two_serial_at_once():
        other = helper.submit(class_histogram, halves[1], weights, is_pos, half_outs[1])
        class_histogram(halves[0], weights, is_pos, half_outs[0])
        other.result()

    runs = {
        "read the inputs once": lambda: read_inputs(codes, weights, is_pos),
        "class_histogram": lambda: class_histogram(codes, weights, is_pos, out),
        "threads, n_jobs=1": lambda: class_histogram_parallel(codes, weights, is_pos, out, 1),
        "threads, n_jobs=2": lambda: class_histogram_parallel(codes, weights, is_pos, out, 2),
        "two serial halves at once": two_serial_at_once,
        "no code repeats within 32": lambda: class_histogram(spread, weights, is_pos, out),
    }
    split = "features" if by_feature_groups(codes) else "examples"
    if split == "features":
        runs["blocks of examples, n_jobs=2"] = (
            lambda: class_histogram_by_blocks(codes, weights, is_pos, out, 2))
    for run in runs.values():  # JIT, the on-disk cache, the helper thread, the spare arrays
        run()
        run()
    times = {name: [] for name in runs}
    for _ in range(repeats):  # interleaved, so a busy moment hits every variant alike
        for name, run in runs.items():
            times[name].append(median_time(run, 1))
    medians = {name: float(np.median(values)) for name, values in times.items()}
    bound = medians["read the inputs once"]
    serial = medians["class_histogram"]
    lines = [f"{n} x {d} ({n * d / 1e6:.0f} M updates, "
             f"{(codes.nbytes + weights.nbytes + is_pos.nbytes) / 1e6:.0f} MB of inputs)"]
    for name, seconds in medians.items():
        lines.append(f"  {name:29s} {seconds * 1e3:8.2f} ms  {seconds / (n * d) * 1e9:6.3f} ns/update"
                     f"  of bound {bound / seconds:5.2f}  x serial {serial / seconds:5.2f}")
    lines.append(f"  two threads over one (split by {split}): "
                 f"{medians['threads, n_jobs=1'] / medians['threads, n_jobs=2']:.2f}x; two serial "
                 f"halves at once: "
                 f"{serial / medians['two serial halves at once']:.2f}x")
    lines.append(f"  no code repeats within 32 examples, over the codes as they are: "
                 f"{serial / medians['no code repeats within 32']:.2f}x")
    if split == "features":
        lines.append(f"  two threads, split by features over blocks of examples: "
                     f"{medians['blocks of examples, n_jobs=2'] / medians['threads, n_jobs=2']:.2f}x")
    helper.shutdown()
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000x20,100000x100")
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--busy", action="store_true",
                        help="keep one core spinning in another process while measuring")
    args = parser.parse_args(argv)
    print(f"repeats={args.repeats} (medians), cores={os.cpu_count()}, "
          f"NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}, "
          f"busy core: {'yes' if args.busy else 'no'}, load average before: "
          f"{os.getloadavg()[0]:.2f}")
    for n, d in parse_sizes(args.sizes):
        with busy_core(args.busy):
            for line in bench_size(n, d, args.repeats):
                print(line)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
