"""``boostkit compare``'s table, files and figures, from the results the one-dataset study
recorded (:func:`boostkit.study.compare.cross_validate`).

The table fits 120 columns (the paper column is a short citation; ``results.md`` has the full
references) and notes under it say what each number is: accuracy and AUC are mean ± std over
folds, while the figures' legends give the AUC of the pooled out-of-fold scores; a ranker
reports accuracy at a threshold chosen on the training folds, marked ``*``; rounds count the
rounds run, terms are reported apart. With many algorithms the ROC and precision-recall figures
are small multiples, one panel per plugin, and the other figures colour the best of each
plugin. ``roc.json`` keeps exact AUCs and curves thinned to what the figures draw. Files are
written into a hidden folder and moved into the output directory only when all are done: an
interrupted run leaves the earlier results whole.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Sequence

import attrs
import numpy as np

from ..metrics import confusion_matrix, macro_roc_auc, roc_auc, roc_curve
from ..plugins import get_registry
from ..references import REFERENCES, cited
from .compare import INPUT_MEANINGS, STATUS_MEANINGS, AlgorithmResult, MulticlassData, note
from .spec import SpecError
from .store import ResultStore, StoreError

__all__ = ["CURVE_POINTS", "MULTICLASS_LEGEND", "PLOT_FILES", "RESULT_FILES", "describe_run",
           "exit_status", "families", "format_table", "highlighted", "print_table", "table_notes",
           "thin_curve", "wrap", "write_outputs", "write_plots"]

RESULT_FILES = ("results.csv", "results.md", "roc.json")
MULTICLASS_RESULT_FILES = (*RESULT_FILES, "confusion.json")
#: The results database's exports, as a study writes them.
EXPORT_FILES = ("cells.csv", "curves.csv")
PLOT_FILES = ("roc.png", "pr.png", "learning_curves.png", "margins.png")


# -- tables and files ---------------------------------------------------------------------------

_COLUMNS = ("algorithm", "paper", "accuracy", "ROC AUC", "fit s", "rounds", "stop reason")
_MULTICLASS_COLUMNS = ("algorithm", "paper", "multiclass", "accuracy", "macro ROC AUC",
                       "fit s", "rounds", "stop reason")
MULTICLASS_LEGEND = (
    "multiclass: native = the recipe boosts over (example, class) pairs; one-vs-rest = one "
    "binary model per class, predicting the class of the largest margin. macro ROC AUC: the "
    "mean over classes of the AUC of each class against the rest."
)
# The plain-text table fits a terminal of this many columns; the paper column gives way.
TABLE_WIDTH = 120
RANKER_MARK = "*"


def _columns(rows: Sequence[dict]) -> tuple[str, ...]:
    return _MULTICLASS_COLUMNS if rows and "multiclass" in rows[0] else _COLUMNS


#: The length of an error in the table's stop-reason column; the notes give it whole.
TABLE_ERROR_LENGTH = 40


def _cells(row: dict, full_paper: bool = False) -> list[str]:
    if row.get("status", "done") != "done":  # no results: the status, and why
        error = row["error"]
        if len(error) > TABLE_ERROR_LENGTH and not full_paper:
            error = error[: TABLE_ERROR_LENGTH - 3] + "..."
        return [
            row["algorithm"],
            row["paper"] if full_paper else row.get("citation", row["paper"]),
            *([row["multiclass"]] if "multiclass" in row else []),
            row["status"], "-", "-", "-", error,
        ]
    stop = row["stop_reason"]
    if row["stop_reason_folds"] < row["n_folds"]:
        stop += f" ({row['stop_reason_folds']}/{row['n_folds']})"
    auc = "roc_auc" if "multiclass" not in row else "macro_roc_auc"
    mark = RANKER_MARK if row.get("accuracy_threshold", "0") != "0" else ""
    return [
        row["algorithm"],
        row["paper"] if full_paper else row.get("citation", row["paper"]),
        *([row["multiclass"]] if "multiclass" in row else []),
        f"{row['accuracy_mean']:.4f} ± {row['accuracy_std']:.4f}{mark}",
        f"{row[f'{auc}_mean']:.4f} ± {row[f'{auc}_std']:.4f}",
        f"{row['fit_seconds_median']:.3f}",
        _rounds_text(row["rounds_mean"]),
        stop,
    ]


def _rounds_text(rounds: float) -> str:
    return f"{rounds:g}" if rounds == round(rounds) else f"{rounds:.1f}"


def format_table(rows: Sequence[dict], width: int = TABLE_WIDTH) -> str:
    """The results as a plain-text table with aligned columns, at most ``width`` characters
    wide: the paper column (a short citation) is cut with "..." if needed. :func:`table_notes`
    explains it."""
    columns = _columns(rows)
    lines = [list(columns)] + [_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
    # Too wide: the paper column gives the first author and year only ("Freund 1997"), then the
    # stop reason (one-vs-rest lists its class models' reasons) is cut, then the paper.
    paper = columns.index("paper")
    if sum(widths) + 2 * (len(widths) - 1) > width:
        for line in lines[1:]:
            line[paper] = _first_author(line[paper])
        widths[paper] = max(len(line[paper]) for line in lines)
    for name, floor in (("stop reason", len("stop reason")), ("paper", 5)):
        excess = sum(widths) + 2 * (len(widths) - 1) - width
        if excess <= 0:
            break
        i = columns.index(name)
        widths[i] = max(min(floor, widths[i]), widths[i] - excess)
        for line in lines:
            if len(line[i]) > widths[i]:
                line[i] = line[i][: widths[i] - 3] + "..."
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(text)


def _first_author(citation_text: str) -> str:
    """``"Freund & Schapire 1997"`` -> ``"Freund 1997"``, ``"Barutcuoglu et al."`` ->
    ``"Barutcuoglu"``: the first name and the year of a :func:`citation`."""
    words = citation_text.split()
    if not words:
        return citation_text
    year = words[-1] if re.fullmatch(r"(19|20)\d\d", words[-1]) and len(words) > 1 else ""
    return f"{words[0].rstrip(',')} {year}".strip()


def table_notes(rows: Sequence[dict], n_folds: int | None = None) -> list[str]:
    """What the table's columns mean, one paragraph each: accuracy (and a ranker's threshold),
    which AUC it is (mean ± std over folds; the figures' legends give the pooled AUC), fit
    time, rounds against terms, stop reasons."""
    if not rows:
        return []
    multiclass = "multiclass" in rows[0]
    folds = f"the {n_folds} folds" if n_folds else "the folds"
    auc = "macro ROC AUC" if multiclass else "ROC AUC"
    notes = [
        f"accuracy and {auc}: mean ± std over {folds}, each fold's value on its held-out "
        "examples" + ("." if multiclass else "; accuracy predicts the positive class where "
                      "F(x) > 0."),
    ]
    rankers = [row["algorithm"] for row in rows if row.get("accuracy_threshold", "0") != "0"]
    if rankers:
        notes.append(
            f"{RANKER_MARK} ranker ({', '.join(rankers)}): its loss compares pairs of examples "
            "and ignores the offset of F, so the sign of F is no class decision; its accuracy "
            "is taken where F(x) exceeds the threshold that maximises accuracy on each training "
            f"fold. Judge a ranker by its ROC AUC (1 - the fraction of misordered "
            "positive-negative pairs)."
        )
    if not multiclass:
        notes.append(
            f"The ROC and precision-recall figures pool the out-of-fold scores of {folds}: "
            "their legends give that pooled AUC, which differs from the table's mean of "
            "per-fold AUCs when the scale of F changes between folds (most for rankers)."
        )
    notes.append("paper: a short citation (full references in results.md); "
                 "fit s: median seconds per fit; rounds: boosting rounds run, mean over folds.")
    backfit = [f"{row['algorithm']} ({row['terms_mean']:g})" for row in rows
               if "terms_mean" in row and row["terms_mean"] != row["rounds_mean"]]
    if backfit:
        notes.append(
            "Fewer terms than rounds: a back-fitting round re-fits an earlier term instead of "
            f"adding one; terms, mean over folds: {', '.join(backfit)}. Their 'max-rounds' means "
            "every round of the budget was run."
        )
    forms: dict[str, list[str]] = {}
    for row in rows:
        if row.get("status", "done") == "done":  # the others were given nothing to fit
            forms.setdefault(row.get("input", "as given"), []).append(row["algorithm"])
    if forms and set(forms) != {"as given"}:
        notes.append("input, on the same rows for all: " + "; ".join(
            f"{', '.join(names)}: {INPUT_MEANINGS[form]}" for form, names in forms.items()) + ".")
    reasons = {row["stop_reason"] for row in rows if "stop_reason" in row}
    meaning = {"max-rounds": "the round budget (--rounds) was used up",
               "pool-exhausted": "the proposal had no weak hypothesis left to offer"}
    said = [f"{r}: {meaning[r]}" for r in sorted(reasons) if r in meaning]
    if said:
        notes.append("stop reason: that of most folds ((k/n): of k of the n folds); "
                     + "; ".join(said) + "; others are the recipe's stopping rule "
                     "(boostkit components).")
    for row in rows:
        status = row.get("status", "done")
        if status != "done":
            notes.append(f"{row['algorithm']}: {status}, {STATUS_MEANINGS[status]}: "
                         f"{row['error']}")
    return notes


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def wrap(text: str, width: int = TABLE_WIDTH) -> str:
    """``text`` in lines of at most ``width`` columns, the later ones indented."""
    import textwrap

    return textwrap.fill(text, width=width, subsequent_indent="  ", break_on_hyphens=False)


def _markdown(rows: Sequence[dict], run: dict,
              results: Sequence[AlgorithmResult] = ()) -> str:
    def line(cells):
        return "| " + " | ".join(_md_escape(cell) for cell in cells) + " |"

    columns = _columns(rows)
    header = (
        f"# boostkit compare: {run['data']}\n\n"
        f"{run['n_folds']} stratified folds (seed {run['seed']}), at most {run['n_rounds']} "
        f"rounds, {run['max_bins']} bins per feature; mean ± std over folds.\n\n"
    )
    if "multiclass" in columns:
        header += MULTICLASS_LEGEND + "\n\n"
    table = [line(columns), line(["---"] * len(columns))] + [line(_cells(row)) for row in rows]
    notes = "".join(f"- {_md_escape(note)}\n" for note in table_notes(rows, run.get("n_folds")))
    references = "".join(
        f"- `{row['algorithm']}` ({row.get('citation', '-')}): {row['paper'] or 'no paper (a recipe composed on the command line)'}\n"
        for row in rows
    )
    # The papers those texts cite, in full (docs/bibliography.md).
    keys = {key: None for row in rows for key in cited(row["paper"])}
    if keys:
        references += "\n" + "".join(
            f"- {REFERENCES[key].short}: {REFERENCES[key].text()}\n" for key in keys)
    text = header + "\n".join(table) + "\n\n" + notes + "\n## References\n\n" + references
    warned = [(r.algorithm, w) for r in results for w in r.warnings]
    if warned:
        text += "\n## Warnings during the fits\n\n" + "".join(
            f"- `{name}`: {w}\n" for name, w in warned)
    return text


# roc.json keeps at most about this many points per curve: enough to redraw it at the size of
# the figures (a step of 1/200 of either axis is under 2 pixels); the AUCs are exact.
CURVE_POINTS = 200


def thin_curve(x: np.ndarray, y: np.ndarray, points: int = CURVE_POINTS) -> np.ndarray:
    """Indices of the points of a monotone curve (ROC) to keep: the first and last, and one
    wherever the path has moved another 1/``points`` of its length (|dx| + |dy|). The thinned
    curve is within 1/``points`` of the original everywhere."""
    step = np.abs(np.diff(x)) + np.abs(np.diff(y))
    length = np.r_[0.0, np.cumsum(step)]
    total = length[-1]
    if x.shape[0] <= points or total <= 0:
        return np.arange(x.shape[0])
    bucket = np.floor(length / total * points)
    keep = np.r_[True, bucket[1:] != bucket[:-1]]
    keep[-1] = True
    return np.flatnonzero(keep)


def _curve(y, scores, points: int = CURVE_POINTS) -> dict:
    fpr, tpr, _ = roc_curve(y, scores)
    keep = thin_curve(fpr, tpr, points)
    return {"auc": roc_auc(y, scores), "fpr": np.round(fpr[keep], 5).tolist(),
            "tpr": np.round(tpr[keep], 5).tolist()}


def _is_multiclass(results: Sequence[AlgorithmResult]) -> bool:
    return bool(results) and results[0].multiclass is not None


def _classes(result: AlgorithmResult) -> np.ndarray:
    # Stratified folds put every class in every test fold: these are the model's classes.
    return np.unique(result.pooled("y_test"))


def _confusion(result: AlgorithmResult) -> np.ndarray:
    """The confusion matrix of the out-of-fold predictions of every fold together."""
    return confusion_matrix(result.pooled("y_test"), result.pooled("predictions"),
                            labels=_classes(result))


def _roc_entry(result: AlgorithmResult) -> dict:
    """``roc.json``'s entry for one algorithm: the exact AUC of every fold (the table's mean ±
    std) and the pooled ROC curve, thinned to what the figure draws, with its exact AUC (the
    figure's legend) (two classes); or per-fold macro AUCs and pooled one-vs-rest curves per
    class (multiclass)."""
    if not result.done:
        return {"paper": result.paper, "status": result.status, "error": result.error}
    y, scores = result.pooled("y_test"), result.pooled("scores")
    if result.multiclass is None:
        return {
            "paper": result.paper,
            "ranker": result.ranker,
            "folds": [{"fold": f.fold, "auc": f.roc_auc, "threshold": f.threshold}
                      for f in result.folds],
            "pooled": _curve(y, scores),
        }
    classes = _classes(result)
    return {
        "paper": result.paper,
        "multiclass": result.multiclass,
        "folds": [{"fold": f.fold, "macro_auc": f.roc_auc} for f in result.folds],
        "pooled": {
            "macro_auc": macro_roc_auc(y, scores, classes),
            "classes": {str(label): _curve(y == label, scores[:, l])
                        for l, label in enumerate(classes.tolist())},
        },
    }


_ROC_JSON_NOTE = (
    "folds[].auc: each fold's exact AUC on its held-out examples (the table shows their mean "
    "and std); pooled.auc: the exact AUC of all out-of-fold scores together (the figures' "
    f"legends); pooled.fpr/tpr: the pooled ROC curve thinned to about {CURVE_POINTS} points "
    "(within 1/{CURVE_POINTS} of the full curve)".replace("{CURVE_POINTS}", str(CURVE_POINTS))
)


def _file_name(algorithm: str) -> str:
    return re.sub(r"[^\w.-]+", "_", algorithm)


def write_plots(
    directory: str | Path, results: Sequence[AlgorithmResult], run: dict
) -> list[Path]:
    """Draw the comparison's figures into ``directory`` and return their paths.

    Two classes (:data:`PLOT_FILES`, all algorithms together in each): ``roc.png`` and
    ``pr.png``, the ROC and precision-recall curves of the pooled out-of-fold scores (the
    ``pooled`` curves of ``roc.json``; the ROC curves also on a log false-positive axis, where
    curves that coincide at full scale part); ``learning_curves.png``: training and test error
    (on a log axis) and AUC against rounds, means over folds; ``margins.png``: the
    distributions of the normalised training margins and of the final weights, pooled over
    folds (:mod:`boostkit.plot`).

    Multiclass: ``confusion_<algorithm>.png`` for each algorithm, its confusion matrix of the
    out-of-fold predictions pooled over folds (:func:`boostkit.plot.confusion_matrix_figure`);
    the two-class figures are not drawn, and a note says so. Raises ImportError naming the
    ``plot`` extra without matplotlib.
    """
    from .. import plot

    plot.require_matplotlib()
    results = [result for result in results if result.done]
    data = run.get("data", "").split(":")[0]
    folds = f"{run.get('n_folds', '?')}-fold out-of-fold"
    if _is_multiclass(results):
        note("ROC, precision-recall, learning-curve and margin figures are drawn for two "
             "classes only; for several classes compare draws a confusion matrix per algorithm")
        figures = {
            f"confusion_{_file_name(r.algorithm)}.png": plot.confusion_matrix_figure(
                _confusion(r), _classes(r).tolist(),
                title=f"{r.algorithm} ({r.multiclass})\n{data}, {folds} predictions")
            for r in results
        }
    else:
        figures = _binary_figures(plot, results, data, run.get("n_folds", "?"))
    return [plot.save(figure, Path(directory) / name) for name, figure in figures.items()]


def families(results: Sequence[AlgorithmResult]) -> dict[str, list[str]]:
    """The algorithms grouped by the plugin that registered them (``"plugin adaboost"``), in
    order of first appearance; recipes composed with ``--recipe`` form the group
    ``"--recipe"``. The ROC and precision-recall figures draw one panel per group."""
    registry = get_registry()
    groups: dict[str, list[str]] = {}
    for result in results:
        try:
            source = registry.source_of(result.algorithm)
            match = re.search(r"plugin '([^']+)'", source)
            group = f"plugin {match[1]}" if match else source
        except KeyError:
            group = "--recipe"
        groups.setdefault(group, []).append(result.algorithm)
    return groups


def highlighted(results: Sequence[AlgorithmResult], count: int | None = None) -> list[str]:
    """The algorithms the learning-curve and margin figures draw in colour: all of them up to
    ``count`` (:data:`boostkit.plot.MAX_HIGHLIGHTED`); else the best of each family
    (:func:`families`) by the table's ROC AUC (mean over folds), then the next best, up to
    ``count``. The others are drawn grey."""
    from ..plot import MAX_HIGHLIGHTED

    count = MAX_HIGHLIGHTED if count is None else count
    mean_auc = {r.algorithm: float(np.nan_to_num(np.mean([f.roc_auc for f in r.folds]), nan=-1))
                for r in results}
    if len(results) <= count:
        return [r.algorithm for r in results]
    best_of = [max(names, key=mean_auc.get) for names in families(results).values()]
    ranked = sorted(best_of, key=lambda n: -mean_auc[n])[:count]
    ranked += sorted((n for n in mean_auc if n not in ranked), key=lambda n: -mean_auc[n])
    chosen = set(ranked[:count])
    return [r.algorithm for r in results if r.algorithm in chosen]


def _binary_figures(plot, results: Sequence[AlgorithmResult], data: str, n_folds) -> dict:
    highlight = highlighted(results)
    best = (f", the best of each plugin in colour ({len(highlight)} of {len(results)})"
            if len(highlight) < len(results) else "")
    groups = families(results) if len(results) > plot.MAX_HIGHLIGHTED else None
    pooled = {r.algorithm: (r.pooled("y_test"), r.pooled("scores")) for r in results}

    def staged(result, curve):
        # A ranker's sign of F is no decision: its error curve is not drawn (AUC is).
        if curve is None or not result.ranker:
            return curve
        return attrs.evolve(curve, error=np.full_like(curve.error, np.nan))

    train = {r.algorithm: [staged(r, f.train_curve) for f in r.folds if f.train_curve]
             for r in results}
    test = {r.algorithm: [staged(r, f.test_curve) for f in r.folds if f.test_curve]
            for r in results}
    margins = {name: np.concatenate([c.margins for c in curves]) for name, curves in train.items()
               if curves}
    weights = {
        r.algorithm: np.concatenate([f.final_weights for f in r.folds])
        for r in results if all(f.final_weights is not None for f in r.folds)
    }
    scores = f"out-of-fold scores of {n_folds} folds pooled"
    panels = "; one panel per plugin, the others grey" if groups else ""
    return {
        "roc.png": plot.roc_figure(
            pooled, title=f"ROC, {data}: {scores}{panels}\n(legend: AUC of the pooled scores; "
                          "the table gives the mean of per-fold AUCs)",
            highlight=highlight, groups=groups),
        "pr.png": plot.pr_figure(
            pooled, title=f"Precision-recall, {data}: {scores}{panels}\n"
                          "(legend: average precision of the pooled scores)",
            highlight=highlight, groups=groups),
        "learning_curves.png": plot.learning_curve_figure(
            train, test, title=f"{data}{best}", highlight=highlight),
        "margins.png": plot.margin_figure(margins, weights, title=f"{data}{best}",
                                          highlight=highlight),
    }


def write_outputs(
    directory: str | Path, results: Sequence[AlgorithmResult], run: dict, *, plots: bool = True,
    database: str | Path | None = None,
) -> list[Path]:
    """Write ``results.csv``, ``results.md``, ``roc.json`` and the figures into ``directory``,
    and with ``database`` (the comparison's results database) its exports as a study writes
    them: ``cells.csv`` (every cell: its scores, time, rounds, versions) and ``curves.csv``
    (the learning curves); these need pandas, without which a note says so.

    ``run`` describes the comparison (``data``, ``positive`` or ``classes``, ``n_folds``,
    ``n_rounds``, ``seed``, ``max_bins``). ``roc.json`` holds, per algorithm, the ROC points
    (``fpr``, ``tpr``) and AUC of every fold, and ``pooled``: the curve of all out-of-fold
    scores together; for multiclass results, the macro AUC of every fold, and pooled, the macro
    AUC and each class's one-vs-rest curve. Multiclass results also get ``confusion.json``: the
    pooled confusion matrix of each algorithm (rows true classes, columns predicted, in the
    order of ``classes``). With ``plots`` the figures (:func:`write_plots`) follow; they need
    the ``plot`` extra; without it, or when drawing fails, a note says so and they are skipped
    (the tables are written all the same). Returns the paths
    written.

    Every file is first written into a hidden folder inside ``directory`` and moved into place
    only when all are done, so an interrupted run (Ctrl-C while plotting) or a failed one
    leaves the previous results whole; a result file of an earlier run that this run did not
    write again (a figure, with ``--no-plots``) is then removed, so the folder never mixes
    two runs.
    """
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=directory))
    except OSError as exc:
        raise SpecError(f"cannot create the output directory {directory}: {exc}") from None
    try:
        written = _write_outputs(staging, results, run, plots=plots, database=database)
        try:
            for path in written:
                os.replace(path, directory / path.name)
            names = {path.name for path in written}
            for old in directory.iterdir():
                if old.is_file() and old.name not in names and _is_result_file(old.name):
                    old.unlink()
        except OSError as exc:
            raise SpecError(f"cannot write the results into {directory}: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [directory / path.name for path in written]


def _figures(directory: Path, results: Sequence[AlgorithmResult], run: dict) -> list[Path]:
    """The figures' paths, or none with a note when they cannot be drawn: no figure's fault
    (matplotlib missing, a drawing error) loses the tables."""
    try:
        return write_plots(directory, results, run)
    except ImportError as exc:
        note(f"{exc}; the figures were not drawn")
    except Exception as exc:  # noqa: BLE001 - said, and the tables are written
        note(f"the figures were not drawn: {type(exc).__name__}: {exc}")
    return []


def _is_result_file(name: str) -> bool:
    return (name in MULTICLASS_RESULT_FILES or name in PLOT_FILES or name in EXPORT_FILES
            or re.fullmatch(r"confusion_.+\.png", name) is not None)


def _exports(directory: Path, database: Path) -> list[Path]:
    """The database's ``cells`` and ``curves`` tables as CSV files in ``directory``."""
    try:
        with ResultStore(database, readonly=True) as store:
            return [store.export(directory / name, table=name.split(".")[0])
                    for name in EXPORT_FILES]
    except ImportError as exc:
        note(f"{', '.join(EXPORT_FILES)} need pandas ({exc}): pip install 'boostkit[pandas]'")
    except StoreError as exc:
        note(f"{', '.join(EXPORT_FILES)} were not written: {exc}")
    return []


def _write_outputs(directory: Path, results: Sequence[AlgorithmResult], run: dict, *,
                   plots: bool, database: str | Path | None) -> list[Path]:
    multiclass = _is_multiclass(results)
    rows = [result.summary() for result in results]
    paths = [directory / name for name in (MULTICLASS_RESULT_FILES if multiclass else RESULT_FILES)]
    roc = {**run, "auc": _ROC_JSON_NOTE,
           "algorithms": {result.algorithm: _roc_entry(result) for result in results}}
    try:
        with open(paths[0], "w", newline="", encoding="utf-8") as fh:
            # Rows without results (a failed algorithm) lack the numbers: empty fields.
            fields = list(dict.fromkeys(key for row in rows for key in row))
            writer = csv.DictWriter(fh, fieldnames=fields, restval="")
            writer.writeheader()
            writer.writerows(rows)
        paths[1].write_text(_markdown(rows, run, results), encoding="utf-8")
        paths[2].write_text(json.dumps(roc), encoding="utf-8")
        if multiclass:
            confusion = {
                **run, "rows": "true class", "columns": "predicted class",
                "algorithms": {r.algorithm: {"classes": _classes(r).tolist(),
                                             "matrix": _confusion(r).tolist()}
                               for r in results if r.done},
            }
            paths[3].write_text(json.dumps(confusion), encoding="utf-8")
        if database is not None and Path(database).is_file():
            paths += _exports(directory, Path(database))
        if plots:
            paths += _figures(directory, results, run)
    except OSError as exc:
        raise SpecError(f"cannot write the results into {directory}: {exc}") from None
    return paths


# -- the command line's report ------------------------------------------------------------------


def print_table(results: Sequence[AlgorithmResult], n_folds: int) -> None:
    """The results table on standard output, with the notes that say what it shows."""
    rows = [result.summary() for result in results]
    print(f"\n{format_table(rows)}\n")
    for text in table_notes(rows, n_folds):
        print(wrap(text))
    if _is_multiclass(results):
        print(f"\n{wrap(MULTICLASS_LEGEND)}")


def describe_run(data, *, n_folds: int, n_rounds: int, seed: int, max_bins: int) -> dict:
    """The ``run`` of :func:`write_outputs`: the data (and its positive label or classes) and
    the settings."""
    labels = ({"classes": list(data.classes)} if isinstance(data, MulticlassData)
              else {"positive": data.positive})
    return {"data": data.describe(), **labels, "n_folds": n_folds, "n_rounds": n_rounds,
            "seed": seed, "max_bins": max_bins}


def exit_status(results: Sequence[AlgorithmResult], database: Path) -> int:
    """``boostkit compare``'s exit status, with a line on standard error saying why when it is
    not 0: 130 interrupted (Ctrl-C), 1 when no algorithm could run or a fit failed."""
    statuses = Counter(result.status for result in results)
    if statuses["interrupted"] + statuses["not run"]:
        print(f"boostkit compare: interrupted; wrote the {statuses['done']} algorithm(s) that "
              f"finished (a rerun resumes from {database})", file=sys.stderr)
        return 130
    if not statuses["done"]:
        print("boostkit compare: error: no algorithm could run on these data (the reasons are "
              "under the table and in results.md)", file=sys.stderr)
        return 1
    failed = [result.algorithm for result in results if result.status == "failed"]
    if failed:
        print(f"boostkit compare: error: {len(failed)} algorithm(s) failed: {', '.join(failed)} "
              "(their errors are under the table and in results.md); the others' results are "
              "written", file=sys.stderr)
        return 1
    return 0
