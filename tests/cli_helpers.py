"""What the command-line tests share: running ``boostkit`` in-process and reading its table."""

from __future__ import annotations

import csv
from pathlib import Path

from boostkit.cli import main


def run(capsys, *argv):
    """``main(argv)`` in-process: (exit status, stdout, stderr)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def read_results(directory: Path) -> dict[str, dict]:
    """``results.csv`` of a compare run, one row per algorithm."""
    with open(directory / "results.csv", newline="", encoding="utf-8") as fh:
        return {row["algorithm"]: row for row in csv.DictReader(fh)}
