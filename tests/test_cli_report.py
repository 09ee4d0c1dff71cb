"""``boostkit compare``'s report: rankers, which AUC is which, citations and width, warnings,
rounds against terms, readable figures, a small roc.json and results written all or nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import boostkit
from boostkit import plot
from boostkit.study import compare_output
from boostkit.study.compare import citation, is_ranker, training_threshold
from boostkit.study.compare_output import format_table
from boostkit.metrics import roc_auc, roc_curve
from boostkit.references import REFERENCES
from cli_helpers import read_results, run


def compare(capsys, output, algorithms, *extra, rounds="10", folds="3"):
    status, out, err = run(capsys, "compare", "--dataset", "ionosphere", "--rounds", rounds,
                           "--folds", folds, "--algorithms", algorithms, "--output", str(output),
                           "--no-progress", *extra)
    assert status == 0, err
    return out, err


# -- rankers ------------------------------------------------------------------------------------


def test_rankers_are_recognised_by_their_reweighting_not_by_name():
    registry = boostkit.get_registry()
    rankers = {name for name, recipe in registry.algorithms().items() if is_ranker(recipe)}
    assert rankers == {"rankboost", "rankboost-features", "rankboost-pairs"}
    # A composed recipe with a pair reweighting is a ranker too; with the exponential, not.
    assert is_ranker(registry.resolve("proposal=stump calibration=domain-partition "
                                      "reweighting=bipartite name=my-ranker"))
    assert not is_ranker(registry.resolve("rankboost reweighting=exponential name=x"))
    # The engine names no algorithm.
    for path in Path(boostkit.__file__).parent.glob("*.py"):
        assert not re.search(r"==\s*['\"]rankboost", path.read_text()), path


def test_training_threshold_maximises_training_accuracy():
    y = np.array([-1, -1, 1, -1, 1, 1])
    scores = np.array([5.0, 5.1, 5.3, 5.2, 5.4, 5.5])
    threshold = training_threshold(y, scores)
    assert 5.2 < threshold < 5.3  # all scores are above 0, yet the classes separate
    assert np.mean(np.where(scores > threshold, 1, -1) == y) == 1.0
    y = np.array([-1, 1, -1, 1, 1])
    scores = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    threshold = training_threshold(y, scores)
    assert 1.0 < threshold < 2.0  # 4 of 5 right; the best any threshold does
    assert np.mean(np.where(scores > threshold, 1, -1) == y) == pytest.approx(4 / 5)
    assert training_threshold(np.array([1, 1]), np.array([0.0, 0.0])) < 0  # all positive
    assert training_threshold(np.array([-1, -1]), np.array([0.0, 1.0])) > 1  # all negative


def test_a_ranker_reports_accuracy_at_a_training_threshold_and_says_so(capsys, tmp_path):
    output = tmp_path / "out"
    out, _ = compare(capsys, output, "adaboost,rankboost-features", "--no-plots")
    results = read_results(output)
    assert results["rankboost-features"]["accuracy_threshold"] == "training folds"
    assert results["adaboost"]["accuracy_threshold"] == "0"
    # Above the majority baseline (225 of 351 = 0.64), which F > 0 did not reach.
    assert float(results["rankboost-features"]["accuracy_mean"]) > 0.7
    row = next(line for line in out.splitlines() if line.startswith("rankboost-features "))
    assert re.search(r"\d\.\d{4} ± \d\.\d{4}\*", row)
    assert "* ranker (rankboost-features)" in out and "threshold" in out
    roc = json.loads((output / "roc.json").read_text())
    assert roc["algorithms"]["rankboost-features"]["ranker"] is True
    assert all(f["threshold"] == 0 for f in roc["algorithms"]["adaboost"]["folds"])


# -- which AUC, citations, width ----------------------------------------------------------------


def test_the_table_says_which_auc_and_the_figures_say_pooled(capsys, tmp_path):
    output = tmp_path / "out"
    out, _ = compare(capsys, output, "adaboost,real-adaboost")
    assert "ROC AUC: mean ± std over the 3 folds" in out
    assert "legends give that pooled AUC" in out
    md = (output / "results.md").read_text()
    assert "mean ± std over the 3 folds" in md and "pooled AUC" in md
    roc = json.loads((output / "roc.json").read_text())
    assert "pooled" in roc["auc"] and "folds[].auc" in roc["auc"]


def test_citations_are_short_and_the_full_reference_is_in_results_md(capsys, tmp_path):
    assert citation("Zhu, Zou, Rosset & Hastie (2009), Multi-class AdaBoost") == "Zhu et al. 2009"
    assert citation("Freund & Schapire (1997); 000 section 3.1") == "Freund & Schapire 1997"
    assert citation("Jin et al., ICML 2003 (001_e064afeb8d6bf0ca.txt): eq. 4") == "Jin et al. 2003"
    assert citation("Raetsch et al. (1998), as Jin et al., ICML 2003") == "Raetsch et al. 1998"
    assert citation("Barutcuoglu, Long & Servedio, One-Pass Boosting (002), section 4 "
                    "(McCallum & Nigam 1998)") == "Barutcuoglu et al."
    assert citation("Scholz, Boosting in PN Spaces: 004 eq. 2-3") == "Scholz"
    # The bibliography's short forms (boostkit.references), as the first-party recipes cite.
    assert citation("Wilbur et al. 2005, section 3.2") == "Wilbur et al. 2005"
    assert citation("Scholz 2006, eq. 2-3, Fig. 3") == "Scholz 2006"
    assert citation("") == "-"
    output = tmp_path / "out"
    out, _ = compare(capsys, output, "weightboost", "--no-plots", rounds="3", folds="2")
    row = next(line for line in out.splitlines() if line.startswith("weightboost "))
    assert "Jin et al. 2003" in row and ".txt" not in row
    paper = boostkit.get_registry().algorithms()["weightboost"].paper
    md = (output / "results.md").read_text()
    assert "## References" in md and paper in md
    # The papers in full (docs/bibliography.md), not only the recipe's free-form text.
    jin = REFERENCES["jin2003"]
    assert f"- {jin.short}: {jin.text()}" in md
    assert read_results(output)["weightboost"]["citation"] == "Jin et al. 2003"


def test_the_table_of_every_registered_algorithm_fits_120_columns():
    registry = boostkit.get_registry()
    rows = [{"algorithm": name, "paper": recipe.paper, "citation": citation(recipe.paper),
             "accuracy_mean": 0.9, "accuracy_std": 0.01, "accuracy_threshold": "training folds",
             "roc_auc_mean": 0.9, "roc_auc_std": 0.01, "fit_seconds_median": 12.345,
             "rounds_mean": 100.0, "terms_mean": 57.0, "stop_reason": "pool-exhausted",
             "stop_reason_folds": 3, "n_folds": 5}
            for name, recipe in registry.algorithms().items()]
    rows.append({**rows[0], "algorithm": "x", "citation": "A, B & C " * 10})
    for table in (format_table(rows),
                  format_table([{**r, "multiclass": "one-vs-rest", "macro_roc_auc_mean": 0.9,
                                 "macro_roc_auc_std": 0.01} for r in rows])):
        assert max(map(len, table.splitlines())) <= 120


# -- warnings, rounds ---------------------------------------------------------------------------


def test_warnings_are_collected_and_printed_once_with_a_count(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm", None)  # one line per fit
    status, _, err = run(capsys, "compare", "--dataset", "ionosphere", "--rounds", "100",
                         "--folds", "3", "--algorithms", "popbm", "--no-plots",
                         "--output", str(tmp_path / "out"))
    assert status == 0
    lines = err.splitlines()
    warned = [i for i, line in enumerate(lines) if "PopbmAbortWarning" in line]
    assert len(warned) == 1  # once, though every fold warned
    assert "3 times: popbm (folds 1, 2, 3 of 3)" in lines[warned[0]]
    assert "warnings.warn(" not in err
    fits = [i for i, line in enumerate(lines) if line.startswith("[")]
    assert len(fits) == 3 and max(fits) < warned[0]  # after the progress lines
    assert "PopbmAbortWarning" in (tmp_path / "out" / "results.md").read_text()


def test_rounds_count_round_records_and_terms_are_reported_apart(capsys, tmp_path):
    output = tmp_path / "out"
    out, _ = compare(capsys, output, "pav-adaboost-finite", "--no-plots", rounds="40")
    row = read_results(output)["pav-adaboost-finite"]
    # ionosphere has 34 features: 34 score columns, re-fitted by back-fitting after that.
    assert float(row["rounds_mean"]) == 40 and float(row["terms_mean"]) < 40
    assert row["stop_reason"] == "max-rounds"
    assert "Fewer terms than rounds" in out and "pav-adaboost-finite (" in out


# -- files --------------------------------------------------------------------------------------


def test_roc_json_is_small_with_exact_aucs(capsys, tmp_path):
    output = tmp_path / "out"
    compare(capsys, output, "adaboost,rankboost", "--no-plots", folds="2")
    roc = json.loads((output / "roc.json").read_text())
    for name, entry in roc["algorithms"].items():
        pooled = entry["pooled"]
        assert len(pooled["fpr"]) <= 2 * compare_output.CURVE_POINTS + 2
        assert (pooled["fpr"][0], pooled["tpr"][0], pooled["fpr"][-1], pooled["tpr"][-1]) == (
            0, 0, 1, 1)
        assert all("fpr" not in fold for fold in entry["folds"])
    # The thinned curve stays within 1/CURVE_POINTS of the full one.
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 5000) * 2 - 1
    scores = y + 2 * rng.normal(size=5000)
    fpr, tpr, _ = roc_curve(y, scores)
    keep = compare_output.thin_curve(fpr, tpr)
    assert keep.shape[0] <= 2 * compare_output.CURVE_POINTS + 2 < fpr.shape[0]
    steps = np.abs(np.diff(fpr[keep])) + np.abs(np.diff(tpr[keep]))
    assert steps.max() <= 2 * 2 / compare_output.CURVE_POINTS  # the path (length <= 2) in short steps
    assert np.trapezoid(tpr[keep], fpr[keep]) == pytest.approx(roc_auc(y, scores), abs=2e-3)


def test_an_interrupted_run_leaves_the_earlier_results_whole(capsys, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    output = tmp_path / "out"
    compare(capsys, output, "adaboost", rounds="5", folds="2")

    def results_files():  # all but the results database, which keeps every finished cell
        return {p.name: p.read_bytes() for p in output.iterdir()
                if not p.name.startswith("results.sqlite")}

    before = results_files()
    assert "roc.png" in before
    saved = []

    def interrupted(figure, path):
        saved.append(path)
        if len(saved) == 2:
            raise KeyboardInterrupt
        return plot.__dict__["_real_save"](figure, path)

    monkeypatch.setitem(plot.__dict__, "_real_save", plot.save)
    monkeypatch.setattr(plot, "save", interrupted)
    status, _, err = run(capsys, "compare", "--dataset", "ionosphere", "--rounds", "7",
                         "--folds", "2", "--algorithms", "real-adaboost", "--output",
                         str(output), "--no-progress")
    assert status == 130 and "interrupted" in err
    assert results_files() == before  # nothing half-new
    # The interrupted run's cells are in the database (another budget: the first run's are
    # gone), so that a rerun resumes.
    from boostkit.study import ResultStore

    with ResultStore(output / "results.sqlite", readonly=True) as store:
        assert [(row["algorithm"], row["fold"], row["rounds"]) for row in store.rows()] == [
            ("real-adaboost", 0, 7), ("real-adaboost", 1, 7)]
    monkeypatch.undo()
    # A later run without figures replaces the tables and removes the earlier figures.
    compare(capsys, output, "real-adaboost", "--no-plots", rounds="5", folds="2")
    assert sorted(results_files()) == ["cells.csv", "curves.csv", "results.csv", "results.md",
                                       "roc.json"]
    assert list(read_results(output)) == ["real-adaboost"]


# -- figures ------------------------------------------------------------------------------------


def _curves(n):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300) * 2 - 1
    return {f"model-{k:02d}": (y, y * (k + 1) / n + rng.normal(size=300)) for k in range(n)}


def test_many_models_highlight_the_best_and_keep_the_legend_outside():
    pytest.importorskip("matplotlib")
    curves = _curves(14)
    figure = plot.roc_figure(curves)
    ax, log_ax = figure.axes  # the legend is to the right of the log panel
    labels = [t.get_text() for t in log_ax.get_legend().get_texts()]
    assert len(labels) == 1 + plot.MAX_HIGHLIGHTED + 1  # chance, the best, "N others"
    assert labels[-1] == "6 other models (grey)"
    assert all(label.startswith("model-") for label in labels[1:-1])
    assert {label.split()[0] for label in labels[1:-1]} == {f"model-{k:02d}" for k in range(6, 14)}
    colours = [line.get_color() for line in ax.lines[1:] if line.get_label() != "_nolegend_"]
    figure.canvas.draw()
    legend_box = log_ax.get_legend().get_window_extent()
    assert legend_box.x0 >= log_ax.get_window_extent().x1  # outside the axes, to the right
    highlighted = [line for line in ax.lines[1:] if line.get_color() != plot.OTHERS_COLOUR]
    styles = {(line.get_color(), str(line.get_linestyle())) for line in highlighted}
    assert len(styles) == len(highlighted) == plot.MAX_HIGHLIGHTED  # all distinct
    assert colours


def test_small_multiples_one_panel_per_group():
    pytest.importorskip("matplotlib")
    curves = _curves(9)
    groups = {"first": list(curves)[:4], "second": list(curves)[4:]}
    for figure in (plot.roc_figure(curves, groups=groups), plot.pr_figure(curves, groups=groups)):
        panels = [ax for ax in figure.axes if ax.get_visible()]
        assert [ax.get_title() for ax in panels] == ["first (4)", "second (5)"]
        legend = [t.get_text().split()[0] for t in panels[1].get_legend().get_texts()]
        assert legend == list(curves)[4:]
        grey = [line for line in panels[1].lines if line.get_color() == plot.OTHERS_COLOUR]
        assert len(grey) == 4  # the other group's models, behind
    # ROC panels on a log false-positive axis, where curves crowded at full scale part.
    roc_panels = [ax for ax in plot.roc_figure(curves, groups=groups).axes if ax.get_visible()]
    assert {ax.get_xscale() for ax in roc_panels} == {"log"}
    assert {ax.get_xscale() for ax in plot.pr_figure(curves, groups=groups).axes} == {"linear"}


def test_compare_figures_of_many_algorithms_are_drawn_by_family(capsys, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    output = tmp_path / "out"
    algorithms = ("adaboost,real-adaboost,samme,gentle-adaboost,logitboost,pav-adaboost,"
                  "rankboost,rankboost-features,popbm,naive-bayes")
    out, _ = compare(capsys, output, algorithms, rounds="5", folds="2")
    roc = image.imread(output / "roc.png")
    assert roc.shape[0] > 480 and roc.shape[1] >= 1200  # a grid of panels
    for name in ("learning_curves.png", "margins.png"):
        assert image.imread(output / name).shape[:2] == (480, 1600)
    assert set(compare_output.families([])) == set()
