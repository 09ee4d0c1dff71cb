"""A weak hypothesis read as a binary decision tree over the columns of ``X``.

:meth:`boostkit.WeakHypothesis.tree_form` gives a :class:`TreeForm` when the hypothesis is one
(a stump, a stump on a categorical column, a decision tree): split nodes that compare one
column with a threshold or test it for membership in a set, a learnt direction for missing
values at every node, and leaves that are the hypothesis' cells, leaf j being cell j. What a
model adds in each cell (``Contribution.cell_table``) then puts a value in every leaf, and the
model is a tree ensemble: what :mod:`boostkit.onnx` writes for serving.
"""

from __future__ import annotations

import attrs
import numpy as np

__all__ = ["TreeForm"]


def _ints(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.int64).reshape(-1)


def _floats(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.float64).reshape(-1)


def _bools(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=bool).reshape(-1)


def _member_sets(value) -> tuple:
    return tuple(None if m is None else np.unique(np.asarray(m, dtype=np.float64))
                 for m in value)


@attrs.frozen
class TreeForm:
    """A binary decision tree whose leaves are a hypothesis' cells.

    Split node k (node 0 is the root) sends a row left when ``x[feature[k]] <= threshold[k]``,
    or, when ``members[k]`` is an array, when ``x[feature[k]]`` is one of its values (a split
    of a categorical column; any other value goes right). A missing value (NaN) goes left when
    ``missing_left[k]``. ``left[k]`` and ``right[k]`` are the next split node, or ``-1 - j``
    for leaf j, which is cell j of the hypothesis. A tree without split nodes is one leaf.
    """

    feature: np.ndarray = attrs.field(converter=_ints, eq=False)
    threshold: np.ndarray = attrs.field(converter=_floats, eq=False)
    left: np.ndarray = attrs.field(converter=_ints, eq=False)
    right: np.ndarray = attrs.field(converter=_ints, eq=False)
    missing_left: np.ndarray = attrs.field(converter=_bools, eq=False)
    members: tuple = attrs.field(converter=_member_sets, eq=False)
    n_leaves: int = attrs.field(converter=int)

    def __attrs_post_init__(self):
        n_split = self.feature.shape[0]
        lengths = [a.shape[0] for a in (self.threshold, self.left, self.right,
                                         self.missing_left)] + [len(self.members)]
        if any(n != n_split for n in lengths):
            raise ValueError(f"a tree form needs one entry per split node ({n_split}) in "
                             f"threshold, left, right, missing_left and members, got {lengths}")
        if self.n_leaves != n_split + 1:
            raise ValueError(f"a binary tree of {n_split} split nodes has {n_split + 1} leaves, "
                             f"got n_leaves={self.n_leaves}")
        children = np.concatenate([self.left, self.right])
        if ((children >= n_split) | (children < -self.n_leaves)).any():
            raise ValueError("left/right name a node or leaf the tree does not have")
        if any(m is not None and m.shape[0] == 0 for m in self.members):
            raise ValueError("a set-membership node needs at least one value")

    @classmethod
    def leaf(cls) -> TreeForm:
        """The tree of one leaf: a constant hypothesis (one cell)."""
        return cls([], [], [], [], [], (), 1)

    @classmethod
    def threshold_stump(cls, feature: int, threshold: float, missing_left: bool) -> TreeForm:
        """Cell 0 for ``x[feature] <= threshold`` (and missing values when ``missing_left``),
        cell 1 for the others: a stump (:meth:`boostkit.WeakHypothesis.threshold_split`)."""
        return cls([feature], [threshold], [-1], [-2], [missing_left], (None,), 2)

    @classmethod
    def member_stump(cls, feature: int, members, missing_left: bool) -> TreeForm:
        """Cell 0 for the rows whose ``x[feature]`` is one of ``members`` (and missing values
        when ``missing_left``), cell 1 for the others."""
        return cls([feature], [0.0], [-1], [-2], [missing_left], (members,), 2)

    @property
    def n_split(self) -> int:
        """The number of split nodes."""
        return self.feature.shape[0]

    def leaves(self, X: np.ndarray) -> np.ndarray:
        """The leaf (cell) of every row of the dense ``X``, descending the nodes in numpy: the
        reference of what the tree means, for tests."""
        X = np.asarray(X, dtype=np.float64)
        node = np.zeros(X.shape[0], dtype=np.int64) if self.n_split else np.full(X.shape[0], -1)
        active = np.flatnonzero(node >= 0)
        while active.shape[0]:
            k = node[active]
            x = X[active, self.feature[k]]
            go_left = x <= self.threshold[k]
            for at in np.flatnonzero([self.members[j] is not None for j in k]):
                go_left[at] = np.isin(x[at], self.members[k[at]])
            missing = np.isnan(x)
            go_left[missing] = self.missing_left[k[missing]]
            node[active] = np.where(go_left, self.left[k], self.right[k])
            active = active[node[active] >= 0]
        return -1 - node
