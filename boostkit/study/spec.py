"""What a study is: its datasets, algorithms, resampling scheme and seeds (:class:`StudySpec`),
and the cells it is made of (:class:`Cell`), each seeded by its own key.

A study compares algorithms across datasets as the papers introducing boosting variants do
(Demšar 2006): every algorithm is fitted on the same folds of every dataset. A cell is one fit:
(dataset, algorithm, resample, repeat, fold, seed). Its folds and its fit's ``random_state``
come from a stable hash of the dataset, its data hash, the resampling, the repeat and the seed
-- never from the cell's position in the grid -- so adding datasets or algorithms to a study
never changes a finished cell, and every algorithm of a dataset sees the same folds (paired
comparisons).
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path
from typing import Any, Mapping, Sequence

import attrs
import numpy as np

from ..errors import BoostkitError
from ..metrics import stratified_folds
from ..data import MAX_BINS

__all__ = ["Cell", "Resampling", "StudySpec", "SpecError", "cell_seed"]

RESAMPLING_KINDS = ("k-fold", "repeated k-fold", "5x2cv")
METRICS = ("accuracy", "balanced_accuracy", "roc_auc", "log_loss")


class SpecError(BoostkitError, ValueError):
    """A study definition (flags or a TOML file) that cannot be run."""


def _positive_int(name: str, minimum: int = 1):
    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise SpecError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return check


def cell_seed(*parts: Any) -> int:
    """A seed in [0, 2**63) from the text of ``parts``: stable across processes, machines and
    Python versions (unlike ``hash``), so a cell's randomness depends on its key alone."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


@attrs.frozen
class Resampling:
    """How the examples of a dataset are split: ``"k-fold"`` (``folds`` stratified folds),
    ``"repeated k-fold"`` (``repeats`` times, each with its own seed) or ``"5x2cv"`` (five
    repeats of two folds; Dietterich 1998)."""

    kind: str = attrs.field(default="k-fold")
    folds: int = attrs.field(default=10, validator=_positive_int("folds", 2))
    repeats: int = attrs.field(default=1, validator=_positive_int("repeats"))

    @kind.validator
    def _check_kind(self, attribute, value):
        if value not in RESAMPLING_KINDS:
            raise SpecError(f"resampling must be one of {list(RESAMPLING_KINDS)}, got {value!r}")

    def __attrs_post_init__(self):
        if self.kind == "5x2cv" and (self.folds, self.repeats) != (2, 5):
            raise SpecError("5x2cv is five repeats of two folds: give neither folds nor repeats "
                            f"(got folds={self.folds}, repeats={self.repeats})")
        if self.kind == "k-fold" and self.repeats != 1:
            raise SpecError(f"k-fold runs once; for {self.repeats} repeats use "
                            "resampling = \"repeated k-fold\"")

    @classmethod
    def of(cls, kind: str = "k-fold", folds: int | None = None,
           repeats: int | None = None) -> Resampling:
        """From flags: ``repeats`` > 1 makes k-fold repeated; 5x2cv fixes both."""
        if kind == "5x2cv":
            return cls(kind, folds if folds is not None else 2,
                       repeats if repeats is not None else 5)
        if kind == "k-fold" and repeats is not None and repeats > 1:
            kind = "repeated k-fold"
        return cls(kind, 10 if folds is None else folds, 1 if repeats is None else repeats)

    @property
    def name(self) -> str:
        """The ``resample`` of a cell: ``"10-fold"``, ``"3x10-fold"`` or ``"5x2cv"``."""
        if self.kind == "5x2cv":
            return "5x2cv"
        if self.kind == "repeated k-fold":
            return f"{self.repeats}x{self.folds}-fold"
        return f"{self.folds}-fold"

    def split(self, y: np.ndarray, dataset: str, data_hash: str, repeat: int,
              seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The stratified folds of one repeat (:func:`boostkit.metrics.stratified_folds`),
        seeded by the dataset, its data, this resampling, the repeat and the seed."""
        return stratified_folds(y, self.folds,
                                cell_seed("folds", dataset, data_hash, self.name, repeat, seed))


@attrs.frozen(order=True)
class Cell:
    """One fit of a study. Its key -- every field but ``recipe`` -- is the primary key of the
    results database; ``recipe`` is the canonical recipe string of ``algorithm``."""

    dataset: str
    algorithm: str
    resample: str
    repeat: int
    fold: int
    seed: int
    recipe: str = attrs.field(default="", eq=False, order=False)

    @property
    def key(self) -> tuple[str, str, str, int, int, int]:
        return (self.dataset, self.algorithm, self.resample, self.repeat, self.fold, self.seed)

    def random_state(self, data_hash: str) -> int:
        """The fit's ``random_state``: from the key without the algorithm, so every algorithm
        of a fold draws the same randomness (two recipes that coincide give the same model)."""
        return cell_seed("fit", self.dataset, data_hash, self.resample, self.repeat, self.fold,
                         self.seed)


def split_names(text: str) -> list[str]:
    """``"a, b(x=1, y=2) c"`` -> ``["a", "b(x=1, y=2) c"]``: names split at the commas outside
    parentheses, so that a recipe string's parameters stay whole."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _names(name: str):
    def convert(value):
        if isinstance(value, str):
            value = split_names(value)
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise SpecError(f"{name} must be a list of names, got {value!r}")
        return tuple(value)
    return convert


def _seeds(value):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, str):
        try:
            value = [int(part) for part in value.split(",") if part.strip()]
        except ValueError:
            raise SpecError(f"seeds must be integers separated by commas, got {value!r}") from None
    if (not isinstance(value, (list, tuple)) or not value
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                       for v in value)):
        raise SpecError(f"seeds must be a non-empty list of integers, got {value!r}")
    if len(set(value)) != len(value):
        raise SpecError(f"seeds must be distinct, got {list(value)!r}")
    return tuple(int(v) for v in value)


def _path(value):
    return None if value is None else str(Path(value))


@attrs.frozen
class StudySpec:
    """A study: every algorithm on every dataset, on the same folds.

    ``datasets``: names for :func:`boostkit.study.sources.resolve_datasets` (suites, datasets,
    CSV files or directories); ``algorithms``: registered names or recipe strings (resolved by
    the plugin registry, ``get_registry().resolve``). ``resampling``, ``seeds`` (each seed
    repeats the whole resampling), ``n_rounds`` and ``max_bins`` for every fit. ``baseline``:
    the algorithm the statistics compare the others with; ``metric``: the score they rank.
    ``output``: the report's directory; ``database``: the results database (default
    ``<output>/study.sqlite``); ``data_dir``: where data not bundled are read from;
    ``target``: the label column of CSV files (default: the last column). ``keep_scores``:
    the runner also keeps, per cell, what ``boostkit compare``'s table and figures need (the
    out-of-fold scores and predictions, staged errors and AUCs, margins, final weights,
    warnings: :func:`boostkit.study.compare.kept_values`) in the database's ``kept`` table.
    """

    datasets: tuple[str, ...] = attrs.field(converter=_names("datasets"))
    algorithms: tuple[str, ...] = attrs.field(converter=_names("algorithms"))
    resampling: Resampling = attrs.field(factory=Resampling)
    seeds: tuple[int, ...] = attrs.field(default=(0,), converter=_seeds)
    n_rounds: int = attrs.field(default=100, validator=_positive_int("n_rounds"))
    max_bins: int = attrs.field(default=MAX_BINS, validator=_positive_int("max_bins", 2))
    baseline: str | None = None
    metric: str = "accuracy"
    output: str = attrs.field(default="study", converter=str)
    database: str | None = attrs.field(default=None, converter=_path)
    data_dir: str | None = attrs.field(default=None, converter=_path)
    target: str | None = None
    keep_scores: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def __attrs_post_init__(self):
        for name in ("datasets", "algorithms"):
            if not getattr(self, name):
                raise SpecError(f"a study needs at least one entry in {name}, got none")
        if len(set(self.algorithms)) != len(self.algorithms):
            raise SpecError(f"algorithms must be distinct, got {list(self.algorithms)!r}")
        if self.metric not in METRICS:
            raise SpecError(f"metric must be one of {list(METRICS)}, got {self.metric!r}")
        if self.baseline is not None and self.baseline not in self.algorithms:
            raise SpecError(f"baseline {self.baseline!r} is not among the algorithms "
                            f"{list(self.algorithms)}")

    @property
    def database_path(self) -> Path:
        return Path(self.database) if self.database else Path(self.output) / "study.sqlite"

    #: The keys of a study file, with what each holds (for the error naming an unknown key).
    KEYS = {
        "datasets": "list of dataset, suite, CSV or directory names",
        "algorithms": "list of registered names or recipe strings",
        "resampling": '"k-fold", "repeated k-fold" or "5x2cv"',
        "folds": "integer >= 2",
        "repeats": "integer >= 1",
        "seeds": "list of integers",
        "rounds": "integer >= 1",
        "max_bins": "integer >= 2",
        "baseline": "an algorithm of the study",
        "metric": f"one of {', '.join(METRICS)}",
        "output": "directory",
        "database": "path of the results database",
        "data_dir": "directory of data not bundled",
        "target": "the label column of CSV files (default: the last)",
        "keep_scores": "true to keep each cell's scores, staged curves and weights",
    }

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str = "the study") -> StudySpec:
        """A spec from a study file's keys (:attr:`KEYS`); an unknown key is refused, naming
        it and the valid keys."""
        unknown = sorted(set(values) - set(cls.KEYS))
        if unknown:
            raise SpecError(f"{where} has unknown key(s) {unknown}; valid keys: "
                            f"{', '.join(cls.KEYS)}")
        missing = [key for key in ("datasets", "algorithms") if key not in values]
        if missing:
            raise SpecError(f"{where} gives no {' and no '.join(missing)}")
        resampling = Resampling.of(values.get("resampling", "k-fold"), values.get("folds"),
                                   values.get("repeats"))
        rest = {field: values[key] for key, field in
                (("seeds", "seeds"), ("rounds", "n_rounds"), ("max_bins", "max_bins"),
                 ("baseline", "baseline"), ("metric", "metric"), ("output", "output"),
                 ("database", "database"), ("data_dir", "data_dir"), ("target", "target"),
                 ("keep_scores", "keep_scores"))
                if key in values}
        return cls(datasets=values["datasets"], algorithms=values["algorithms"],
                   resampling=resampling, **rest)

    @classmethod
    def from_toml(cls, path: str | os.PathLike,
                  overrides: Mapping[str, Any] | None = None) -> StudySpec:
        """A spec from a TOML study file, its keys at the top level or under ``[study]``;
        ``overrides`` (keys as in the file, e.g. from command-line flags) replace its values.
        A relative ``output``, ``database`` or ``data_dir`` is relative to the file."""
        path = Path(path)
        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SpecError(f"study file {path} does not exist") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SpecError(f"cannot read study file {path} as TOML: {exc}") from None
        if set(values) == {"study"} and isinstance(values["study"], dict):
            values = values["study"]
        for key in ("output", "database", "data_dir"):
            if isinstance(values.get(key), str):
                values[key] = str(path.parent / values[key])
        return cls.from_mapping({**values, **(overrides or {})}, where=f"study file {path}")

    @classmethod
    def from_flags(cls, config: str | os.PathLike | None = None, **flags) -> StudySpec:
        """A spec from command-line flags (keys as in a study file; ``None`` = not given),
        over the study file ``config`` if one is given."""
        given = {key: value for key, value in flags.items() if value is not None}
        if config is not None:
            return cls.from_toml(config, given)
        return cls.from_mapping(given, where="the command line")

    def cells(self, datasets: Sequence[str], algorithms: Sequence[tuple[str, str]]) -> list[Cell]:
        """Every cell over ``datasets`` (names) and ``algorithms`` ((name, recipe string)),
        algorithm by algorithm within a dataset, so that a study stopped early leaves whole
        algorithms finished (the last one partly)."""
        r = self.resampling
        return [Cell(dataset, name, r.name, repeat, fold, seed, recipe)
                for dataset in datasets for name, recipe in algorithms
                for seed in self.seeds for repeat in range(r.repeats)
                for fold in range(r.folds)]

    def summary(self) -> dict:
        """The spec as plain values (for reports and the database's ``meta`` table)."""
        return {"datasets": list(self.datasets), "algorithms": list(self.algorithms),
                "resampling": self.resampling.name, "seeds": list(self.seeds),
                "n_rounds": self.n_rounds, "max_bins": self.max_bins,
                "baseline": self.baseline, "metric": self.metric}
