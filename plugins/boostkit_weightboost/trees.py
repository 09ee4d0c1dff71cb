"""Depth-limited decision trees on the engine's binned features.

001_e064afeb8d6bf0ca.txt boosts C4.5 decision trees (section 4.1). This learner grows a binary
tree greedily, node by node, with the same machinery as the stumps: the class weights of every
bin of every feature come from :func:`boostkit.splits.histogram` (the engine's kernel) over the
node's examples, :func:`boostkit.splits.best_split` scores every cut with the partition loss
(the calibration's, or an explicit ``criterion`` such as C4.5's entropy), and
:func:`boostkit.splits.valid_splits` keeps the cuts that leave examples on both sides. Because
the losses of :mod:`boostkit.criteria` are sums over cells, minimising each node's split
minimises the tree's loss greedily. The histogram of the larger child is its parent's minus the
smaller child's, so each level costs about one pass over half the examples.

The leaves are the cells of the hypothesis' partition: ``domain-partition`` gives real AdaBoost
over leaves (one value per leaf), ``constant-alpha`` the +-1 majority labels.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.criteria import check_criterion, partition_loss
from boostkit.splits import best_split, histogram, valid_splits

from .kernels import tree_leaves
from .validators import positive_int

# A split must lower the node's loss by more than this (relative) to be made: ties are not
# progress, and a node of loss 0 (pure) is never split.
_MIN_RELATIVE_GAIN = 1e-12


def _int_array(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.int64)


def _float_array(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.float64)


@attrs.frozen
class DecisionTree(boostkit.WeakHypothesis):
    """A binary decision tree; its leaves are the cells of its partition.

    Split node k sends x left when ``x[feature[k]] <= threshold[k]``; ``left[k]`` and ``right[k]``
    are the index of the next split node, or ``-1 - leaf`` for a leaf. Node 0 is the root, and
    children come after their parent (so evaluation always ends). A tree without split nodes is
    one leaf: the constant hypothesis. h(x) = ``leaf_scores[leaf of x]``.
    """

    name = "decision-tree"

    feature: np.ndarray = attrs.field(converter=_int_array, eq=False)
    threshold: np.ndarray = attrs.field(converter=_float_array, eq=False)
    left: np.ndarray = attrs.field(converter=_int_array, eq=False)
    right: np.ndarray = attrs.field(converter=_int_array, eq=False)
    leaf_scores: np.ndarray = attrs.field(converter=_float_array, eq=False)

    def __attrs_post_init__(self):
        n_split = self.feature.shape[0]
        if not all(a.ndim == 1 for a in (self.feature, self.threshold, self.left, self.right)):
            raise ValueError("feature, threshold, left and right must be 1-D")
        if not (self.threshold.shape[0] == self.left.shape[0] == self.right.shape[0] == n_split):
            raise ValueError(
                f"feature, threshold, left and right must have one entry per split node, got "
                f"lengths {[a.shape[0] for a in (self.feature, self.threshold, self.left, self.right)]}"
            )
        if self.leaf_scores.shape != (n_split + 1,):
            raise ValueError(
                f"a tree with {n_split} split nodes has {n_split + 1} leaves, got "
                f"leaf_scores of shape {self.leaf_scores.shape}"
            )
        # Every split node but the root and every leaf is the child of exactly one earlier
        # split node (so evaluation always ends at a leaf).
        children = np.concatenate((self.left, self.right))
        parents = np.concatenate((np.arange(n_split), np.arange(n_split)))
        nodes, leaves = children[children >= 0], -1 - children[children < 0]
        if n_split and not (
            (children[children >= 0] > parents[children >= 0]).all()
            and np.array_equal(np.sort(nodes), np.arange(1, n_split))
            and np.array_equal(np.sort(leaves), np.arange(n_split + 1))
        ):
            raise ValueError(
                "left/right do not describe a tree: every split node but the root and every leaf "
                "must be the child of exactly one earlier split node"
            )
        if (self.feature < 0).any():
            raise ValueError("feature indices must be >= 0")

    @property
    def n_cells(self) -> int:
        return self.leaf_scores.shape[0]

    def cells(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros(X.shape[0], dtype=np.intp)
        if self.feature.shape[0]:
            tree_leaves(X, self.feature, self.threshold, self.left, self.right, out)
        return out

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.leaf_scores[self.cells(X)]

    def describe(self) -> str:
        if not self.feature.shape[0]:
            return f"constant {self.leaf_scores[0]:+g}"
        return (f"tree of {self.n_cells} leaves, root x[{self.feature[0]}] <= "
                f"{self.threshold[0]:.6g}")


def _on_cuts(loss, valid: np.ndarray):
    """``loss`` evaluated on the ``valid`` cuts only, inf elsewhere (as best_split masks it)."""

    def loss_on_valid_cuts(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
        out = np.full(valid.shape, np.inf)
        out[valid] = loss(wpos[valid], wneg[valid])
        return out

    return loss_on_valid_cuts


@attrs.define
class _Node:
    """A node waiting to become a split or a leaf while the tree grows."""

    rows: np.ndarray  # indices of the node's training examples
    depth: int  # number of splits above it
    wneg: float
    wpos: float
    parent: int  # index of the parent split node, -1 for the root
    is_left: bool
    hist: np.ndarray | None = None  # (d, B, 2) class weights; None: the node stays a leaf
    counts: np.ndarray | None = None  # (d, B) examples of positive initial weight per bin


@attrs.define
class TreeLearner(boostkit.Proposal):
    """Propose a depth-limited decision tree grown greedily on the binned features.

    Parameters
    ----------
    max_depth:
        Largest number of splits from the root to a leaf (1: a stump).
    min_samples_leaf:
        Fewest training examples (of positive initial weight) a leaf may hold.
    criterion:
        ``None`` (default) asks the calibration (``boostkit_partition_loss``): the weighted error
        under ``constant-alpha``, Z under ``domain-partition``. Or one of ``"error"``, ``"z"``,
        ``"gini"``, ``"entropy"`` (:mod:`boostkit.criteria`); ``"entropy"`` is C4.5's
        information criterion.

    A node is split at the cut of lowest loss if that lowers its loss (a pure node never is);
    each leaf is labelled by its weighted majority (ties: -1). With ``max_depth=1`` the tree
    is the ``stump`` learner's stump whenever that lowers the loss, else the constant
    hypothesis, which then predicts the same.
    """

    name = "tree"
    # Not "two-cells": a tree that finds no cut is the constant hypothesis, with one leaf.
    provides = frozenset({"real-scores", "sign-scores", "cells"})
    max_depth: int = attrs.field(default=2, validator=positive_int)
    min_samples_leaf: int = attrs.field(default=1, validator=positive_int)
    criterion: str | None = attrs.field(default=None, validator=check_criterion)

    def _valid(self, counts: np.ndarray) -> np.ndarray:
        # A cut right after an empty bin makes the same partition as the cut before that bin,
        # which has the lower index and so wins the tie anyway: leaving it out changes no
        # choice, and the loss is evaluated on far fewer cuts in small nodes.
        valid = valid_splits(counts) & (counts[:, :-1] > 0)
        if self.min_samples_leaf > 1:
            n_left = np.cumsum(counts, axis=1)[:, :-1]
            n_right = counts.sum(axis=1, keepdims=True) - n_left
            valid &= (n_left >= self.min_samples_leaf) & (n_right >= self.min_samples_leaf)
        return valid

    def _splittable(self, node: _Node, n_counted: int) -> bool:
        # A node at full depth, too small for two leaves, or holding one class stays a leaf.
        return (node.depth < self.max_depth and n_counted >= 2 * self.min_samples_leaf
                and node.wneg > 0.0 and node.wpos > 0.0)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        data = state.data
        binned = data.binned
        codes, weights, is_pos, n_bins = binned.codes, state.weights, data.is_pos, binned.max_bins
        counted = (data.sample_weight > 0.0).astype(np.float64)
        loss = partition_loss(state, self.criterion)

        def node_sums(rows, values):
            # The engine's histogram kernel, over the examples of one node.
            return histogram(np.take(codes, rows, axis=1), values[rows], is_pos[rows], n_bins)

        root_hist = histogram(codes, weights, is_pos, n_bins, state.n_jobs)
        totals = root_hist[0].sum(axis=0)
        root = _Node(np.arange(data.n_samples), 0, totals[0], totals[1], -1, True)
        if self._splittable(root, int(counted.sum())):
            root.hist, root.counts = root_hist, binned.bin_counts
        feature, threshold, left, right = [], [], [], []
        leaf_scores, leaf_wneg, leaf_wpos = [], [], []
        cells = np.empty(data.n_samples, dtype=np.intp)
        stack = [root]
        while stack:  # depth first, left child first: children get larger indices than parents
            node = stack.pop()
            split = None if node.hist is None else self._best_split(node, loss)
            if split is None:
                index = -1 - len(leaf_scores)
                cells[node.rows] = len(leaf_scores)
                leaf_scores.append(1.0 if node.wpos > node.wneg else -1.0)
                leaf_wneg.append(node.wneg)
                leaf_wpos.append(node.wpos)
            else:
                index = len(feature)
                feature.append(split.feature)
                threshold.append(binned.thresholds[split.feature][split.bin])
                left.append(0)
                right.append(0)
                children = self._children(node, split, index, codes[split.feature])
                self._histograms(node, children, weights, counted, node_sums)
                stack.extend(reversed(children))
            if node.parent >= 0:
                (left if node.is_left else right)[node.parent] = index
        tree = DecisionTree(feature, threshold, left, right, leaf_scores)
        return boostkit.Candidate(tree, cells=cells, scores=tree.leaf_scores[cells],
                                  cell_wneg=np.array(leaf_wneg), cell_wpos=np.array(leaf_wpos))

    def _best_split(self, node: _Node, loss):
        """The node's best cut if it lowers the node's loss, else ``None``."""
        valid = self._valid(node.counts)
        split = best_split(node.hist, valid, _on_cuts(loss, valid))
        if split is None:
            return None
        node_loss = float(loss(np.array([[node.wpos]]), np.array([[node.wneg]]))[0])
        return split if split.loss < node_loss * (1.0 - _MIN_RELATIVE_GAIN) else None

    def _children(self, node: _Node, split, index: int, feature_codes) -> list[_Node]:
        goes_left = feature_codes[node.rows] <= split.bin
        return [
            _Node(node.rows[goes_left], node.depth + 1, split.wneg[0], split.wpos[0], index, True),
            _Node(node.rows[~goes_left], node.depth + 1, split.wneg[1], split.wpos[1], index, False),
        ]

    def _histograms(self, node: _Node, children: list[_Node], weights, counted, node_sums) -> None:
        """Give a histogram (and bin counts) to the children that may still be split.

        The smaller child is summed directly; when both need one, the larger is its parent's
        minus the smaller's (clipped at 0 against rounding; counts are exact).
        """
        wanted = [self._splittable(c, int(counted[c.rows].sum())) for c in children]
        if not any(wanted):
            return
        if all(wanted):
            direct = 0 if children[0].rows.shape[0] <= children[1].rows.shape[0] else 1
        else:
            direct = wanted.index(True)
        child = children[direct]
        child.hist = node_sums(child.rows, weights)
        child.counts = np.rint(node_sums(child.rows, counted).sum(axis=2)).astype(np.int64)
        if all(wanted):
            other = children[1 - direct]
            other.hist = np.maximum(node.hist - child.hist, 0.0)
            other.counts = node.counts - child.counts
