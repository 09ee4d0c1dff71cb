"""Observers anyone can pass to ``Booster(observers=[...])`` without writing a plugin."""

from __future__ import annotations

import sys
from typing import TextIO

import numpy as np

from .hookspecs import hookimpl

__all__ = ["RoundLog", "WeightHistory", "format_record"]


def _number(value) -> str:
    return "-" if value is None else f"{value:.6g}"


def format_record(record, n_rounds: int) -> str:
    """One line for a round record: round t/T, eps_t, Z_t, prod Z_t, the training error, every
    validation score of ``record.extra`` and, on the last round, the stop reason."""
    fields = [
        f"[{record.round:>{len(str(n_rounds))}}/{n_rounds}]",
        f"eps_t={_number(record.weighted_error)}",
        f"Z_t={_number(record.z)}",
        f"prod_Z_t={_number(record.error_bound)}",
        f"training_error={_number(record.training_error)}",
    ]
    fields += [f"{key}={_number(value)}" for key, value in record.extra.items()
               if key.startswith("validation_")]
    if record.stop_reason is not None:
        fields.append(f"stop={record.stop_reason}")
    return " ".join(fields)


class RoundLog:
    """Print one line (:func:`format_record`) every ``every`` rounds and on the last round.

    What ``Booster(verbose=k)`` registers. Lines go to standard output (or ``stream``), not to
    :mod:`logging`: that is where scikit-learn's ``verbose`` and LightGBM's evaluation log print,
    so a user who asks for ``verbose`` sees it in a terminal or notebook without configuring
    logging, whose default level would hide it.
    """

    def __init__(self, every: int, stream: TextIO | None = None) -> None:
        self.every = every
        self.stream = stream
        self._printed = 0

    def _print(self, record, n_rounds: int) -> None:
        # sys.stdout is looked up at each line, so a redirected or captured stdout is followed.
        print(format_record(record, n_rounds), file=self.stream or sys.stdout, flush=True)
        self._printed = record.round

    @hookimpl
    def boostkit_fit_start(self, state):
        self._printed = 0

    @hookimpl
    def boostkit_round_end(self, state, record):
        if record.round % self.every == 0 or record.stop_reason is not None:
            self._print(record, state.n_rounds)

    @hookimpl
    def boostkit_fit_end(self, state, model):
        # A run that ends because the proposal has nothing left marks its last record after that
        # round's end: print it now if its line is not out yet.
        if model.records and model.records[-1].round != self._printed:
            self._print(model.records[-1], state.n_rounds)


class WeightHistory:
    """Keep a copy of the distribution over training examples: D_1, then D_{t+1} after round t.

    ``weights[0]`` is D_1 (the normalised sample weights) and ``weights[t]`` the distribution the
    round-t reweighting produced. Memory grows as rounds x examples: meant for small data,
    studies and tests.
    """

    def __init__(self) -> None:
        self.weights: list[np.ndarray] = []

    @hookimpl
    def boostkit_fit_start(self, state):
        self.weights = [state.weights.copy()]

    @hookimpl
    def boostkit_round_end(self, state, record):
        self.weights.append(state.weights.copy())
