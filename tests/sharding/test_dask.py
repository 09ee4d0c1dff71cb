"""boostkit.dask on a LocalCluster: the model from 1, 2 and 4 workers is the single-machine
model, on uneven partitions too, and a worker killed mid-fit changes nothing."""

from __future__ import annotations

import os
import pickle
import signal

import numpy as np
import pytest

pytest.importorskip("distributed")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import boostkit  # noqa: E402
import boostkit.dask  # noqa: E402
from boostkit.datasets import load  # noqa: E402
from boostkit.errors import DataError, RecipeError  # noqa: E402

from test_protocol import assert_same_model  # noqa: E402


def _cluster(n_workers, processes=False):
    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                        dashboard_address=None, silence_logs=40)


@pytest.fixture(scope="module", params=[1, 2, 4], ids=lambda n: f"{n}-workers")
def client(request):
    with _cluster(request.param) as cluster, Client(cluster) as c:
        yield c


@pytest.mark.parametrize("recipe", ["adaboost", "real-adaboost", "madaboost"])
def test_the_model_of_any_number_of_workers_is_the_single_machine_model(client, cancer, recipe):
    X, y = cancer
    ref = boostkit.Booster(recipe, n_rounds=30).fit(X, y)
    booster = boostkit.dask.Booster(recipe, n_rounds=30)
    model = booster.fit(da.from_array(X, chunks=(120, 3)), da.from_array(y, chunks=120),
                        client=client)
    assert isinstance(model, boostkit.BoostModel)
    assert_same_model(ref, model)
    assert booster.fit_stats_.rounds == 30 and booster.fit_stats_.replays == 0
    assert 0 < booster.fit_stats_.bytes_per_round < 6 * 9 * 256 * 2 * 8 + 4096


def test_several_classes_natively_on_the_pairs(client):
    data = load("contraceptive")
    ref = boostkit.Booster("adaboost-mh", n_rounds=20).fit(data.X, data.y)
    model = boostkit.dask.Booster("adaboost-mh", n_rounds=20).fit(
        da.from_array(data.X, chunks=(400, 9)), da.from_array(data.y, chunks=400), client=client)
    assert_same_model(ref, model)
    np.testing.assert_array_equal(model.classes, ref.classes)


def test_empty_label_sorted_and_skewed_partitions(client, cancer):
    X, y = cancer
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    chunks = (0, 5, 300, 0, len(y) - 305)  # empty, tiny, one class only, skewed
    ref = boostkit.Booster("real-adaboost", n_rounds=25).fit(X, y)
    model = boostkit.dask.Booster("real-adaboost", n_rounds=25).fit(
        da.from_array(X, chunks=(chunks, 9)), da.from_array(y, chunks=(chunks,)), client=client)
    assert_same_model(ref, model)


def test_a_dask_dataframe_with_categories_and_missing_values(client):
    data = load("adult")
    frame, y = data.frame().iloc[:4000], data.y[:4000]
    ref = boostkit.Booster("real-adaboost", n_rounds=20).fit(frame, y)
    Xd = dd.from_pandas(frame, npartitions=3)
    yd = dd.from_pandas(__import__("pandas").Series(y, index=frame.index), npartitions=3)
    model = boostkit.dask.Booster("real-adaboost", n_rounds=20).fit(Xd, yd, client=client)
    assert model.features.names == ref.features.names
    assert_same_model(ref, model)
    np.testing.assert_array_equal(boostkit.dask.predict(model, Xd).compute(), ref.predict(frame))


def test_predict_maps_over_partitions(client, cancer):
    X, y = cancer
    model = boostkit.Booster("adaboost-mh", n_rounds=10).fit(X, np.arange(len(y)) % 3)
    Xd = da.from_array(X, chunks=(100, 4))
    np.testing.assert_array_equal(boostkit.dask.predict(model, Xd).compute(), model.predict(X))
    np.testing.assert_allclose(boostkit.dask.predict_proba(model, Xd).compute(),
                               model.predict_proba(X))
    np.testing.assert_allclose(boostkit.dask.decision_function(model, Xd).compute(),
                               model.decision_function(X))


def test_the_scikit_learn_style_classifier(client, cancer):
    X, y = cancer
    clf = boostkit.dask.BoostClassifier("real-adaboost", 15, client=client)
    Xd, yd = da.from_array(X, chunks=(200, 9)), da.from_array(y, chunks=200)
    assert clf.fit(Xd, yd) is clf
    local = boostkit.sklearn.BoostClassifier("real-adaboost", 15).fit(X, y)
    np.testing.assert_array_equal(clf.predict(Xd).compute(), local.predict(X))
    np.testing.assert_array_equal(clf.predict(X), local.predict(X))
    assert clf.n_features_in_ == 9 and clf.fit_stats_.rounds == 15
    copy = pickle.loads(pickle.dumps(clf))  # the client stays behind
    assert copy.client is None
    np.testing.assert_array_equal(copy.predict(X), local.predict(X))
    assert clf.get_params()["client"] is client


def test_bad_input_is_refused_clearly(client, cancer):
    X, y = cancer
    booster = boostkit.dask.Booster("adaboost", n_rounds=3)
    with pytest.raises(DataError, match="needs X as a Dask array or DataFrame"):
        booster.fit(X, y, client=client)
    with pytest.raises(DataError, match="chunked differently along the rows"):
        booster.fit(da.from_array(X, chunks=(100, 9)), da.from_array(y, chunks=150),
                    client=client)
    with pytest.raises(RecipeError, match="cannot run distributed: proposal 'tree' with midpoints"):
        boostkit.dask.Booster("weightboost", proposal=("tree", {"midpoints": True}),
                              n_rounds=3).fit(
            da.from_array(X, chunks=(100, 9)), da.from_array(y, chunks=100), client=client)
    with pytest.raises(DataError, match="client must be a dask.distributed.Client"):
        booster.fit(da.from_array(X, chunks=(100, 9)), da.from_array(y, chunks=100),
                    client="tcp://nowhere:8786")


def test_a_worker_killed_mid_fit_leaves_the_same_model(cancer):
    X, y = cancer
    ref = boostkit.Booster("adaboost", n_rounds=30).fit(X, y)
    with _cluster(2, processes=True) as cluster, Client(cluster) as c:
        killed = []

        def kill_a_worker(state, record):
            if record.round == 8:
                worker = sorted(c.scheduler_info()["workers"])[0]
                pid = c.run(os.getpid, workers=[worker])[worker]
                os.kill(pid, signal.SIGKILL)  # a crash: its nanny starts an empty worker
                killed.append(worker)

        booster = boostkit.dask.Booster("adaboost", n_rounds=30, callbacks=[kill_a_worker])
        model = booster.fit(da.from_array(X, chunks=(100, 9)), da.from_array(y, chunks=100),
                            client=c)
    assert killed
    assert booster.fit_stats_.replays >= 1  # its shards were rebuilt and brought up to date
    assert_same_model(ref, model)


@pytest.mark.slow
@pytest.mark.parametrize("recipe, n_rounds", [("weightboost", 12), ("pav-adaboost-finite", 12)])
def test_a_worker_killed_mid_fit_leaves_the_same_tree_and_pav_model(cancer, recipe, n_rounds):
    """A tree recipe (a reduction per level) and a PAV recipe (raw values kept on the shards,
    back-fitted terms) lose a worker mid-fit: the rebuilt shards are replayed, reductions
    included, and the model is the single-machine one."""
    X, y = cancer
    X = np.nan_to_num(X, nan=0.0)  # the score columns take no missing values
    ref = boostkit.Booster(recipe, n_rounds=n_rounds).fit(X, y)
    with _cluster(2, processes=True) as cluster, Client(cluster) as c:
        killed = []

        def kill_a_worker(state, record):
            if record.round == 4:
                worker = sorted(c.scheduler_info()["workers"])[0]
                pid = c.run(os.getpid, workers=[worker])[worker]
                os.kill(pid, signal.SIGKILL)
                killed.append(worker)

        booster = boostkit.dask.Booster(recipe, n_rounds=n_rounds, callbacks=[kill_a_worker])
        model = booster.fit(da.from_array(X, chunks=(100, 9)), da.from_array(y, chunks=100),
                            client=c)
    assert killed
    assert booster.fit_stats_.replays >= 1
    assert_same_model(ref, model)
