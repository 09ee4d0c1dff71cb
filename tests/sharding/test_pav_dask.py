"""The PAV recipes that distribute (Wilbur et al. 2005), on a LocalCluster of two worker
processes: the single-machine model, with back-fitting, raw values kept on the workers and the
sigmoid's reductions crossing process boundaries (everything pickled)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("distributed")
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import boostkit  # noqa: E402
import boostkit.dask  # noqa: E402
from boostkit.datasets import load  # noqa: E402

from test_pav_distributed import assert_same_model  # noqa: E402


@pytest.mark.slow
def test_the_pav_recipes_on_two_worker_processes_give_the_single_machine_model():
    cancer = load("breast_cancer_wisconsin", dropna=True)
    spambase = load("spambase")
    rows = np.random.default_rng(0).permutation(spambase.X.shape[0])[:600]
    cases = [("pav-adaboost-finite", 20, cancer.X, cancer.y),
             ("linear-adaboost-finite", 20, cancer.X, cancer.y),
             ("optimal-linear-adaboost", 10, spambase.X[rows], spambase.binary_target()[rows])]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        for recipe, n_rounds, X, y in cases:
            booster = boostkit.dask.Booster(recipe, n_rounds=n_rounds)
            model = booster.fit(da.from_array(X, chunks=(150, X.shape[1])),
                                da.from_array(y, chunks=150), client=client)
            assert_same_model(boostkit.Booster(recipe, n_rounds=n_rounds).fit(X, y), model, X)
            assert booster.fit_stats_.rounds == n_rounds and booster.fit_stats_.replays == 0
