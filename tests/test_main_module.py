"""``python -m boostkit`` is the ``boostkit`` command."""

from __future__ import annotations

import subprocess
import sys


def test_python_dash_m_boostkit_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "boostkit", "recipes"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "adaboost-mh" in done.stdout and "samme" in done.stdout


def test_python_dash_m_boostkit_reports_usage_errors_with_status_2():
    done = subprocess.run([sys.executable, "-m", "boostkit", "no-such-command"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "usage: boostkit" in done.stderr
