"""Small synthetic data sources for the study tests: picklable and importable by worker
processes (spawned workers inherit this directory on sys.path)."""

from __future__ import annotations

import hashlib

import attrs
import numpy as np

from boostkit.features import FeatureSchema


@attrs.frozen
class Data:
    name: str
    X: np.ndarray = attrs.field(eq=False)
    y: np.ndarray = attrs.field(eq=False)
    features: FeatureSchema
    classes: tuple
    data_hash: str
    origin: str = "synthetic"


@attrs.frozen
class Blobs:
    """``n`` rows of ``d`` features around one centre per class, seeded."""

    name: str
    n: int = 60
    d: int = 3
    n_classes: int = 2
    seed: int = 0
    origin: str = "synthetic"

    def load(self) -> Data:
        rng = np.random.default_rng(self.seed)
        labels = np.array([f"c{k}" for k in range(self.n_classes)])
        y = labels[np.arange(self.n) % self.n_classes]
        centres = rng.normal(size=(self.n_classes, self.d))
        X = centres[np.arange(self.n) % self.n_classes] + rng.normal(size=(self.n, self.d))
        digest = hashlib.sha256(X.tobytes() + "\n".join(y).encode()).hexdigest()
        return Data(self.name, X, y, FeatureSchema(self.d), tuple(labels.tolist()), digest)
