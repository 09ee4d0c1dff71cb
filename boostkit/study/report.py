"""A study's report: ``report.md`` and one self-contained ``report.html``.

The report holds what a reviewer reads (Demšar 2006, section 4): the algorithms ranked best
first by average rank, with the mean score and markers of the Holm-corrected Wilcoxon tests
against the baseline; the Friedman and Iman–Davenport tests; the critical-difference diagram
(:func:`boostkit.study.cd_diagram.critical_difference_diagram`); the mean score of every
algorithm on every dataset; the cost of each algorithm (fit and predict time, model size); and
the papers, cited by authors, title, venue and year (:mod:`boostkit.references`).

Algorithms whose models coincide (equal ``prediction_hash`` in every cell of every dataset)
are marked as one group: on two classes ``logitboost`` and ``multinomial-logitboost`` are one
model, and a reader should not take two rows for two results. Per-fold values are
in the exports (``cells.csv``), not in the report.
"""

from __future__ import annotations

import base64
import html
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from ..references import REFERENCES, cited

__all__ = ["CD_FILES", "REPORT_FILES", "coinciding_groups", "write_report"]

REPORT_FILES = ("report.md", "report.html")
CD_FILES = ("cd-diagram.png", "cd-diagram.svg")

# The columns that identify a cell within a (dataset, algorithm) (boostkit.study.store).
_CELL_KEY = ("dataset", "resample", "repeat", "fold", "seed")

# Markers of the Wilcoxon–Holm test against the baseline.
_BETTER, _WORSE, _SAME = "▲", "▼", "·"


def coinciding_groups(frame, algorithms: Sequence[str]) -> list[tuple[str, ...]]:
    """The groups (two or more, in ``algorithms`` order) of algorithms whose test predictions
    are equal (``prediction_hash``) in every cell of every dataset: one model under several
    names. An algorithm with a cell not done, or without a hash, coincides with none."""
    fingerprints = {}
    for algorithm in algorithms:
        rows = frame[frame["algorithm"] == algorithm]
        if rows.empty or (rows["status"] != "done").any() or rows["prediction_hash"].isna().any():
            continue
        keys = zip(*(rows[column] for column in _CELL_KEY), rows["prediction_hash"])
        fingerprints[algorithm] = frozenset(keys)
    groups: dict[frozenset, list[str]] = {}
    for algorithm, fingerprint in fingerprints.items():
        groups.setdefault(fingerprint, []).append(algorithm)
    return [tuple(names) for names in groups.values() if len(names) > 1]


# -- the report as data: sections of paragraphs, tables and images --------------------------


class _Section:
    def __init__(self, heading: str):
        self.heading = heading
        self.parts: list[tuple[str, object]] = []

    def text(self, value: str):
        self.parts.append(("text", value))

    def items(self, values: Sequence[str]):
        if values:
            self.parts.append(("items", list(values)))

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]],
              bold: Sequence[tuple[int, int]] = ()):
        self.parts.append(("table", (list(header), [list(r) for r in rows], set(bold))))

    def image(self, path: Path, alt: str):
        self.parts.append(("image", (path, alt)))


def _number(value: float, digits: int = 4) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}" if math.isfinite(value) else "∞" if value > 0 else "-∞"


def _p(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return "0" if value == 0 else f"{value:.2e}" if value < 1e-3 else f"{value:.3f}"


def _seconds(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"


def _bytes(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value / 1024:.1f} KiB" if value < 1024 ** 2 else f"{value / 1024 ** 2:.2f} MiB"


def _mean(values) -> float:
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else float("nan")


def _ranked(comparison, groups) -> _Section:
    matrix = comparison.matrix
    section = _Section("Ranking")
    # Groups lettered in rank order, so that A is the first met reading the table.
    order = [name for name, _ in comparison.ranking]
    groups = sorted((sorted(group, key=order.index) for group in groups),
                    key=lambda group: order.index(group[0]))
    label = {name: chr(ord("A") + k) for k, group in enumerate(groups) for name in group}
    header = ["rank", "algorithm", "average rank", f"mean {matrix.metric}"]
    baseline = comparison.baseline
    if baseline is not None:
        header += [f"vs {baseline}", "p (Holm)", "win/tie/loss"]
    bayes = comparison.bayesian or {}
    if bayes:
        header.append("P(better / equivalent / worse)")
    if groups:
        header.append("same model")
    rows = []
    for position, (name, rank) in enumerate(comparison.ranking, start=1):
        j = matrix.algorithms.index(name)
        row = [str(position), name, f"{rank:.2f}", _number(float(matrix.values[:, j].mean()))]
        if baseline is not None:
            test = comparison.wilcoxon_holm.get(name)
            if name == baseline:
                row += ["baseline", "", ""]
            else:
                marker = (_SAME if not test.significant
                          else _BETTER if test.direction == "better" else _WORSE)
                row += [marker, _p(test.p_holm), f"{test.wins}/{test.ties}/{test.losses}"]
        if bayes:
            b = bayes.get(name)
            row.append("" if b is None else
                       f"{b.p_better:.2f} / {b.p_equivalent:.2f} / {b.p_worse:.2f}")
        if groups:
            row.append(label.get(name, ""))
        rows.append(row)
    section.text(
        f"Best first by average rank over {len(matrix.datasets)} datasets (rank 1 is the best "
        f"{matrix.metric} on a dataset; ties share the average of their ranks; Demšar 2006, "
        "section 3.2.2). The mean is over datasets of each dataset's mean over its cells.")
    section.table(header, rows)
    notes = []
    if baseline is not None:
        notes.append(
            f"vs {baseline}: Wilcoxon signed-rank test over the datasets (Wilcoxon 1945), "
            f"p-values corrected for {len(matrix.algorithms) - 1} comparisons by Holm's "
            f"method (Holm 1979): {_BETTER} significantly better than {baseline}, {_WORSE} "
            f"significantly worse, {_SAME} no significant difference at "
            f"alpha = {comparison.alpha}; win/tie/loss counts datasets.")
    if bayes:
        rope = next(iter(bayes.values())).rope
        notes.append(
            f"P(better / equivalent / worse): Bayesian signed-rank test against {baseline} "
            f"with a region of practical equivalence of ±{rope} (Benavoli et al. 2017).")
    if groups:
        names = "; ".join(f"{chr(ord('A') + k)}: " + ", ".join(f"`{name}`" for name in group)
                          for k, group in enumerate(groups))
        notes.append(
            f"same model ({names}): the algorithms of a group made identical test predictions "
            "(equal prediction hashes) in every cell of every dataset. They are one model under "
            "several names, not separate results: recipes that differ only where these data "
            "do not reach (e.g. a multiclass recipe on two classes, such as logitboost and "
            "multinomial-logitboost) give the same model. They tie on every dataset, so they "
            "share an average rank; the tests still count each name.")
    section.items(notes)
    return section


def _tests(comparison) -> _Section:
    section = _Section("Tests")
    lines = []
    f, d = comparison.friedman, comparison.iman_davenport
    if f is not None:
        lines.append(f"Friedman test (Friedman 1937): chi² = {f.chi2:.3f} with {f.df} degrees of "
                     f"freedom, p = {_p(f.p_value)}.")
    if d is not None:
        lines.append(f"Iman–Davenport correction (Iman & Davenport 1980; Demšar 2006, eq. 3): "
                     f"F({d.df1}, {d.df2}) = {_number(d.F, 3)}, p = {_p(d.p_value)}.")
    n = comparison.nemenyi
    lines.append(f"Nemenyi test (Nemenyi 1963) at alpha = {n.alpha}: critical difference of "
                 f"average ranks CD = {n.critical_difference:.3f} (q_alpha = {n.q_alpha:.3f}).")
    if comparison.cliques:
        lines.append("Not significantly different (Nemenyi): " + "; ".join(
            "{" + ", ".join(clique) + "}" for clique in comparison.cliques) + ".")
    section.items(lines + list(comparison.notes))
    return section


def _per_dataset(frame, comparison, order: Sequence[str]) -> _Section:
    metric = comparison.matrix.metric
    higher = comparison.matrix.higher_is_better
    section = _Section("Per dataset")
    done = frame[frame["status"] == "done"]
    means = done.groupby(["dataset", "algorithm"], sort=False)[metric].mean()
    datasets = list(dict.fromkeys(frame["dataset"]))
    rows, bold = [], []
    for i, dataset in enumerate(datasets):
        values = [means.get((dataset, name), float("nan")) for name in order]
        finite = [v for v in values if math.isfinite(v)]
        best = (max if higher else min)(finite) if finite else None
        rows.append([dataset] + [_number(v) for v in values])
        bold += [(i, j + 1) for j, v in enumerate(values) if best is not None and v == best]
    section.text(f"Mean {metric} over each dataset's cells; the best of each row in bold. "
                 "Per-fold values are in cells.csv.")
    section.table(["dataset", *order], rows, bold)
    section.items([f"{name} is not in the statistics: {why}"
                   for name, why in comparison.matrix.dropped.items()])
    return section


def _cost(frame, order: Sequence[str]) -> _Section:
    section = _Section("Cost")
    rows = []
    for name in order:
        mine = frame[(frame["algorithm"] == name) & (frame["status"] == "done")]
        rows.append([name, _seconds(_mean(mine["fit_seconds"])),
                     _seconds(_mean(mine["predict_seconds"])),
                     _bytes(_mean(mine["model_bytes"])),
                     _number(_mean(mine["rounds"]), 1),
                     _seconds(float(np.nansum(mine["fit_seconds"].astype(float))))])
    section.text("Means over the finished cells: seconds to fit and to predict the test fold, "
                 "the model's size (the bytes of the parameters it predicts with: its terms' "
                 "arrays and numbers), rounds run; and the total fit time.")
    section.table(["algorithm", "fit", "predict", "model size", "rounds", "total fit"], rows)
    failed = frame[frame["status"] != "done"]
    notes = []
    for (name, status), cells in failed.groupby(["algorithm", "status"], sort=False):
        error = next((e for e in cells["error"] if isinstance(e, str) and e), "")
        notes.append(f"{name}: {len(cells)} cell(s) {status}" + (f": {error}" if error else ""))
    section.items(notes)
    return section


def _paper(algorithm: str) -> str:
    from ..plugins import get_registry

    recipe = get_registry().algorithms().get(algorithm)
    return "" if recipe is None else recipe.paper


def _references(frame, comparison, order: Sequence[str]) -> _Section:
    section = _Section("References")
    keys: list[str] = []
    lines = []
    for name in order:
        paper = _paper(name)
        mine = cited(paper)
        keys += mine
        lines.append(f"`{name}`: " + ("; ".join(REFERENCES[k].short for k in mine) if mine
                                     else paper or "no paper (a recipe composed for the study)"))
    statistics = ["demsar2006", "friedman1937", "iman1980", "nemenyi1963"]
    if comparison.baseline is not None:
        statistics += ["wilcoxon1945", "holm1979"]
    if comparison.bayesian:
        statistics.append("benavoli2017")
    if any(str(d).startswith("keel") for d in frame["dataset"]):
        statistics.append("alcala2011")
    section.items(lines)
    section.text("Papers, of the algorithms and of the statistics:")
    chosen = sorted(dict.fromkeys(keys + statistics),
                    key=lambda k: (REFERENCES[k].authors, REFERENCES[k].year))
    section.items([REFERENCES[k].text() for k in chosen])
    return section


def _cd_diagram(staging: Path, comparison) -> tuple[list[Path], str | None]:
    """The CD diagram as PNG and SVG, or a note why there is none."""
    try:
        from .cd_diagram import critical_difference_diagram
    except ImportError as exc:
        return [], f"no critical-difference diagram: {exc}"
    paths = [staging / name for name in CD_FILES]
    matrix = comparison.matrix
    # The diagram draws the CD itself; the title says what was ranked.
    critical_difference_diagram(
        comparison, paths,
        title=f"average ranks by {matrix.metric} on {len(matrix.datasets)} datasets")
    return paths, None


# -- rendering ------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(title: str, summary: Sequence[str], sections: Sequence[_Section]) -> str:
    out = [f"# {title}", "", *(f"- {line}" for line in summary), ""]
    for section in sections:
        out += [f"## {section.heading}", ""]
        for kind, value in section.parts:
            if kind == "text":
                out += [value, ""]
            elif kind == "items":
                out += [f"- {item}" for item in value] + [""]
            elif kind == "image":
                path, alt = value
                out += [f"![{alt}]({path.name})", ""]
            else:
                header, rows, bold = value
                line = lambda cells: "| " + " | ".join(_md_cell(c) for c in cells) + " |"  # noqa: E731
                out += [line(header), line(["---"] * len(header))]
                out += [line([f"**{c}**" if (i, j) in bold else c for j, c in enumerate(row)])
                        for i, row in enumerate(rows)]
                out.append("")
    return "\n".join(out)


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 72em; padding: 0 1.5em; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.8em;
     border-bottom: 1px solid #ddd; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
th, td { border: 1px solid #d0d0d0; padding: .3em .65em; text-align: right; }
th { background: #f2f2f2; } td:nth-child(2), th:nth-child(2) { text-align: left; }
table.wide td:first-child, table.wide th:first-child { text-align: left; }
tr:nth-child(even) td { background: #fafafa; } td.mark { text-align: center; }
code { background: #f2f2f2; padding: 0 .25em; border-radius: 3px; }
img { max-width: 100%; } div.scroll { overflow-x: auto; } ul { padding-left: 1.4em; } li { margin: .25em 0; }
"""


def _inline(text: str) -> str:
    # Backticks are the only markup the sections use.
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if k % 2 else p for k, p in enumerate(parts))


def _html(title: str, summary: Sequence[str], sections: Sequence[_Section]) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{html.escape(title)}</h1>",
           "<ul>" + "".join(f"<li>{_inline(line)}</li>" for line in summary) + "</ul>"]
    for section in sections:
        out.append(f"<h2>{html.escape(section.heading)}</h2>")
        for kind, value in section.parts:
            if kind == "text":
                out.append(f"<p>{_inline(value)}</p>")
            elif kind == "items":
                out.append("<ul>" + "".join(f"<li>{_inline(v)}</li>" for v in value) + "</ul>")
            elif kind == "image":
                path, alt = value
                data = base64.b64encode(path.read_bytes()).decode("ascii")
                out.append(f'<p><img alt="{html.escape(alt)}" '
                           f'src="data:image/png;base64,{data}"></p>')
            else:
                header, rows, bold = value
                wide = ' class="wide"' if header and header[0] in ("dataset", "algorithm") else ""
                out.append(f'<div class="scroll"><table{wide}><thead><tr>'
                           + "".join(f"<th>{html.escape(h)}</th>" for h in header)
                           + "</tr></thead><tbody>")
                for i, row in enumerate(rows):
                    # Markers and group letters centred under their heading.
                    cells = (f"<td><b>{html.escape(c)}</b></td>" if (i, j) in bold
                             else f'<td class="mark">{html.escape(c)}</td>' if len(c) == 1
                             and not c.isdigit() else f"<td>{html.escape(c)}</td>"
                             for j, c in enumerate(row))
                    out.append("<tr>" + "".join(cells) + "</tr>")
                out.append("</tbody></table></div>")
    out.append("</body></html>")
    return "\n".join(out)


def _summary_lines(spec_summary: dict) -> list[str]:
    def text(value):
        if isinstance(value, (list, tuple)):
            return ", ".join(str(v) for v in value)
        return str(value)

    return [f"{key}: {text(value)}" for key, value in spec_summary.items() if value is not None]


def write_report(directory: str | os.PathLike, frame, curves, comparison, *, title: str,
                 spec_summary: dict) -> list[Path]:
    """Write ``report.md``, ``report.html`` and the CD diagram (``cd-diagram.png`` and
    ``.svg``) into ``directory``; return their paths.

    ``frame``: the study's cells (:meth:`boostkit.study.ResultStore.read_frame`); ``curves``:
    its learning curves (not drawn in the report; they are in the exports); ``comparison``:
    :func:`boostkit.study.stats.compare` of the frame's scores; ``title`` heads the report;
    ``spec_summary`` (:meth:`boostkit.study.StudySpec.summary`) is listed under it.

    The HTML page is self-contained (inline CSS, the CD diagram as a data URI, no script).
    The files are written into a scratch folder and moved into place only when all are done,
    so a failure leaves none half-written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    missing = [c for c in ("dataset", "algorithm", "status", "prediction_hash", "fit_seconds",
                           "predict_seconds", "model_bytes", "rounds", "error", *_CELL_KEY)
               if c not in frame.columns]
    if missing:
        raise ValueError(f"frame must have the cells table's columns; it lacks {missing}")
    staging = Path(tempfile.mkdtemp(prefix=".report-", dir=directory))
    try:
        order = [name for name, _ in comparison.ranking]
        order += [name for name in dict.fromkeys(frame["algorithm"]) if name not in order]
        groups = coinciding_groups(frame, comparison.matrix.algorithms)
        figures, note = _cd_diagram(staging, comparison)
        sections = [_ranked(comparison, groups), _tests(comparison)]
        diagram = _Section("Critical-difference diagram")
        if figures:
            diagram.text("Average ranks on the axis (1 is the best); a bar joins algorithms the "
                         "Nemenyi test does not tell apart (Demšar 2006, section 3.2.4).")
            diagram.image(figures[0], "critical-difference diagram")
        else:
            diagram.text(note)
        sections += [diagram, _per_dataset(frame, comparison, order), _cost(frame, order),
                     _references(frame, comparison, order)]
        done = int((frame["status"] == "done").sum())
        summary = _summary_lines(spec_summary) + [
            f"cells: {done} finished, {len(frame) - done} failed or not run (per-fold values "
            "in cells.csv)"]
        (staging / "report.md").write_text(_markdown(title, summary, sections),
                                           encoding="utf-8")
        (staging / "report.html").write_text(_html(title, summary, sections), encoding="utf-8")
        written = []
        for path in [*figures, staging / "report.md", staging / "report.html"]:
            os.replace(path, directory / path.name)
            written.append(directory / path.name)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
