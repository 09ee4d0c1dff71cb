"""The Python examples of docs/algorithms/weightboost.md run as printed."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "algorithms" / "weightboost.md"


def test_the_python_blocks_of_the_algorithm_page_run(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
    printed = capsys.readouterr().out
    assert "weightboost: 100 rounds, test accuracy" in printed and "with C_T:" in printed
