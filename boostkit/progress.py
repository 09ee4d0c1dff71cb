"""Progress reporting for long runs: a round observer and a bar over many fits.

:class:`RoundProgress` is an ordinary observer (hook ``boostkit_round_end``): pass it to
``Booster(observers=[RoundProgress()])`` to watch the rounds of one fit. :class:`FitProgress`
counts the fits of a larger job (the ``(algorithm, fold)`` pairs of ``boostkit compare``) with a
tqdm bar whose text follows the rounds of the current fit, or, without tqdm, one plain line per
finished fit. tqdm is optional (``pip install boostkit[progress]``) and imported only when a bar
is drawn, so importing this module stays cheap.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from .hookspecs import hookimpl

__all__ = ["FitProgress", "RoundProgress", "WarningLog", "tqdm_or_none"]

# Redraw at most this often (seconds): one round can take microseconds.
_REDRAW_INTERVAL = 0.1


def tqdm_or_none():
    """The ``tqdm`` class if the ``progress`` extra is installed, else ``None``."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class RoundProgress:
    """Observer showing ``round t/T`` of a fit.

    Parameters
    ----------
    bar:
        A tqdm bar whose postfix text should show the round (how :class:`FitProgress` uses it).
        ``None`` draws a bar of its own over the rounds of each fit, which needs tqdm.
    label:
        Text shown before the round count.
    stream:
        Where an own bar is drawn (standard error by default).
    """

    def __init__(self, bar: Any = None, label: str = "", stream: TextIO | None = None):
        self.bar = bar
        self.label = label
        self.stream = stream
        self._own_bar = None
        self._last_redraw = 0.0

    @hookimpl
    def boostkit_fit_start(self, state):
        if self.bar is not None:
            return
        tqdm = tqdm_or_none()
        if tqdm is None:
            raise ImportError(
                "RoundProgress without a bar draws one with tqdm, which is not installed; "
                "install it with: pip install 'boostkit[progress]'"
            )
        self._own_bar = tqdm(
            total=state.n_rounds, desc=self.label or "rounds", unit="round", leave=False,
            file=self.stream if self.stream is not None else sys.stderr,
        )

    @hookimpl
    def boostkit_round_end(self, state, record):
        if self._own_bar is not None:
            self._own_bar.update(1)
            return
        now = time.monotonic()
        if now - self._last_redraw >= _REDRAW_INTERVAL or record.stop_reason is not None:
            self._last_redraw = now
            text = f"round {record.round}/{state.n_rounds}"
            self.bar.set_postfix_str(f"{self.label} {text}" if self.label else text)

    @hookimpl
    def boostkit_fit_end(self, state, model):
        if self._own_bar is not None:
            self._own_bar.close()
            self._own_bar = None


class FitProgress:
    """Progress over ``total`` fits: a tqdm bar if tqdm is installed, else one line per fit.

    Use as a context manager; for each fit, pass :meth:`observer` to the booster and call
    :meth:`fit_done` when it has finished. ``enabled=False`` reports nothing.
    """

    def __init__(self, total: int, *, enabled: bool = True, stream: TextIO | None = None,
                 description: str = "fits"):
        self.total = total
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        tqdm = tqdm_or_none() if enabled else None
        self.bar = (
            tqdm(total=total, desc=description, unit="fit", file=self.stream, dynamic_ncols=True)
            if tqdm is not None else None
        )
        if enabled and self.bar is None:
            print("progress: one line per fit (for a progress bar: pip install "
                  "'boostkit[progress]')", file=self.stream, flush=True)

    def __enter__(self) -> FitProgress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def observer(self, label: str) -> RoundProgress | None:
        """An observer for the next fit, or ``None`` when no bar shows rounds."""
        return RoundProgress(self.bar, label) if self.bar is not None else None

    def fit_done(self, summary: str) -> None:
        """Count one finished fit; without a bar, print ``summary`` on its own line."""
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.enabled:
            print(f"[{self.done}/{self.total}] {summary}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class WarningLog:
    """Warnings raised during fits, kept out of the progress bar and reported once each.

    ``with log.collect(source):`` records every warning raised inside (with
    ``warnings.simplefilter("always")``, so repeats are counted, not swallowed) instead of
    printing it; :meth:`lines` gives one line per distinct message with how many times it was
    raised and by which sources (e.g. ``popbm fold 1/5``). Messages that differ only in their
    numbers (a count of rounds per fold) are one entry, shown with the first one's numbers.
    """

    def __init__(self):
        self._entries: dict[tuple[str, str], dict] = {}
        self._raw: list[tuple[str, str, str]] = []

    @staticmethod
    def _key(category: str, message: str) -> tuple[str, str]:
        import re

        return category, re.sub(r"\d+(\.\d+)?", "#", message)

    def collect(self, source: str):
        import contextlib
        import warnings

        @contextlib.contextmanager
        def collecting():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    yield
                finally:
                    for warning in caught:
                        self.add(source, warning.category.__name__, str(warning.message))

        return collecting()

    def extend(self, other: WarningLog) -> None:
        """Add every warning ``other`` recorded."""
        for raw in other._raw:
            self.add(*raw)

    def add(self, source: str, category: str, message: str) -> None:
        self._raw.append((source, category, message))
        entry = self._entries.setdefault(self._key(category, message), {
            "category": category, "message": message, "count": 0, "sources": [],
            "variants": set()})
        entry["count"] += 1
        entry["variants"].add(message)
        if source not in entry["sources"]:
            entry["sources"].append(source)

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[dict]:
        """One dict per distinct message: ``category``, ``message`` (the first seen),
        ``count``, ``sources`` and ``varies`` (the numbers differ between occurrences)."""
        return [{"category": e["category"], "message": e["message"], "count": e["count"],
                 "sources": list(e["sources"]), "varies": len(e["variants"]) > 1}
                for e in self._entries.values()]

    def lines(self) -> list[str]:
        out = []
        for e in self.entries():
            times = "once" if e["count"] == 1 else f"{e['count']} times"
            sources = _sources_text(e["sources"])
            varies = "; numbers vary, the first shown" if e["varies"] else ""
            out.append(f"warning ({times}: {sources}{varies}): {e['category']}: {e['message']}")
        return out


def _sources_text(sources: list[str]) -> str:
    """``popbm fold 1/5, popbm fold 2/5`` shortened to ``popbm (folds 1, 2 of 5)``."""
    import re

    grouped: dict[str, list[str]] = {}
    order = []
    for source in sources:
        match = re.fullmatch(r"(.*) fold (\d+)/(\d+)", source)
        name, fold = (f"{match[1]}|{match[3]}", match[2]) if match else (source, "")
        if name not in grouped:
            grouped[name] = []
            order.append(name)
        if fold:
            grouped[name].append(fold)
    parts = []
    for name in order:
        folds = grouped[name]
        if not folds:
            parts.append(name)
            continue
        algorithm, total = name.split("|")
        label = "fold" if len(folds) == 1 else "folds"
        parts.append(f"{algorithm} ({label} {', '.join(folds)} of {total})")
    return ", ".join(parts)
