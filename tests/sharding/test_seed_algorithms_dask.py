"""Every seed algorithm on a Dask LocalCluster of 1, 2 and 4 worker processes: each gives the
single-machine model (the same terms, coefficients within 1e-12), or is refused with its reason
before any work (slow: three process clusters)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("distributed")
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import boostkit  # noqa: E402
import boostkit.dask  # noqa: E402
from boostkit.datasets import load  # noqa: E402
from boostkit.errors import RecipeError  # noqa: E402

from test_ovr_validation_distributed import assert_same_one_vs_rest  # noqa: E402
from test_pav_distributed import assert_same_model as assert_same_pav_model  # noqa: E402
from test_protocol import assert_same_model  # noqa: E402

pytestmark = pytest.mark.slow


def _cancer():
    data = load("breast_cancer_wisconsin")
    return np.nan_to_num(data.X, nan=0.0), data.y  # the score columns take no missing values


def _contraceptive():
    data = load("contraceptive")
    return data.X, data.y


def _labels():
    """A multi-label indicator matrix of three labels, each a noisy half-space."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 6))
    return X, (X[:, :3] + 0.5 * rng.normal(size=(600, 3)) > 0).astype(np.int64)


def _signs():
    rng = np.random.default_rng(7)
    X = rng.choice([-1.0, 1.0], size=(600, 30))
    return X, np.where(X[:, :8].sum(axis=1) + rng.normal(size=600) > 0, 1, -1)


#: recipe -> (Booster keyword arguments, data)
SEEDS = {
    "pav-adaboost-finite": (dict(algorithm="pav-adaboost-finite", n_rounds=15), _cancer),
    "linear-adaboost-finite": (dict(algorithm="linear-adaboost-finite", n_rounds=15), _cancer),
    "optimal-linear-adaboost": (dict(algorithm="optimal-linear-adaboost", n_rounds=15),
                                _signs),
    "weightboost": (dict(algorithm="weightboost", n_rounds=15), _cancer),
    "opab": (dict(algorithm="opab", n_rounds=30, random_state=3), _signs),
    "picky-adaboost": (dict(algorithm="picky-adaboost proposal=ordered-pool(base=sign)"
                            "+picky(gamma_bar=0.05)", n_rounds=30, random_state=3), _signs),
    "rankboost": (dict(algorithm="rankboost", n_rounds=20), _cancer),
    "ada2boost (without its PN records)": (
        dict(algorithm="ada2boost", n_rounds=20,
             reweighting=("stratification", {"pn_records": False})), _cancer),
    "samme": (dict(algorithm="samme", n_rounds=20), _contraceptive),
    "adaboost-mh one-vs-rest": (dict(algorithm="adaboost-mh", n_rounds=15,
                                     multiclass="one-vs-rest"), _contraceptive),
    "adaboost-mh multi-label": (dict(algorithm="adaboost-mh", n_rounds=15), _labels),
    "adaboost multi-label one-vs-rest": (dict(algorithm="adaboost", n_rounds=15,
                                              multiclass="one-vs-rest"), _labels),
}

#: recipe -> what the refusal names
REFUSED = {
    "pav-adaboost": "cmass",
    "ada2boost": "stratification",
}


@pytest.fixture(scope="module", params=[1, 2, 4], ids=lambda n: f"{n}-workers")
def client(request):
    with LocalCluster(n_workers=request.param, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as c:
        yield c


def _dask(X, y, parts=3):
    rows = len(y) // parts + 1
    return (da.from_array(X, chunks=(rows, X.shape[1])),
            da.from_array(y, chunks=(rows,) + y.shape[1:]))


@pytest.mark.parametrize("name", list(SEEDS))
def test_a_seed_algorithm_on_worker_processes_is_the_single_machine_model(client, name):
    kwargs, data = SEEDS[name]
    X, y = data()
    ref = boostkit.Booster(**kwargs).fit(X, y)
    booster = boostkit.dask.Booster(**kwargs)
    model = booster.fit(*_dask(X, y), client=client)
    if name == "optimal-linear-adaboost":  # naive Bayes weights: 1e-11 relative, as there said
        assert_same_pav_model(ref, model, X)
    elif kwargs.get("multiclass") == "one-vs-rest":
        assert_same_one_vs_rest(ref, model)
        np.testing.assert_array_equal(model.predict(X), ref.predict(X))
        return
    else:
        assert_same_model(ref, model)
    assert booster.fit_stats_.rounds == len(ref.records)


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_seed_algorithm_that_cannot_distribute_is_refused_before_any_work(client, name):
    X, y = _cancer()
    booster = boostkit.dask.Booster(name, n_rounds=5)
    before = set(client.who_has())
    with pytest.raises(RecipeError, match=REFUSED[name]) as refused:
        booster.fit(*_dask(X, y), client=client)
    assert "cannot run distributed" in str(refused.value)
    assert set(client.who_has()) == before  # nothing was built on the workers
    assert booster.fit_stats_ is None
