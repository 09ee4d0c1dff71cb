"""Running a study: every cell a pure function of its key and its data (:func:`run_cell`),
executed serially, in local worker processes or on a Dask cluster, and written to the results
database by the driver alone as each cell finishes (:func:`run_study`).

A cell fits ``Booster(recipe, n_rounds, max_bins, multiclass="auto", random_state)`` on its
training fold (the fallback :class:`boostkit.study.compare.InputForm` for a proposal that
cannot take categories or missing values; a ranker's accuracy at the threshold chosen on the
training fold, :func:`boostkit.study.compare.training_threshold`) and scores the test fold;
``boostkit compare`` is the study of one dataset. Its randomness comes from its key (:meth:`boostkit.study.spec.Cell.random_state`),
so the three executors give the same values, timings excepted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import warnings
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator, Sequence

import attrs
import numpy as np

from ..engine import Booster
from ..errors import BoostkitError, DataError, RecipeError
from ..metrics import accuracy, macro_roc_auc, roc_auc
from ..model import margin_labels, margin_probabilities
from ..plugins import get_registry, plugin_info
from ..progress import FitProgress
from .measure import learning_curve, model_bytes
from .spec import Cell, Resampling, StudySpec
from .store import KEY_COLUMNS, ResultStore, StoreError

__all__ = ["StudyRun", "prediction_hash", "run_cell", "run_study", "write_outputs"]

#: Significant bits of the scores that :func:`prediction_hash` keeps (about 12 decimal
#: digits): equal models whose margins differ in the last bits (sums in another order) hash
#: alike.
HASH_BITS = 40


@lru_cache(maxsize=1)
def _versions() -> tuple[str, str]:
    try:
        version = metadata.version("boostkit")
    except metadata.PackageNotFoundError:
        version = "unknown"
    plugins = {entry["name"]: entry["version"] for entry in plugin_info()}
    return version, json.dumps(plugins, sort_keys=True)


def prediction_hash(classes: np.ndarray, predicted: np.ndarray, scores: np.ndarray) -> str:
    """sha256 of the classes, the predicted class positions and the scores rounded to
    :data:`HASH_BITS` significant bits: two algorithms whose models coincide hash alike in
    every cell."""
    mantissa, exponent = np.frexp(np.asarray(scores, np.float64))
    rounded = np.ldexp(np.round(mantissa * 2.0 ** HASH_BITS), exponent - HASH_BITS) + 0.0
    digest = hashlib.sha256("\x1f".join(map(str, np.asarray(classes).tolist())).encode())
    digest.update(np.ascontiguousarray(predicted, dtype="<i8").tobytes())
    digest.update(np.ascontiguousarray(rounded, dtype="<f8").tobytes())
    return digest.hexdigest()


def _balanced_accuracy(y_index: np.ndarray, predicted: np.ndarray, n_classes: int) -> float:
    """Mean recall over the classes present in ``y_index`` (class positions; Brodersen et al.
    2010)."""
    support = np.bincount(y_index, minlength=n_classes)
    right = np.bincount(y_index[predicted == y_index], minlength=n_classes)
    present = support > 0
    return float(np.mean(right[present] / support[present]))


def _log_loss(y_index: np.ndarray, proba: np.ndarray) -> float:
    """Mean -log p(true class), probabilities clipped to [1e-15, 1] (scikit-learn's eps)."""
    p = proba[np.arange(y_index.shape[0]), y_index]
    return float(-np.mean(np.log(np.clip(p, 1e-15, 1.0))))


#: The folds of the last (data, resampling, repeat, seed) a process split: the cells of one
#: repeat follow each other, so each process splits it once rather than once per cell.
_split: dict[tuple, list] = {}


def _folds(data, resampling: Resampling, repeat: int, seed: int) -> list:
    key = (data.name, data.data_hash, resampling, repeat, seed)
    if key not in _split:
        _split.clear()
        _split[key] = resampling.split(data.y, data.name, data.data_hash, repeat, seed)
    return _split[key]


#: Each process's resolved recipes, input forms and ranker flags, by (recipe string, data):
#: the cells of one dataset and algorithm share them. Emptied when the registry changes.
_recipes: dict[tuple, tuple] = {}
_recipes_of: list = []


def _prepared(recipe_text: str, data):
    """``(recipe, input form, ranks)`` of a recipe string on ``data`` (as ``compare`` decides
    them: :class:`boostkit.study.compare.InputForm`, :func:`boostkit.study.compare.is_ranker`)."""
    from .compare import InputForm, is_ranker

    registry = get_registry()
    if not _recipes_of or _recipes_of[0] is not registry:
        _recipes.clear()
        _recipes_of[:] = [registry]
    key = (recipe_text, data.name, data.data_hash)
    if key not in _recipes:
        recipe = registry.resolve(recipe_text)
        _recipes[key] = (recipe, InputForm.of(recipe, data), is_ranker(recipe))
    return _recipes[key]


def run_cell(data, cell: Cell, resampling: Resampling, n_rounds: int, max_bins: int,
             keep_scores: bool = False) -> tuple[dict, list[tuple[int, float, float]], dict]:
    """One cell: its row of the ``cells`` table, its learning curve, and with ``keep_scores``
    what compare's table and figures need of it (:func:`boostkit.study.compare.kept_values`;
    else an empty dict).

    ``data``: a :class:`boostkit.study.sources.StudyData`. Any error of the fit or its scoring
    is the cell's own: a DataError or RecipeError (the recipe refuses these data) records the
    cell as ``"cannot run"``, any other as ``"failed"``, with the error; the study goes on.

    Every done cell records its learning curve and its model's size
    (:mod:`boostkit.study.measure`).
    """
    from .compare import FinalWeights, kept_values, rounds_run, training_threshold

    version, plugins = _versions()
    row: dict[str, Any] = {
        **dict(zip(("dataset", "algorithm", "resample", "repeat", "fold", "seed"), cell.key)),
        "recipe": cell.recipe, "n_classes": len(data.classes), "data_hash": data.data_hash,
        "boostkit_version": version, "plugin_versions": plugins,
    }
    curves: list[tuple[int, float, float]] = []
    kept: dict = {}
    final_weights = FinalWeights() if keep_scores else None
    catching = warnings.catch_warnings(record=True) if keep_scores else contextlib.nullcontext()
    try:
        train, test = _folds(data, resampling, cell.repeat, cell.seed)[cell.fold]
        row.update(n_train=int(train.shape[0]), n_test=int(test.shape[0]))
        recipe, form, ranks = _prepared(cell.recipe, data)
        X, features = form.apply(data.X, data.features, train)
        booster = Booster(recipe, n_rounds=n_rounds, max_bins=max_bins, multiclass="auto",
                          random_state=cell.random_state(data.data_hash), n_jobs=1,
                          observers=[final_weights] if keep_scores else ())
        with catching as caught:
            if keep_scores:
                warnings.simplefilter("always")
            started = time.perf_counter()
            model = booster.fit(X[train], data.y[train], features=features)
        fit_seconds = time.perf_counter() - started
        classes = np.asarray(model.classes)
        positions = np.arange(classes.shape[0])
        started = time.perf_counter()
        scores = model.decision_function(X[test])
        predicted = margin_labels(scores, positions)  # predict's rule, as class positions
        predict_seconds = time.perf_counter() - started
        y_index = np.searchsorted(classes, data.y)
        y_test = y_index[test]
        log_loss, threshold = None, 0.0
        if classes.shape[0] == 2 and ranks:
            # F has no meaningful 0 (nor probabilities): threshold on the training fold
            signed = np.where(y_index[train] == 1, 1.0, -1.0)
            threshold = training_threshold(signed, model.decision_function(X[train]))
            predicted = (scores > threshold).astype(np.intp)
        else:  # predict_proba's probabilities, from these scores
            log_loss = _log_loss(y_test, margin_probabilities(scores))
        if classes.shape[0] == 2:
            auc = roc_auc(np.where(y_test == 1, 1.0, -1.0), scores)
        else:
            auc = macro_roc_auc(y_test, scores, positions)
        curves = learning_curve(model, X[test], y_test)
        row.update(
            status="done", accuracy=accuracy(y_test, predicted),
            balanced_accuracy=_balanced_accuracy(y_test, predicted, classes.shape[0]),
            roc_auc=None if np.isnan(auc) else float(auc), log_loss=log_loss,
            fit_seconds=fit_seconds, predict_seconds=predict_seconds,
            rounds=rounds_run(model), stop_reason=model.stop_reason,
            model_bytes=model_bytes(model),
            prediction_hash=prediction_hash(classes, predicted, scores),
        )
        if keep_scores:
            kept = kept_values(model, X, data.y, train, test, scores, predicted, threshold,
                               final_weights.weights, caught)
    except (DataError, RecipeError) as exc:
        row.update(status="cannot run", error=f"{type(exc).__name__}: {exc}")
        curves = []
    except Exception as exc:  # noqa: BLE001 - one cell's error is recorded, the study goes on
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        curves = []
    row["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    return row, curves, kept


#: A worker's last loaded dataset: cells of one dataset run together, so each worker process
#: reads it once.
_loaded: dict[str, Any] = {}


def _run_task(source, data_hash: str, cell: Cell, resampling: Resampling, n_rounds: int,
              max_bins: int, keep_scores: bool = False):
    """A cell in a worker process: load the data from its source (once per worker), check
    they are the driver's, run the cell."""
    data = _loaded.get(source.name)
    if data is None:
        _loaded.clear()
        data = _loaded[source.name] = source.load()
    if data.data_hash != data_hash:
        raise StoreError(f"a worker read other data for {source.name!r} than the driver "
                         f"(data hash {data.data_hash[:12]} against {data_hash[:12]}): give "
                         "every worker the same data files")
    return run_cell(data, cell, resampling, n_rounds, max_bins, keep_scores)


@attrs.frozen
class StudyRun:
    """What :func:`run_study` did: the database, the cells it computed now, those it found
    finished already, and how many of the study's cells did not finish (failed or cannot run),
    how many of those failed (an error, not a recipe refusing the data) and how many are done."""

    database: Path
    computed: int
    skipped: int
    not_done: int
    datasets: tuple[str, ...]
    algorithms: tuple[str, ...]
    failed: int = 0
    done: int = 0


def _serial(tasks, loaded) -> Iterator:
    for source, data_hash, cell, *settings in tasks:
        yield run_cell(loaded[source.name], cell, *settings)


#: How often (seconds) a worker process checks that the driver is still alive.
PARENT_POLL_SECONDS = 0.5


def _watch_parent(parent: int) -> None:
    """A worker's initializer: ignore Ctrl-C (the driver alone decides to stop, and terminates
    its workers) and exit as soon as the driver is gone.

    The worker started with SIGINT blocked (:func:`_sigint_blocked`), so a Ctrl-C that came
    while it was still starting waits, pending, until this discards it.

    A worker whose driver is killed outright (``kill -9``, an OOM kill) would otherwise wait for
    work forever: it holds both ends of the pool's pipes, so it never reads end-of-file. A daemon
    thread polls ``os.getppid()`` instead: when the driver dies the worker is reparented (to
    init or a subreaper), its parent pid changes, and it exits within
    :data:`PARENT_POLL_SECONDS` -- or at the end of the cell it is computing if that holds the
    GIL. Polling is chosen over Linux's ``prctl(PR_SET_PDEATHSIG)``: that signal follows the
    death of the parent *thread* that started the worker (ProcessPoolExecutor may start
    replacements from another thread), and is Linux-only; ``getppid`` works on every POSIX
    system and cannot be fooled by the reuse of the driver's pid. (On Windows ``getppid`` does
    not change: there the watch is a no-op.)"""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    if os.name == "posix":
        threading.Thread(target=watch, name="boostkit-watch-driver", daemon=True).start()


#: The longest (seconds) the driver waits for its workers without waking: a signal its main
#: thread handled just before it blocked, or another of its threads handled, is acted on within
#: this time (as distributed's as_completed polls, every 0.1 s).
SIGNAL_POLL_SECONDS = 0.2


@contextlib.contextmanager
def _sigint_blocked():
    """While inside, SIGINT is blocked in the calling thread (where the platform has
    ``pthread_sigmask``): a Ctrl-C that comes meanwhile stays pending and interrupts as soon
    as the block ends.

    Processes and threads started inside inherit the block: a worker process starting up
    (importing boostkit, before its initializer ignores SIGINT) is not interrupted by the Ctrl-C
    a terminal sends to the whole process group -- it would print a KeyboardInterrupt
    traceback and break the pool under the driver -- and the pool's manager and feeder
    threads keep SIGINT blocked, so it is delivered to the main thread, the one that acts on
    it."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _as_completed(futures: Sequence) -> Iterator:
    """``futures`` as they complete, waking at least every :data:`SIGNAL_POLL_SECONDS`.

    ``concurrent.futures.as_completed`` blocks on a lock without a timeout, and a signal
    interrupts that wait only if the kernel delivers it to the main thread while it sleeps
    there: one handled a moment before (or by another thread) leaves the exception of its
    Python handler -- KeyboardInterrupt, boostkit.cli's Terminated -- pending until a future
    completes, and with every worker busy on a long cell the driver hangs. Each wake runs the
    pending handler."""
    import queue

    completed: queue.SimpleQueue = queue.SimpleQueue()
    for future in futures:
        future.add_done_callback(completed.put)
    for _ in futures:
        while True:
            try:
                future = completed.get(timeout=SIGNAL_POLL_SECONDS)
            except queue.Empty:
                continue  # back in Python code: a pending signal's handler runs here
            yield future
            break


def _stop_pool(pool) -> None:
    """Stop a process pool now: terminate its workers (the cells they were computing are lost
    and rerun by the next run) and wait for them to exit.

    The cells not started are not ``cancel()``-ed here: the pool fails every pending future
    with BrokenProcessPool once its workers die, and a future cancelled meanwhile makes its
    manager thread raise InvalidStateError (CPython 3.11)."""
    # ProcessPoolExecutor has no public way to stop running tasks before Python 3.14
    # (terminate_workers); its worker table is stable across 3.9-3.13.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join(5)
    pool.shutdown(wait=True)


def _processes(tasks, n_jobs: int) -> Iterator:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn: the same in every OS, and no fork of a process holding numba's threads.
    pool = ProcessPoolExecutor(n_jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_watch_parent, initargs=(os.getpid(),))
    futures: list = []
    complete = False
    try:
        with _sigint_blocked():  # the pool starts its workers and threads as tasks come
            futures = [pool.submit(_run_task, *task) for task in tasks]
        for future in _as_completed(futures):
            yield future.result()
        complete = True
    finally:
        # Stopped early -- Ctrl-C, SIGTERM (boostkit.cli raises KeyboardInterrupt for it), an
        # error, or the caller closing this generator: no worker outlives the driver's stop.
        if complete:
            pool.shutdown(wait=True)
        else:
            _stop_pool(pool)


def _dask(tasks, client) -> Iterator:
    from distributed import as_completed

    futures = [client.submit(_run_task, *task, pure=False) for task in tasks]
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.cancel(futures)


def run_study(spec: StudySpec, *, sources: Sequence | None = None, n_jobs: int = 1,
              client=None, scheduler: str | None = None, progress: bool = False,
              progress_label: str = "study") -> StudyRun:
    """Run every cell of ``spec`` not yet in its database (:attr:`StudySpec.database_path`)
    and write each as it finishes.

    ``sources``: the data sources (default: ``spec.datasets`` resolved by
    :func:`boostkit.study.sources.resolve_datasets`). Cells run serially, in ``n_jobs`` local
    worker processes, or on a Dask cluster (``client``, or a scheduler address): each task is
    one cell and loads its own data from its source; only this process writes the database.
    A finished cell -- done, failed or cannot run -- is never computed again, so a study
    stopped by Ctrl-C or ``kill -9`` resumes where it stopped. A finished cell whose data or
    recipe have changed since, or a database of cells fitted with another round budget or
    other bins, raises :class:`boostkit.study.store.StoreError`: its results would mix two
    studies. ``progress`` shows a bar (or a line per cell) named
    ``progress_label``.
    """
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be an integer >= 1, got {n_jobs!r}")
    if client is not None and scheduler is not None:
        raise ValueError("give either client or scheduler, not both")
    if sources is None:
        from .sources import resolve_datasets

        sources = resolve_datasets(spec.datasets, data_dir=spec.data_dir, target=spec.target)
    registry = get_registry()
    recipes = [registry.resolve(algorithm) for algorithm in spec.algorithms]
    algorithms = [(recipe.name, recipe.to_string()) for recipe in recipes]
    names = [name for name, _ in algorithms]
    if len(set(names)) != len(names):
        raise RecipeError(f"two algorithms of the study have the same name: {names}; name "
                          "recipe strings apart with name=...")
    loaded = {source.name: source.load() for source in sources}
    hashes = {name: data.data_hash for name, data in loaded.items()}
    cells = spec.cells(list(loaded), algorithms)
    settings = (spec.resampling, spec.n_rounds, spec.max_bins, spec.keep_scores)
    with ResultStore(spec.database_path) as store:
        finished = store.finished()
        # A cell's key names its data, recipe, fold and seed, not the round budget or the bins:
        # cells fitted with others would be taken as this study's.
        fitted_with = {"n_rounds": spec.n_rounds, "max_bins": spec.max_bins}
        recorded = store.get_meta("fitted_with")
        if finished and recorded is not None and recorded != fitted_with:
            changed = ", ".join(f"{name} {recorded.get(name)} (this study: {value})"
                                for name, value in fitted_with.items()
                                if recorded.get(name) != value)
            raise StoreError(f"{store.path} holds cells fitted with {changed}: its results "
                             "would mix two studies; give a new --db")
        store.set_meta("spec", spec.summary())
        store.set_meta("fitted_with", fitted_with)
        for cell in cells:
            recorded = finished.get(cell.key)
            if recorded is not None and recorded != (cell.recipe, hashes[cell.dataset]):
                what = "recipe" if recorded[0] != cell.recipe else "data"
                raise StoreError(
                    f"{store.path} holds cell {cell.key} with another {what} than this study's "
                    f"(recipe {recorded[0]!r}, data hash {recorded[1][:12]}): its results would "
                    "mix two studies; give a new --db"
                )
        by_name = {source.name: source for source in sources}
        todo = [cell for cell in cells if cell.key not in finished]
        tasks = [(by_name[cell.dataset], hashes[cell.dataset], cell, *settings)
                 for cell in todo]
        own_client = None
        results = None
        if scheduler is not None:
            from distributed import Client

            client = own_client = Client(scheduler)
        try:
            if client is not None:
                results = _dask(tasks, client)
            elif n_jobs > 1 and len(tasks) > 1:
                results = _processes(tasks, n_jobs)  # the workers load their own data
            else:
                results = _serial(tasks, loaded)
            with FitProgress(len(tasks), enabled=progress, description=progress_label) as bar:
                for row, curve, kept in results:
                    store.write_cell(row, curve, kept)
                    bar.fit_done(f"{row['dataset']} {row['algorithm']} {row['resample']} "
                                 f"repeat {row['repeat']} fold {row['fold']} seed "
                                 f"{row['seed']}: {row['status']}")
        finally:
            # Stop the executor now, not when the traceback lets the generator go: Ctrl-C or
            # SIGTERM while a cell is being written must still terminate the workers. The store
            # closes after, with every cell written before the stop.
            if results is not None:
                results.close()
            if own_client is not None:
                own_client.close()
        keys = {cell.key for cell in cells}
        statuses = [row["status"] for row in store.rows()
                    if tuple(row[name] for name in KEY_COLUMNS) in keys]
    return StudyRun(spec.database_path, len(todo), len(cells) - len(todo),
                    sum(status != "done" for status in statuses), tuple(hashes), tuple(names),
                    failed=statuses.count("failed"), done=statuses.count("done"))


def _optional(module: str):
    """``boostkit.study.<module>``, or ``None`` if this installation has none."""
    import importlib

    try:
        return importlib.import_module(f"{__package__}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{module}":
            raise  # the module is there but a dependency of it is not: say so
        return None


def write_outputs(spec: StudySpec, run: StudyRun) -> tuple[list[Path], list[str]]:
    """After a study: the cells and curves exported beside the report (``cells.csv``,
    ``curves.csv``, and ``cells.parquet`` with pyarrow), the statistics
    (:func:`boostkit.study.stats.compare` on ``spec.metric``) and the report
    (:func:`boostkit.study.report.write_report`) in ``spec.output``.

    Returns the files written and notes on what could not be (a missing extra, too few
    datasets for the statistics), for the command line to print."""
    import importlib.util

    output = Path(spec.output)
    output.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    with ResultStore(run.database, readonly=True) as store:
        frame, curves = store.read_frame(), store.read_curves()
        paths = [store.export(output / "cells.csv"),
                 store.export(output / "curves.csv", table="curves")]
        if importlib.util.find_spec("pyarrow") is not None:
            paths.append(store.export(output / "cells.parquet"))
    keys = {(dataset, algorithm) for dataset in run.datasets for algorithm in run.algorithms}
    frame = frame[[key in keys for key in zip(frame["dataset"], frame["algorithm"])]]
    stats, report = _optional("stats"), _optional("report")
    if stats is None:
        notes.append("no statistics: this boostkit has no boostkit.study.stats")
        return paths, notes
    try:
        matrix = stats.score_matrix(frame, metric=spec.metric, algorithms=run.algorithms)
        comparison = stats.compare(matrix, baseline=spec.baseline)
    except (ValueError, BoostkitError) as exc:
        notes.append(f"no statistics: {exc}")
        return paths, notes
    for dataset, why in matrix.dropped.items():
        notes.append(f"{dataset} is left out of the statistics: {why}")
    if report is None:
        notes.append("no report: this boostkit has no boostkit.study.report")
        return paths, notes
    paths += report.write_report(output, frame, curves, comparison,
                                 title=f"Study: {len(run.algorithms)} algorithms on "
                                       f"{len(run.datasets)} datasets",
                                 spec_summary=spec.summary())
    return paths, notes
