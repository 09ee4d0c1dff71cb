"""SAMME, Ada2Boost and RankBoost on every data plane; what of them cannot run on shards is
refused before any work, with its reason.

Each distributed fit must be the single-machine model: the same terms, coefficients within
1e-12, on 1, 2 and 4 shards, on uneven shards (empty, label-sorted, skewed), and after a shard
is lost and rebuilt mid-fit. What each needs beyond the class histogram: SAMME a start on the
true-label pairs given row by row (``boostkit_row_initial_weights``), RankBoost its classes
normalised apart (``RowWeights(by_sign=True)``), Ada2Boost its cell sums.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import distributed as dist
from boostkit.capabilities import DISTRIBUTED
from boostkit.errors import HookError, RecipeError
from boostkit.losses import get_loss, shard_weights
from boostkit_adaboost import SammeWeights
from test_protocol import assert_same_model


@pytest.fixture(scope="module")
def signs():
    """+-1 features, the first 8 voting for the label (one-pass boosting's base classifiers)."""
    rng = np.random.default_rng(7)
    X = rng.choice([-1.0, 1.0], size=(600, 30))
    return X, np.where(X[:, :8].sum(axis=1) + rng.normal(size=600) > 0, 1, -1)


@pytest.fixture(scope="module")
def counts():
    """Term counts, the first 6 columns voting for the label and the next 6 against."""
    rng = np.random.default_rng(1)
    X = rng.poisson(0.6, size=(600, 25)).astype(np.float64)
    return X, np.where(X[:, :6].sum(axis=1) - X[:, 6:12].sum(axis=1)
                       + rng.normal(size=600) > 0, 1, -1)


#: recipe -> (Booster keyword arguments, dataset fixture)
CASES = {
    "samme": (dict(algorithm="samme", n_rounds=25), "contraceptive"),
    "samme-error": (dict(algorithm="samme-error", n_rounds=25), "contraceptive"),
    "samme-binary": (dict(algorithm="samme", n_rounds=20), "cancer"),
    "ada2boost": (dict(algorithm="ada2boost", n_rounds=30,
                       reweighting=("stratification", {"pn_records": False})), "cancer"),
    "rankboost": (dict(algorithm="rankboost", n_rounds=30), "cancer"),
    "opab": (dict(algorithm="opab", n_rounds=40, random_state=3), "signs"),
    "opab-counts": (dict(algorithm="opab", n_rounds=40, random_state=3), "counts"),
    "picky-adaboost": (dict(algorithm="picky-adaboost proposal=ordered-pool(base=sign)"
                            "+picky(gamma_bar=0.05)", n_rounds=40, random_state=3), "signs"),
    "picky-counts": (dict(algorithm="picky-adaboost", n_rounds=40, random_state=3), "counts"),
}


def _parts(X, y, bounds):
    return [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _even(n, k):
    return np.linspace(0, n, k + 1).astype(int)


def _case(request, name):
    kwargs, fixture = CASES[name]
    X, y = request.getfixturevalue(fixture)
    return boostkit.Booster(**kwargs), X, y


def assert_same_records(ref, model, tol=1e-12):
    """The single-machine model, and its records' potential and extras to the same tolerance."""
    assert_same_model(ref, model, tol)
    for r, m in zip(ref.records, model.records):
        assert (m.z is None) == (r.z is None)
        if r.z is not None:
            assert m.z == pytest.approx(r.z, rel=tol)
            assert m.error_bound == pytest.approx(r.error_bound, rel=1e-10)
        assert m.extra.keys() == r.extra.keys()
        for key, value in r.extra.items():
            if isinstance(value, float):
                assert m.extra[key] == pytest.approx(value, rel=1e-10, abs=tol), key
            else:
                assert m.extra[key] == value, key


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("n_shards", [1, 2, 4])
def test_the_distributed_model_is_the_single_machine_model(request, name, n_shards):
    booster, X, y = _case(request, name)
    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y),
                                                                                  n_shards))))
    assert_same_records(ref, model)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-12)
    assert stats.rounds == len(model.records) and stats.replays == 0


@pytest.mark.parametrize("name", list(CASES))
def test_uneven_shards_empty_label_sorted_and_skewed(request, name):
    booster, X, y = _case(request, name)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    bounds = [0, 0, 7, len(y) // 3, len(y) // 3, len(y) - 2, len(y)]
    ref = booster.fit(X, y)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, bounds)))
    assert_same_records(ref, model)


@pytest.mark.parametrize("name", list(CASES))
def test_a_lost_shard_is_rebuilt_and_replayed(request, name):
    booster, X, y = _case(request, name)
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 3)))

    def lose(state, record):
        if record.round in (2, 4):
            shards.lose(record.round % 3)

    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(attrs.evolve(booster, callbacks=[lose]), shards)
    assert_same_records(ref, model)
    assert stats.replays == 2 and stats.replayed_terms == (2 + 1) + (4 + 1)


def test_samme_starts_every_shard_on_its_true_label_pairs(contraceptive):
    X, y = contraceptive
    w = np.arange(len(y)) % 5 + 1.0
    starts = []
    boostkit.Booster("samme", n_rounds=1, callbacks=[
        lambda state, record: starts.append(state.initial_weights)]).fit(X, y, sample_weight=w)
    shards = dist.LocalShards([(X[a:b], y[a:b], w[a:b]) for a, b in [(0, 500), (500, len(y))]])
    dist.fit_on_shards(boostkit.Booster("samme", n_rounds=1), shards)
    on_shards = np.concatenate([shard.initial_weights for shard in shards.shards])
    np.testing.assert_allclose(on_shards, starts[0], rtol=1e-15, atol=0)
    assert (np.count_nonzero(on_shards, axis=1) == 1).all()


def test_a_perfect_labelling_stops_samme_on_shards_as_on_one_machine():
    X = np.arange(40, dtype=np.float64)[:, None]
    y = np.repeat([0, 1], 20)
    booster = boostkit.Booster("samme", n_rounds=10)
    ref = booster.fit(X, y)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, [0, 15, 40])))
    assert ref.stop_reason == "perfect-fit" and ref.records[0].extra["class_error"] == 0.0
    assert_same_records(ref, model)


@attrs.define
class HalfStart(SammeWeights):
    """SAMME's weights from a start whose row form forgets half of the weight."""

    name = "test-half-start"

    @boostkit.hookimpl
    def boostkit_row_initial_weights(self, y, labels, sample_weight):
        return 0.5 * super().boostkit_row_initial_weights(y, labels, sample_weight)


@attrs.define
class NegativeStart(SammeWeights):
    """A row form of D_1 with a negative weight."""

    name = "test-negative-start"

    @boostkit.hookimpl
    def boostkit_row_initial_weights(self, y, labels, sample_weight):
        d1 = super().boostkit_row_initial_weights(y, labels, sample_weight)
        d1[0, labels[0]] = -d1[0, labels[0]]
        return d1


@pytest.mark.parametrize("component, message", [
    (HalfStart, r"sum to 0\.(5|4999)"),
    (NegativeStart, "finite non-negative"),
])
def test_a_row_start_that_is_no_distribution_is_refused_naming_it(contraceptive, component,
                                                                   message):
    X, y = contraceptive

    class Plugin:
        @boostkit.hookimpl
        def boostkit_register_components(self, registry):
            registry.add_component(component)

    boostkit.register_plugin(Plugin(), name="test-start-plugin")
    try:
        booster = boostkit.Booster(proposal="stump", calibration="samme-alpha",
                                   reweighting=component.name, n_rounds=2)
        with pytest.raises(HookError, match=f"{component.name}.*{message}"):
            dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 2))))
    finally:
        boostkit.unregister_plugin("test-start-plugin")


@attrs.define
class RowFormBipartite(boostkit.Reweighting):
    """Bipartite RankBoost's reweighting written as its row form alone."""

    name = "test-row-form-bipartite"
    provides = frozenset({"potential", "pairwise-loss", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        answer = shard_weights(get_loss("exponential"), margin, y, initial_weights, n_jobs)
        return boostkit.RowWeights(answer.weights, answer.log_scale, by_sign=True)


def test_weights_normalised_by_sign_are_bipartite_rankboosts_on_every_plane(cancer):
    X, y = cancer

    class Plugin:
        @boostkit.hookimpl
        def boostkit_register_components(self, registry):
            registry.add_component(RowFormBipartite)

    boostkit.register_plugin(Plugin(), name="test-by-sign-plugin")
    try:
        ref = boostkit.Booster("rankboost", n_rounds=25).fit(X, y)
        booster = boostkit.Booster("rankboost", reweighting=RowFormBipartite.name, n_rounds=25)
        assert_same_records(ref, booster.fit(X, y))
        model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 3))))
        assert_same_records(ref, model)
    finally:
        boostkit.unregister_plugin("test-by-sign-plugin")


def test_the_sign_of_a_value_inside_a_bin_is_refused_naming_the_column():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    booster = boostkit.Booster("opab", proposal=("ordered-pool", {"base": "sign"}), max_bins=4,
                               n_rounds=3)
    with pytest.raises(boostkit.DataError, match="column x\\[0\\] has training values on both "
                                                 r"sides of 0 in its bin \d"):
        dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 2))))


@attrs.frozen
class SignWeights:
    """A reduction: the weight D_t of the negative and of the positive rows."""

    def __call__(self, rows):
        positive = rows.is_pos.astype(bool)
        return np.array([rows.weights[~positive].sum(), rows.weights[positive].sum()])


def test_reductions_see_the_weights_normalised_by_sign(cancer):
    X, y = cancer
    seen = {"local": [], "shards": []}

    def reduce_into(key):
        return lambda state, record: seen[key].append(state.reduce(SignWeights()))

    boostkit.Booster("rankboost", n_rounds=6, callbacks=[reduce_into("local")]).fit(X, y)
    dist.fit_on_shards(boostkit.Booster("rankboost", n_rounds=6, callbacks=[reduce_into("shards")]),
                       dist.LocalShards(_parts(X, y, _even(len(y), 3))))
    np.testing.assert_allclose(seen["local"], 0.5, rtol=1e-12)
    np.testing.assert_allclose(seen["shards"], seen["local"], rtol=1e-12)


def test_counts_of_several_values_in_a_bin_are_refused_naming_the_column(counts):
    X, y = counts
    booster = boostkit.Booster("opab", max_bins=3, n_rounds=3)
    with pytest.raises(boostkit.DataError, match=r"column x\[\d+\] has several training "
                                                 r"values in its bin 2 \(2 to \d\)"):
        dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 2))))


def test_bipartite_row_form_keeps_classes_whose_exponents_lie_far_apart():
    """F's offset is free in RankBoost: at F ~ 400 everywhere, the negatives' exponents F(x0)
    and the positives' -F(x1) lie 800 apart, and one scale would lose every positive."""
    from boostkit.plane import sign_potential
    from boostkit_rankboost import BipartiteReweighting
    from boostkit_rankboost.kernels import bipartite_weights

    rng = np.random.default_rng(5)
    y = np.where(rng.random(300) < 0.4, 1.0, -1.0)
    margin = 400.0 + rng.normal(size=300)
    d1 = rng.dirichlet(np.ones(300))
    answer = BipartiteReweighting().boostkit_row_weights(margin=margin, y=y, initial_weights=d1,
                                                         n_jobs=1)
    positive = y > 0
    totals = np.array([answer.weights[~positive].sum(), answer.weights[positive].sum()])
    expected = np.empty(300)
    log_potential = bipartite_weights(margin, positive.astype(np.uint8), d1, expected)
    np.testing.assert_allclose(answer.weights / (2.0 * np.where(positive, totals[1], totals[0])),
                               expected, rtol=1e-12)
    assert sign_potential(np.log(totals) + answer.log_scale,
                          (d1[~positive].sum(), d1[positive].sum())) == pytest.approx(
        log_potential, rel=1e-12)


def test_by_sign_weights_take_no_potential_of_their_own():
    with pytest.raises(ValueError, match="by_sign=True.*no log_potential"):
        boostkit.RowWeights(np.ones(3), 0.0, -1.0, by_sign=True)
    with pytest.raises(ValueError, match="pair of log scales .* needs by_sign=True"):
        boostkit.RowWeights(np.ones(3), (0.0, 1.0))


@pytest.mark.parametrize("recipe, overrides, reason", [
    ("ada2boost", {}, r"reweighting 'stratification' records the PN-space quantities .* "
                      r"stratification\(pn_records=False\) .* distributes"),
    ("samme", {"reweighting": ("samme-weights", {"floor": 1e-10})},
     r"reweighting 'samme-weights' with floor=1e-10 .* no function of the margins .* "
     "floor=0 .* distributes"),
    ("rankboost-pairs", {}, "reweighting 'preference-pairs' has no row form"),
    ("rankboost-features", {}, "proposal 'feature-ranker'"),
    ("popbm", {}, "proposal 'popbm-pool'"),
])
def test_what_cannot_run_on_shards_is_refused_with_its_reason(cancer, recipe, overrides,
                                                             reason):
    X, y = cancer
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 2)))
    with pytest.raises(RecipeError, match=f"cannot run distributed: {reason}"):
        dist.fit_on_shards(boostkit.Booster(recipe, n_rounds=3, **overrides), shards)
    assert shards.plan is None  # refused before any shard was built


@pytest.mark.slow
def test_on_a_dask_cluster_of_two_worker_processes(request):
    pytest.importorskip("distributed")
    import dask.array as da
    from distributed import Client, LocalCluster

    import boostkit.dask

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as c:
        for name in ("samme", "ada2boost", "rankboost", "opab-counts", "picky-adaboost"):
            booster, X, y = _case(request, name)
            ref = booster.fit(X, y)
            kwargs = CASES[name][0]
            model = boostkit.dask.Booster(**kwargs).fit(
                da.from_array(X, chunks=(len(y) // 3 + 1, X.shape[1])),
                da.from_array(y, chunks=len(y) // 3 + 1), client=c)
            assert_same_records(ref, model)
