"""Errors after every round of a run of threshold terms, without materialising any round's
margins.

The terms are flattened as in :mod:`boostkit.kernels.predict` (``features[t]``,
``thresholds[t]``, ``missing_left[t]``, ``values[t, cell, :]``), with the margin column each term
adds to: a term of a one-vs-rest class model adds ``values[t, cell, 0]`` to its class's column, a
term of a model with C columns adds ``values[t, cell, :]`` to every column (``columns[t] = -1``).
Every row's margins are summed term after term in the given order (the additions of a staged
evaluation, so the same bits), and after the last term of a round every row's predicted labels
are compared with its targets.

The label rule is :func:`boostkit.model.margin_labels` on the margins plus ``offsets``: F > 0
for one column, F_l > 0 per label for multi-label data, else the first class whose margin is
within :data:`boostkit.splits.TIE_TOLERANCE` of the row's largest (relative to its largest
magnitude).
"""

from __future__ import annotations

import numba
import numpy as np

from ..splits import TIE_TOLERANCE
from .predict import _cell


@numba.njit(cache=True, nogil=True)
def _wrong(margin, offsets, targets, multilabel):
    """How many labels the rows' margins get wrong: rows, or (row, label) pairs for
    multi-label data."""
    n_rows, n_columns = margin.shape
    wrong = 0
    for j in range(n_rows):
        if n_columns == 1:
            wrong += (margin[j, 0] + offsets[0] > 0.0) != (targets[j, 0] == 1)
        elif multilabel:
            for col in range(n_columns):
                wrong += (margin[j, col] + offsets[col] > 0.0) != (targets[j, col] == 1)
        else:
            top = margin[j, 0] + offsets[0]
            scale = abs(top)
            for col in range(1, n_columns):
                value = margin[j, col] + offsets[col]
                top = max(top, value)
                scale = max(scale, abs(value))
            bar = top - TIE_TOLERANCE * scale
            predicted = 0  # NaN margins: the argmax of no True is the first class
            for col in range(n_columns):
                if margin[j, col] + offsets[col] >= bar:
                    predicted = col
                    break
            wrong += predicted != targets[j, 0]
    return wrong


@numba.njit(cache=True, nogil=True)
def staged_threshold_errors(X, features, thresholds, missing_left, values, columns, ends,
                            offsets, targets, multilabel, margin, errors):
    """Add every term to the rows' margins and count their errors after each round.

    ``X`` ``(m, d)`` float64, the rows evaluated; ``features`` ``(T,)`` int64, ``thresholds``
    ``(T,)`` float64, ``missing_left`` ``(T,)`` bool, ``values`` ``(T, 2, W)`` float64 (cell 0:
    x <= threshold); ``columns`` ``(T,)`` int64, the margin column of a one-column term or -1
    for a term of all C columns (W = C); ``ends`` ``(T,)`` int64, the round whose last term t
    is (its index in ``errors``) or -1; ``offsets`` ``(C,)`` float64; ``targets`` ``(m, K)``
    int64, the class position (K = 1; 0/1 for one margin column) or the 0/1 labels
    (multi-label, K = C); ``margin`` ``(m, C)`` float64, updated in place; ``errors`` ``(R,)``
    int64, incremented in place.
    """
    n_rows, n_columns = margin.shape
    for t in range(features.shape[0]):
        feature, threshold, left, column = features[t], thresholds[t], missing_left[t], columns[t]
        for j in range(n_rows):
            cell = _cell(X[j, feature], threshold, left)
            if column >= 0:
                margin[j, column] += values[t, cell, 0]
            else:
                for col in range(n_columns):
                    margin[j, col] += values[t, cell, col]
        if ends[t] >= 0:
            errors[ends[t]] += _wrong(margin, offsets, targets, multilabel)
