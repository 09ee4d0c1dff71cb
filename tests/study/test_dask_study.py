"""A study on a Dask LocalCluster of two worker processes gives the serial run's values; each
task is one cell and only the driver writes the database."""

from __future__ import annotations

import pytest

from boostkit.study import ResultStore, Resampling, StudySpec, run_study
from study_data import blob_sources

distributed = pytest.importorskip("distributed")

TIMINGS = ["fit_seconds", "predict_seconds", "finished_at"]


def spec(database):
    return StudySpec(datasets=["two", "three"], algorithms=["adaboost", "real-adaboost"],
                     resampling=Resampling.of("k-fold", 3), n_rounds=5, database=database)


def values(database):
    with ResultStore(database, readonly=True) as store:
        return store.read_frame().drop(columns=TIMINGS), store.read_curves()


def test_a_local_cluster_of_two_processes_gives_the_serial_values(tmp_path):
    sources = blob_sources(tmp_path / "data", two={}, three=dict(n_classes=3, seed=1))
    serial = run_study(spec(tmp_path / "serial.sqlite"), sources=sources)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            on_dask = run_study(spec(tmp_path / "dask.sqlite"), sources=sources, client=client)
            # the same study again: nothing left to do
            assert run_study(spec(tmp_path / "dask.sqlite"), sources=sources,
                             client=client).computed == 0
        address = cluster.scheduler_address
        by_address = run_study(spec(tmp_path / "address.sqlite"), sources=sources,
                               scheduler=address)
    assert on_dask.computed == by_address.computed == 12
    a, ca = values(serial.database)
    for database in (on_dask.database, by_address.database):
        b, cb = values(database)
        assert a.equals(b) and ca.equals(cb)
