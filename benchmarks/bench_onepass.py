"""One pass of one-pass AdaBoost against scikit-learn's MultinomialNB.fit, on sparse term counts.

Barutcuoglu et al. 2007 (section 1): one-pass AdaBoost "uses essentially the same computational
resources as Naive Bayes". Both are timed here on the same CSR matrix (Zipf-distributed term
counts, about 100 tokens per text, a few hundred terms leaning to the positive class), in this
process, interleaved, after warming numba's JIT, with numba and BLAS pinned to one thread;
medians over ``--repeats``, and ratios to naive Bayes, since the machine is shared: the median
over the runs and the range of the per-repeat ratios (each run against the naive Bayes run
beside it).

* ``opab (fused)``: :func:`boostkit_onepass.one_pass`, the whole pass in one O(nnz) kernel,
  CSR -> CSC conversion and input validation included (the target: within 3x of naive Bayes);
* ``picky 0.01 (fused)``: the same with PickyAdaBoost(0.01);
* ``opab (engine)``: ``boostkit.Booster("opab", n_rounds=d)``, one engine round per term: every
  round costs O(m) (dense margins and weights), so the pass is O(m d) (timed once, ``--engine``);
* ``naive-bayes (boostkit)``: the plugin's one-term naive Bayes through the engine.

Then every component (``opab``, ``picky-adaboost``, ``popbm``, ``naive-bayes`` through the engine,
the fused pass, predictions) runs on the full matrix and the peak resident memory is printed
next to the size the dense matrix would have.

Run:  python benchmarks/bench_onepass.py                      (10 000 x 20 000, ~15 seconds)
      python benchmarks/bench_onepass.py --size 2000x5000 --repeats 3 --no-engine   (smoke)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
import warnings

for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_threads] = "1"  # before numpy and numba load: one thread for every candidate

import numpy as np  # noqa: E402
from scipy import sparse  # noqa: E402

import boostkit  # noqa: E402
from boostkit_onepass import PopbmAbortWarning, collapse, one_pass  # noqa: E402


def text_like(n_texts: int, n_terms: int, tokens: int = 100, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n_texts) < 0.3, 1, -1)
    p = 1.0 / np.arange(1, n_terms + 1)
    p /= p.sum()
    words = rng.choice(n_terms, size=(n_texts, tokens), p=p)
    topical = rng.integers(n_terms // 4, n_terms // 4 + 300, size=(n_texts, 5))
    words[y > 0, :5] = topical[y > 0]
    rows = np.repeat(np.arange(n_texts), tokens)
    X = sparse.csr_matrix((np.ones(words.size), (rows, words.ravel())), shape=(n_texts, n_terms))
    X.sum_duplicates()
    return X, y


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="10000x20000", help="texts x terms")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-engine", dest="engine", action="store_false",
                        help="skip the (slow) engine pass and the full-size memory run")
    args = parser.parse_args(argv)
    n_texts, n_terms = (int(float(v)) for v in args.size.lower().split("x"))
    from sklearn.naive_bayes import MultinomialNB

    X, y = text_like(n_texts, n_terms)
    X_test, y_test = text_like(n_texts // 4, n_terms, seed=1)
    print(f"{n_texts} texts x {n_terms} terms, {X.nnz} non-zeros "
          f"(dense float64 would be {n_texts * n_terms * 8 / 1e9:.1f} GB)")
    one_pass(X[:100], y[:100])  # warm numba
    one_pass(X[:100], y[:100], gamma_bar=0.01)
    MultinomialNB().fit(X[:100], y[:100])

    candidates = {
        "MultinomialNB.fit (scikit-learn)": lambda: MultinomialNB().fit(X, y),
        "opab (fused)": lambda: one_pass(X, y, random_state=0),
        "picky 0.01 (fused)": lambda: one_pass(X, y, gamma_bar=0.01, random_state=0),
        "naive-bayes (boostkit)": lambda: boostkit.Booster("naive-bayes").fit(X, y),
    }
    times = {name: [] for name in candidates}
    for _ in range(args.repeats):  # interleaved, so a noisy neighbour hits every candidate
        for name, fn in candidates.items():
            times[name].append(seconds(fn))
    nb_times = times["MultinomialNB.fit (scikit-learn)"]
    reference = statistics.median(nb_times)
    print(f"\n{'fit':<34} {'median s':>10} {'x NB':>8} {'per repeat x NB':>16}")
    for name, t in times.items():
        paired = [a / b for a, b in zip(t, nb_times)]
        print(f"{name:<34} {statistics.median(t):>10.4f} {statistics.median(t) / reference:>8.2f} "
              f"{min(paired):>7.2f} - {max(paired):<6.2f}")
    if args.engine:
        engine = seconds(
            lambda: boostkit.Booster("opab", n_rounds=n_terms, random_state=0).fit(X, y))
        print(f"{'opab (engine, 1 run)':<34} {engine:>10.4f} {engine / reference:>8.2f}")
    ratio = statistics.median(times["opab (fused)"]) / reference
    print(f"\none pass of opab: {ratio:.2f}x MultinomialNB.fit (target: within 3x)")

    fused = one_pass(X, y, random_state=0)
    nb = MultinomialNB().fit(X, y)
    print(f"\ntest accuracy: opab {np.mean(fused.predict(X_test) == y_test):.4f}, "
          f"MultinomialNB {np.mean(nb.predict(X_test) == y_test):.4f}")
    if args.engine:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PopbmAbortWarning)
            for algorithm, rounds in (("opab", n_terms), ("picky-adaboost", n_terms),
                                      ("popbm", 101), ("naive-bayes", 1)):
                model = boostkit.Booster(algorithm, n_rounds=rounds, random_state=0).fit(X, y)
                collapse(model).predict(X_test)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"every component on the full matrix: peak resident memory {peak_mb:.0f} MB "
              f"(the dense matrix alone: {n_texts * n_terms * 8 / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
