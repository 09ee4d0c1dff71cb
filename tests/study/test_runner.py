"""The runner: cells scored as compare scores folds, errors kept per cell, finished cells
skipped, and local worker processes giving the serial run's values."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.errors import RecipeError
from boostkit.study import ResultStore, Resampling, StoreError, StudySpec, run_study
from study_data import blob_sources

#: What may differ between two runs of the same cell.
TIMINGS = ["fit_seconds", "predict_seconds", "finished_at"]


def values(database):
    with ResultStore(database, readonly=True) as store:
        return (store.read_frame().drop(columns=TIMINGS), store.read_curves())


def small_spec(tmp_path, **changes):
    return StudySpec(**{"datasets": ["two", "three"], "algorithms": ["adaboost", "real-adaboost"],
                        "resampling": Resampling.of("k-fold", 3), "n_rounds": 5,
                        "output": str(tmp_path / "out"), **changes})


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    return blob_sources(tmp_path_factory.mktemp("data"), two={},
                        three=dict(n_classes=3, seed=1))


def test_a_study_writes_every_cell_with_its_scores(sources, tmp_path):
    spec = small_spec(tmp_path)
    run = run_study(spec, sources=sources)
    assert (run.computed, run.skipped, run.not_done) == (12, 0, 0)
    frame, curves = values(run.database)
    assert len(frame) == 12 and (frame["status"] == "done").all()
    assert frame["resample"].unique().tolist() == ["3-fold"]
    assert ((frame["accuracy"] >= 0) & (frame["accuracy"] <= 1)).all()
    assert frame["roc_auc"].notna().all() and frame["log_loss"].notna().all()
    assert (frame["n_train"] + frame["n_test"] == 60).all()
    assert frame.loc[frame["dataset"] == "csv/three", "n_classes"].eq(3).all()
    # Every cell measures its model's size.
    assert (frame["model_bytes"] > 0).all()
    assert frame["prediction_hash"].str.len().eq(64).all()
    assert frame["recipe"].str.startswith("proposal=stump").all()
    assert frame["boostkit_version"].notna().all() and frame["data_hash"].notna().all()
    # Every cell's curve: one point per round run, train and test error in [0, 1].
    per_cell = curves.groupby(["dataset", "algorithm", "fold"])["round"].max()
    rounds = frame.set_index(["dataset", "algorithm", "fold"])["rounds"]
    assert per_cell.to_dict() == rounds.to_dict()
    assert curves[["train_error", "test_error"]].stack().between(0, 1).all()


def test_the_last_curve_point_is_the_cells_test_error(sources, tmp_path):
    run = run_study(small_spec(tmp_path, datasets=["two"], algorithms=["adaboost"]),
                    sources=sources[:1])
    frame, curves = values(run.database)
    assert curves["fold"].unique().tolist() == [0, 1, 2]
    last = curves.groupby("fold")["test_error"].last()
    assert last.tolist() == pytest.approx((1 - frame["accuracy"]).tolist())


def test_rerunning_skips_finished_cells_and_adding_an_algorithm_changes_none(sources, tmp_path):
    spec = small_spec(tmp_path, algorithms=["adaboost"])
    run_study(spec, sources=sources)
    before, _ = values(spec.database_path)
    again = run_study(spec, sources=sources)
    assert (again.computed, again.skipped) == (0, 6)
    more = run_study(attrs.evolve(spec, algorithms=("adaboost", "real-adaboost")),
                     sources=sources)
    assert (more.computed, more.skipped) == (6, 6)
    after, _ = values(spec.database_path)
    kept = after[after["algorithm"] == "adaboost"].reset_index(drop=True)
    assert kept.equals(before)


def test_a_fresh_study_gives_the_same_cells(sources, tmp_path):
    first = run_study(small_spec(tmp_path / "a"), sources=sources)
    second = run_study(small_spec(tmp_path / "b"), sources=sources)
    a, ca = values(first.database)
    b, cb = values(second.database)
    assert a.equals(b) and ca.equals(cb)


@attrs.define
class FailsOnFiveFeatures(boostkit.Stopping):
    """A stopping rule that raises on data of five features only: a recipe that breaks on one
    dataset of a study."""

    name = "fails-on-five-features"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        if state.data.X.shape[1] == 5:
            raise ZeroDivisionError("planted failure")
        return None


def test_a_recipe_that_raises_on_one_dataset_is_recorded_failed_and_the_study_goes_on(
        tmp_path, in_process_plugin):
    in_process_plugin("fails-on-five", components=[FailsOnFiveFeatures])
    spec = small_spec(tmp_path, algorithms=["adaboost",
                                            "adaboost stopping+=fails-on-five-features "
                                            "name=breaks"])
    features = blob_sources(tmp_path / "data", three_features=dict(d=3),
                            five_features=dict(d=5))
    run = run_study(spec, sources=features)
    assert run.not_done == 3
    frame, curves = values(run.database)
    breaks = frame[frame["algorithm"] == "breaks"].set_index("dataset")
    assert (breaks.loc["csv/five_features", "status"] == "failed").all()
    assert breaks.loc["csv/five_features", "error"].str.contains(
        "ZeroDivisionError: planted failure").all()
    assert breaks.loc["csv/five_features", "accuracy"].isna().all()
    assert (breaks.loc["csv/three_features", "status"] == "done").all()
    assert (frame[frame["algorithm"] == "adaboost"]["status"] == "done").all()
    assert set(curves["algorithm"]) == {"adaboost", "breaks"}
    # A failed cell is finished: rerunning does not retry it.
    assert run_study(spec, sources=features).computed == 0


def test_a_dataset_too_small_for_its_folds_records_why(sources, tmp_path):
    run = run_study(small_spec(tmp_path, resampling=Resampling.of("k-fold", 40),
                               algorithms=["adaboost"]), sources=sources[:1])
    frame, _ = values(run.database)
    assert (frame["status"] == "failed").all()
    assert frame["error"].str.contains("cannot make 40 stratified folds").all()


def test_an_unknown_algorithm_is_refused_before_anything_runs(sources, tmp_path):
    spec = small_spec(tmp_path, algorithms=["adaboost", "no-such-boost"])
    with pytest.raises(boostkit.BoostkitError, match="no-such-boost"):
        run_study(spec, sources=sources)
    assert not spec.database_path.exists()


def test_the_same_name_twice_is_refused(sources, tmp_path):
    spec = small_spec(tmp_path, algorithms=["adaboost", "real-adaboost name=adaboost"])
    with pytest.raises(RecipeError, match="same name"):
        run_study(spec, sources=sources)


def test_changed_data_under_a_finished_cell_is_refused(sources, tmp_path):
    spec = small_spec(tmp_path, algorithms=["adaboost"])
    run_study(spec, sources=sources)
    with pytest.raises(StoreError, match="another data than this study's"):
        run_study(spec, sources=blob_sources(tmp_path / "changed", two=dict(seed=9)))


def test_another_round_budget_on_a_finished_database_is_refused(sources, tmp_path):
    spec = small_spec(tmp_path, algorithms=["adaboost"])
    run_study(spec, sources=sources)
    before, _ = values(spec.database_path)
    longer = attrs.evolve(spec, n_rounds=spec.n_rounds + 5)
    with pytest.raises(StoreError, match=rf"n_rounds {spec.n_rounds} \(this study: "
                                         rf"{spec.n_rounds + 5}\)"):
        run_study(longer, sources=sources)
    after, _ = values(spec.database_path)
    assert after.equals(before)  # nothing was lost or added
    run_study(spec, sources=sources)  # the same study resumes as before


def test_worker_processes_give_the_serial_values(sources, tmp_path):
    serial = run_study(small_spec(tmp_path / "serial"), sources=sources)
    pooled = run_study(small_spec(tmp_path / "pool"), sources=sources, n_jobs=2)
    a, ca = values(serial.database)
    b, cb = values(pooled.database)
    assert a.equals(b) and ca.equals(cb)


def test_a_cell_scores_what_the_models_predict_and_predict_proba_give(sources):
    """The cell derives labels and probabilities from one decision_function call; they are
    predict's and predict_proba's."""
    from boostkit import Booster
    from boostkit.study import Cell, run_cell
    from boostkit.plugins import get_registry

    data = sources[1].load()
    resampling = Resampling.of("k-fold", 3)
    for name in ("real-adaboost", "adaboost"):
        cell = Cell(data.name, name, "3-fold", 0, 0, 0, get_registry().resolve(name).to_string())
        row, curve, _ = run_cell(data, cell, resampling, 5, 255)
        train, test = resampling.split(data.y, data.name, data.data_hash, 0, 0)[0]
        model = Booster(name, n_rounds=5, multiclass="auto",
                        random_state=cell.random_state(data.data_hash)).fit(data.X[train],
                                                                            data.y[train])
        assert row["accuracy"] == np.mean(model.predict(data.X[test]) == data.y[test])
        proba = model.predict_proba(data.X[test])
        truth = proba[np.arange(test.shape[0]), np.searchsorted(model.classes, data.y[test])]
        assert row["log_loss"] == pytest.approx(-np.mean(np.log(truth)), rel=1e-12)
        assert curve[-1][2] == pytest.approx(1 - row["accuracy"])
        from sklearn.metrics import balanced_accuracy_score, roc_auc_score

        assert row["balanced_accuracy"] == pytest.approx(
            balanced_accuracy_score(data.y[test], model.predict(data.X[test])))
        margins = model.decision_function(data.X[test])  # macro one-vs-rest AUC of margins
        assert row["roc_auc"] == pytest.approx(np.mean([
            roc_auc_score(data.y[test] == label, margins[:, k])
            for k, label in enumerate(model.classes)]))


def test_coinciding_models_hash_alike_in_every_cell(sources, tmp_path):
    spec = small_spec(tmp_path, algorithms=["adaboost", "adaboost name=twin", "real-adaboost"])
    frame, _ = values(run_study(spec, sources=sources).database)
    hashes = frame.pivot_table(index=["dataset", "fold"], columns="algorithm",
                               values="prediction_hash", aggfunc="first")
    assert (hashes["adaboost"] == hashes["twin"]).all()
    assert (hashes["adaboost"] != hashes["real-adaboost"]).all()


def test_outputs_export_the_cells_beside_the_report(sources, tmp_path):
    import pandas as pd

    from boostkit.study import write_outputs

    spec = small_spec(tmp_path)
    run = run_study(spec, sources=sources)
    paths, notes = write_outputs(spec, run)
    names = {path.name for path in paths}
    assert {"cells.csv", "curves.csv", "cells.parquet"} <= names
    cells = pd.read_csv(tmp_path / "out" / "cells.csv")
    assert len(cells) == 12 and cells["accuracy"].notna().all()
    assert all(isinstance(note, str) for note in notes)
