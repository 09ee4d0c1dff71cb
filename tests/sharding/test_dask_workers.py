"""boostkit.dask on worker processes: the driver's plugins on every worker, replacements
included, and no wait without a bound.

A third-party distribution (``tests/third_party/distributed_plugin``: the ``huber-exp`` margin
loss and the ``subspace-stump`` proposal) is built and installed into a directory of its own;
the fits that use it run in a subprocess with that directory on ``PYTHONPATH``, whose Dask
workers inherit it, so the plugin is found through its entry point on the driver and on every
worker, and this process never sees it. Every subprocess runs under a timeout of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import boostkit  # noqa: E402
import boostkit.dask  # noqa: E402
import boostkit.distributed  # noqa: E402
from boostkit.datasets import load  # noqa: E402
from boostkit.errors import DataError, PluginLoadError  # noqa: E402
from plugin_install import install_distribution  # noqa: E402

DISTRIBUTION = Path(__file__).parents[1] / "third_party" / "distributed_plugin"

#: A fit on a LocalCluster of two worker processes that kills workers with SIGKILL in the
#: rounds ``kill_every``, ``2 kill_every``, ... (``kills`` of them, alternating between the two
#: nannies' processes), and prints one JSON line: the model's agreement with the in-process
#: fit of the same booster, or the error that ended the fit and how long after the last kill.
KILL_SCRIPT = r"""
import json
import os
import signal
import sys
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import boostkit
import boostkit.dask
import boostkit.losses
from boostkit.datasets import load


def main(algorithm, n_rounds, kill_every, kills, no_worker_timeout):
    data = load("breast_cancer_wisconsin", dropna=True)
    X, y = data.X, data.y
    reference = boostkit.Booster(algorithm, n_rounds=n_rounds, random_state=0).fit(X, y)
    out = {"kills": []}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster) as client:
        nannies = [cluster.workers[name] for name in sorted(cluster.workers)]

        def kill(state, record):
            if record.round % kill_every or len(out["kills"]) >= kills:
                return
            nanny = nannies[len(out["kills"]) % 2]
            process = nanny.process.process if nanny.process is not None else None
            if process is None or not process.is_alive():  # given up, or restarting
                out["kills"].append(None)
                return
            os.kill(process.pid, signal.SIGKILL)
            out["kills"].append(time.monotonic())

        booster = boostkit.dask.Booster(algorithm, n_rounds=n_rounds, random_state=0,
                                        callbacks=[kill], no_worker_timeout=no_worker_timeout)
        out["workers_before"] = sorted(map(list, client.run(boostkit.dask.plugin_set).values()))
        try:
            model = booster.fit(da.from_array(X, chunks=(100, X.shape[1])),
                                da.from_array(y, chunks=100), client=client)
        except boostkit.dask.ClusterError as exc:
            last = max((t for t in out["kills"] if t is not None), default=None)
            out["error"] = str(exc)
            out["after_last_kill"] = None if last is None else time.monotonic() - last
            out["fitted"] = booster.fit_stats_ is not None
        else:
            out["max_difference"] = float(np.abs(model.decision_function(X)
                                                 - reference.decision_function(X)).max())
            out["same_hypotheses"] = ([str(h) for h in model.hypotheses]
                                      == [str(h) for h in reference.hypotheses])
            out["replays"] = booster.fit_stats_.replays
            # The workers now, the nannies' replacements among them: whether they loaded the
            # plugins as they started (loss_names() loads nothing), then their plugins.
            client.wait_for_workers(2, timeout=120)
            out["loss_on_workers"] = sorted(map(str, client.run(
                lambda: "huber-exp" in boostkit.losses.loss_names()).values()))
            out["workers_after"] = sorted(
                map(list, client.run(boostkit.dask.plugin_set).values()))
    out["kills"] = len([t for t in out["kills"] if t is not None])
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:5]), float(sys.argv[5]))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A directory holding the installed ``boostkit-example-distributed``."""
    target = install_distribution(DISTRIBUTION, tmp_path_factory.mktemp("distributed_plugin"))
    assert list(target.glob("boostkit_example_distributed-0.1.0.dist-info/entry_points.txt"))
    return target


def _kill_run(site: Path, tmp_path: Path, algorithm: str, *, n_rounds: int, kill_every: int,
              kills: int, no_worker_timeout: float, timeout: float) -> dict:
    """One :data:`KILL_SCRIPT` fit in a subprocess, ended by ``timeout`` if it hangs."""
    script = tmp_path / "kill_fit.py"
    script.write_text(KILL_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOSTKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.setdefault("NUMBA_NUM_THREADS", "1")
    try:
        completed = subprocess.run(
            [sys.executable, str(script), algorithm, str(n_rounds), str(kill_every), str(kills),
             str(no_worker_timeout)],
            capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the fit hung: no answer within {timeout:g} s\n{exc.stderr}")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_a_plugins_loss_and_proposal_fit_on_worker_processes_and_their_replacements(
        site, tmp_path):
    out = _kill_run(site, tmp_path, "huber-subspace-boost", n_rounds=20, kill_every=6,
                    kills=1, no_worker_timeout=60.0, timeout=600.0)
    assert "error" not in out, out
    assert out["kills"] == 1 and out["replays"] >= 1  # a worker died; its shards were rebuilt
    plugin = ["example-distributed", "boostkit-example-distributed", "0.1.0"]
    assert all(plugin in worker for worker in out["workers_before"])
    # The replacement loaded the driver's plugins too, and finds the plugin's loss by name.
    assert len(out["workers_after"]) == 2 and all(plugin in w for w in out["workers_after"])
    assert out["loss_on_workers"] == ["True", "True"]
    assert out["same_hypotheses"] and out["max_difference"] <= 1e-12


@pytest.mark.slow
def test_workers_killed_every_three_rounds_finish_the_same_model_or_stop_clearly(
        site, tmp_path):
    """20 fits in a row, 9 kills each: every one finishes with the in-process model, or stops
    with the cluster's error within the bound; none hangs (each runs under a timeout)."""
    no_worker_timeout = 20.0
    outcomes = []
    for _ in range(20):
        out = _kill_run(site, tmp_path, "adaboost", n_rounds=30, kill_every=3, kills=9,
                        no_worker_timeout=no_worker_timeout, timeout=300.0)
        if "error" in out:
            assert "the Dask cluster had no worker for 20 s" in out["error"], out
            assert "; no model was returned" in out["error"] and not out["fitted"]
            # A LocalCluster gives a worker up 15 s (lost-worker-timeout) after it left.
            assert out["after_last_kill"] < no_worker_timeout + 15.0 + 30.0, out
        else:
            assert out["same_hypotheses"] and out["max_difference"] <= 1e-12, out
        outcomes.append("stopped" if "error" in out else "finished")
        print(f"fit {len(outcomes)}: {outcomes[-1]} after {out['kills']} kills", flush=True)


#: A fit with the plugin on a LocalCluster whose worker process loads only the first-party
#: plugins (BOOSTKIT_PLUGINS in its environment): the error that refuses it, as JSON.
REFUSED_SCRIPT = r"""
import json

import dask.array as da
from distributed import Client, LocalCluster

import boostkit
import boostkit.dask
from boostkit.datasets import load
from boostkit.errors import PluginLoadError

if __name__ == "__main__":
    data = load("breast_cancer_wisconsin", dropna=True)
    first_party = ",".join(name for name, distribution, _ in boostkit.dask.plugin_set()
                           if distribution == "boostkit")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=50,
                      env={"BOOSTKIT_PLUGINS": first_party}) as cluster, Client(cluster) as client:
        booster = boostkit.dask.Booster("huber-subspace-boost", n_rounds=5)
        try:
            booster.fit(da.from_array(data.X, chunks=(200, 9)), da.from_array(data.y, chunks=200),
                        client=client)
        except PluginLoadError as exc:
            print(json.dumps({"error": str(exc), "fitted": booster.fit_stats_ is not None}))
"""


@pytest.mark.slow
def test_a_worker_process_without_the_drivers_plugin_is_refused(site, tmp_path):
    script = tmp_path / "refused_fit.py"
    script.write_text(REFUSED_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOSTKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                               env=env, timeout=600)
    assert completed.returncode == 0, completed.stderr
    out = json.loads(completed.stdout.strip().splitlines()[-1])
    assert "refused: plugin 'example-distributed' (boostkit-example-distributed 0.1.0) is not " \
           "loaded on the worker" in out["error"]
    assert "'boostkit-example-distributed==0.1.0' on every worker" in out["error"]
    assert out["error"].endswith("the fit was refused before reading any data, and no model "
                                 "was returned")
    assert not out["fitted"]


def _cluster(n_workers=1):
    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=False,
                        dashboard_address=None, silence_logs=50)


@pytest.fixture(scope="module")
def cancer():
    data = load("breast_cancer_wisconsin")
    return da.from_array(data.X, chunks=(200, 9)), da.from_array(data.y, chunks=200)


def test_a_cluster_left_without_workers_stops_the_fit_clearly(cancer):
    X, y = cancer
    with _cluster() as cluster, Client(cluster) as client:

        def lose_every_worker(state, record):
            if record.round == 3:
                cluster.scale(0)

        booster = boostkit.dask.Booster("adaboost", n_rounds=10, no_worker_timeout=1.0,
                                        callbacks=[lose_every_worker])
        with pytest.raises(boostkit.dask.ClusterError,
                           match=r"had no worker for 1 s .*the fit stopped after round 3; no "
                                 r"model was returned"):
            booster.fit(X, y, client=client)
    assert booster.fit_stats_ is None  # nothing half-written


def test_a_closed_cluster_says_that_the_scheduler_is_lost(cancer):
    X, y = cancer
    with _cluster() as cluster, Client(cluster) as client:

        def close_the_cluster(state, record):
            if record.round == 2:
                cluster.close()

        booster = boostkit.dask.Booster("adaboost", n_rounds=10, no_worker_timeout=2.0,
                                        callbacks=[close_the_cluster])
        with pytest.raises(boostkit.dask.ClusterError,
                           match=r"the driver lost the Dask scheduler.*the fit stopped after "
                                 r"round 2; no model was returned"):
            booster.fit(X, y, client=client)
    assert booster.fit_stats_ is None


def test_a_step_whose_tasks_stall_stops_after_task_timeout(cancer, monkeypatch):
    X, y = cancer
    step_shards = boostkit.distributed.step_shards

    def stalling(shards, calls):
        if calls[0][0] == 1:  # round 2: the task does not finish in time
            time.sleep(2.5)
        return step_shards(shards, calls)

    monkeypatch.setattr(boostkit.distributed, "step_shards", stalling)
    with _cluster() as cluster, Client(cluster) as client:
        booster = boostkit.dask.Booster("adaboost", n_rounds=5, task_timeout=1.0)
        with pytest.raises(boostkit.dask.ClusterError,
                           match=r"no task of the step finished for task_timeout = 1 s \(0 of 1 "
                                 r"finished\); the fit stopped after round 1; no model"):
            booster.fit(X, y, client=client)
    assert booster.fit_stats_ is None


def test_a_worker_without_the_drivers_plugin_versions_is_refused_naming_the_plugin():
    expected = boostkit.dask.plugin_set()
    assert ("adaboost", "boostkit", expected[0][2]) in expected
    boostkit.dask.check_worker_plugins(expected, "tcp://worker:1")  # the same set: accepted
    newer = tuple((n, d, "99.0" if n == "adaboost" else v) for n, d, v in expected)
    with pytest.raises(PluginLoadError, match=r"Dask worker tcp://worker:1 refused: plugin "
                                              r"'adaboost' is boostkit \S+ on the worker but "
                                              r"boostkit 99.0 on the driver"):
        boostkit.dask.check_worker_plugins(newer, "tcp://worker:1")
    missing = (*expected, ("huber", "boostkit-huber", "1.0"))
    with pytest.raises(PluginLoadError, match=r"plugin 'huber' \(boostkit-huber 1.0\) is not "
                                              r"loaded on the worker.*'boostkit-huber==1.0'"):
        boostkit.dask.check_worker_plugins(missing, "tcp://worker:1")


def test_a_running_worker_refuses_the_plugins_of_another_version():
    newer = tuple((n, d, "99.0" if n == "adaboost" else v)
                  for n, d, v in boostkit.dask.plugin_set())
    with _cluster() as cluster, Client(cluster) as client:
        with pytest.raises(PluginLoadError, match=r"refused: plugin 'adaboost' is boostkit \S+ "
                                                  r"on the worker but boostkit 99.0"):
            client.register_plugin(boostkit.dask.DriverPlugins(newer))


def test_bounds_are_checked():
    with pytest.raises(DataError, match="no_worker_timeout must be a positive number"):
        boostkit.dask.Booster("adaboost", no_worker_timeout=0)
    with pytest.raises(DataError, match="task_timeout must be a positive number of seconds "
                                        "or None"):
        boostkit.dask.Booster("adaboost", task_timeout=float("inf"))
    assert boostkit.dask.Booster("adaboost", task_timeout=None).task_timeout is None


def test_a_lookup_of_a_plugins_loss_loads_the_plugins(site):
    # A fresh process, as a Dask worker is: nothing has loaded the plugins when it asks.
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOSTKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, "-c", "import boostkit.losses as l; print(l.get_loss('huber-exp').name)"],
        capture_output=True, text=True, env=env, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "huber-exp"
