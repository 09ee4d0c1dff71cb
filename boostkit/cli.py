"""The ``boostkit`` command line: argparse and dispatch to the modules that do the work.

``boostkit plugins [--json]``, ``boostkit recipes [--json]``, ``boostkit components [--role R]``
    List the installed plugins (a broken one with its error; exit status 1 only in strict mode,
    ``BOOSTKIT_STRICT_PLUGINS=1``), the named recipes, and the components with their role and
    capabilities.
``boostkit compare [CSV] [--dataset NAME] [--algorithms a,b] [--recipe '...'] ...``
    The one-dataset study (:mod:`boostkit.study.compare`): every algorithm cross-validated on
    the study's folds, each fit a cell of ``results.sqlite`` in ``--output`` (a rerun resumes);
    the table, ``results.csv``, ``results.md``, ``roc.json``, ``cells.csv``, ``curves.csv``
    and the figures (:mod:`boostkit.study.compare_output`). Exit status 1 when a fit failed or
    no algorithm could run, 130 on Ctrl-C, 143 on SIGTERM (what finished is written).
``boostkit study --suite keel --algorithms a,b [--folds K] [--config study.toml] ...``
    Algorithms across datasets (:mod:`boostkit.study`): a :class:`boostkit.study.StudySpec`
    from the flags (over a TOML study file) run by :func:`boostkit.study.run_study` (``--n-jobs``
    processes or a Dask ``--scheduler``), then :func:`boostkit.study.write_outputs`. Exit status
    1 when a cell failed or none could run, 130 on Ctrl-C, 143 on SIGTERM (the workers are
    terminated, every finished cell stays in the database).
``boostkit export MODEL --format onnx -o FILE``
    A saved model as ONNX (:func:`boostkit.onnx.export_file`, the ``onnx`` extra); prints the
    path written.

Optional extras (tqdm, matplotlib, pandas) are imported only when used; without them a note
says what is skipped. User errors (an unknown algorithm or dataset, an unreadable CSV, a
missing target column, a model that cannot be exported) print one line on standard error and
exit with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Sequence

from .errors import BoostkitError, DataError, RecipeError
from .plugins import get_registry
from .study.compare import DEFAULT_DATASET

__all__ = ["UsageError", "build_parser", "main"]


class UsageError(Exception):
    """A mistake in the command line or its input; reported in one line, exit status 2."""


# -- commands -----------------------------------------------------------------------------------


def _cmd_plugins(args) -> int:
    """Exit status 0, or 1 in strict mode (``BOOSTKIT_STRICT_PLUGINS``) with a broken plugin."""
    from .listings import print_plugins

    return print_plugins(args.json)


def _cmd_recipes(args) -> int:
    from .listings import print_recipes

    return print_recipes(args.json)


def _cmd_components(args) -> int:
    from .listings import print_components

    try:
        return print_components(args.role, args.json)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _cmd_compare(args) -> int:
    """One dataset, as a study of it (:mod:`boostkit.study.compare`): the table on standard
    output, the files and figures (:mod:`boostkit.study.compare_output`) in ``--output``."""
    from .study import SpecError, StoreError, compare, compare_output

    try:
        recipes = compare.composed_recipes(args.recipe or ())
        algorithms = [*compare.algorithm_names(args.algorithms, recipes), *recipes]
        data = compare.load_data(args.csv, args.target, args.dataset, args.positive,
                                 args.max_rows, args.seed)
        print(data.describe())
        print(compare_output.wrap(
            f"{args.folds} stratified folds (seed {args.seed}), at most {args.rounds} rounds, "
            f"algorithms: {', '.join(a if isinstance(a, str) else a.name for a in algorithms)}"),
            flush=True)  # before the progress starts drawing on standard error
        database = Path(args.output) / compare.DATABASE
        # SIGTERM stops the fits as Ctrl-C does: what finished is written, the status is 143.
        with _terminate_as_interrupt() as signals:
            results = compare.cross_validate(
                data, algorithms, n_rounds=args.rounds, n_folds=args.folds, seed=args.seed,
                max_bins=args.max_bins,
                n_jobs=(os.cpu_count() or 1) if args.n_jobs == -1 else args.n_jobs,
                progress=not args.no_progress, database=database, wrap=compare_output.wrap)
        if not any(r.done for r in results) and any(
                r.status in ("interrupted", "not run") for r in results):
            # Nothing finished: the previous results stay as they are.
            raise Terminated() if signals.terminated else KeyboardInterrupt
        compare_output.print_table(results, args.folds)
        run = compare_output.describe_run(data, n_folds=args.folds, n_rounds=args.rounds,
                                          seed=args.seed, max_bins=args.max_bins)
        # No figures of nothing: the tables say why no algorithm ran.
        paths = compare_output.write_outputs(
            args.output, results, run, database=database,
            plots=not args.no_plots and any(r.done for r in results))
    except (SpecError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    print(f"\n{compare_output.wrap('wrote ' + ', '.join(str(p) for p in paths))}")
    status = compare_output.exit_status(results, database)
    return Terminated.status if signals.terminated and status == 130 else status


def _cmd_study(args) -> int:
    from .study import SpecError, StoreError, StudySpec, run_study, write_outputs
    from .study.compare import note
    from .study.compare_output import wrap
    from .study.spec import split_names

    datasets = [name for text in (*(args.suite or ()), *(args.datasets or ()))
                for name in split_names(text)]
    try:
        spec = StudySpec.from_flags(
            args.config, datasets=datasets or None, algorithms=args.algorithms,
            resampling=args.resampling, folds=args.folds, repeats=args.repeats,
            seeds=args.seeds, rounds=args.rounds, max_bins=args.max_bins,
            baseline=args.baseline, metric=args.metric, output=args.output, database=args.db,
            data_dir=args.data_dir, target=args.target)
        print(wrap(f"study: {', '.join(spec.datasets)} x {', '.join(spec.algorithms)}; "
                   f"{spec.resampling.name}, seeds {list(spec.seeds)}, at most "
                   f"{spec.n_rounds} rounds; results database {spec.database_path}"), flush=True)
        with _terminate_as_interrupt():
            run = run_study(spec, n_jobs=args.n_jobs, scheduler=args.scheduler,
                            progress=not args.no_progress)
        paths, notes = write_outputs(spec, run)
    except (SpecError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    print(wrap(f"{len(run.datasets)} datasets x {len(run.algorithms)} algorithms: "
               f"{run.computed} cells computed now, {run.skipped} finished before"))
    print(wrap("wrote " + ", ".join(str(path) for path in paths)))
    for message in notes:
        note(message)
    # As compare: "cannot run" (a recipe refusing these data, with its reason) is an outcome,
    # "failed" an error; and a study in which nothing could run has nothing to compare.
    if run.not_done > run.failed:
        print(wrap(f"{run.not_done - run.failed} cell(s) cannot run: their recipe refuses "
                   f"those data (the reasons are in {spec.database_path} and cells.csv)"))
    if run.failed:
        print(f"boostkit study: error: {run.failed} cell(s) failed (status 'failed', with the "
              f"error, in {spec.database_path} and cells.csv); the others are written",
              file=sys.stderr)
        return 1
    if not run.done:
        print("boostkit study: error: no cell could run (status 'cannot run', the reasons in "
              f"{spec.database_path} and cells.csv)", file=sys.stderr)
        return 1
    return 0


def _cmd_export(args) -> int:
    """Write ``args.model`` (a saved model file) as ``args.format`` to ``args.output`` with
    :func:`boostkit.onnx.export_file`; its refusals and file errors are one line, status 2."""
    try:
        from .onnx import export_file

        export_file(args.model, args.output, format=args.format)
    except ImportError as exc:
        raise UsageError(f"cannot export to {args.format}: {exc}") from None
    except (ValueError, BoostkitError, OSError) as exc:
        raise UsageError(f"cannot export {args.model} to {args.format}: "
                         f"{type(exc).__name__}: {exc}") from None
    print(args.output)
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is so that the same clean-up runs (a
    study's worker processes terminated, its database closed); :func:`main` returns 143
    (128 + SIGTERM) for it, 130 for Ctrl-C."""

    status = 128 + 15


class _Signals:
    """What :func:`_terminate_as_interrupt` saw: whether SIGTERM came (code that catches the
    interrupt to finish its work, as compare does, asks afterwards)."""

    terminated = False


@contextlib.contextmanager
def _terminate_as_interrupt():
    """While inside: SIGTERM raises :class:`Terminated` in the main thread (elsewhere, and
    where the platform has no SIGTERM handler to set, nothing changes); yields a
    :class:`_Signals` that says whether it came."""
    import signal
    import threading

    seen = _Signals()
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it outright
        seen.terminated = True
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except (ValueError, OSError):
        yield seen
        return
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)


def _int_at_least(minimum: int, maximum: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"expected an integer {bounds}, got {value}")
        return value

    return parse


def _n_jobs(text: str) -> int:
    value = _int_at_least(-1)(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a positive integer or -1 (all cores), got 0")
    return value


def _version() -> str:
    try:
        return metadata.version("boostkit")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boostkit",
        description="Plugin-based boosting: list plugins, compare algorithms on a CSV or a "
                    "bundled dataset.",
    )
    parser.add_argument("--version", action="version", version=f"boostkit {_version()}")
    # Optional: bare `boostkit` prints this help (main does) rather than a usage error.
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def listing(name, run, help, description):
        """A subcommand that lists something, as text or (``--json``) as JSON."""
        command = commands.add_parser(name, help=help, description=description)
        command.add_argument("--json", action="store_true", help="print JSON instead of text")
        command.set_defaults(run=run)
        return command

    listing("plugins", _cmd_plugins, "list installed plugins, their components and algorithms",
            "List installed plugins: name, distribution, version, hooks, components (with role) "
            "and algorithms (with paper).")
    listing("recipes", _cmd_recipes,
            "list the named recipes (algorithms) with their components and paper",
            "List the named recipes: each registered algorithm's components as a recipe string "
            "(usable with compare --recipe and Booster), its paper and plugin.")
    components = listing(
        "components", _cmd_components, "list components with their role and capabilities",
        "List registered components: role, and the capabilities each needs from the rest of a "
        "recipe and provides to it (with default parameters).")
    components.add_argument("--role", help="only components of this role (e.g. calibration)")

    compare = commands.add_parser(
        "compare", help="cross-validate algorithms and print a results table",
        description="The one-dataset study: cross-validate algorithms and composed recipes on "
                    "the study's seeded stratified folds, each fit a cell of results.sqlite in "
                    "--output (a rerun resumes); print a table of accuracy and ROC AUC (mean ± "
                    "std over folds), fit time, rounds and stop reason, with notes; write "
                    "results.csv, results.md, roc.json, cells.csv, curves.csv and the figures. "
                    "Three or more classes (without --positive) are compared as multiclass.",
    )
    compare.add_argument("csv", nargs="?", metavar="CSV",
                         help="a CSV file with a header row (.csv or .csv.gz); default: a bundled "
                              f"dataset ({DEFAULT_DATASET} unless --dataset is given)")
    compare.add_argument("--target", metavar="COLUMN",
                         help="the CSV's label column (default: the last column)")
    compare.add_argument("--dataset", metavar="NAME",
                         help=f"a bundled dataset (default {DEFAULT_DATASET}); "
                              "names: boostkit.datasets.available()")
    compare.add_argument("--algorithms", metavar="A,B,...",
                         help="comma-separated algorithm names (default: all registered, or "
                              "none when --recipe is given)")
    compare.add_argument("--recipe", action="append", metavar="RECIPE",
                         help="a recipe composed of components, e.g. 'proposal=stump "
                              "calibration=pav+input-dependent(beta=0.5) reweighting=exponential "
                              "name=my-mix', or 'weightboost calibration=pav+input-dependent' to "
                              "start from an algorithm; repeatable")
    compare.add_argument("--rounds", type=_int_at_least(1), default=100,
                         help="round budget T per fit (default 100)")
    compare.add_argument("--max-rows", type=_int_at_least(2), metavar="N",
                         help="compare on a random sample of N rows (seeded by --seed) when the "
                              "data have more (default: all rows)")
    compare.add_argument("--folds", type=_int_at_least(2), default=5,
                         help="stratified cross-validation folds (default 5)")
    compare.add_argument("--seed", type=int, default=0,
                         help="seed of the folds and fits (default 0)")
    compare.add_argument("--max-bins", type=_int_at_least(2, 255), default=255,
                         help="quantile bins per feature, 2..255 (default 255)")
    compare.add_argument("--n-jobs", type=_n_jobs, default=1,
                         help="worker processes, one fit each, -1 for all cores (default 1)")
    compare.add_argument("--output", metavar="DIR", default="compare-output",
                         help="where to write the results database, results.csv, results.md, "
                              "roc.json, the exports and the figures (default ./compare-output)")
    compare.add_argument("--positive", metavar="LABEL",
                         help="the positive label, compared against the rest (default for "
                              "two classes: the dataset's suggested one, else the larger label); "
                              "without it, three or more classes are compared as multiclass")
    compare.add_argument("--no-progress", action="store_true", help="do not show progress")
    compare.add_argument("--no-plots", action="store_true",
                         help="write the tables only, no figures (drawing takes a second or two)")
    compare.set_defaults(run=_cmd_compare)

    study = commands.add_parser(
        "study", help="compare algorithms across many datasets: ranks, tests, a report",
        description="Fit every algorithm on every dataset over the same seeded stratified "
                    "folds, write each fit (a cell) to an SQLite results database as it "
                    "finishes (a rerun skips finished cells, so a stopped study resumes), then "
                    "export cells.csv and curves.csv and write the statistics (average ranks, "
                    "Friedman, Nemenyi, Wilcoxon-Holm against --baseline) and the report into "
                    "--output. Flags override the values of a --config study file (TOML).",
    )
    study.add_argument("--config", metavar="STUDY.toml",
                       help="a study file (TOML); its keys are the long flags' names")
    study.add_argument("--suite", action="append", metavar="NAME",
                       help="a suite of datasets (e.g. bundled, keel, keel-binary); repeatable")
    study.add_argument("--datasets", action="append", metavar="A,B,...",
                       help="datasets, CSV files or directories of CSV files; repeatable")
    study.add_argument("--data-dir", metavar="DIR",
                       help="where data not bundled are read from (default: BOOSTKIT_DATA)")
    study.add_argument("--target", metavar="COLUMN",
                       help="the label column of CSV files (default: the last column)")
    study.add_argument("--algorithms", metavar="A,B,...",
                       help="comma-separated algorithm names or recipe strings")
    study.add_argument("--resampling", choices=("k-fold", "repeated k-fold", "5x2cv"),
                       help="k-fold (default), repeated k-fold (with --repeats) or 5x2cv")
    study.add_argument("--folds", type=_int_at_least(2), help="folds per repeat (default 10)")
    study.add_argument("--repeats", type=_int_at_least(1),
                       help="repeats of the folds, each split anew (default 1)")
    study.add_argument("--seeds", metavar="S,T,...",
                       help="seeds, each repeating the whole resampling (default 0)")
    study.add_argument("--rounds", type=_int_at_least(1), help="round budget per fit (default 100)")
    study.add_argument("--max-bins", type=_int_at_least(2, 255),
                       help="quantile bins per feature, 2..255 (default 255)")
    study.add_argument("--baseline", metavar="NAME",
                       help="the algorithm the others are tested against")
    study.add_argument("--metric", choices=("accuracy", "balanced_accuracy", "roc_auc",
                                            "log_loss"),
                       help="the score the statistics rank (default accuracy)")
    study.add_argument("--n-jobs", type=_int_at_least(1), default=1,
                       help="local worker processes, one cell each (default 1)")
    study.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the cells on the Dask cluster of this scheduler")
    study.add_argument("--db", metavar="PATH",
                       help="the results database (default OUTPUT/study.sqlite)")
    study.add_argument("--output", metavar="DIR",
                       help="where the exports and the report go (default ./study)")
    study.add_argument("--no-progress", action="store_true", help="do not show progress")
    study.set_defaults(run=_cmd_study)

    export = commands.add_parser(
        "export", help="write a saved model in another format (ONNX) for serving",
        description="Convert a model saved by boostkit (Model.save) to another format, today "
                    "ONNX (the onnx extra), and print the path written.")
    export.add_argument("model", metavar="MODEL", help="a model file written by Model.save")
    export.add_argument("--format", choices=("onnx",), default="onnx",
                        help="the format to write (default onnx)")
    export.add_argument("-o", "--output", metavar="FILE", required=True,
                        help="the file to write")
    export.set_defaults(run=_cmd_export)
    return parser


_NEEDS_PLUGINS = ("recipes", "components", "compare", "study")


def _check_plugin_selection(args) -> None:
    """Refuse a command that needs plugins when the selection cannot give it any: an unknown
    name in ``BOOSTKIT_PLUGINS``, or (compare) no algorithm registered and no --recipe."""
    from .plugins import allow_list_problem, no_algorithms_message

    if args.command not in _NEEDS_PLUGINS:
        return
    problem = allow_list_problem()
    if problem is not None:
        raise UsageError(problem)
    if (args.command == "compare" and not getattr(args, "algorithms", None)
            and not getattr(args, "recipe", None) and not get_registry().algorithms()):
        raise UsageError(f"nothing to compare: {no_algorithms_message()}")


def _show_plugin_warnings(command: str):
    """Print a :class:`PluginWarning` as one ``boostkit COMMAND: warning: ...`` line (none for
    ``plugins``, which lists broken plugins itself, nor for an unknown name in BOOSTKIT_PLUGINS,
    which :func:`_check_plugin_selection` reports); other warnings as Python prints them."""
    import warnings

    from .errors import PluginWarning
    from .plugins import AllowListWarning

    original = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, PluginWarning):
            return original(message, category, filename, lineno, file, line)
        if command != "plugins" and not issubclass(category, AllowListWarning):
            print(f"boostkit {command}: warning: {message}", file=sys.stderr)

    return original, show


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    import warnings

    from .errors import PluginWarning

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error (status 2) or --help (0)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:  # bare `boostkit`
        parser.print_help()
        return 0
    prefix = f"boostkit {args.command}: error:"
    original, show = _show_plugin_warnings(args.command)
    warnings.showwarning = show
    try:
        _check_plugin_selection(args)
        return args.run(args)
    except UsageError as exc:
        print(f"{prefix} {exc}", file=sys.stderr)
        return 2
    except (DataError, RecipeError) as exc:  # the data or the named recipe cannot be used
        print(f"{prefix} {exc}", file=sys.stderr)
        return 2
    except BoostkitError as exc:  # a plugin failed to load (strict mode) or raised inside a hook
        print(f"{prefix} {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except PluginWarning as exc:  # -W error::boostkit.errors.PluginWarning
        print(f"{prefix} PluginWarning: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:  # Ctrl-C: 130; SIGTERM (study): Terminated, 143
        what = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"boostkit {args.command}: {what}", file=sys.stderr)
        return getattr(exc, "status", 130)
    except BrokenPipeError:  # stdout closed early (`boostkit plugins | head`): not an error
        # Point stdout at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if warnings.showwarning is show:
            warnings.showwarning = original


if __name__ == "__main__":
    sys.exit(main())
