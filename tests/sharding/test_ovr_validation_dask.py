"""One-vs-rest and eval_set validation on a Dask LocalCluster of 2 worker processes: the
training and the validation partitions on the workers, the single-machine models."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("distributed")
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import boostkit  # noqa: E402
import boostkit.dask  # noqa: E402
from boostkit import distributed as dist  # noqa: E402
from boostkit.datasets import load  # noqa: E402

from test_ovr_validation_distributed import (assert_same_one_vs_rest,  # noqa: E402
                                             assert_same_validation)
from test_protocol import assert_same_model  # noqa: E402


@pytest.mark.slow
def test_eval_set_and_one_vs_rest_on_two_worker_processes():
    data = load("contraceptive")
    X, y = data.X, data.y
    Xt, yt, Xv, yv = X[:1100], y[:1100], X[1100:], y[1100:]
    stopping = [("validation", {"patience": 3})]
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=40)
    with cluster, Client(cluster) as client:
        def shards(X, y, rows):
            return boostkit.dask.DaskShards(client, da.from_array(X, chunks=(rows, X.shape[1])),
                                            da.from_array(y, chunks=rows))

        native = boostkit.Booster("adaboost-mh", n_rounds=40, stopping=stopping)
        ref = native.fit(Xt, yt, eval_set=(Xv, yv))
        model, stats = dist.fit_on_shards(native, shards(Xt, yt, 300), shards(Xv, yv, 150))
        assert_same_model(ref, model)
        assert_same_validation(ref, model)
        assert stats.replays == 0

        one_vs_rest = boostkit.Booster("adaboost", n_rounds=40, multiclass="one-vs-rest",
                                       stopping=stopping)
        ref = one_vs_rest.fit(Xt, yt, eval_set=(Xv, yv))
        model, stats = dist.fit_on_shards(one_vs_rest, shards(Xt, yt, 300),
                                          shards(Xv, yv, 150))
        assert_same_one_vs_rest(ref, model)
        np.testing.assert_array_equal(model.predict(X), ref.predict(X))
        assert stats.replays == 0
