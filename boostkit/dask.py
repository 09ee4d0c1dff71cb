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
"""

from __future__ import annotations

import uuid
from typing import Any

import attrs
import numpy as np

from . import distributed as dist
from .engine import Booster as _LocalBooster
from .errors import DataError
from .model import BoostModel

__all__ = ["Booster", "BoostClassifier", "DaskShards", "predict", "predict_proba",
           "decision_function"]


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
        if v.ndim != 1:
            raise DataError(f"{name} must be a 1-D Dask array, got shape {v.shape}")
        if row_chunks is not None and not any(np.isnan(c) for c in v.chunks[0]) and (
                tuple(v.chunks[0]) != tuple(row_chunks)):
            raise DataError(
                f"X and {name} are chunked differently along the rows: X {tuple(row_chunks)}, "
                f"{name} {tuple(v.chunks[0])}; rechunk {name} like X "
                f"({name}.rechunk(X.chunks[0])) so that each partition holds the same rows"
            )
        parts = list(v.to_delayed())
    elif isinstance(v, (dd.Series, dd.DataFrame)):
        parts = list(v.to_delayed())
    else:
        raise DataError(f"{name} must be a Dask array or Series like X, got "
                        f"{type(v).__module__}.{type(v).__name__}")
    if len(parts) != n_parts:
        raise DataError(f"X has {n_parts} row partitions but {name} has {len(parts)}: chunk "
                        f"them alike (each partition of X with its {name})")
    return parts


class DaskShards(dist.Shards):
    """The shards of one fit on a Dask cluster: one per row partition of ``X``.

    Every shard is a future built by :func:`boostkit.distributed.build_shard` under a key
    unique to the fit; a round is one task per shard, placed on the worker that holds it.
    """

    def __init__(self, client, X, y, sample_weight=None):
        self.client = client
        xs, row_chunks = _row_parts(X)
        ys = _column_parts(y, "y", len(xs), row_chunks)
        ws = ([None] * len(xs) if sample_weight is None
              else _column_parts(sample_weight, "sample_weight", len(xs), row_chunks))
        self.parts = list(zip(xs, ys, ws))
        self.n_shards = len(self.parts)
        self.token = uuid.uuid4().hex
        self.shards: list = []
        self.holders: list = []

    def _on_partitions(self, fn, args, *, pure: bool = True, key=None, **kwargs) -> list:
        """``fn(k, *args(k, X, y, sample_weight), **kwargs)`` for every partition k, as futures:
        ``args`` picks the arguments ``fn`` needs from partition k."""
        dask, _, _, _ = _dask()
        tasks = [dask.delayed(fn, pure=pure)(k, *args(k, *part), **kwargs,
                                             **({} if key is None else {"dask_key_name": key(k)}))
                 for k, part in enumerate(self.parts)]
        return self.client.compute(tasks)

    def summaries(self, *, categorical_features, allow_missing, missing_hint):
        return self.client.gather(self._on_partitions(
            dist.partition_summary, lambda k, x, y, w: (x, y, w),
            categorical_features=categorical_features, allow_missing=allow_missing,
            missing_hint=missing_hint))

    def samples(self, sizes, seed, features, weight_total):
        return np.concatenate(self.client.gather(self._on_partitions(
            dist.partition_sample,
            lambda k, x, y, w: (x, w, int(sizes[k]), seed, features, weight_total))))

    def build(self, plan):
        # A key of this fit's own: shards are mutated in place, so no other fit may share one.
        self.shards = self._on_partitions(
            dist.build_shard, lambda k, x, y, w: (plan, x, y, w), pure=False,
            key=lambda k: f"boostkit-shard-{self.token}-{k}")
        reports = self._gather({k: self.client.submit(
            dist.initial_report, s, key=f"boostkit-initial-{self.token}-{k}")
            for k, s in enumerate(self.shards)})
        self._locate()
        return [reports[k] for k in range(self.n_shards)]

    def _locate(self) -> None:
        """Where each shard lives, so that its rounds run there (a shard is mutated in place,
        and a copy elsewhere would fall behind: the replay check catches it, this avoids it)."""
        who_has = self.client.who_has(self.shards)
        self.holders = [list(who_has.get(s.key, ())) or None for s in self.shards]

    def step(self, calls):
        # One task per worker, over the shards it holds (a shard whose holder is unknown gets
        # a task of its own, placed by Dask).
        groups: dict = {}
        for k in calls:
            holder = self.holders[k][0] if self.holders[k] else f"shard-{k}"
            groups.setdefault(holder, []).append(k)
        futures = {}
        for holder, ks in groups.items():
            futures[tuple(ks)] = self.client.submit(
                dist.step_shards, [self.shards[k] for k in ks], [calls[k] for k in ks],
                key=f"boostkit-round-{self.token}-{ks[0]}-{uuid.uuid4().hex[:12]}",
                workers=self.holders[ks[0]], allow_other_workers=True, pure=False)
        answers = {k: a for ks, group in self._gather(futures).items() for k, a in zip(ks, group)}
        if any(isinstance(a, dist.ShardBehind) for a in answers.values()):
            self._locate()  # rebuilt shards live elsewhere now
        return answers

    def _gather(self, futures: dict) -> dict:
        results = self.client.gather(list(futures.values()))  # a task's error is raised here
        for future in futures.values():
            future.release()
        return dict(zip(futures, results))

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

    Same parameters; every component of the recipe must provide ``"distributed"``
    (``stump`` with ``constant-alpha``, ``domain-partition``, ``vote-alpha`` or ``gentle-step``,
    and the ``exponential`` or ``margin-loss`` reweighting: ``adaboost``, ``real-adaboost``,
    ``adaboost-mh``, ``discrete-adaboost-mh``, ``gentle-adaboost``, ``madaboost``, and any mix
    of them), or the fit is refused naming the one that does not. ``fit_stats_``
    (:class:`boostkit.distributed.FitStats`) says what the last fit moved.
    """

    fit_stats_: dist.FitStats | None = attrs.field(default=None, init=False, repr=False)

    def fit(self, X, y, sample_weight=None, *, client=None, eval_set=None,
            features=None) -> BoostModel:
        """Fit on Dask collections ``X``, ``y`` (and ``sample_weight``) with ``client`` (the
        default client when ``None``); returns an ordinary :class:`boostkit.BoostModel`."""
        if eval_set is not None:
            raise DataError("eval_set is not supported by a distributed fit: score the model on "
                            "held-out data afterwards (model.staged_predict)")
        if features is not None:
            raise DataError("features= is not supported by a distributed fit: pass a Dask "
                            "DataFrame with its categorical columns instead")
        if not is_dask_collection(X):
            raise DataError(
                f"boostkit.dask.Booster.fit needs X as a Dask array or DataFrame, got "
                f"{type(X).__module__}.{type(X).__name__}: fit in-memory data with "
                "boostkit.Booster, or wrap them (dask.array.from_array(X, chunks=...))"
            )
        shards = DaskShards(_client(client), X, y, sample_weight)
        try:
            model, self.fit_stats_ = dist.fit_on_shards(self, shards)
        finally:
            shards.close()
        return model


def _n_outputs(model, method: str) -> int | None:
    """Columns of ``method``'s result: ``None`` for one value per row."""
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
        (a ``dask.distributed.Client``; ``None``: the default client). ``fit`` on a Dask
        array or DataFrame runs :class:`boostkit.dask.Booster` (the recipe must be distributed;
        several classes run natively on the (example, class) pairs); on in-memory data it fits
        in this process. ``predict``, ``predict_proba`` and ``decision_function`` return lazy
        Dask arrays for Dask input, numpy arrays otherwise. ``fit_stats_`` says what the last
        distributed fit moved.
        """

        def __init__(self, algorithm="adaboost", n_rounds=100, *, component_params=None,
                     max_bins=255, n_jobs=1, random_state=None, callbacks=None, verbose=0,
                     categorical_features="from_dtype", client=None):
            super().__init__(algorithm, n_rounds, component_params=component_params,
                             max_bins=max_bins, n_jobs=n_jobs, random_state=random_state,
                             callbacks=callbacks, verbose=verbose,
                             categorical_features=categorical_features)
            self.client = client

        def __getstate__(self):
            # A client holds sockets and threads: a pickled estimator leaves it behind (and
            # finds the default client, or is given one, when it fits again).
            return {**super().__getstate__(), "client": None}

        def fit(self, X, y, sample_weight=None, *, eval_set=None):
            if not is_dask_collection(X):
                return super().fit(X, y, sample_weight, eval_set=eval_set)
            booster = self._booster(Booster)
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


def __getattr__(name: str):
    if name == "BoostClassifier":
        if name not in _CLASSES:
            _CLASSES[name] = _classifier_class()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
