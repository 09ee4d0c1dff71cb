"""The runnable example of docs/algorithms/pav.md runs, and says what the code does."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "algorithms" / "pav.md"


def test_the_example_on_the_algorithm_page_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)
    assert blocks, "the page has no python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)
    printed = capsys.readouterr().out.split()
    assert printed[:2] == ["0.8603622669780038", "0.8230747995140096"]
    assert float(printed[2]) > 0.8
