"""Reproduce the results of Barutcuoglu et al. 2007.

    python -m boostkit_onepass.reproduce construction   # sections 3.1-3.2, n = 3..15, exact
    python -m boostkit_onepass.reproduce table2         # Table 2, n = 1000 and 10000 features
    python -m boostkit_onepass.reproduce reuters        # Table 1's comparison on the Reuters data

``table2`` takes ``--features``, ``--train``, ``--test``, ``--orders`` and ``--rows`` to scale it
down (the full run, 100 orders as in the paper, takes about an hour; the default 10 orders a few
minutes), ``--engine`` to fit through ``boostkit.Booster`` instead of the fused pass (the
same models, slower), and ``--unnormalised`` to run the pass whose weights are never
renormalised (not the paper's algorithm; the reading whose errors are the ones Table 2 prints). ``reuters`` needs the data directory (``boostkit.datasets.data_dir()``).
"""

from __future__ import annotations

import argparse
import sys
import time

from .construction import construction_table, format_construction
from .synthetic import GAMMA_BARS, TABLE2, format_table2, run_table2_row


def _ints(text: str) -> list[int]:
    return [int(float(v)) for v in text.split(",") if v]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m boostkit_onepass.reproduce",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    construction = sub.add_parser("construction", help="sections 3.1-3.2, evaluated exactly")
    construction.add_argument("--gamma", type=float, default=0.38)
    construction.add_argument("--n-min", type=int, default=3)
    construction.add_argument("--n-max", type=int, default=15)
    table2 = sub.add_parser("table2", help="Table 2 (synthetic data)")
    table2.add_argument("--features", type=_ints, default=[1000, 10_000],
                        help="numbers of features n (default 1000,10000)")
    table2.add_argument("--train", type=int, default=10_000)
    table2.add_argument("--test", type=int, default=10_000)
    table2.add_argument("--orders", type=int, default=10, help="random feature orders (paper: 100)")
    table2.add_argument("--rows", type=_ints, default=None,
                        help="indices (0-8) of Table 2's rows to run (default: all)")
    table2.add_argument("--seed", type=int, default=0)
    table2.add_argument("--unnormalised", action="store_true",
                        help="never renormalise the weights (not the paper's algorithm: the "
                             "reading that gives its published OPAB/Picky errors)")
    table2.add_argument("--engine", action="store_true",
                        help="fit through boostkit.Booster instead of the fused pass")
    reuters = sub.add_parser("reuters", help="Table 1's comparison on the Reuters data at hand")
    reuters.add_argument("--orders", type=int, default=10)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    if args.what == "construction":
        rows = construction_table(range(args.n_min, args.n_max + 1), args.gamma)
        print(f"Sections 3.1-3.2, gamma = {args.gamma}, gamma_bar midway in "
              "(gamma, 1/2 - (1/2 - gamma)^n]: errors under D after one pass")
        print(format_construction(rows))
    elif args.what == "table2":
        chosen = range(len(TABLE2)) if args.rows is None else args.rows
        print(f"Table 2: {args.train} training / {args.test} test examples, mean over "
              f"{args.orders} random feature orders ({'engine' if args.engine else 'fused pass'}"
              f"{', weights never renormalised' if args.unnormalised else ''})")
        rows = []
        for n_features in args.features:
            for index in chosen:
                (k, p, gamma), _ = TABLE2[index]
                rows.append(run_table2_row(
                    k, p, gamma, n_features=n_features, n_train=args.train, n_test=args.test,
                    n_orders=args.orders, seed=args.seed, engine=args.engine,
                    unnormalised=args.unnormalised))
                print(f"  n={n_features} k={k} p={p} gamma={gamma}: done "
                      f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
        print(format_table2(rows, GAMMA_BARS))
    else:
        from boostkit.datasets import data_dir

        from .reuters import format_reuters, reuters_tasks, run_reuters_task

        if data_dir() is None:
            print("reuters: no data directory (set BOOSTKIT_DATA)", file=sys.stderr)
            return 1
        rows = [run_reuters_task(*task, n_orders=args.orders) for task in reuters_tasks()]
        print(f"Reuters (test error, mean over {args.orders} orders; paper: full ModApte)")
        print(format_reuters(rows))
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
