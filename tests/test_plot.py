"""boostkit.plot: staged evaluations, figures of several models, PNG files, the optional extra."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import boostkit
from boostkit import plot
from boostkit.metrics import precision_recall_curve, roc_auc, roc_curve

matplotlib_image = pytest.importorskip("matplotlib.image")


@pytest.fixture(scope="module")
def fitted():
    data = boostkit.datasets.load("ionosphere")
    y = data.binary_target()
    train, test = np.arange(0, 351, 2), np.arange(1, 351, 2)
    models = {name: boostkit.Booster(name, n_rounds=25).fit(data.X[train], y[train])
              for name in ("adaboost", "real-adaboost")}
    return data.X[train], y[train], data.X[test], y[test], models


def test_staged_evaluation_follows_the_staged_margins(fitted):
    X, y, X_test, y_test, models = fitted
    model = models["adaboost"]
    evaluation = plot.staged_evaluation(model, X_test, y_test)
    staged = list(model.staged_decision_function(X_test))
    assert evaluation.error.shape == evaluation.auc.shape == (model.n_rounds,)
    for t in (0, 9, model.n_rounds - 1):
        assert evaluation.error[t] == pytest.approx(np.mean(y_test * staged[t] <= 0))
        assert evaluation.auc[t] == pytest.approx(roc_auc(y_test, staged[t]))
    # For +-1 stumps the normaliser sum_t max|c_t| is sum_t |alpha_t|: Schapire et al.'s margin.
    alphas = np.array([c.alpha for c in model.contributions])
    np.testing.assert_allclose(evaluation.margins, y_test * staged[-1] / np.abs(alphas).sum())
    assert np.abs(evaluation.margins).max() <= 1.0
    one_class = plot.staged_evaluation(model, X_test[y_test > 0], y_test[y_test > 0])
    assert np.isnan(one_class.auc).all()


def test_staged_evaluation_maps_labels_as_predict_does():
    """A bundled dataset's text labels ('b', 'g'): the last round's error is predict's."""
    data = boostkit.datasets.load("ionosphere")
    train, test = np.arange(0, 351, 2), np.arange(1, 351, 2)
    model = boostkit.Booster("adaboost", n_rounds=20).fit(data.X[train], data.y[train])
    evaluation = plot.staged_evaluation(model, data.X[test], data.y[test])
    assert evaluation.error[-1] == pytest.approx(np.mean(model.predict(data.X[test])
                                                         != data.y[test]))
    assert evaluation.error[-1] < 0.3
    positive = data.y[test] == model.classes[1]
    assert evaluation.auc[-1] == pytest.approx(roc_auc(np.where(positive, 1, -1),
                                                       model.decision_function(data.X[test])))
    assert (evaluation.margins[positive] > 0).mean() > 0.6  # y F > 0 where predicted right


@pytest.mark.parametrize("labels, message", [
    (lambda y: np.where(y == "g", "good", "bad"), r"y holds label\(s\) \['bad', 'good'\]"),
    (lambda y: np.where(y == "g", 1, 0), r"y holds label\(s\) \[0, 1\]"),
])
def test_staged_evaluation_refuses_labels_the_model_does_not_have(labels, message):
    data = boostkit.datasets.load("ionosphere")
    model = boostkit.Booster("adaboost", n_rounds=3).fit(data.X, data.y)
    with pytest.raises(boostkit.DataError, match=message):
        plot.staged_evaluation(model, data.X, labels(data.y))


def test_staged_evaluation_refuses_a_multiclass_model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = np.repeat(["a", "b", "c"], 30)
    model = boostkit.Booster("adaboost-mh", n_rounds=3).fit(X, y)
    with pytest.raises(boostkit.DataError, match="two classes"):
        plot.staged_evaluation(model, X, y)


def test_learning_curves_of_fits_that_stopped_early_keep_their_last_value():
    short, long = np.array([0.3, 0.2]), np.array([0.4, 0.3, 0.2, 0.1])
    np.testing.assert_allclose(plot._padded_mean([short, long]), [0.35, 0.25, 0.2, 0.15])


def _png_shape(path):
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return matplotlib_image.imread(path).shape[:2]  # (height, width)


def test_roc_and_precision_recall_figures_draw_every_model_on_one_axes(fitted, tmp_path):
    _, _, X_test, y_test, models = fitted
    curves = {name: (y_test, model.decision_function(X_test)) for name, model in models.items()}
    roc = plot.roc_figure(curves)
    ax, log_ax = roc.axes
    assert len(ax.lines) == len(log_ax.lines) == 1 + len(curves)  # chance, one line per model
    fpr, tpr, _ = roc_curve(*curves["real-adaboost"])
    for axes in (ax, log_ax):
        np.testing.assert_allclose(axes.lines[2].get_xydata(), np.column_stack((fpr, tpr)))
    assert (ax.get_xscale(), log_ax.get_xscale()) == ("linear", "log")
    # From half of 1 / (number of negatives) to 1: the smallest non-zero rate is on the axis.
    assert log_ax.get_xlim() == pytest.approx((0.5 / np.sum(y_test != 1), 1))
    labels = [text.get_text() for text in log_ax.get_legend().get_texts()]
    assert any(label.startswith("real-adaboost (AUC 0.9") for label in labels)
    pr = plot.pr_figure(curves)
    (ax,) = pr.axes
    precision, recall, _ = precision_recall_curve(*curves["adaboost"])
    np.testing.assert_allclose(ax.lines[0].get_xydata(), np.column_stack((recall, precision)))
    assert _png_shape(plot.save(roc, tmp_path / "roc.png")) == (480, 1600)
    assert _png_shape(plot.save(pr, tmp_path / "pr.png")) == (480, 960)


def test_learning_curve_and_margin_figures(fitted, tmp_path):
    X, y, X_test, y_test, models = fitted
    train = {name: [plot.staged_evaluation(m, X, y)] for name, m in models.items()}
    test = {name: [plot.staged_evaluation(m, X_test, y_test)] for name, m in models.items()}
    figure = plot.learning_curve_figure(train, test)
    error_ax, auc_ax = figure.axes
    assert len(error_ax.lines) == len(auc_ax.lines) == 4  # train and test per model
    np.testing.assert_allclose(auc_ax.lines[1].get_ydata(), test["adaboost"][0].auc)
    # The error axis is logarithmic; an error of 0 (real-adaboost's training error) is drawn
    # at half of 1 / (the examples of the larger set).
    assert (error_ax.get_yscale(), auc_ax.get_yscale()) == ("log", "linear")
    floor = 0.5 / max(X.shape[0], X_test.shape[0])
    train_error = train["real-adaboost"][0].error
    assert train_error.min() == 0
    np.testing.assert_allclose(error_ax.lines[2].get_ydata(), np.maximum(train_error, floor))
    assert error_ax.lines[2].get_ydata().min() == floor
    assert _png_shape(plot.save(figure, tmp_path / "learning.png")) == (480, 1600)
    weights = {name: np.full(y.shape[0], 1.0) for name in models}
    figure = plot.margin_figure({name: t[0].margins for name, t in train.items()}, weights)
    margin_ax, weight_ax = figure.axes
    assert len(margin_ax.lines) == 3 and len(weight_ax.lines) == 3  # two models and a marker
    assert _png_shape(plot.save(figure, tmp_path / "margins.png")) == (480, 1600)



def test_confusion_matrix_figure_colours_row_shares_and_writes_counts(tmp_path):
    matrix = np.array([[420, 80, 129], [90, 150, 93], [0, 0, 0]])  # class "3" has no example
    figure = plot.confusion_matrix_figure(matrix, ["1", "2", "3"], title="three classes")
    ax = figure.axes[0]
    (image,) = ax.get_images()
    np.testing.assert_allclose(image.get_array(), [[420 / 629, 80 / 629, 129 / 629],
                                                   [90 / 333, 150 / 333, 93 / 333], [0, 0, 0]])
    cells = [text.get_text() for text in ax.texts]
    assert cells[:2] == ["420\n67%", "80\n13%"] and len(cells) == 9
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1 (629)", "2 (333)", "3 (0)"]
    path = plot.save(figure, tmp_path / "confusion.png")
    assert _png_shape(path) == (480, 640)
    assert matplotlib_image.imread(path)[..., :3].std() > 0.05  # drawn, not a blank canvas
    # Weighted counts keep three significant digits; twelve classes show counts only.
    weighted = plot.confusion_matrix_figure(np.array([[1.25, 0.5], [0.0, 2.0]]), ["a", "b"])
    assert weighted.axes[0].texts[0].get_text() == "1.25\n71%"
    twelve = plot.confusion_matrix_figure(np.eye(12) * 5, [f"class {k}" for k in range(12)])
    assert twelve.axes[0].texts[0].get_text() == "5"


@pytest.mark.parametrize("matrix, labels, message", [
    (np.ones((2, 3)), ["a", "b"], r"square \(K, K\) array, got shape \(2, 3\)"),
    (-np.ones((2, 2)), ["a", "b"], "finite, non-negative counts"),
    (np.ones((2, 2)), ["a", "b", "c"], "labels has 3 names but matrix has 2 rows"),
])
def test_confusion_matrix_figure_errors(matrix, labels, message):
    with pytest.raises(ValueError, match=message):
        plot.confusion_matrix_figure(matrix, labels)

def test_without_matplotlib_the_error_names_the_plot_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'boostkit\[plot\]'"):
        plot.roc_figure({"m": (np.array([0, 1]), np.array([0.2, 0.7]))})
