"""The cold start: the first fit in a fresh environment, with numba's on-disk cache empty.

Every run is a new Python process (``subprocess``) with its own empty ``NUMBA_CACHE_DIR`` and
one thread (``NUMBA_NUM_THREADS=1``, ``OMP_NUM_THREADS=1``). Two scenarios, each run cold (the
empty cache) and then warm (the same cache again, now filled):

* ``fit``: ``import boostkit``, then the first ``Booster("adaboost", n_rounds=10).fit`` on the
  bundled ``breast_cancer_wisconsin`` and its first ``predict``, each timed on its own;
* ``compare``: the first 5-fold ``boostkit compare --algorithms adaboost --no-plots`` on the
  bundled ``spambase`` (100 rounds per fit), timed as a whole from the process's start, which
  is what a new user waits for.

Each phase gives its wall time and the process's CPU time (compiling is one thread's work, so
the CPU time moves less than the wall time on a shared machine), and the number of kernel
specialisations numba compiled in it (boostkit's and its plugins' functions, one per
signature; nested ones counted). The medians over ``--repeats`` are printed as a markdown
table, with the load average before and after, the CPU and numba's version.

Run:  python benchmarks/bench_cold_start.py               (3 repeats, about 5 minutes)
      python benchmarks/bench_cold_start.py --repeats 5 --scenarios fit
      python benchmarks/bench_cold_start.py --repeats 1 --breakdown   (what compiles, how long)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

#: Runs in the child process: records the phases named in argv[1] into the JSON file argv[2].
CHILD = r"""
import json, sys, time
started_wall, started_cpu = time.perf_counter(), time.process_time()
from numba.core import event

compiled = [0]
compiling = []  # (name, started) of the compiles under way, outermost first
breakdown = []  # (depth, name, CPU seconds) of boostkit's compiles, in the order they began

class CountCompiles(event.Listener):
    def on_start(self, ev):
        function = ev.data["dispatcher"].py_func
        module = getattr(function, "__module__", "") or ""
        compiled[0] += module.startswith("boostkit")
        name = f"{module}.{function.__qualname__}" if module.startswith("boostkit") else None
        compiling.append((len(breakdown) if name else None, time.process_time()))
        if name:
            breakdown.append([len([c for c in compiling if c[0] is not None]) - 1, name, 0.0])

    def on_end(self, ev):
        index, started = compiling.pop()
        if index is not None:
            breakdown[index][2] = time.process_time() - started

event.register("numba:compile", CountCompiles())
phases = {}
mark = [started_wall, started_cpu, 0]

def phase(name):
    wall, cpu = time.perf_counter(), time.process_time()
    phases[name] = {"wall": wall - mark[0], "cpu": cpu - mark[1], "compiled": compiled[0] - mark[2]}
    mark[:] = [wall, cpu, compiled[0]]

scenario, out_path = sys.argv[1], sys.argv[2]
if scenario == "fit":
    import boostkit
    from boostkit.datasets import load
    phase("import")
    data = load("breast_cancer_wisconsin", dropna=True)
    mark[:] = [time.perf_counter(), time.process_time(), compiled[0]]
    model = boostkit.Booster("adaboost", n_rounds=10).fit(data.X, data.y)
    phase("first fit")
    model.predict(data.X)
    phase("first predict")
else:
    from contextlib import redirect_stdout
    import io
    from boostkit.cli import main
    with redirect_stdout(io.StringIO()):
        main(["compare", "--algorithms", "adaboost", "--folds", "5", "--no-plots",
              "--no-progress", "--output", sys.argv[3]])
    phase("5-fold compare")
phases["breakdown"] = breakdown
with open(out_path, "w") as handle:
    json.dump(phases, handle)
"""


def run_child(scenario: str, cache_dir: str, work_dir: Path, tag: str) -> dict:
    """Run one scenario in a new process with ``cache_dir`` as numba's cache; its phases."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out_path = work_dir / f"{scenario}-{tag}.json"
    args = [sys.executable, "-c", CHILD, scenario, str(out_path), str(work_dir / f"out-{tag}")]
    completed = subprocess.run(args, env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{scenario} ({tag}) failed:\n{completed.stderr}")
    phases = json.loads(out_path.read_text())
    return phases.pop("breakdown"), phases


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scenarios", default="fit,compare",
                        help="comma-separated: fit, compare (default both)")
    parser.add_argument("--breakdown", action="store_true",
                        help="list what the last cold run of each scenario compiled, and for "
                             "how long")
    args = parser.parse_args(argv)
    scenarios = [name.strip() for name in args.scenarios.split(",") if name.strip()]
    for name in scenarios:
        if name not in ("fit", "compare"):
            parser.error(f"--scenarios: expected fit or compare, got {name!r}")
    import numba

    print(f"machine: {os.cpu_count()} cores, {cpu_model()}; Python {platform.python_version()}, "
          f"numba {numba.__version__}; one thread")
    print(f"load average (1, 5, 15 min) before: {load_average()}")
    figures: dict[tuple[str, str, str], list[float]] = {}
    breakdowns: dict[str, list] = {}  # the last cold run's compiles, per scenario
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as work:
        work_dir = Path(work)
        for repeat in range(args.repeats):
            for scenario in scenarios:
                cache_dir = tempfile.mkdtemp(prefix="numba-cache-", dir=work)
                for state in ("cold", "warm"):
                    compiles, phases = run_child(scenario, cache_dir, work_dir,
                                                 f"{repeat}-{state}")
                    if state == "cold":
                        breakdowns[scenario] = compiles
                    for phase, values in phases.items():
                        for key, value in values.items():
                            figures.setdefault((phase, state, key), []).append(value)
                    print(f"  repeat {repeat + 1} {scenario} {state}: " + ", ".join(
                        f"{phase} {values['wall']:.2f} s" for phase, values in phases.items()),
                        flush=True)
                shutil.rmtree(cache_dir)
    print(f"load average (1, 5, 15 min) after: {load_average()}")
    print()
    print(f"medians of {args.repeats} runs, seconds:")
    print()
    print("| phase | cold wall | cold CPU | specialisations compiled | warm wall | warm CPU |")
    print("| --- | --- | --- | --- | --- | --- |")
    phases_seen = list(dict.fromkeys(phase for phase, _, _ in figures))
    for phase in phases_seen:
        def median(state, key):
            return statistics.median(figures[(phase, state, key)])

        print(f"| {phase} | {median('cold', 'wall'):.2f} | {median('cold', 'cpu'):.2f} | "
              f"{median('cold', 'compiled'):.0f} | {median('warm', 'wall'):.2f} | "
              f"{median('warm', 'cpu'):.2f} |")
    if args.breakdown:
        for scenario, compiles in breakdowns.items():
            print()
            print(f"{scenario}, last cold run: CPU seconds of each specialisation's compile "
                  "(its callees', indented below it, included):")
            for depth, name, seconds in compiles:
                print(f"  {seconds:6.2f}  {'  ' * depth}{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
