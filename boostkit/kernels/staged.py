"""Errors after every round of a run of threshold terms, without materialising any round's
margins.

The terms are flattened as in :mod:`boostkit.kernels.predict` (``features[t]``,
``thresholds[t]``, ``missing_left[t]``, ``values[t, cell, :]``), with the margin column each term
adds to: a term of a one-vs-rest class model adds ``values[t, cell, 0]`` to its class's column, a
term of a model with C columns adds ``values[t, cell, :]`` to every column (``columns[t] = -1``).
Every row's margins are summed term after term in the given order (the additions of a staged
evaluation, so the same bits), and after the last term of a round every row's predicted labels
are compared with its targets. The rows are the inner loop and the arrays are laid out by
column (``X`` as ``(d, m)``, the margins as ``(C, m)``), so each term reads and updates
contiguous memory.

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
def _wrong(margin, offsets, targets, multilabel, top, scale, predicted):
    """How many labels the margins ``(C, m)`` get wrong: rows, or (row, label) pairs for
    multi-label data. ``top``, ``scale`` (float64) and ``predicted`` (int64), ``(m,)``, are
    scratch space."""
    n_columns, n_rows = margin.shape
    wrong = 0
    if n_columns == 1 or multilabel:
        for col in range(n_columns):
            for j in range(n_rows):
                wrong += (margin[col, j] + offsets[col] > 0.0) != (targets[j, col] == 1)
        return wrong
    for j in range(n_rows):
        top[j] = margin[0, j] + offsets[0]
        scale[j] = abs(top[j])
        predicted[j] = -1
    for col in range(1, n_columns):
        for j in range(n_rows):
            value = margin[col, j] + offsets[col]
            top[j] = max(top[j], value)
            scale[j] = max(scale[j], abs(value))
    for j in range(n_rows):
        top[j] -= TIE_TOLERANCE * scale[j]  # the bar a class's margin must reach
    for col in range(n_columns):
        for j in range(n_rows):
            if predicted[j] < 0 and margin[col, j] + offsets[col] >= top[j]:
                predicted[j] = col
    for j in range(n_rows):
        # NaN margins reach no bar: the argmax of no True is the first class
        wrong += max(predicted[j], 0) != targets[j, 0]
    return wrong


@numba.njit(cache=True, nogil=True)
def staged_threshold_errors(X_columns, features, thresholds, missing_left, values, columns, ends,
                            offsets, targets, multilabel, margin, errors):
    """Add every term to the rows' margins and count their errors after each round.

    ``X_columns`` ``(d, m)`` float64, the rows evaluated, by feature; ``features`` ``(T,)``
    int64, ``thresholds`` ``(T,)`` float64, ``missing_left`` ``(T,)`` bool, ``values``
    ``(T, 2, W)`` float64 (cell 0: x <= threshold); ``columns`` ``(T,)`` int64, the margin
    column of a one-column term or -1 for a term of all C columns (W = C); ``ends`` ``(T,)``
    int64, the round whose last term t is (its index in ``errors``) or -1; ``offsets`` ``(C,)``
    float64; ``targets`` ``(m, K)`` int64, the class position (K = 1; 0/1 for one margin
    column) or the 0/1 labels (multi-label, K = C); ``margin`` ``(C, m)`` float64, updated in
    place; ``errors`` ``(R,)`` int64, incremented in place.
    """
    n_columns, n_rows = margin.shape
    top, scale = np.empty(n_rows), np.empty(n_rows)
    predicted = np.empty(n_rows, dtype=np.int64)
    for t in range(features.shape[0]):
        x, threshold, left = X_columns[features[t]], thresholds[t], missing_left[t]
        column = columns[t]
        if column >= 0:
            low, high = values[t, 0, 0], values[t, 1, 0]
            row = margin[column]
            for j in range(n_rows):
                row[j] += high if _cell(x[j], threshold, left) else low
        else:
            for col in range(n_columns):
                low, high = values[t, 0, col], values[t, 1, col]
                row = margin[col]
                for j in range(n_rows):
                    row[j] += high if _cell(x[j], threshold, left) else low
        if ends[t] >= 0:
            errors[ends[t]] += _wrong(margin, offsets, targets, multilabel, top, scale, predicted)
