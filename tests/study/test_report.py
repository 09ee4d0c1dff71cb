"""The study report: ranked table, markers, coinciding groups, self-contained HTML, references."""

import re
from html.parser import HTMLParser

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
stats = pytest.importorskip("boostkit.study.stats")
pytest.importorskip("boostkit.study.cd_diagram")

from boostkit.references import REFERENCES, cited  # noqa: E402
from boostkit.study.report import coinciding_groups, write_report  # noqa: E402
from boostkit.study.store import CELL_COLUMNS  # noqa: E402

# Mean accuracy per dataset: weightboost best everywhere, adaboost and samme one model,
# logitboost worst.
ACCURACY = {
    "weightboost": [0.95, 0.91, 0.88, 0.97, 0.90, 0.93, 0.86, 0.94],
    "adaboost": [0.90, 0.85, 0.84, 0.93, 0.86, 0.89, 0.80, 0.91],
    "samme": [0.90, 0.85, 0.84, 0.93, 0.86, 0.89, 0.80, 0.91],
    "logitboost": [0.80, 0.82, 0.70, 0.85, 0.81, 0.79, 0.75, 0.83],
}
DATASETS = [f"keel/set{i}" for i in range(8)]


def cells_frame(accuracy=ACCURACY, failed=()):
    rows = []
    for algorithm, values in accuracy.items():
        model = "adaboost" if algorithm == "samme" else algorithm
        for dataset, value in zip(DATASETS, values):
            for fold in range(2):
                row = dict.fromkeys(CELL_COLUMNS)
                row.update(dataset=dataset, algorithm=algorithm, recipe=algorithm,
                           resample="2-fold", repeat=0, fold=fold, seed=0, status="done",
                           accuracy=value, fit_seconds=0.02, predict_seconds=0.001,
                           rounds=30, model_bytes=4096 if fold == 0 else None,
                           prediction_hash=f"{model}-{dataset}-{fold}")
                if (algorithm, dataset) in failed:
                    row.update(status="failed", error="ValueError: boom", accuracy=None,
                               prediction_hash=None)
                rows.append(row)
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS))


def report(tmp_path, frame=None, baseline="adaboost", **kwargs):
    frame = cells_frame() if frame is None else frame
    matrix = stats.score_matrix(frame, "accuracy")
    comparison = stats.compare(matrix, baseline=baseline, **kwargs)
    paths = write_report(tmp_path, frame, None, comparison, title="Study: 4 on 8",
                         spec_summary={"resampling": "2-fold", "baseline": baseline})
    return paths, (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()


def ranking_rows(markdown):
    section = markdown.split("## Ranking")[1].split("## ")[0]
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in section.splitlines() if re.match(r"\| \d", line)]


def test_files_and_ranked_table_best_first(tmp_path):
    paths, markdown, _ = report(tmp_path)
    assert {p.name for p in paths} == {"report.md", "report.html", "cd-diagram.png",
                                      "cd-diagram.svg"}
    assert all(p.is_file() for p in paths)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no scratch left
    rows = ranking_rows(markdown)
    assert [r[1] for r in rows] == ["weightboost", "adaboost", "samme", "logitboost"]
    assert [r[2] for r in rows] == ["1.00", "2.50", "2.50", "4.00"]
    assert rows[0][3] == f"{np.mean(ACCURACY['weightboost']):.4f}"


def test_significance_markers_against_the_baseline(tmp_path):
    _, markdown, _ = report(tmp_path)
    marker = {r[1]: r[4] for r in ranking_rows(markdown)}
    # 8 datasets, all won or all lost: Wilcoxon p = 0.0078, Holm over 3 tests < 0.05.
    assert marker == {"weightboost": "▲", "adaboost": "baseline", "samme": "·",
                      "logitboost": "▼"}
    wtl = {r[1]: r[6] for r in ranking_rows(markdown)}
    assert wtl["weightboost"] == "8/0/0" and wtl["samme"] == "0/8/0"
    assert "Holm" in markdown and "significantly better" in markdown


def test_coinciding_models_are_one_group_with_a_note(tmp_path):
    frame = cells_frame()
    assert coinciding_groups(frame, list(ACCURACY)) == [("adaboost", "samme")]
    _, markdown, html_text = report(tmp_path, frame)
    same = {r[1]: r[-1] for r in ranking_rows(markdown)}
    assert same == {"weightboost": "", "adaboost": "A", "samme": "A", "logitboost": ""}
    assert ("same model (A: `adaboost`, `samme`): the algorithms of a group made identical test "
            "predictions") in markdown
    assert "one model under several names" in html_text


def test_a_hash_differing_in_one_cell_or_a_failed_cell_breaks_the_group(tmp_path):
    frame = cells_frame()
    frame.loc[(frame["algorithm"] == "samme") & (frame["fold"] == 1)
              & (frame["dataset"] == DATASETS[3]), "prediction_hash"] = "other"
    assert coinciding_groups(frame, list(ACCURACY)) == []
    failed = cells_frame(failed={("samme", DATASETS[0])})
    assert coinciding_groups(failed, list(ACCURACY)) == []


class _Links(HTMLParser):
    """The tags and links of a page, and whether every element it opens is closed in order."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.links, self.tags, self.open, self.balanced = [], [], [], True

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.links += [(tag, name, value) for name, value in attrs if name in ("src", "href")]
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        self.balanced &= bool(self.open) and self.open.pop() == tag


def test_html_is_self_contained(tmp_path):
    _, _, html_text = report(tmp_path)
    parser = _Links()
    parser.feed(html_text)
    assert html_text.startswith("<!DOCTYPE html>") and html_text.rstrip().endswith("</html>")
    assert "script" not in parser.tags and "link" not in parser.tags
    assert [tag for tag, name, _ in parser.links] == ["img"]
    assert all(value.startswith("data:image/png;base64,") for _, _, value in parser.links)
    assert not re.search(r"https?://", html_text)
    assert "<style>" in html_text and "<table" in html_text
    assert parser.balanced and parser.open == []


def test_bayesian_signed_rank_column_with_a_rope(tmp_path):
    pytest.importorskip("baycomp")
    _, markdown, _ = report(tmp_path, rope=0.01)
    header = markdown.split("## Ranking")[1].split("| --- ")[0]
    assert "P(better / equivalent / worse)" in header
    row = {r[1]: r[7] for r in ranking_rows(markdown)}
    better, equivalent, worse = (float(v) for v in row["weightboost"].split(" / "))
    assert better > 0.9 and row["adaboost"] == ""
    assert "region of practical equivalence of ±0.01 (Benavoli et al. 2017)" in markdown
    assert "Benavoli, A., Corani, G." in markdown


def test_tests_per_dataset_cost_and_failed_cells(tmp_path):
    frame = cells_frame(failed={("logitboost", DATASETS[7])})
    _, markdown, _ = report(tmp_path, frame)
    assert "Friedman test (Friedman 1937): chi² = " in markdown
    # Ranks that agree on every dataset: F is infinite (Demšar 2006, eq. 3).
    assert "Iman–Davenport correction" in markdown and "F(3, 18) = ∞" in markdown
    per_dataset = markdown.split("## Per dataset")[1].split("## ")[0]
    assert "| keel/set0 | **0.9500** | 0.9000 | 0.9000 | 0.8000 |" in per_dataset
    assert "| keel/set7 | **0.9400** | 0.9100 | 0.9100 | - |" in per_dataset
    assert "keel/set7 is not in the statistics" in per_dataset
    cost = markdown.split("## Cost")[1].split("## ")[0]
    assert "| weightboost | 20.0 ms | 1.0 ms | 4.0 KiB | 30.0 | 320.0 ms |" in cost
    assert "logitboost: 2 cell(s) failed: ValueError: boom" in cost
    assert "- cells: 62 finished, 2 failed or not run" in markdown


def test_references_by_author_title_venue_year(tmp_path):
    _, markdown, html_text = report(tmp_path)
    references = markdown.split("## References")[1]
    assert "001_e064afeb8d6bf0ca" not in references
    assert "`weightboost`: Jin et al. 2003" in references
    assert REFERENCES["jin2003"].text() in references
    assert ("Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. "
            "Journal of Machine Learning Research 7, 1-30.") in references
    assert "Holm, S. (1979)" in references and "Alcalá-Fdez" in references
    assert "Jin, R., Liu, Y., Si, L." in html_text


def test_cited_finds_keys_in_recipe_papers():
    assert cited("Jin et al., ICML 2003 (001_e064afeb8d6bf0ca.txt): eq. 4, 7, 8") == ("jin2003",)
    assert cited("Friedman, Hastie & Tibshirani (2000), Algorithm 4") == ("friedman2000",)
    assert cited("Wilbur et al. (2005), 000 section 3.3") == ("wilbur2005",)
    assert cited("Me (2026)") == ()


def test_a_frame_without_the_cells_columns_is_refused_and_nothing_written(tmp_path):
    frame = cells_frame()
    comparison = stats.compare(stats.score_matrix(frame, "accuracy"))
    with pytest.raises(ValueError, match=r"lacks \['prediction_hash'\]"):
        write_report(tmp_path, frame.drop(columns="prediction_hash"), None, comparison,
                     title="t", spec_summary={})
    assert list(tmp_path.iterdir()) == []


def test_groups_are_lettered_in_rank_order(tmp_path):
    # The worse pair comes first in the frame; A is still the pair met first in the table.
    accuracy = {"logitboost": ACCURACY["logitboost"], "multinomial": ACCURACY["logitboost"],
                **ACCURACY}
    frame = cells_frame(accuracy)
    frame.loc[frame["algorithm"] == "multinomial", "prediction_hash"] = frame.loc[
        frame["algorithm"] == "logitboost", "prediction_hash"].to_numpy()
    _, markdown, _ = report(tmp_path, frame)
    same = {r[1]: r[-1] for r in ranking_rows(markdown)}
    assert same == {"weightboost": "", "adaboost": "A", "samme": "A", "logitboost": "B",
                    "multinomial": "B"}
    assert "same model (A: `adaboost`, `samme`; B: `logitboost`, `multinomial`)" in markdown


def test_without_a_baseline_and_with_two_algorithms(tmp_path):
    _, markdown, _ = report(tmp_path / "none", baseline=None)
    header = markdown.split("## Ranking")[1].split("| --- ")[0]
    assert "vs " not in header and "Holm" not in markdown.split("## Tests")[0]
    assert [r[1] for r in ranking_rows(markdown)] == ["weightboost", "adaboost", "samme",
                                                     "logitboost"]
    two = cells_frame({name: ACCURACY[name] for name in ("adaboost", "weightboost")})
    _, markdown, _ = report(tmp_path / "two", two)
    assert "Friedman test (" not in markdown
    assert "no Friedman test with two algorithms" in markdown
    assert {r[1]: r[4] for r in ranking_rows(markdown)} == {"weightboost": "▲",
                                                           "adaboost": "baseline"}


def test_a_failure_while_writing_leaves_no_file(tmp_path, monkeypatch):
    from boostkit.study import cd_diagram

    def fail(comparison, paths, **kwargs):
        paths[0].write_bytes(b"half a PNG")
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(cd_diagram, "critical_difference_diagram", fail)
    with pytest.raises(RuntimeError, match="drawing failed"):
        report(tmp_path)
    assert list(tmp_path.iterdir()) == []
