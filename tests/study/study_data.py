"""Small CSV datasets for the study tests, read through boostkit.study.sources like any other
(worker processes read the same files)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from boostkit.study.sources import resolve_datasets


def write_blobs(path: Path, n: int = 60, d: int = 3, n_classes: int = 2, seed: int = 0) -> Path:
    """``n`` rows of ``d`` features around one centre per class, seeded; label last."""
    rng = np.random.default_rng(seed)
    y = np.array([f"c{k}" for k in range(n_classes)])[np.arange(n) % n_classes]
    centres = rng.normal(size=(n_classes, d))
    X = centres[np.arange(n) % n_classes] + rng.normal(size=(n, d))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*(f"x{j}" for j in range(d)), "label"])
        writer.writerows([*(f"{v:.6f}" for v in row), label] for row, label in zip(X, y))
    return path


def blob_sources(directory: Path, **datasets: dict) -> list:
    """A CSV file per keyword (its name) with :func:`write_blobs`'s arguments, as sources
    named ``csv/<name>``."""
    directory.mkdir(parents=True, exist_ok=True)
    return resolve_datasets([str(write_blobs(directory / f"{name}.csv", **kwargs))
                             for name, kwargs in datasets.items()])
