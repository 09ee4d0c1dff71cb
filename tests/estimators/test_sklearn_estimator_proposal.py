"""Any scikit-learn classifier as a weak learner (plugin ``boostkit_estimators``), and saving the
models made of them (``allow_pickle``).

* ``samme`` with ``sklearn-estimator`` is scikit-learn's ``AdaBoostClassifier`` with the same
  estimator and seed, prediction for prediction, on digits (10 classes) and breast cancer (2);
* an estimator whose ``fit`` takes no ``sample_weight`` is boosted by resampling;
* bad estimators are refused before any data is touched, naming the parameter;
* a model holding fitted estimators (or a recipe holding an estimator) saves only with
  ``allow_pickle=True`` and loads only with it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import attrs
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer, load_digits, load_iris  # noqa: E402
from sklearn.ensemble import AdaBoostClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

import boostkit  # noqa: E402
from boostkit import ModelFormatError, RecipeError  # noqa: E402
from boostkit.multiclass import OneVsRestModel  # noqa: E402


def _split(loader):
    X, y = loader(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


def _samme(estimator, n_rounds=20, **params):
    return boostkit.Booster("samme", n_rounds=n_rounds, proposal=(
        "sklearn-estimator", {"estimator": estimator, **params}))


def _both(X, y, random_state=0):
    tree = DecisionTreeClassifier(max_depth=3)
    ours = _samme(tree, random_state=random_state).fit(X, y)
    theirs = AdaBoostClassifier(tree, n_estimators=20, random_state=random_state).fit(X, y)
    assert ours.n_rounds == len(theirs.estimators_) == 20
    # The same seeds reach the same trees (sklearn.ensemble._base._set_random_states).
    assert ([h.estimator.random_state for h in ours.hypotheses]
            == [e.random_state for e in theirs.estimators_])
    # The first round sees the same uniform weights: the same tree and the same alpha.
    np.testing.assert_array_equal(ours.hypotheses[0].estimator.predict(X),
                                  theirs.estimators_[0].predict(X))
    np.testing.assert_allclose(ours.records[0].coefficients[0], theirs.estimator_weights_[0],
                               rtol=1e-12)
    return ours, theirs


def test_samme_with_a_tree_is_scikit_learns_adaboost_on_digits():
    X, X_test, y, _ = _split(load_digits)
    ours, theirs = _both(X, y)
    assert np.mean(ours.predict(X_test) == theirs.predict(X_test)) >= 0.99
    # The weights (scikit-learn multiplies them, we take exp of the margins) lead to the same
    # trees every round: the same alphas.
    np.testing.assert_allclose([r.coefficients[0] for r in ours.records],
                               theirs.estimator_weights_, rtol=1e-9)


def test_samme_with_a_tree_is_scikit_learns_adaboost_on_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    ours, theirs = _both(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    # On held-out rows: breast cancer's depth-3 trees meet exact ties between features (two cuts
    # separating the same training rows), which a tree breaks by the last bits of the weights; our
    # weights differ from scikit-learn's in the 14th digit (same distribution, other arithmetic),
    # so some rounds pick the other, equally good, tree. scikit-learn does the same against
    # itself: initial weights perturbed by 1e-12 change up to 2.3 % of these test predictions.
    agreements = []
    for split in range(3):
        X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.3, random_state=split,
                                                       stratify=y)
        ours, theirs = _both(X_train, y_train)
        agreements.append(np.mean(ours.predict(X_test) == theirs.predict(X_test)))
    assert min(agreements) >= 0.95 and np.mean(agreements) >= 0.97, agreements


def test_the_seed_follows_the_booster_without_a_random_state_of_its_own():
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=2, max_features=2)  # random feature subsets

    def fit(seed):
        return _samme(tree, n_rounds=5).fit(X, y) if seed is None else boostkit.Booster(
            "samme", n_rounds=5, random_state=seed,
            proposal=("sklearn-estimator", {"estimator": tree})).fit(X, y)

    same = [[h.estimator.random_state for h in fit(7).hypotheses] for _ in range(2)]
    assert same[0] == same[1]
    assert same[0] != [h.estimator.random_state for h in fit(8).hypotheses]
    assert tree.random_state is None  # the template is never touched


class NearestCentroid:
    """A tiny classifier whose fit takes no sample_weight (no scikit-learn base class)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.centroids_ = np.stack([X[y == c].mean(axis=0) for c in self.classes_])
        return self

    def predict(self, X):
        distances = ((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=-1)
        return self.classes_[np.argmin(distances, axis=1)]


@pytest.mark.parametrize("estimator", [
    KNeighborsClassifier(n_neighbors=15, algorithm="kd_tree"), NearestCentroid()],
    ids=["knn", "custom"])
def test_an_estimator_without_sample_weight_is_boosted_by_resampling(estimator):
    X, X_test, y, y_test = _split(load_breast_cancer)
    seen = []

    class Recording(type(estimator)):
        def fit(self, X, y):
            seen.append(X.shape[0])
            return super().fit(X, y)

    recording = Recording(**estimator.get_params()) if hasattr(estimator, "get_params") else Recording()
    model = boostkit.Booster("adaboost", n_rounds=5, random_state=0, proposal=(
        "sklearn-estimator", {"estimator": recording})).fit(X, y)
    assert seen and set(seen) == {X.shape[0]}  # n rows drawn with replacement, every round
    assert np.mean(model.predict(X_test) == y_test) > 0.85
    again = boostkit.Booster("adaboost", n_rounds=5, random_state=0, proposal=(
        "sklearn-estimator", {"estimator": recording})).fit(X, y)
    np.testing.assert_array_equal(again.decision_function(X_test), model.decision_function(X_test))


def test_resampling_can_be_forced_and_follows_the_weights():
    X, y = load_breast_cancer(return_X_y=True)
    model = boostkit.Booster("adaboost", n_rounds=10, random_state=0, proposal=(
        "sklearn-estimator", {"estimator": DecisionTreeClassifier(max_depth=1), "resample": True},
    )).fit(X, y)
    assert model.n_rounds == 10 and np.mean(model.predict(X) == y) > 0.9


def test_binary_recipes_discrete_and_real_adaboost_and_real_scores():
    X, X_test, y, y_test = _split(load_breast_cancer)
    stump = DecisionTreeClassifier(max_depth=1)
    for recipe in ("adaboost", "real-adaboost"):
        model = boostkit.Booster(recipe, n_rounds=20, random_state=0,
                                 proposal=("sklearn-estimator", {"estimator": stump})).fit(X, y)
        assert np.mean(model.predict(X_test) == y_test) > 0.9, recipe
    # Discrete AdaBoost with sklearn's depth-1 tree is boostkit's adaboost with gini stumps,
    # up to the binning of thresholds: compare the error of the first round.
    ours = boostkit.Booster("adaboost", n_rounds=1, proposal="sklearn-estimator").fit(X, y)
    native = boostkit.Booster("adaboost", n_rounds=1, max_bins=255,
                              params={"proposal": {"criterion": "gini"}}).fit(X, y)
    assert ours.records[0].weighted_error == pytest.approx(native.records[0].weighted_error)
    # Real scores from predict_proba: calibrations of real-valued hypotheses.
    lr = LogisticRegression(max_iter=500)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    Xs_test = (X_test - X.mean(axis=0)) / X.std(axis=0)
    model = boostkit.Booster(proposal=("sklearn-estimator", {"estimator": lr,
                                                             "response": "predict_proba"}),
                             calibration="newton-alpha", reweighting="exponential",
                             n_rounds=5).fit(Xs, y)
    assert np.mean(model.predict(Xs_test) == y_test) > 0.9
    h = model.hypotheses[0]
    assert h.n_cells == 0 and np.all(np.abs(h.scores(Xs_test)) <= 1.0)
    decision = boostkit.Booster(proposal=("sklearn-estimator", {"estimator": lr,
                                                                "response": "decision_function"}),
                                calibration="newton-alpha", reweighting="exponential",
                                n_rounds=3).fit(Xs, y)
    np.testing.assert_allclose(decision.hypotheses[0].scores(Xs_test),
                               decision.hypotheses[0].estimator.decision_function(Xs_test))


def test_multiclass_recipes_and_string_labels():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    tree = DecisionTreeClassifier(max_depth=2)
    for recipe in ("samme", "adaboost-mh"):
        model = boostkit.Booster(recipe, n_rounds=10, random_state=0,
                                 proposal=("sklearn-estimator", {"estimator": tree})).fit(X, names)
        assert model.hypotheses[0].n_cells == 3
        assert set(model.predict(X)) <= set(names) and np.mean(model.predict(X) == names) > 0.9
    # Real scores are binary: several classes run one-vs-rest when asked.
    lr = LogisticRegression(max_iter=500)
    ovr = boostkit.Booster(proposal=("sklearn-estimator", {"estimator": lr,
                                                           "response": "predict_proba"}),
                           calibration="newton-alpha", reweighting="exponential", n_rounds=3,
                           multiclass="one-vs-rest").fit(X, y)
    assert isinstance(ovr, OneVsRestModel) and np.mean(ovr.predict(X) == y) > 0.8
    with pytest.raises(RecipeError, match="proposal 'sklearn-estimator' does not handle"):
        boostkit.Booster(proposal=("sklearn-estimator", {"estimator": lr,
                                                         "response": "predict_proba"}),
                         calibration="newton-alpha", reweighting="exponential").fit(X, y)


@pytest.mark.parametrize("estimator, message", [
    (3, "estimator must be an unfitted scikit-learn classifier .* int 3, which has no fit or predict"),
    (DecisionTreeClassifier, "estimator must be an estimator instance, got the class "
                             "DecisionTreeClassifier"),
    (DecisionTreeRegressor(), "estimator must be a classifier, got the regressor "
                              "DecisionTreeRegressor"),
])
def test_a_bad_estimator_is_refused_naming_the_parameter(estimator, message):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(RecipeError, match=f"'sklearn-estimator': {message}"):
        _samme(estimator).fit(X, y)


def test_a_response_the_estimator_lacks_is_refused():
    with pytest.raises(RecipeError, match="response='decision_function', but the estimator "
                                          "KNeighborsClassifier has no decision_function"):
        boostkit.get_registry().instantiate(boostkit.Booster(
            "adaboost", proposal=("sklearn-estimator", {"estimator": KNeighborsClassifier(),
                                                        "response": "decision_function"})
        ).recipe())


# -- saving ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def iris_model():
    X, y = load_iris(return_X_y=True)
    return _samme(DecisionTreeClassifier(max_depth=2), n_rounds=5).fit(X, y), X


def test_saving_fitted_estimators_needs_allow_pickle(iris_model, tmp_path):
    model, X = iris_model
    path = tmp_path / "samme.npz"
    with pytest.raises(ModelFormatError, match=(
            r"cannot save hypothesis 'fitted-estimator', field 'estimator': "
            r"DecisionTreeClassifier is not a JSON value.*Either use a component whose fields "
            r"are JSON values and numpy arrays.*or save with allow_pickle=True")):
        model.save(path)
    assert not path.exists()
    model.save(path, allow_pickle=True)
    with pytest.raises(ModelFormatError, match="holds pickled Python objects .* allow_pickle=True "
                                               "only if you trust"):
        boostkit.load_model(path)
    loaded = boostkit.load_model(path, allow_pickle=True)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    estimator = loaded.recipe.proposal.params["estimator"]
    assert isinstance(estimator, DecisionTreeClassifier) and estimator.max_depth == 2


def test_loading_a_pickled_file_without_the_opt_in_never_unpickles(iris_model, tmp_path):
    model, _ = iris_model
    path = model.save(tmp_path / "samme.npz", allow_pickle=True)
    # A child process, so that the unpickler being patched cannot leak into other tests.
    script = (
        "import pickle, sys, boostkit\n"
        "def refuse(*a, **k): raise SystemExit('unpickled')\n"
        "pickle.loads = refuse; pickle.load = refuse\n"
        "try:\n"
        f"    boostkit.load_model({str(path)!r})\n"
        "except boostkit.ModelFormatError as exc:\n"
        "    print('refused:', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("refused:"), out.stdout + out.stderr
    # A file whose header hides its pickles is refused all the same, at the first one.
    from boostkit.model import write_model_file

    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(arrays.pop("__model__").tobytes())
    header.pop("pickled")
    hidden = write_model_file(tmp_path / "hidden.npz",
                              {k: v for k, v in header.items() if k not in ("format", "version")},
                              arrays)
    with pytest.raises(ModelFormatError, match="holds pickled Python objects"):
        boostkit.load_model(hidden)


def test_a_recipe_parameter_that_is_an_object_needs_allow_pickle(tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    native = boostkit.Booster("adaboost", n_rounds=3).fit(X, y)
    recipe = native.recipe.with_params({"proposal": {"criterion": "gini"}})
    spec = attrs.evolve(recipe.proposal, params={"criterion": "gini",
                                                 "estimator": DecisionTreeClassifier()})
    foreign = attrs.evolve(native, recipe=attrs.evolve(recipe, proposal=spec))
    with pytest.raises(ModelFormatError, match=(
            r"cannot save recipe 'adaboost': proposal 'stump', parameter 'estimator': "
            r"DecisionTreeClassifier is not a JSON value.*allow_pickle=True")):
        foreign.save(tmp_path / "m.npz")
    path = foreign.save(tmp_path / "m.npz", allow_pickle=True)
    loaded = boostkit.load_model(path, allow_pickle=True)
    assert isinstance(loaded.recipe.proposal.params["estimator"], DecisionTreeClassifier)
    # A model without foreign objects is written exactly as before: no pickled entries.
    plain = native.save(tmp_path / "plain.npz", allow_pickle=True)
    with np.load(plain, allow_pickle=False) as npz:
        assert not [k for k in npz.files if k.startswith("__pickled__")]
        assert b'"pickled"' not in npz["__model__"].tobytes()
    assert boostkit.load_model(plain).n_rounds == 3


def test_one_vs_rest_models_save_with_allow_pickle(tmp_path):
    X, y = load_iris(return_X_y=True)
    model = boostkit.Booster("adaboost", n_rounds=3, multiclass="one-vs-rest", proposal=(
        "sklearn-estimator", {"estimator": DecisionTreeClassifier(max_depth=1)})).fit(X, y)
    with pytest.raises(ModelFormatError, match="allow_pickle=True"):
        model.save(tmp_path / "ovr.npz")
    path = model.save(tmp_path / "ovr.npz", allow_pickle=True)
    with pytest.raises(ModelFormatError, match="holds pickled Python objects"):
        OneVsRestModel.load(path)
    loaded = OneVsRestModel.load(path, allow_pickle=True)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    assert isinstance(boostkit.load_model(path, allow_pickle=True), OneVsRestModel)


def test_the_plugin_imports_without_scikit_learn():
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'sklearn' or name.startswith('sklearn.'):\n"
        "            raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import boostkit\n"
        "assert 'sklearn-estimator' in boostkit.get_registry().components('proposal')\n"
        "import numpy as np\n"
        "X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)\n"
        "try:\n"
        "    boostkit.Booster('adaboost', proposal='sklearn-estimator').fit(X, y)\n"
        "except Exception as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "pip install 'boostkit[sklearn]'" in out.stdout, out.stdout + out.stderr


def test_the_estimators_page_runs(tmp_path, monkeypatch, capsys):
    """The fenced python blocks of docs/estimators.md run, in order, in one namespace."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "estimators.md"
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
    assert len(blocks) == 3
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "estimators_page"}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "1.0"
    assert "allow_pickle=True" in out


def test_the_scikit_learn_wrapper_cross_validates_with_an_estimator_parameter():
    from sklearn.model_selection import cross_val_score

    from boostkit.sklearn import BoostClassifier

    X, y = load_iris(return_X_y=True)
    clf = BoostClassifier("samme proposal=sklearn-estimator", n_rounds=10, random_state=0,
                          component_params={"proposal": {"estimator":
                                                         DecisionTreeClassifier(max_depth=2)}})
    assert cross_val_score(clf, X, y, cv=3).mean() > 0.9


@pytest.mark.slow
@pytest.mark.parametrize("n_classes", [2, 5])
def test_no_slower_than_scikit_learns_adaboost_on_20000_rows(n_classes):
    """CPU time (the machine may be shared) of 50 rounds of depth-3 trees, both in this run."""
    import time

    from sklearn.datasets import make_classification

    X, y = make_classification(20000, 20, n_informative=10, n_classes=n_classes, random_state=0)
    tree = DecisionTreeClassifier(max_depth=3)
    _samme(tree, n_rounds=2).fit(X[:200], y[:200])  # load the plugins and kernels first
    ours, theirs = [], []
    for _ in range(3):
        start = time.process_time()
        model = _samme(tree, n_rounds=50, random_state=0).fit(X, y)
        middle = time.process_time()
        reference = AdaBoostClassifier(tree, n_estimators=50, random_state=0).fit(X, y)
        ours.append(middle - start)
        theirs.append(time.process_time() - middle)
    ratio = min(ours) / min(theirs)
    print(f"C={n_classes}: boostkit {min(ours):.2f} s, scikit-learn {min(theirs):.2f} s, "
          f"ratio {ratio:.3f}")
    assert np.mean(model.predict(X) == reference.predict(X)) >= 0.99
    assert ratio < 1.1
