"""Fitting on Dask: the distributed round of :mod:`boostkit.distributed` on a Dask cluster.

::

    from dask.distributed import Client, LocalCluster
    import boostkit.dask

    client = Client(LocalCluster(n_workers=2))          # or Client("scheduler-address:8786")
    model = boostkit.dask.Booster("adaboost", n_rounds=200).fit(X, y, client=client)
    model.predict(X_local)                               # an ordinary boostkit.BoostModel
    boostkit.dask.predict(model, X)                      # a Dask array, partition by partition

``X`` is a Dask array (chunked along rows; column chunks are joined) or a Dask DataFrame, ``y``
(and ``sample_weight``) a Dask array or Series with the same row partitions. Every partition
becomes one shard, built on the worker that computes it and kept there in binned form; the
driver (this process) only ever holds histograms, the model, and a row sample of at most
:data:`boostkit.data.BIN_SAMPLE` rows for the bin edges.

**Faults.** A shard is a Dask future whose task builds it from its source partitions. When its
worker is lost, Dask recomputes it elsewhere from those partitions; the rebuilt shard holds no
term, answers :class:`boostkit.distributed.ShardBehind` to the next round, and the driver
replays the model's terms on it (``Booster.fit_stats_.replays``). The fit then goes on with the
same model. Needs the ``dask`` extra: ``pip install 'boostkit[dask]'``.

**Plugins on the workers.** The driver's plugins (those loaded from installed distributions,
with their versions: :func:`plugin_set`) are loaded on every worker by a Dask worker plugin
(:class:`DriverPlugins`), on workers that join later too, and every task of the fit checks them
first: a worker whose plugins or versions differ from the driver's is refused, naming the
plugin, and the fit stops with that error.

**No wait without a bound.** The driver waits for its tasks a second at a time, and between two
looks asks the scheduler how many workers it has. A cluster with no worker for
``Booster.no_worker_timeout`` seconds, a scheduler that does not answer for as long or that the
client lost, a step none of whose tasks finishes for ``Booster.task_timeout`` seconds, or a
task killed with its workers again and again ends the fit with a :class:`ClusterError` saying
so; a fit that raises returns no model and sets no fitted attribute. While workers come back,
the fit goes on.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import math
import time
import uuid
from typing import Any

import attrs
import numpy as np

from . import distributed as dist
from . import plugins
from .engine import Booster as _LocalBooster
from .errors import BoostkitError, DataError, PluginLoadError
from .model import BoostModel

__all__ = ["Booster", "BoostClassifier", "ClusterError", "DaskShards", "DriverPlugins",
           "check_worker_plugins", "plugin_set", "predict", "predict_proba",
           "decision_function"]

#: Seconds the driver waits for a step's tasks before it looks at the cluster again.
POLL_SECONDS = 1.0
#: Default bounds of a fit (:class:`Booster`): seconds without a worker (or without an answer
#: from the scheduler), and seconds one step may wait for its tasks.
NO_WORKER_TIMEOUT = 60.0
TASK_TIMEOUT = 600.0


class ClusterError(BoostkitError, RuntimeError):
    """The Dask cluster could not finish a fit: it had no worker, or the driver lost its
    scheduler, for longer than the fit's bound; no task of a step finished for
    ``task_timeout``; or a task was lost with its workers too often. The fit returned no
    model."""


def _dask():
    try:
        import dask
        import dask.array as da
        import dask.dataframe as dd
        import distributed
    except ImportError as exc:  # pragma: no cover - the dask extra is installed in tests
        raise ImportError(
            "boostkit.dask needs dask and distributed: pip install 'boostkit[dask]'"
        ) from exc
    return dask, da, dd, distributed


def is_dask_collection(X) -> bool:
    """Whether ``X`` is a Dask array, DataFrame or Series (without importing dask)."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(X, "dask")


def _row_parts(X) -> tuple[list, tuple | None]:
    """``X``'s row partitions as delayed objects, and its row chunks when known."""
    _, da, dd, _ = _dask()
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise DataError(f"X must be a 2-D Dask array (n_samples, n_features), got {X.ndim}-D")
        if X.numblocks[1] > 1:
            X = X.rechunk({1: -1})  # a shard holds whole rows
        known = not any(np.isnan(c) for c in X.chunks[0])
        return list(X.to_delayed()[:, 0]), X.chunks[0] if known else None
    if isinstance(X, dd.DataFrame):
        return list(X.to_delayed()), None
    raise DataError(
        f"X must be a Dask array or DataFrame when fitting with client=, got "
        f"{type(X).__module__}.{type(X).__name__}: fit data in memory with boostkit.Booster, "
        "or wrap them (dask.array.from_array(X, chunks=...))"
    )


def _column_parts(v, name: str, n_parts: int, row_chunks) -> list:
    _, da, dd, _ = _dask()
    if isinstance(v, da.Array):
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        # y may be a multi-label indicator matrix: a partition holds whole rows of it.
        indicator = name == "y" and v.ndim == 2
        if indicator:
            v = v.rechunk({1: -1})
        elif v.ndim != 1:
            raise DataError(f"{name} must be a 1-D Dask array"
                            f"{' (or, for y, a 2-D indicator matrix)' if name == 'y' else ''}, "
                            f"got shape {v.shape}")
        if row_chunks is not None and not any(np.isnan(c) for c in v.chunks[0]) and (
                tuple(v.chunks[0]) != tuple(row_chunks)):
            raise DataError(
                f"X and {name} are chunked differently along the rows: X {tuple(row_chunks)}, "
                f"{name} {tuple(v.chunks[0])}; rechunk {name} like X "
                f"({name}.rechunk(X.chunks[0])) so that each partition holds the same rows"
            )
        parts = list(v.to_delayed()[:, 0] if indicator else v.to_delayed())
    elif isinstance(v, (dd.Series, dd.DataFrame)):
        parts = list(v.to_delayed())
    else:
        raise DataError(f"{name} must be a Dask array or Series like X, got "
                        f"{type(v).__module__}.{type(v).__name__}")
    if len(parts) != n_parts:
        raise DataError(f"X has {n_parts} row partitions but {name} has {len(parts)}: chunk "
                        f"them alike (each partition of X with its {name})")
    return parts


def plugin_set() -> tuple[tuple[str, str, str], ...]:
    """The plugins this process loaded from installed distributions, as sorted
    ``(name, distribution, version)``: what every worker of a fit must load too. Plugins
    registered in-process (:func:`boostkit.register_plugin`) are not among them: a worker
    cannot load them."""
    return tuple(sorted((p["name"], p["distribution"], p["version"])
                        for p in plugins.plugin_info()
                        if p["status"] == "ok" and p["distribution"] != "<in-process>"))


#: The outcome of comparing this process's plugins with a driver's set, per set.
_PLUGIN_CHECKS: dict[tuple, str | None] = {}


def check_worker_plugins(expected: tuple, worker: str) -> None:
    """Load this process's plugins and raise :class:`boostkit.errors.PluginLoadError`, naming
    the plugin, unless they include the driver's ``expected`` (:func:`plugin_set`) at the same
    versions. ``worker`` (this worker's address) is named in the error."""
    if expected not in _PLUGIN_CHECKS:
        here = {name: (distribution, version) for name, distribution, version in plugin_set()}
        broken = plugins.broken_plugins()
        problems = []
        for name, distribution, version in expected:
            if name not in here:
                why = (f" (it failed to load there: {broken[name]['error']})" if name in broken
                       else "")
                problems.append(f"plugin {name!r} ({distribution} {version}) is not loaded on "
                                f"the worker{why}")
            elif here[name] != (distribution, version):
                problems.append(f"plugin {name!r} is {here[name][0]} {here[name][1]} on the "
                                f"worker but {distribution} {version} on the driver")
        _PLUGIN_CHECKS[expected] = "; ".join(problems) or None
    problem = _PLUGIN_CHECKS[expected]
    if problem is not None:
        requirements = " ".join(f"'{d}=={v}'"
                                for d, v in sorted({(d, v) for _, d, v in expected}))
        raise PluginLoadError(
            f"Dask worker {worker} refused: {problem}. Every worker must load the driver's "
            f"plugins at the driver's versions: pip install {requirements} on every worker"
        )


def _checked(expected: tuple, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on a Dask worker, once its plugins are the driver's
    ``expected``: every task of a fit runs through it, on replacement workers too."""
    _, _, _, distributed = _dask()
    check_worker_plugins(expected, distributed.get_worker().address)
    return fn(*args, **kwargs)


def _driver_plugins_class():
    """:class:`DriverPlugins`, built on first use: it subclasses distributed's WorkerPlugin."""
    _dask()  # the dask extra, or the error that says how to install it
    from distributed.diagnostics.plugin import WorkerPlugin

    class DriverPlugins(WorkerPlugin):
        """A Dask worker plugin that loads boostkit's plugins on every worker as it starts
        (replacements of lost workers included) and refuses, naming the plugin, a worker whose
        plugins are not the driver's ``expected`` (:func:`plugin_set`): registered on the
        cluster, the refusal of a running worker stops the fit before it reads any data."""

        idempotent = True

        def __init__(self, expected: tuple):
            self.expected = expected

        def setup(self, worker):
            check_worker_plugins(self.expected, worker.address)

    DriverPlugins.__module__, DriverPlugins.__qualname__ = __name__, "DriverPlugins"
    return DriverPlugins


def _bound(name: str, value, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise DataError(f"{name} must be a positive number of seconds"
                        f"{' or None' if optional else ''}, got {value!r}")
    return float(value)


class DaskShards(dist.Shards):
    """The shards of one fit on a Dask cluster: one per row partition of ``X``.

    Every shard is a future built by :func:`boostkit.distributed.build_shard` under a key
    unique to the fit; a round is one task per shard, placed on the worker that holds it.
    Every task first checks the worker's plugins (:func:`check_worker_plugins`); every wait is
    bounded (``no_worker_timeout``, ``task_timeout``: see :class:`Booster`).
    """

    def __init__(self, client, X, y, sample_weight=None, *,
                 no_worker_timeout: float = NO_WORKER_TIMEOUT,
                 task_timeout: float | None = TASK_TIMEOUT):
        self.client = client
        self.no_worker_timeout = _bound("no_worker_timeout", no_worker_timeout)
        self.task_timeout = _bound("task_timeout", task_timeout, optional=True)
        xs, row_chunks = _row_parts(X)
        ys = _column_parts(y, "y", len(xs), row_chunks)
        ws = ([None] * len(xs) if sample_weight is None
              else _column_parts(sample_weight, "sample_weight", len(xs), row_chunks))
        self.parts = list(zip(xs, ys, ws))
        self.n_shards = len(self.parts)
        self.token = uuid.uuid4().hex
        self.shards: list = []
        self.holders: list = []
        self.round = 0  # the round being run, 0 before the first
        self.builds = 0  # one-vs-rest builds the shards once per class
        self.expected = plugin_set()
        self._register_plugins()

    #: Held-out validation rows: ``samples`` takes ``held_out`` and :meth:`twin` gives their
    #: shards (:class:`boostkit.distributed.HeldOut`).
    holds_out = True

    def twin(self) -> DaskShards:
        """A transport over the same partitions with shards of its own, under keys of its own
        (the held-out validation rows' shards, built from the training partitions)."""
        twin = copy.copy(self)
        twin.token, twin.shards, twin.holders, twin.round, twin.builds = (
            uuid.uuid4().hex, [], [], 0, 0)
        return twin

    def _register_plugins(self) -> None:
        """Load the driver's plugins on every worker, now and on every worker that joins."""
        digest = hashlib.sha1(repr(self.expected).encode()).hexdigest()[:12]
        try:
            self.client.register_plugin(__getattr__("DriverPlugins")(self.expected),
                                        name=f"boostkit-plugins-{digest}")
        except PluginLoadError as exc:
            raise PluginLoadError(f"{exc}; the fit was refused before reading any data, and "
                                  "no model was returned") from None

    def _on_partitions(self, fn, args, *, pure: bool = True, key=None, **kwargs) -> list:
        """``fn(k, *args(k, X, y, sample_weight), **kwargs)`` for every partition k, as futures:
        ``args`` picks the arguments ``fn`` needs from partition k."""
        dask, _, _, _ = _dask()
        tasks = [dask.delayed(_checked, pure=pure)(
                     self.expected, fn, k, *args(k, *part), **kwargs,
                     **({} if key is None else {"dask_key_name": key(k)}))
                 for k, part in enumerate(self.parts)]
        with self._sending():
            return self.client.compute(tasks)

    def summaries(self, *, categorical_features, allow_missing, missing_hint):
        futures = self._on_partitions(
            dist.partition_summary, lambda k, x, y, w: (x, y, w),
            categorical_features=categorical_features, allow_missing=allow_missing,
            missing_hint=missing_hint)
        return list(self._gather(dict(enumerate(futures))).values())

    def samples(self, sizes, seed, features, weight_total, held_out=None):
        futures = self._on_partitions(
            dist.partition_sample,
            lambda k, x, y, w: (x, w, int(sizes[k]), seed, features, weight_total, y,
                                None if held_out is None else held_out[k]))
        return np.concatenate(list(self._gather(dict(enumerate(futures))).values()))

    def build(self, plan):
        # Keys of this fit's and this build's own: shards are mutated in place, so no other fit
        # may share one, and a build again (one-vs-rest's next class) must not get the last
        # build's shards back.
        self.close()
        self.builds += 1
        build = f"{self.token}-{self.builds}"
        self.shards = self._on_partitions(
            dist.build_shard, lambda k, x, y, w: (plan, x, y, w), pure=False,
            key=lambda k: f"boostkit-shard-{build}-{k}")
        with self._sending():
            futures = {k: self.client.submit(_checked, self.expected, dist.initial_report, s,
                                             key=f"boostkit-initial-{build}-{k}")
                       for k, s in enumerate(self.shards)}
        reports = self._gather(futures)
        self._locate()
        return [reports[k] for k in range(self.n_shards)]

    def _locate(self) -> None:
        """Where each shard lives, so that its rounds run there (a shard is mutated in place,
        and a copy elsewhere would fall behind: the replay check catches it, this avoids it)."""
        try:
            who_has = self.client.sync(self.client.scheduler.who_has,
                                       keys=[s.key for s in self.shards],
                                       callback_timeout=self.no_worker_timeout)
        except Exception:  # no answer: Dask places the rounds (the replay check keeps them right)
            who_has = {}
        self.holders = [list(who_has.get(s.key, ())) or None for s in self.shards]

    def step(self, calls):
        # One task per worker, over the shards it holds (a shard whose holder is unknown gets
        # a task of its own, placed by Dask).
        self.round = max(call[0] + len(call[1]) for call in calls.values())
        groups: dict = {}
        for k in calls:
            holder = self.holders[k][0] if self.holders[k] else f"shard-{k}"
            groups.setdefault(holder, []).append(k)
        futures = {}
        with self._sending():
            for holder, ks in groups.items():
                futures[tuple(ks)] = self.client.submit(
                    _checked, self.expected, dist.step_shards, [self.shards[k] for k in ks],
                    [calls[k] for k in ks],
                    key=f"boostkit-round-{self.token}-{ks[0]}-{uuid.uuid4().hex[:12]}",
                    workers=self.holders[ks[0]], allow_other_workers=True, pure=False)
        answers = {k: a for ks, group in self._gather(futures).items() for k, a in zip(ks, group)}
        if any(isinstance(a, dist.ShardBehind) for a in answers.values()):
            self._locate()  # rebuilt shards live elsewhere now
        return answers

    def _gather(self, futures: dict) -> dict:
        """The futures' results (a task's error is raised here), waiting a bounded time."""
        _, _, _, distributed = _dask()
        waiting = list(futures.values())
        finished, finished_at = 0, time.monotonic()
        no_worker_since = silent_since = None
        while True:
            try:
                with self._sending():
                    distributed.wait(waiting, timeout=POLL_SECONDS)
                    # A worker lost after the wait sends its futures back to pending: bounded.
                    results = [f.result(timeout=self.no_worker_timeout) for f in waiting]
                break
            except TimeoutError:
                pass
            except distributed.CancelledError:
                raise self._stopped(self._why_cancelled()) from None
            except distributed.KilledWorker as exc:
                raise self._stopped(
                    f"a task of the fit was lost with its worker too many times ({exc}; Dask "
                    "gives a task up after distributed.scheduler.allowed-failures such "
                    "losses)") from None
            except PluginLoadError as exc:
                raise PluginLoadError(f"{exc}; {self._progress()}; no model was "
                                      "returned") from None
            now = time.monotonic()
            done = sum(f.done() for f in waiting)  # a lost worker's finished task is undone
            if done > finished:
                finished_at = now
            finished = done
            if self.task_timeout is not None and now - finished_at > self.task_timeout:
                raise self._stopped(f"no task of the step finished for task_timeout = "
                                    f"{self.task_timeout:g} s ({finished} of {len(waiting)} "
                                    "finished)")
            n_workers = self._n_workers()
            silent_since = (silent_since or now) if n_workers is None else None
            no_worker_since = (no_worker_since or now) if n_workers == 0 else None
            if silent_since is not None and now - silent_since > self.no_worker_timeout:
                raise self._stopped(f"{self._lost_scheduler()}; it did not answer for "
                                    f"{self.no_worker_timeout:g} s")
            if no_worker_since is not None and now - no_worker_since > self.no_worker_timeout:
                raise self._stopped(
                    f"the Dask cluster had no worker for {self.no_worker_timeout:g} s (every "
                    "worker was lost and none joined: a nanny whose worker keeps dying, or a "
                    "LocalCluster whose worker stayed away longer than "
                    "distributed.deploy.lost-worker-timeout, gives the worker up)")
        for future in waiting:
            future.release()
        return dict(zip(futures, results))

    def _n_workers(self) -> int | None:
        """The scheduler's number of workers, or ``None`` when it does not answer in time."""
        if self.client.status != "running":
            return None
        try:
            identity = self.client.sync(self.client.scheduler.identity, n_workers=0,
                                        callback_timeout=POLL_SECONDS * 5)
        except Exception:  # any failure to answer is the scheduler's silence
            return None
        return int(identity["n_workers"])

    @contextlib.contextmanager
    def _sending(self):
        """Talking to the scheduler: a client that lost it fails, and that is said."""
        try:
            yield
        except ClusterError:
            raise
        except Exception as exc:
            if self.client.status == "running":
                raise
            raise self._stopped(self._lost_scheduler()) from exc

    def _lost_scheduler(self) -> str:
        return (f"the driver lost the Dask scheduler (client status {self.client.status!r}): "
                "the cluster was closed, or its scheduler died or cannot be reached")

    def _why_cancelled(self) -> str:
        """Why the fit's futures were cancelled: the scheduler lost, or a cancellation."""
        if self._n_workers() is None:
            return self._lost_scheduler()
        return ("the Dask cluster cancelled the fit's tasks (another client cancelled them, or "
                "the cluster was restarted)")

    def _progress(self) -> str:
        if self.round <= 1:
            return "the fit stopped before finishing its first round"
        return f"the fit stopped after round {self.round - 1}"

    def _stopped(self, what: str) -> ClusterError:
        return ClusterError(f"{what}; {self._progress()}; no model was returned")

    def close(self) -> None:
        """Release the shards on the workers."""
        for s in self.shards:
            s.release()
        self.shards = []


def _client(client):
    _, _, _, distributed = _dask()
    if client is None:
        try:
            return distributed.default_client()
        except ValueError:
            raise DataError("no Dask client: pass client=Client(...) (or create one first, "
                            "e.g. Client(LocalCluster()))") from None
    if not isinstance(client, distributed.Client):
        raise DataError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
    return client


@attrs.define
class Booster(_LocalBooster):
    """:class:`boostkit.Booster` whose ``fit`` runs on a Dask cluster.

    Same parameters; every component of the recipe must provide ``"distributed"`` (every seed
    algorithm's but ``pav-adaboost``'s Cmass projection and Ada2Boost's PN-space records:
    ``docs/distributed.md`` lists them), or the fit is refused before any data is read, naming
    the one that does not and why. Several classes (natively or one-vs-rest), a multi-label
    indicator ``y`` and an ``eval_set`` of Dask collections run on the cluster too.
    ``fit_stats_`` (:class:`boostkit.distributed.FitStats`) says what the last fit moved.

    Two bounds on the waits, in seconds: ``no_worker_timeout`` (default 60) is the longest the
    cluster may have no worker, or its scheduler not answer, before the fit stops; while
    workers come back, it goes on. ``task_timeout`` (default 600; ``None``: no bound) is the
    longest the fit waits for the next of a step's tasks to finish (a step: the partitions'
    summaries, the bin sample, building the shards, or a round with any rebuilding of lost
    shards), however long the step takes while its tasks finish. Past either the fit raises
    :class:`ClusterError` and returns no model.
    """

    no_worker_timeout: float = attrs.field(
        default=NO_WORKER_TIMEOUT, kw_only=True,
        validator=lambda _, a, v: _bound(a.name, v))
    task_timeout: float | None = attrs.field(
        default=TASK_TIMEOUT, kw_only=True,
        validator=lambda _, a, v: _bound(a.name, v, optional=True))
    fit_stats_: dist.FitStats | None = attrs.field(default=None, init=False, repr=False)

    def fit(self, X, y, sample_weight=None, *, client=None, eval_set=None,
            features=None) -> BoostModel:
        """Fit on Dask collections ``X``, ``y`` (and ``sample_weight``) with ``client`` (the
        default client when ``None``); returns an ordinary :class:`boostkit.BoostModel` (a
        :class:`boostkit.multiclass.OneVsRestModel` for one-vs-rest). ``eval_set``:
        ``(X_val, y_val[, sample_weight_val])`` as Dask collections, whose rows stay on shards of
        their own."""
        if features is not None:
            raise DataError("features= is not supported by a distributed fit: pass a Dask "
                            "DataFrame with its categorical columns instead")
        if not is_dask_collection(X):
            raise DataError(
                f"boostkit.dask.Booster.fit needs X as a Dask array or DataFrame, got "
                f"{type(X).__module__}.{type(X).__name__}: fit in-memory data with "
                "boostkit.Booster, or wrap them (dask.array.from_array(X, chunks=...))"
            )
        client = _client(client)
        bounds = dict(no_worker_timeout=self.no_worker_timeout, task_timeout=self.task_timeout)
        eval_shards = None
        if eval_set is not None:
            if (not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (2, 3)
                    or not all(is_dask_collection(part) for part in eval_set)):
                raise DataError("eval_set must be (X_val, y_val) or (X_val, y_val, "
                                "sample_weight_val) of Dask collections chunked alike, got "
                                f"{type(eval_set).__name__}")
            eval_shards = DaskShards(client, *eval_set, **bounds)
        shards = DaskShards(client, X, y, sample_weight, **bounds)
        try:
            model, self.fit_stats_ = dist.fit_on_shards(self, shards, eval_shards)
        finally:
            shards.close()
            if eval_shards is not None:
                eval_shards.close()
        return model


def _n_outputs(model, method: str) -> int | None:
    """Columns of ``method``'s result: ``None`` for one value per row."""
    if getattr(model, "multilabel", False):  # an (n, L) indicator matrix, and L margins
        return model.classes.shape[0]
    if method == "predict" or (method == "decision_function" and model.classes.shape[0] == 2):
        return None
    return model.classes.shape[0]


def _map(model, X, method: str):
    """``model.<method>`` over every row partition of the Dask collection ``X``."""
    dask, da, dd, _ = _dask()
    fn = getattr(model, method)
    n_outputs = _n_outputs(model, method)
    dtype = model.classes.dtype if method == "predict" else np.dtype(np.float64)
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise DataError(f"X must be a 2-D Dask array, got {X.ndim}-D")
        if X.numblocks[1] > 1:
            X = X.rechunk({1: -1})
        if n_outputs is None:
            return X.map_blocks(fn, drop_axis=1, dtype=dtype)
        return X.map_blocks(fn, chunks=(X.chunks[0], (n_outputs,)), dtype=dtype)
    if isinstance(X, dd.DataFrame):
        shape = (np.nan,) if n_outputs is None else (np.nan, n_outputs)
        return da.concatenate([da.from_delayed(dask.delayed(fn)(part), shape=shape, dtype=dtype)
                               for part in X.to_delayed()])
    raise DataError(f"X must be a Dask array or DataFrame, got {type(X).__name__}")


def predict(model, X):
    """The model's labels for every row of the Dask collection ``X``, as a lazy Dask array
    (one task per partition)."""
    return _map(model, X, "predict")


def predict_proba(model, X):
    """The model's class probabilities on Dask ``X``: a lazy ``(n, n_classes)`` Dask array."""
    return _map(model, X, "predict_proba")


def decision_function(model, X):
    """The model's margins F(x) on Dask ``X``: a lazy Dask array (``(n,)`` for two classes)."""
    return _map(model, X, "decision_function")


def _classifier_class():
    """:class:`BoostClassifier`, built on first use: it needs scikit-learn (``boostkit.sklearn``),
    which :class:`Booster` does not."""
    from .sklearn import BoostClassifier as _InMemory

    class BoostClassifier(_InMemory):
        """:class:`boostkit.sklearn.BoostClassifier` that fits and predicts Dask collections.

        Parameters are those of :class:`boostkit.sklearn.BoostClassifier`, plus ``client``
        (a ``dask.distributed.Client``; ``None``: the default client) and the bounds on the
        waits, ``no_worker_timeout`` and ``task_timeout`` (:class:`Booster`). ``fit`` on a Dask
        array or DataFrame runs :class:`boostkit.dask.Booster` (the recipe must be distributed;
        several classes run natively on the (example, class) pairs); on in-memory data it fits
        in this process. ``predict``, ``predict_proba`` and ``decision_function`` return lazy
        Dask arrays for Dask input, numpy arrays otherwise. ``fit_stats_`` says what the last
        distributed fit moved.
        """

        def __init__(self, algorithm="adaboost", n_rounds=100, *, component_params=None,
                     max_bins=255, n_jobs=1, random_state=None, callbacks=None, verbose=0,
                     categorical_features="from_dtype", client=None,
                     no_worker_timeout=NO_WORKER_TIMEOUT, task_timeout=TASK_TIMEOUT):
            super().__init__(algorithm, n_rounds, component_params=component_params,
                             max_bins=max_bins, n_jobs=n_jobs, random_state=random_state,
                             callbacks=callbacks, verbose=verbose,
                             categorical_features=categorical_features)
            self.client = client
            self.no_worker_timeout = no_worker_timeout
            self.task_timeout = task_timeout

        def __getstate__(self):
            # A client holds sockets and threads: a pickled estimator leaves it behind (and
            # finds the default client, or is given one, when it fits again).
            return {**super().__getstate__(), "client": None}

        def fit(self, X, y, sample_weight=None, *, eval_set=None):
            if not is_dask_collection(X):
                return super().fit(X, y, sample_weight, eval_set=eval_set)
            booster = self._booster(Booster, no_worker_timeout=self.no_worker_timeout,
                                    task_timeout=self.task_timeout)
            model = booster.fit(X, y, sample_weight, client=self.client, eval_set=eval_set)
            self._set_fitted(model)
            self.fit_stats_ = booster.fit_stats_
            self.n_features_in_ = model.n_features
            names = None if model.features is None else model.features.names
            if names is not None:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            else:
                self.__dict__.pop("feature_names_in_", None)
            return self

        def _predict(self, X, method: str):
            if not is_dask_collection(X):
                return getattr(super(), method)(X)
            self._validated_dask(X)
            return _map(self.model_, X, method)

        def _validated_dask(self, X) -> None:
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(self)
            width = X.shape[1] if X.ndim == 2 else None
            if width is not None and not np.isnan(width) and width != self.n_features_in_:
                raise DataError(f"X has {width} features, but {type(self).__name__} was fitted "
                                f"with {self.n_features_in_}")

        def predict(self, X):
            return self._predict(X, "predict")

        def predict_proba(self, X):
            return self._predict(X, "predict_proba")

        def decision_function(self, X):
            return self._predict(X, "decision_function")

    # Pickled (and cloned) by name, as boostkit.dask.BoostClassifier: the module hands it out.
    BoostClassifier.__module__, BoostClassifier.__qualname__ = __name__, "BoostClassifier"
    return BoostClassifier


_CLASSES: dict[str, Any] = {}
_CLASS_FACTORIES = {"BoostClassifier": _classifier_class,
                    "DriverPlugins": _driver_plugins_class}


def __getattr__(name: str):
    if name in _CLASS_FACTORIES:
        if name not in _CLASSES:
            _CLASSES[name] = _CLASS_FACTORIES[name]()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
