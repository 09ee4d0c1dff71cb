"""What a study measures of a fitted model besides its scores: its learning curve and its size.

Both are taken for every cell, so both must cost little beside the fit:

* :func:`learning_curve` -- the training and test error after every round. The test errors
  (:func:`errors_by_round`) evaluate the model's threshold terms on the test rows in one
  compiled pass (:mod:`boostkit.kernels.staged`) that counts each round's errors without
  materialising its margins; other terms are added by their ``values`` between the compiled
  runs. The margins are the staged evaluation's, bit for bit, so the errors are the ones
  ``staged_decision_function`` and ``margin_labels`` give. The training errors
  (:func:`recorded_training_errors`) are the ones the fit recorded in its
  :class:`boostkit.RoundRecord` s: a staged pass over the training rows would cost about
  1/d of the fit (d features) on top of it.
* :func:`model_bytes` -- the size of what the model predicts with: the bytes of its terms'
  parameters (arrays, numbers, strings), the same measure for every algorithm. The model file
  ``save`` writes (:func:`boostkit.model_file.model_file_size`) also keeps every round's record, a
  few hundred bytes of JSON a round whatever the algorithm, and sizing it exactly costs about a
  twentieth of a stump fit: too much to take in every cell.
"""

from __future__ import annotations

import functools

import attrs
import numpy as np

from ..components import Candidate
from ..kernels.staged import staged_threshold_errors
from ..model import ThresholdRun, margin_labels
from ..multiclass import OneVsRestModel

__all__ = ["errors_by_round", "learning_curve", "model_bytes", "recorded_training_errors"]


#: Bytes of a number or a boolean parameter: as a float64 or an int64 holds it.
SCALAR_BYTES = 8


@functools.lru_cache(maxsize=None)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in attrs.fields(cls))


def _value_bytes(value) -> int:
    """The bytes of one parameter: an array's ``nbytes``, :data:`SCALAR_BYTES` for a number or a
    boolean, a string's UTF-8 length, the sum over a sequence or a nested value component."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if value is None:
        return 0
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return SCALAR_BYTES
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, (tuple, list)):
        return sum(_value_bytes(v) for v in value)
    if attrs.has(type(value)):
        return sum(_value_bytes(getattr(value, name)) for name in _field_names(type(value)))
    raise TypeError(f"cannot size a parameter of type {type(value).__name__}")


def model_bytes(model) -> int | None:
    """The bytes of the parameters a model predicts with: every term's weak hypothesis and
    contribution (their attrs fields: arrays by ``nbytes``, numbers and booleans
    :data:`SCALAR_BYTES` each, strings by their UTF-8 length, nested components likewise), and
    a one-vs-rest model's class models and offsets. ``None`` when a term holds a value of
    another kind (a foreign estimator)."""
    parts = model.models if isinstance(model, OneVsRestModel) else (model,)
    try:
        total = sum(_value_bytes(h) + _value_bytes(c) for part in parts
                    for h, c in zip(part.hypotheses, part.contributions))
    except TypeError:
        return None
    offsets = getattr(model, "offsets", None)
    return total + (_value_bytes(np.asarray(offsets)) if offsets is not None else 0)


def _staged_terms(model) -> tuple:
    """The model's terms in staged order: ``(term, columns, ends, arrays, loose, offsets)``.

    ``term[k]`` is the index of the k-th term in the threshold terms' ``arrays``
    ``(features, thresholds, missing_left, values)`` (values ``(n, 2, W)``), or -1 for a term
    evaluated by its ``values``, then ``loose[k]`` is its ``(h, c)``; ``columns[k]`` the margin
    column of a one-vs-rest class model's term (-1: all columns); ``ends[k]`` the round (from
    0) whose last term k is, or -1. Round t of a one-vs-rest model is term t of every class
    model that has one (a class whose model has fewer terms keeps its final margin), as in its
    ``staged_decision_function``."""
    one_vs_rest = isinstance(model, OneVsRestModel)
    parts, offsets = (model.models, model.offsets) if one_vs_rest else ((model,), None)
    runs, terms, loose, n_compiled = [], [], {}, 0
    for part in parts:
        index = np.empty(part.n_rounds, dtype=np.int64)
        t = 0
        for run in part.compiled_terms():
            if isinstance(run, ThresholdRun):
                runs.append(run)
                index[t:t + len(run.terms)] = np.arange(n_compiled, n_compiled + len(run.terms))
                n_compiled += len(run.terms)
                t += len(run.terms)
            else:
                index[t] = -1
                loose[len(terms), t] = run
                t += 1
        terms.append(index)
    part_of = np.repeat(np.arange(len(parts)), [index.shape[0] for index in terms])
    round_of = np.concatenate([np.arange(index.shape[0]) for index in terms])
    order = np.lexsort((part_of, round_of))  # by round, then class
    part_of, round_of = part_of[order], round_of[order]
    last = np.append(round_of[1:] != round_of[:-1], True) if order.size else order.astype(bool)
    loose = {k: loose[part_of[k], round_of[k]] for k in np.flatnonzero(
        np.concatenate(terms)[order] < 0).tolist()}
    arrays = ((np.concatenate([run.features for run in runs]),
               np.concatenate([run.thresholds for run in runs]),
               np.concatenate([run.missing_left for run in runs]),
               np.concatenate([run.values.reshape(len(run.terms), 2, -1) for run in runs]))
              if runs else ())
    columns = part_of if one_vs_rest else np.full(order.size, -1)
    return (np.concatenate(terms)[order], columns.astype(np.int64),
            np.where(last, round_of, -1).astype(np.int64), arrays, loose, offsets)


def recorded_training_errors(model) -> list[float] | None:
    """The fit's own training error after each of the model's rounds, from its records
    (:attr:`boostkit.RoundRecord.training_error`: the initial weight D_1 of the training
    examples -- or (example, class) pairs for several margin columns -- with y F_t(x) <= 0); for a
    one-vs-rest model, the mean of its class models' (a class model that stopped early keeps
    its last). ``None`` when the records do not describe the model's rounds one for one (a fit
    that back-fitted terms, a model with an offset term)."""
    parts = model.models if isinstance(model, OneVsRestModel) else (model,)
    if any(len(part.records) != part.n_rounds or not part.records for part in parts):
        return None
    n_rounds = max(len(part.records) for part in parts)
    errors = np.empty((len(parts), n_rounds))
    for errors_of_part, part in zip(errors, parts):
        errors_of_part[:] = part.records[-1].training_error
        errors_of_part[:len(part.records)] = [record.training_error for record in part.records]
    return errors.mean(axis=0).tolist()


def errors_by_round(model, X: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The fraction of the rows ``X`` whose label :func:`predict's rule
    <boostkit.model.margin_labels>` on F_t gets wrong, after every round t = 1..T (for
    multi-label data, the fraction of (row, label) pairs: the Hamming loss).

    ``X``: ``(m, d)`` numeric rows; ``targets``: each row's class position in
    ``model.classes`` (``(m,)``), or for a multi-label model its ``(m, C)`` 0/1 labels. Every
    term counts, whatever the model's ``best_round``, as in ``staged_decision_function``.
    """
    schema = (model.models[0] if isinstance(model, OneVsRestModel) else model).features
    X = np.asarray(X if schema is None else schema.transform(X))  # as the model reads X
    if (X.ndim != 2 or X.shape[0] == 0 or X.shape[1] != model.n_features
            or X.dtype.kind not in "biuf"):
        raise ValueError(f"X must be a numeric array of shape (m, {model.n_features}), m >= 1, "
                         f"got {X.dtype} of shape {X.shape}")
    targets = np.asarray(targets)
    n_columns, multilabel = model.n_columns, model.multilabel
    expected = X.shape[:1] + ((n_columns,) if multilabel else ())
    if targets.shape != expected:
        raise ValueError(f"targets must have shape {expected} (one per row of X"
                         f"{', one column per label' if multilabel else ''}), got "
                         f"{targets.shape}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    n_rows = X.shape[0]
    targets = np.ascontiguousarray(targets.reshape(n_rows, -1), dtype=np.int64)
    term, columns, ends, arrays, loose, offsets = _staged_terms(model)
    offsets = np.zeros(n_columns) if offsets is None else np.asarray(offsets, dtype=np.float64)
    X_columns = np.ascontiguousarray(X.T)
    margin = np.zeros((n_columns, n_rows))  # by column, as the kernel reads it
    errors = np.zeros(ends.max() + 1 if ends.size else 0, dtype=np.int64)
    positions = np.arange(n_columns if n_columns > 1 else 2)
    # blocks of consecutive threshold terms go to the kernel; the others one by one
    compiled = term >= 0
    bounds = (np.flatnonzero(np.diff(compiled)) + 1).tolist()
    for start, stop in zip([0, *bounds], [*bounds, term.size]) if term.size else ():
        if compiled[start]:
            index = term[start:stop]
            features, thresholds, missing_left, values = (array[index] for array in arrays)
            staged_threshold_errors(X_columns, features, thresholds, missing_left, values,
                                    columns[start:stop], ends[start:stop], offsets, targets,
                                    multilabel, margin, errors)
            continue
        for k in range(start, stop):
            h, c = loose[k]
            if columns[k] >= 0:  # a one-vs-rest class model's margin
                margin[columns[k]] += c.values(Candidate(h, X), margin[columns[k]].copy())
            elif n_columns == 1:
                margin[0] += c.values(Candidate(h, X), margin[0].copy())
            else:  # the model's (m, C) margin
                margin += c.values(Candidate(h, X), margin.T.copy()).T
            if ends[k] >= 0:
                labels = margin_labels(margin[0] + offsets[0] if n_columns == 1
                                       else (margin + offsets[:, None]).T, positions, multilabel)
                errors[ends[k]] += np.count_nonzero(labels.reshape(n_rows, -1) != targets)
    return errors / (n_rows * (n_columns if multilabel else 1))


def learning_curve(model, X_test: np.ndarray,
                   targets: np.ndarray) -> list[tuple[int, float | None, float]]:
    """``(t, training error, test error)`` after every round t = 1..T of ``model``:
    :func:`recorded_training_errors` (``None`` where the records cannot give them) and
    :func:`errors_by_round` on the test rows."""
    tested = errors_by_round(model, X_test, targets).tolist()
    trained = recorded_training_errors(model) or [None] * len(tested)
    return list(zip(range(1, len(tested) + 1), trained, tested))
