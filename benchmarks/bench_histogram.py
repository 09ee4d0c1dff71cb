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

``--gathered``: instead, the carried histogram's update (:func:`changed_class_histogram`, the
change of weight of the rows off a stump's kept cell summed where their codes are, four
features per pass) against other passes and layouts of the codes, CPU time, one thread,
interleaved (each round starting from the next), with 1, 2, 5, 15, 25 and 40 % of the rows
gathered as a stump leaves them (the rows whose code of one feature is above a cut: increasing,
with gaps). The peers, each checked bit for bit against the kernel first:

* eight features per pass over the same codes (a 32 KB group, in the 48 KB first-level cache
  here): each row's index, change and class read once per eight features, not four;
* packed words: a second copy of the codes, four features of a row in one 32-bit word,
  ``(ceil(d / 4), n)`` uint32, one load per row and group of four;
* whole rows: a second copy ``(n, d)`` uint8, row-major, each gathered row's codes adjacent and
  read once, summed into one ``(2, d, 256)`` histogram (in the second-level cache).

The copies' cost per fit is printed too: CPU time to build one into new memory, and its bytes;
and the kernel's time per (gathered row, feature) beside that of the class histogram of every
row (:func:`class_histogram`).

Run:  python benchmarks/bench_histogram.py                    (1 000 000 x 20 and 100 000 x 100)
      python benchmarks/bench_histogram.py --busy             (one core kept busy meanwhile)
      python benchmarks/bench_histogram.py --gathered         (the carried update's layouts)
      python benchmarks/bench_histogram.py --sizes 100000x20 --repeats 5   (smoke)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("NUMBA_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from bench_adaboost import busy_core, make_data, parse_sizes  # noqa: E402
from timing import median_time  # noqa: E402

from boostkit.kernels.carried import changed_class_histogram  # noqa: E402
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


#: Bins per feature and class in the peers' histograms: every uint8 code.
CODES = 256
#: Shares of the rows gathered by ``--gathered``.
GATHERED_SHARES = (0.01, 0.02, 0.05, 0.15, 0.25, 0.40)
#: What ``--gathered`` compares the kernel with.
PEERS = ("eight per pass", "packed words", "whole rows")


@numba.njit(cache=True, nogil=True)
def eight_per_pass(codes, rows, change, is_pos, out):
    """The carried update eight features per pass over the codes where they are (a 32 KB group:
    each row's index, change and class read once per eight features), a last group of up to
    four in a pass of four."""
    d, n_bins = codes.shape[0], out.shape[1]
    group = np.empty(2 * 8 * CODES)
    last = d - 1
    first = 0
    while first < d:
        group[:] = 0.0
        lanes = 8 if d - first > 4 else 4
        r0, r1 = codes[first], codes[min(first + 1, last)]
        r2, r3 = codes[min(first + 2, last)], codes[min(first + 3, last)]
        r4, r5 = codes[min(first + 4, last)], codes[min(first + 5, last)]
        r6, r7 = codes[min(first + 6, last)], codes[min(first + 7, last)]
        if lanes == 8:
            for k in range(rows.shape[0]):
                i = rows[k]
                w = change[k]
                column = np.uintp(is_pos[k]) * np.uintp(8 * CODES)
                group[column + np.uintp(r0[i])] += w
                group[column + np.uintp(CODES) + np.uintp(r1[i])] += w
                group[column + np.uintp(2 * CODES) + np.uintp(r2[i])] += w
                group[column + np.uintp(3 * CODES) + np.uintp(r3[i])] += w
                group[column + np.uintp(4 * CODES) + np.uintp(r4[i])] += w
                group[column + np.uintp(5 * CODES) + np.uintp(r5[i])] += w
                group[column + np.uintp(6 * CODES) + np.uintp(r6[i])] += w
                group[column + np.uintp(7 * CODES) + np.uintp(r7[i])] += w
        else:
            for k in range(rows.shape[0]):
                i = rows[k]
                w = change[k]
                column = np.uintp(is_pos[k]) * np.uintp(4 * CODES)
                group[column + np.uintp(r0[i])] += w
                group[column + np.uintp(CODES) + np.uintp(r1[i])] += w
                group[column + np.uintp(2 * CODES) + np.uintp(r2[i])] += w
                group[column + np.uintp(3 * CODES) + np.uintp(r3[i])] += w
        for j in range(min(lanes, d - first)):
            for b in range(n_bins):
                out[first + j, b, 0] = group[j * CODES + b]
                out[first + j, b, 1] = group[(lanes + j) * CODES + b]
        first += min(lanes, d - first)


@numba.njit(cache=True, nogil=True)
def packed_words(codes):
    """``(ceil(d / 4), n)`` uint32: byte j of word ``[g, i]`` is feature 4 g + j's code of row i
    (zero past the last feature)."""
    d, n = codes.shape
    out = np.zeros(((d + 3) // 4, n), dtype=np.uint32)
    for f in range(d):
        row, words, shift = codes[f], out[f // 4], np.uint32(8 * (f % 4))
        for i in range(n):
            words[i] |= np.uint32(row[i]) << shift
    return out


@numba.njit(cache=True, nogil=True)
def packed_word_update(words, rows, change, is_pos, out):
    """The carried update from :func:`packed_words`: one 32-bit load per row and group of four."""
    d, n_bins = out.shape[0], out.shape[1]
    group = np.empty(2 * 4 * CODES)
    for g in range(words.shape[0]):
        group[:] = 0.0
        row = words[g]
        for k in range(rows.shape[0]):
            word = row[rows[k]]
            w = change[k]
            column = np.uintp(is_pos[k]) * np.uintp(4 * CODES)
            group[column + np.uintp(word & 0xFF)] += w
            group[column + np.uintp(CODES) + np.uintp((word >> 8) & 0xFF)] += w
            group[column + np.uintp(2 * CODES) + np.uintp((word >> 16) & 0xFF)] += w
            group[column + np.uintp(3 * CODES) + np.uintp(word >> 24)] += w
        for j in range(min(4, d - 4 * g)):
            for b in range(n_bins):
                out[4 * g + j, b, 0] = group[j * CODES + b]
                out[4 * g + j, b, 1] = group[(4 + j) * CODES + b]


@numba.njit(cache=True, nogil=True)
def whole_row_update(row_codes, rows, change, is_pos, out):
    """The carried update from ``(n, d)`` row-major codes: each gathered row read once."""
    d, n_bins = row_codes.shape[1], out.shape[1]
    hist = np.zeros(2 * d * CODES)
    for k in range(rows.shape[0]):
        row = row_codes[rows[k]]
        w = change[k]
        base = np.uintp(is_pos[k]) * np.uintp(d * CODES)
        for f in range(d):
            hist[base + np.uintp(f * CODES) + np.uintp(row[f])] += w
    for f in range(d):
        for b in range(n_bins):
            out[f, b, 0] = hist[f * CODES + b]
            out[f, b, 1] = hist[(d + f) * CODES + b]


def cpu_medians(runs: dict, repeats: int) -> dict:
    """The median CPU time of each of ``runs``, called in turn ``repeats`` times, each time
    starting from the next one: a run that finds the codes in the cache where the one before it
    left them is not always the same one."""
    times = {name: [] for name in runs}
    names = list(runs)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.process_time()
            runs[name]()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def bench_gathered(n: int, d: int, repeats: int) -> list[str]:
    codes, weights, is_pos = binned(n, d)
    builds = {"packed words": lambda: packed_words(codes),
              "whole rows": lambda: np.ascontiguousarray(codes.T)}
    copies = {name: build() for name, build in builds.items()}  # also compiles
    build_times = cpu_medians(builds, 5)  # each into new memory, as once per fit
    words, row_codes = copies["packed words"], copies["whole rows"]
    lines = [f"{n} x {d}: the codes {codes.nbytes / 1e6:.0f} MB; a second copy, built once per "
             "fit: " + ", ".join(f"{name} {build_times[name] * 1e3:.1f} ms CPU and "
                                 f"{copies[name].nbytes / 1e6:.0f} MB"
                                 for name in builds)]
    out = np.empty((d, N_BINS, 2))
    class_histogram(codes, weights, is_pos, out)
    every_row = cpu_medians({"": lambda: class_histogram(codes, weights, is_pos, out)},
                            repeats)[""]
    lines.append(f"  the class histogram of every row: {every_row * 1e3:.3f} ms, "
                 f"{every_row / (n * d) * 1e9:.3f} ns per (row, feature)")
    lines.append(f"  {'gathered':>8}  {'kernel':>8}  {'ns/(row, feature)':>17}  " + "  ".join(
        f"{name:>22}" for name in PEERS)
        + "   (ms CPU; kernel / peer)")
    for share in GATHERED_SHARES:
        rows = np.flatnonzero(codes[0] > np.quantile(codes[0], 1.0 - share)).astype(np.uintp)
        change = weights[rows] * np.where(is_pos[rows] == 1, -0.7, 1.3)
        pos = is_pos[rows]
        runs = {
            "kernel": lambda: changed_class_histogram(codes, rows, change, pos, out),
            "eight per pass": lambda: eight_per_pass(codes, rows, change, pos, out),
            "packed words": lambda: packed_word_update(words, rows, change, pos, out),
            "whole rows": lambda: whole_row_update(row_codes, rows, change, pos, out),
        }
        expected = np.empty_like(out)
        changed_class_histogram(codes, rows, change, pos, expected)
        for name, run in runs.items():  # the same sums, bit for bit (and compiled)
            run()
            if not np.array_equal(out, expected):
                raise AssertionError(f"{name} does not give the kernel's sums")
        medians = cpu_medians(runs, repeats)
        kernel = medians["kernel"]
        per_update = kernel / max(rows.size * d, 1) * 1e9
        lines.append(f"  {rows.size / n:8.1%}  {kernel * 1e3:8.3f}  {per_update:17.3f}  "
                     + "  ".join(f"{medians[name] * 1e3:8.3f} ms {kernel / medians[name]:5.2f}x"
                                 for name in PEERS))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000x20,100000x100")
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--busy", action="store_true",
                        help="keep one core spinning in another process while measuring")
    parser.add_argument("--gathered", action="store_true",
                        help="the carried histogram's update over gathered rows, by layout")
    args = parser.parse_args(argv)
    if args.gathered:
        print(f"the carried update, one thread, medians of {args.repeats} interleaved calls, "
              f"CPU time; load average before: {os.getloadavg()[0]:.2f}")
        for n, d in parse_sizes(args.sizes):
            for line in bench_gathered(n, d, args.repeats):
                print(line, flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return
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
