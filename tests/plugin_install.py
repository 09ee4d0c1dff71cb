"""Build and install a plugin distribution of tests/third_party/ as pip would publish it.

:func:`install_distribution` installs it into a directory of its own; a process with that
directory on ``PYTHONPATH`` (and the Dask workers it starts, which inherit the environment) sees
its dist-info, so ``importlib.metadata`` finds its ``boostkit`` entry point exactly as after
``pip install``, while this process and the other tests never see it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _pip_install(source: Path, target: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", *options,
         "--target", str(target), str(source)],
        capture_output=True, text=True,
    )


def install_distribution(distribution: Path, root: Path) -> Path:
    """Install the distribution whose sources are in ``distribution`` into ``root / "site"``,
    and return that directory (the test fails, with pip's output, when it cannot)."""
    # Build from a copy: setuptools writes build/ and *.egg-info beside the sources.
    source = root / "source"
    shutil.copytree(distribution, source, ignore=shutil.ignore_patterns("__pycache__"))
    target = root / "site"
    offline = _pip_install(source, target, "--no-build-isolation")
    if offline.returncode != 0:
        # setuptools < 70.1 builds wheels only with the `wheel` package installed; an isolated
        # build fetches both from the package index.
        shutil.rmtree(target, ignore_errors=True)
        isolated = _pip_install(source, target)
        if isolated.returncode != 0:
            pytest.fail(
                f"could not build and install {distribution} with pip.\n"
                f"--no-build-isolation:\n{offline.stderr}\n"
                f"with build isolation:\n{isolated.stderr}"
            )
    return target
