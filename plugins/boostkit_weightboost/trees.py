"""Depth-limited decision trees on the engine's binned features.

Jin et al. 2003 boosts C4.5 decision trees (section 4.1). This learner grows a binary
tree greedily, node by node, with the same machinery as the stumps: the class weights of every
bin of every feature come from :func:`boostkit.splits.histogram` (the engine's kernel) at the
root and from :func:`~boostkit_weightboost.kernels.node_histogram` (the same sums, in the same
order, over a node's rows in place) below it, :func:`boostkit.splits.best_split` scores every
cut with the partition loss (the calibration's, or an explicit ``criterion`` such as C4.5's
entropy, whose whole search is one kernel: :func:`_entropy_split`), and
:func:`~boostkit_weightboost.kernels.valid_cuts` keeps the cuts that leave examples on both
sides. Because the losses of :mod:`boostkit.criteria` are sums over cells, minimising each
node's split minimises the tree's loss greedily. The histogram of the larger child is its
parent's minus the smaller child's, so each level costs about one pass over half the examples.

The leaves are the cells of the hypothesis' partition: ``domain-partition`` gives real AdaBoost
over leaves (one value per leaf), ``constant-alpha`` the +-1 majority labels.

Several classes (C > 1 margin columns): the histograms hold per-class sums over the (example,
class) pairs (``(d, B, C, 2)``), the loss scores the ``(..., 2, C)`` side sums
(:data:`boostkit.criteria.MULTICLASS_CRITERIA` for an explicit criterion), and the leaves are
cells the calibration labels per class (``samme-alpha`` by the heaviest class, as a
classification tree does; ``domain-partition`` one value per leaf and class). Two classes run
exactly as before.

Missing values and categorical columns (``BinnedData.ordered`` False): every node is searched by
:func:`boostkit.splits.best_binned_split` over its own histogram, so each split node learns where
missing values go (the heavier side when the node holds none of its feature) and may split a
categorical column into two groups of categories; :class:`DecisionTree` routes them so at
prediction. The regression tree
(:func:`~boostkit_weightboost.regression_trees.fit_regression_tree`) stays numeric and refuses
both.

Every data plane (:mod:`boostkit.plane`): where the rows are not in this process (a
distributed fit's shards), the same tree is grown level by level from sums over all the rows,
one ``state.reduce`` per level below the root (:class:`LevelSums`), and the shards find its
leaves from their bin codes (:class:`TreeCells`); see :meth:`TreeLearner._propose_by_levels`.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numba
import numpy as np

import boostkit
from boostkit.capabilities import CATEGORICAL_FEATURES, DISTRIBUTED, MISSING_VALUES
from boostkit.components import CodeCells
from boostkit.criteria import check_criterion, entropy, partition_loss
from boostkit.kernels.boosting import take_cells
from boostkit.splits import (MIN_CATEGORY_COUNT, TIE_TOLERANCE, Split, best_binned_split,
                             best_split, check_min_category_count, histogram)
from boostkit.tree_form import TreeForm

from .kernels import (code_leaves, describes_tree, entropy_split, fill_rows, fill_split_leaves,
                      node_histogram, sibling_sums, tree_leaves, valid_cuts)
from .validators import positive_int

# A split must lower the node's loss by more than this (relative) to be made: ties are not
# progress, and a node of loss 0 (pure) is never split.
_MIN_RELATIVE_GAIN = 1e-12

# A cut is re-scored exactly when its screened entropy is within twice the screen's bound plus
# this (relative) of the lowest: far above rounding (~1e-15) plus best_split's tie tolerance
# (1e-12), so every cut that could be the minimum or tie with it is among them.
_SCREEN = 1e-9


@numba.njit(cache=True, nogil=True)
def split_rows(feature_codes, rows, cut):
    """``(left, right)``: the ``rows`` whose code is ``<= cut`` and the others, in order."""
    left = np.empty(rows.shape[0], dtype=rows.dtype)
    right = np.empty(rows.shape[0], dtype=rows.dtype)
    n_left = n_right = 0
    # Every row is written to both lists and only the count of its side moves on: no branch
    # on the code, which a random split mispredicts half the time (~3x faster).
    for k in range(rows.shape[0]):
        i = rows[k]
        goes_left = feature_codes[i] <= cut
        left[n_left] = i
        right[n_right] = i
        n_left += goes_left
        n_right += 1 - goes_left
    return left[:n_left], right[:n_right]


@numba.njit(cache=True, nogil=True)
def _split_values(values, left, right, counted):
    """The largest of ``values[left]`` and the smallest of ``values[right]``, over the rows of
    positive ``counted`` (both sides hold one)."""
    lo, hi = -np.inf, np.inf
    for k in range(left.shape[0]):
        if counted[left[k]] > 0 and values[left[k]] > lo:
            lo = values[left[k]]
    for k in range(right.shape[0]):
        if counted[right[k]] > 0 and values[right[k]] < hi:
            hi = values[right[k]]
    return lo, hi


def _midpoint(values: np.ndarray, left: np.ndarray, right: np.ndarray,
              counted: np.ndarray) -> float:
    """CART's threshold between the two sides of a node's cut: the midpoint of the largest
    value of the ``left`` rows and the smallest of the ``right`` rows, rows of positive
    ``counted`` only (the left one if rounding makes the midpoint equal the right one)."""
    lo, hi = _split_values(values, left, right, counted)
    mid = lo / 2.0 + hi / 2.0
    return float(lo if mid >= hi else mid)


def _int_array(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.int64)


def _float_array(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.float64)


def _bool_array(value) -> np.ndarray | None:
    return None if value is None else np.ascontiguousarray(value, dtype=bool)


@attrs.frozen
class DecisionTree(boostkit.WeakHypothesis):
    """A binary decision tree; its leaves are the cells of its partition.

    Split node k sends x left when ``x[feature[k]] <= threshold[k]``; ``left[k]`` and ``right[k]``
    are the index of the next split node, or ``-1 - leaf`` for a leaf. Node 0 is the root, and
    children come after their parent (so evaluation always ends). A tree without split nodes is
    one leaf: the constant hypothesis. h(x) = ``leaf_scores[leaf of x]``.

    A node with ``categorical[k]`` splits a categorical column (values: category indices, NaN
    when missing) instead: category c goes left when ``category_left[k, c]`` (shape
    ``(n_split, K)``, K the most categories of such a column; ``threshold[k]`` is unused), any
    other value right. A missing value (NaN) goes left at node k when ``missing_left[k]``. The
    defaults (no categorical node, missing values right) are what trees saved before these
    fields did with a NaN.
    """

    name = "decision-tree"

    feature: np.ndarray = boostkit.feature_field(converter=_int_array, eq=False)
    threshold: np.ndarray = attrs.field(converter=_float_array, eq=False)
    left: np.ndarray = attrs.field(converter=_int_array, eq=False)
    right: np.ndarray = attrs.field(converter=_int_array, eq=False)
    leaf_scores: np.ndarray = attrs.field(converter=_float_array, eq=False)
    missing_left: np.ndarray | None = attrs.field(default=None, converter=_bool_array, eq=False)
    categorical: np.ndarray | None = attrs.field(default=None, converter=_bool_array, eq=False)
    category_left: np.ndarray | None = attrs.field(default=None, converter=_bool_array, eq=False)
    #: The decrease of the partition loss each split node made when the tree was grown
    #: (``None`` for a tree built or loaded otherwise): feature importances. Not saved.
    split_gains: np.ndarray | None = attrs.field(init=False, default=None, eq=False, repr=False)

    def __attrs_post_init__(self):
        n_split = self.feature.shape[0]
        for name, shape in (("missing_left", (n_split,)), ("categorical", (n_split,)),
                            ("category_left", (n_split, 0))):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.zeros(shape, dtype=bool))
        if self.missing_left.shape != (n_split,) or self.categorical.shape != (n_split,):
            raise ValueError(
                f"missing_left and categorical must have one entry per split node ({n_split}), "
                f"got shapes {self.missing_left.shape} and {self.categorical.shape}"
            )
        if self.category_left.ndim != 2 or self.category_left.shape[0] != n_split:
            raise ValueError(
                f"category_left must have one row per split node ({n_split}), got shape "
                f"{self.category_left.shape}"
            )
        # Cheap first tests: a tree is built every round (numpy's reductions cost microseconds).
        if (self.categorical.any()
                and not self.category_left[self.categorical].any(axis=1).all()):
            raise ValueError("every categorical split node must send some category left")
        if not (self.feature.ndim == self.threshold.ndim == self.left.ndim == self.right.ndim
                == 1):
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
        if not describes_tree(self.left, self.right):
            raise ValueError(
                "left/right do not describe a tree: every split node but the root and every leaf "
                "must be the child of exactly one earlier split node"
            )
        if n_split and self.feature.min() < 0:
            raise ValueError("feature indices must be >= 0")

    @property
    def n_cells(self) -> int:
        return self.leaf_scores.shape[0]

    def cells(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros(X.shape[0], dtype=np.intp)
        if not self.feature.shape[0]:
            return out
        if self.categorical.any() or np.isnan(X[:, np.unique(self.feature)]).any():
            return self._routed_leaves(X)
        tree_leaves(X, self.feature, self.threshold, self.left, self.right, out)
        return out

    def _routed_leaves(self, X: np.ndarray) -> np.ndarray:
        """The leaf of every row when missing values or category splits route them: all rows
        descend one level per pass."""
        node = np.zeros(X.shape[0], dtype=np.int64)
        active = np.arange(X.shape[0])
        while active.shape[0]:
            k = node[active]
            x = X[active, self.feature[k]]
            missing = np.isnan(x)
            go_left = x <= self.threshold[k]
            on_category = self.categorical[k] & ~missing
            if on_category.any():
                code, at = x[on_category], k[on_category]
                known = ((code >= 0) & (code < self.category_left.shape[1])
                         & (code == np.floor(code)))
                left = np.zeros(code.shape[0], dtype=bool)  # unknown codes go right
                left[known] = self.category_left[at[known], code[known].astype(np.intp)]
                go_left[on_category] = left
            go_left[missing] = self.missing_left[k[missing]]
            after = np.where(go_left, self.left[k], self.right[k])
            node[active] = after
            active = active[after >= 0]
        return (-1 - node).astype(np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.leaf_scores[self.cells(X)]

    def cell_score_table(self) -> np.ndarray:
        """h(x) of every leaf: the tree's scores are constant on its cells."""
        return self.leaf_scores

    def tree_form(self) -> TreeForm:
        members = [np.flatnonzero(self.category_left[k]) if self.categorical[k] else None
                   for k in range(self.feature.shape[0])]
        return TreeForm(self.feature, self.threshold, self.left, self.right, self.missing_left,
                        members, self.n_cells)

    def describe(self, features=None) -> str:
        if not self.feature.shape[0]:
            return f"constant {self.leaf_scores[0]:+g}"
        j = int(self.feature[0])
        label = boostkit.feature_label(features, j)
        if self.categorical[0]:
            codes = np.flatnonzero(self.category_left[0])
            named = features is not None and features.categories[j] is not None
            names = [features.category(j, c) if named else str(c) for c in codes]
            return f"tree of {self.n_cells} leaves, root {label} in {{{', '.join(names)}}}"
        return f"tree of {self.n_cells} leaves, root {label} <= {self.threshold[0]:.6g}"


def _bin_rows(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.uint8)
    if arr.ndim != 2:
        raise ValueError(f"left_bins must be (n_split, B): the bins going left at every split "
                         f"node, got shape {arr.shape}")
    return arr


@attrs.frozen(eq=False)
class TreeCells(CodeCells):
    """A decision tree's cells (its leaves) found from the rows' bin codes alone: what a shard
    of a distributed fit applies to its codes (a :class:`boostkit.components.CodeCells`).

    Split node k sends a row left when ``left_bins[k, code]`` is set, ``code`` the row's bin
    code of ``feature[k]`` (``(n_split, B)`` uint8 over the histogram's B bins: the bins up to
    a cut, or a categorical split's categories, and the missing-value bin on the side it
    goes); ``left[k]``/``right[k]`` are the next split node or ``-1 - leaf``, as in
    :class:`DecisionTree`, whose cells on the training rows these are.
    """

    feature: np.ndarray = attrs.field(converter=_int_array)
    left_bins: np.ndarray = attrs.field(converter=_bin_rows)
    left: np.ndarray = attrs.field(converter=_int_array)
    right: np.ndarray = attrs.field(converter=_int_array)

    def cells(self, codes: np.ndarray) -> np.ndarray:
        out = np.empty(codes.shape[1], dtype=np.intp)
        code_leaves(codes, self.feature, self.left_bins, self.left, self.right, out)
        return out

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.feature, self.left_bins, self.left, self.right))


def node_sums(codes, rows, weights, is_pos, positive, labels, n_bins):
    """``(hist, counts)`` of one tree node: the class histogram of its ``rows`` (``(d, B, 2)``,
    or ``(d, B, C, 2)`` when ``weights`` are over (example, class) pairs, ``labels`` the class
    of single-label rows or ``None``) and its ``(d, B)`` examples of ``positive`` (uint8)
    initial weight per bin, summed in the order of the rows."""
    if weights.ndim == 1:
        hist = np.empty((codes.shape[0], n_bins, 2))
        counts = np.empty((codes.shape[0], n_bins), dtype=np.int64)
        node_histogram(codes, rows, weights, is_pos, positive, hist, counts)
        return hist, counts
    # The engine's histogram kernel, over a copy of the node's columns; example counts per bin
    # need one sign per example: the first column's.
    node_codes = np.take(codes, rows, axis=1)
    hist = histogram(node_codes, weights[rows], is_pos[rows], n_bins,
                     labels=None if labels is None else labels[rows])
    counts = histogram(node_codes, positive[rows].astype(np.float64),
                       np.ascontiguousarray(is_pos[rows, 0]), n_bins)
    return hist, np.rint(counts.sum(axis=2)).astype(np.int64)


@attrs.frozen(eq=False)
class LevelSums:
    """A reduction (:meth:`boostkit.BoostState.reduce`): the histograms and example counts of
    the nodes of one level of a tree being grown, over the rows it is given.

    ``route`` is the tree grown so far (:class:`TreeCells`) with the level's nodes as leaves
    ``0 .. n_nodes - 1`` and any other leaf (nodes that stay leaves) numbered ``n_nodes``;
    every row is routed by its bin codes and added to its node's sums (:func:`node_sums`,
    the kernels of a tree grown over all rows at once). Returns ``(hist, counts)`` over the
    histogram's ``bins`` that hold examples of positive initial weight (the others are empty
    in every node; ``n_bins`` in all): ``(n_nodes, d, len(bins), 2)`` (or ``(n_nodes, d,
    len(bins), C, 2)``) and ``(n_nodes, d, len(bins))`` float64.
    """

    route: TreeCells
    n_nodes: int
    n_bins: int
    bins: np.ndarray = attrs.field(converter=_int_array)

    def __call__(self, rows) -> tuple[np.ndarray, np.ndarray]:
        node_of = self.route.cells(rows.codes)
        d1 = rows.initial_weights if rows.initial_weights.ndim == 1 else rows.initial_weights[:, 0]
        positive = (d1 > 0.0).view(np.uint8)
        hist = counts = None
        for node in range(self.n_nodes):
            node_hist, node_counts = node_sums(rows.codes, np.flatnonzero(node_of == node),
                                               rows.weights, rows.is_pos, positive, rows.labels,
                                               self.n_bins)
            if hist is None:
                hist = np.empty((self.n_nodes, node_hist.shape[0], self.bins.shape[0])
                                + node_hist.shape[2:])
                counts = np.empty((self.n_nodes, node_counts.shape[0], self.bins.shape[0]))
            hist[node], counts[node] = node_hist[:, self.bins], node_counts[:, self.bins]
        return hist, counts


def _on_cuts(loss, valid: np.ndarray):
    """``loss`` evaluated on the ``valid`` cuts only, inf elsewhere (as best_split masks it)."""

    def loss_on_valid_cuts(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
        out = np.full(valid.shape, np.inf)
        out[valid] = loss(wpos[valid], wneg[valid])
        return out

    return loss_on_valid_cuts


def _entropy_split(hist: np.ndarray, valid: np.ndarray, priority, node_pos: float,
                   node_neg: float) -> tuple[Split | None, float]:
    """``(split, node's loss)``: :func:`boostkit.splits.best_split` of a two-class node with the
    C4.5 entropy (:func:`boostkit.criteria.entropy`), and the node's own entropy, from one call
    of :func:`~boostkit_weightboost.kernels.entropy_split`.

    The kernel screens the cuts with a bound and scores with the criterion's own formula only
    those that could be the minimum or tie with it, so the same cut wins, with the same loss,
    as from the criterion on every cut (to the last bit where numpy's ln is the C library's;
    where numpy runs its own SIMD ln, such as on AVX-512 CPUs, losses and gains may differ from
    it in the last bit, never the choice beyond a tie within rounding).
    """
    if priority is None:
        priority = _NO_PRIORITY
    else:
        priority = np.asarray(priority, dtype=np.float64)
        if priority.shape != (hist.shape[0],):
            raise ValueError(f"priority must rank the {hist.shape[0]} features of hist, got "
                             f"shape {priority.shape}")
    sides = np.empty((2, 2))
    cut, loss, node_loss = entropy_split(hist, valid, priority, TIE_TOLERANCE, _SCREEN,
                                         node_pos, node_neg, sides)
    if cut < 0:
        return None, node_loss
    feature, b = divmod(cut, hist.shape[1] - 1)
    return Split.at_cut(feature, b, loss, sides[0], sides[1]), node_loss


_NO_PRIORITY = np.empty(0)  # entropy_split's "no priority": the lowest feature wins ties

#: Losses whose whole split search in a two-class node is one kernel: ``search(hist, valid,
#: priority, node_pos, node_neg)`` gives what best_split would, with the node's own loss.
_SPLIT_SEARCHES = {entropy: _entropy_split}


@attrs.define
class _Node:
    """A node waiting to become a split or a leaf while the tree grows."""

    rows: np.ndarray  # indices of the node's training examples
    depth: int  # number of splits above it
    wneg: float | np.ndarray  # (C,) per class with C > 1 margin columns
    wpos: float | np.ndarray
    parent: int  # index of the parent split node, -1 for the root
    is_left: bool
    n_counted: int  # examples of positive initial weight
    hist: np.ndarray | None = None  # (d, B, 2) or (d, B, C, 2); None: the node stays a leaf
    counts: np.ndarray | None = None  # (d, B) examples of positive initial weight per bin
    valid: np.ndarray | None = None  # (d, B - 1) valid cuts, when known before the search
    pure_visit: bool = False  # a pure node the tie order's tree tries to split (visits_pure)


@attrs.define
class TreeLearner(boostkit.Proposal):
    """Propose a depth-limited decision tree grown greedily on the binned features.

    The component also offers :func:`fit_regression_tree` (``TreeLearner.fit_regression_tree``)
    to hosts that find it through the registry (``get_registry().component("tree")``), such as
    the drop-in ``AdaBoostRegressor``, which fits AdaBoost.R2 beside the engine.

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
    midpoints:
        ``False`` (default): each threshold is the bin edge of the cut. ``True``: the midpoint
        of the node's own neighbouring values on either side of the cut (among examples of
        positive initial weight), as CART and scikit-learn place it. Both give the same
        partition of the training examples; new examples between the two go where
        scikit-learn's tree sends them only with ``True``.
    min_category_count:
        Fewest examples a category of a categorical column needs in a node to be sorted into
        either group of its split there; rarer ones go right
        (:data:`boostkit.splits.MIN_CATEGORY_COUNT`).
    tie_order:
        ``None`` (default): cuts of equal loss (within 1e-12, relative) go to the lowest column,
        then the lowest bin. Or a callable ``tie_order(state)`` called once per tree, returning
        ``priority(counts, depth)``, which the learner calls for every node it tries to split,
        in the order it grows them (depth first, the left child first), with the node's
        ``(d, B)`` examples (of positive initial weight) per bin and its depth (0: the root);
        it returns the ``(d,)`` priority of every column, and among equal cuts the column of
        the lowest priority wins, then the lowest bin (how the drop-in ``AdaBoostClassifier``
        replays scikit-learn's random feature order). A ``priority`` with a method
        ``visits_pure(totals, left, n_left, n_right, is_left)`` is also asked, for every pure
        child of a cut below ``max_depth`` with two examples or more (and
        ``2 * min_samples_leaf``), whether it counts as a node tried (from the class sums of
        its parent and of the cut's left side, the examples on either side, and its side); if
        so, ``priority`` is called for it too, in its turn, and it stays a leaf. Ordered data
        only (no missing values, no categorical columns).

    A node is split at the cut of lowest loss if that lowers its loss (a pure node never is);
    each leaf is labelled by its weighted majority (ties: -1). With ``max_depth=1`` the tree
    is the ``stump`` learner's stump whenever that lowers the loss, else the constant
    hypothesis, which then predicts the same.

    With C > 1 margin columns the node sums are per class (see the module docstring), a node
    holding a single class (or, over pairs, no column with both signs) stays a leaf, and every
    leaf's score is +1: the calibration gives each leaf its per-class values.
    """

    name = "tree"
    max_depth: int = attrs.field(default=2, validator=positive_int)
    min_samples_leaf: int = attrs.field(default=1, validator=positive_int)
    criterion: str | None = attrs.field(default=None, validator=check_criterion)
    midpoints: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    min_category_count: int = attrs.field(default=MIN_CATEGORY_COUNT,
                                          validator=check_min_category_count)
    tie_order: Callable | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.is_callable()))
    # Per fit (the training data's, and the leaf size's): which examples have positive initial
    # weight (uint8) and how many, all row indices (the root's rows), and the root's valid cuts
    # (from the bin counts, the same every round); see _fit_rows.
    _rows_of: object = attrs.field(init=False, default=None, repr=False, eq=False)
    _positive: np.ndarray | None = attrs.field(init=False, default=None, repr=False, eq=False)
    _all_rows: np.ndarray | None = attrs.field(init=False, default=None, repr=False, eq=False)
    _n_positive: int = attrs.field(init=False, default=0, repr=False, eq=False)
    _root_valid: np.ndarray | None = attrs.field(init=False, default=None, repr=False, eq=False)

    def _valid(self, counts: np.ndarray) -> np.ndarray:
        # A cut right after an empty bin makes the same partition as the cut before that bin,
        # which has the lower index and so wins the tie anyway: leaving it out changes no
        # choice, and the loss is evaluated on far fewer cuts in small nodes.
        valid = np.empty((counts.shape[0], counts.shape[1] - 1), dtype=bool)
        valid_cuts(counts, self.min_samples_leaf, valid)
        return valid

    def _splittable(self, node: _Node) -> bool:
        # A node at full depth, too small for two leaves, or holding one class stays a leaf.
        return (node.depth < self.max_depth and node.n_counted >= 2 * self.min_samples_leaf
                and _mixed(node))

    def _mark_pure_visits(self, node: _Node, split, children: list[_Node], visits_pure):
        """Flag the pure children that the tree replayed by ``tie_order`` tries to split
        (``priority.visits_pure``, from the class sums of the node and of the cut's left
        side; two classes: (negative, positive)), where it would split a node of two
        examples or more."""
        totals = node.wpos if np.ndim(node.wpos) else np.array([node.wneg, node.wpos])
        left = split.wpos[0] if np.ndim(node.wpos) else np.array([split.wneg[0], split.wpos[0]])
        n_left, n_right = children[0].n_counted, children[1].n_counted
        for child in children:
            child.pure_visit = (
                child.depth < self.max_depth
                and child.n_counted >= max(2, 2 * self.min_samples_leaf) and not _mixed(child)
                and visits_pure(totals, left, n_left, n_right, child.is_left))

    def _fit_rows(self, data) -> tuple[np.ndarray, np.ndarray, int]:
        """``(positive, rows, number positive)`` of the training ``data``, computed once per fit
        (not per tree), as is the root's mask of valid cuts (``_root_valid``)."""
        if (self._rows_of is None or self._rows_of[0] is not data
                or self._rows_of[1] != self.min_samples_leaf):
            self._positive = (data.sample_weight > 0.0).view(np.uint8)
            self._all_rows = np.arange(data.n_samples)
            self._n_positive = int(np.count_nonzero(self._positive))
            self._root_valid = self._valid(data.binned.bin_counts)
            self._rows_of = (data, self.min_samples_leaf)
        return self._positive, self._all_rows, self._n_positive

    @property
    def provides(self) -> frozenset[str]:
        # Not "two-cells": a tree that finds no cut is the constant hypothesis, with one leaf.
        # Every data plane unless an option reads the rows themselves (distributed_refusal).
        return frozenset({"real-scores", "sign-scores", "cells", "multiclass", MISSING_VALUES,
                          CATEGORICAL_FEATURES}
                         | (set() if self.distributed_refusal else {DISTRIBUTED}))

    @property
    def distributed_refusal(self) -> str | None:
        """Why this tree learner cannot run on shards, or ``None`` when it can."""
        if self.midpoints:
            return ("with midpoints=True places each threshold between the raw values either "
                    "side of the cut, which stay on the shards (only their bin codes are "
                    "summed); midpoints=False (the default: bin edges) distributes")
        if self.tie_order is not None:
            return ("with a tie_order replays a tree grown node by node, depth first, over the "
                    "rows; without one (the default) the tree grows level by level from sums "
                    "over the shards")
        return None

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        if not state.plane.has_rows:
            return self._propose_by_levels(state)
        data = state.data
        binned = data.binned
        codes, weights, is_pos, n_bins = binned.codes, state.weights, data.is_pos, binned.max_bins
        # positive: the examples of positive initial weight (uint8), n_positive of them
        positive, all_rows, n_positive = self._fit_rows(data)
        loss = partition_loss(state, self.criterion)
        per_class = weights.ndim == 2
        node_priority = None if self.tie_order is None else self._node_priority(state)
        visits_pure = getattr(node_priority, "visits_pure", None)
        # Single-label classes: SAMME's pair weights are summed in one pass over the examples.
        labels = data.labels if per_class else None

        def sums_of(rows):
            """The histogram and the example counts per bin of one node's rows."""
            return node_sums(codes, rows, weights, is_pos, positive, labels, n_bins)

        root_hist = histogram(codes, weights, is_pos, n_bins, state.n_jobs, labels=labels)
        totals = root_hist[0].sum(axis=0)  # (2,), or (C, 2) per class
        # Two classes: the totals as floats (0-d arrays make every comparison slower).
        wneg, wpos = (totals[:, 0], totals[:, 1]) if per_class else totals.tolist()
        root = _Node(all_rows, 0, wneg, wpos, -1, True, n_positive)
        if self._splittable(root):
            root.hist, root.counts, root.valid = root_hist, binned.bin_counts, self._root_valid
        feature, threshold, left, right, gains = [], [], [], [], []
        missing_left, category_sets = [], []  # per split node: bool, left categories or None
        leaf_scores, leaf_wneg, leaf_wpos = [], [], []
        cells = np.empty(data.n_samples, dtype=np.intp)
        stack = [root]
        while stack:  # depth first, left child first: children get larger indices than parents
            node = stack.pop()
            split = (None if node.hist is None
                     else self._best_split(node, loss, binned, node_priority))
            if split is None:
                if node.pure_visit:  # a leaf here, visited there: the draws must follow
                    node_priority(sums_of(node.rows)[1], node.depth)
                index = -1 - len(leaf_scores)
                fill_rows(cells, node.rows, len(leaf_scores))
                leaf_scores.append(_leaf_score(node.wpos, node.wneg, per_class))
                leaf_wneg.append(node.wneg)
                leaf_wpos.append(node.wpos)
            else:
                split, gain = split
                index = len(feature)
                gains.append(gain)
                feature.append(split.feature)
                missing_left.append(split.missing_left)
                category_sets.append(split.categories)
                left.append(0)
                right.append(0)
                if self._children_are_leaves(node, binned):
                    # Popped next, left first, as below, but their rows are never listed, only
                    # their cells written.
                    threshold.append(split.threshold(binned.thresholds))
                    leaf = len(leaf_scores)
                    fill_split_leaves(cells, codes[split.feature], node.rows, split.bin, leaf)
                    for side in (0, 1):
                        leaf_scores.append(_leaf_score(split.wpos[side], split.wneg[side],
                                                       per_class))
                        leaf_wneg.append(split.wneg[side])
                        leaf_wpos.append(split.wpos[side])
                    left[index], right[index] = -1 - leaf, -2 - leaf
                else:
                    children = self._children(node, split, index, codes[split.feature], binned)
                    if visits_pure is not None:
                        self._mark_pure_visits(node, split, children, visits_pure)
                    if split.categories is not None:
                        threshold.append(0.0)  # unused: the node splits categories
                    elif self.midpoints:
                        threshold.append(_midpoint(
                            data.X[:, split.feature], children[0].rows, children[1].rows, positive))
                    else:
                        threshold.append(split.threshold(binned.thresholds))
                    self._histograms(node, children, sums_of)
                    stack.extend(reversed(children))
            if node.parent >= 0:
                (left if node.is_left else right)[node.parent] = index
        tree = DecisionTree(feature, threshold, left, right, leaf_scores, missing_left,
                            *_category_nodes(category_sets))
        object.__setattr__(tree, "split_gains", np.array(gains, dtype=np.float64))
        return boostkit.Candidate(tree, cells=cells, scores=take_cells(tree.leaf_scores, cells),
                                  cell_wneg=np.array(leaf_wneg), cell_wpos=np.array(leaf_wpos))

    def _propose_by_levels(self, state):
        """The tree grown level by level from sums over all the rows, wherever they live (in
        a distributed fit: on the shards).

        The root chooses from ``state.class_histogram()``; the nodes of every further level
        get their histograms and example counts from one ``state.reduce`` (:class:`LevelSums`:
        each row routed down the tree so far by its bin codes), as a data-parallel tree
        learner (LightGBM's) sums one level's histograms over its workers. Of two children
        that may both be split, only the smaller is summed; the other's sums are their
        parent's minus its sibling's, as on the rows (half the bytes). Each node is split as
        the tree grown over the rows splits it (:meth:`_best_split`, the same sums up to
        rounding), and the nodes are numbered as there (depth first, the left child first),
        so the tree is the same. The candidate carries the tree's :class:`TreeCells` and its
        leaves' class weights.
        """
        binned = state.data.binned
        loss = partition_loss(state, self.criterion)
        # The bins any example of positive initial weight is in: the others are empty.
        bins = np.flatnonzero(binned.bin_counts.any(axis=0))
        root_hist = state.class_histogram()
        per_class = root_hist.ndim == 4
        totals = root_hist[0].sum(axis=0)  # (2,), or (C, 2) per class
        wneg, wpos = (totals[:, 0], totals[:, 1]) if per_class else totals.tolist()
        root = _Node(None, 0, wneg, wpos, -1, True, state.data.n_weighted)
        splits = {}  # id(node) -> (split, gain, [left child, right child])
        level = []
        if self._splittable(root):
            # A copy: a sibling's histogram is computed in its parent's array.
            root.hist, root.counts = root_hist.copy(), binned.bin_counts
            level.append(root)
        while level:  # the nodes to split at this depth, each with its sums
            below = []  # their children that may be split in turn
            summed = []  # those whose sums the level's reduction gives
            siblings = []  # (parent, summed child, child = parent - summed child)
            for node in level:
                found = self._best_split(node, loss, binned)
                if found is None:
                    continue
                split, gain = found
                n_left = _n_left(node, split, binned)
                children = [_Node(None, node.depth + 1, split.wneg[side], split.wpos[side], -1,
                                  side == 0, n_left if side == 0 else node.n_counted - n_left)
                            for side in (0, 1)]
                splits[id(node)] = (split, gain, children)
                wanted = [child for child in children if self._splittable(child)]
                below.extend(wanted)
                if len(wanted) == 2:  # as on the rows: the smaller is summed, the other derived
                    direct = 0 if children[0].n_counted <= children[1].n_counted else 1
                    summed.append(children[direct])
                    siblings.append((node, children[direct], children[1 - direct]))
                else:
                    summed.extend(wanted)
            if summed:  # one reduction over all rows for the whole level
                slots = {id(child): k for k, child in enumerate(summed)}
                route, _ = _tree_arrays(root, splits, binned, slots)
                sent, sent_counts = state.reduce(LevelSums(route, len(summed), binned.max_bins,
                                                           bins))
                for k, child in enumerate(summed):
                    child.hist = np.zeros(root_hist.shape)
                    child.hist[:, bins] = sent[k]
                    child.counts = np.zeros(binned.bin_counts.shape, dtype=np.int64)
                    child.counts[:, bins] = np.rint(sent_counts[k])
                for node, child, other in siblings:
                    other.counts = np.empty_like(node.counts)
                    sibling_sums(node.hist, child.hist, node.counts, child.counts, other.counts)
                    other.hist = node.hist
            level = below
        cells, leaves = _tree_arrays(root, splits, binned)
        nodes = [splits[id(node)] for node in _split_nodes(root, splits)]
        tree = DecisionTree(
            cells.feature,
            [0.0 if split.categories is not None else split.threshold(binned.thresholds)
             for split, _, _ in nodes],
            cells.left, cells.right,
            [_leaf_score(leaf.wpos, leaf.wneg, per_class) for leaf in leaves],
            [split.missing_left for split, _, _ in nodes],
            *_category_nodes([split.categories for split, _, _ in nodes]))
        object.__setattr__(tree, "split_gains", np.array([gain for _, gain, _ in nodes],
                                                         dtype=np.float64))
        return boostkit.Candidate(tree, bin_cells=cells, codes=binned.codes,
                                  cell_wneg=np.array([leaf.wneg for leaf in leaves]),
                                  cell_wpos=np.array([leaf.wpos for leaf in leaves]))

    def _node_priority(self, state):
        """The tree's ``priority(counts, depth)`` from ``tie_order``."""
        if not state.data.binned.ordered:
            raise boostkit.DataError(
                "the tree learner's tie_order breaks ties between the cuts of numeric features "
                "only, and the data have missing values or categorical columns"
            )
        return self.tie_order(state)

    def _best_split(self, node: _Node, loss, binned, node_priority=None):
        """``(split, decrease of the loss)`` for the node's best cut if it lowers the node's
        loss, else ``None``; ``node_priority`` (from ``tie_order``) ranks the columns of equal
        cuts."""
        node_loss = None
        if binned.ordered:
            valid = self._valid(node.counts) if node.valid is None else node.valid
            priority = None if node_priority is None else node_priority(node.counts, node.depth)
            search = None if np.ndim(node.wpos) else _SPLIT_SEARCHES.get(loss)
            if search is not None:
                split, node_loss = search(node.hist, valid, priority, node.wpos, node.wneg)
            else:
                split = best_split(node.hist, valid, _on_cuts(loss, valid), priority=priority)
        else:
            split = best_binned_split(node.hist, node.counts, loss, binned,
                                      min_leaf=self.min_samples_leaf,
                                      min_category_count=self.min_category_count)
        if split is None:
            return None
        if node_loss is None:  # not scored with the cuts
            node_loss = _node_loss(loss, node)
        if split.loss < node_loss * (1.0 - _MIN_RELATIVE_GAIN):
            return split, node_loss - split.loss
        return None

    def _children_are_leaves(self, node: _Node, binned) -> bool:
        """Whether a split of ``node`` makes two leaves that need no list of their rows: the
        children are at full depth, ordered data (no missing values to route) and thresholds at
        the bin edges (no midpoints between the children's values)."""
        return node.depth + 1 == self.max_depth and binned.ordered and not self.midpoints

    def _children(self, node: _Node, split, index: int, feature_codes, binned) -> list[_Node]:
        n_left = _n_left(node, split, binned)
        if binned.ordered:
            left_rows, right_rows = split_rows(feature_codes, node.rows, split.bin)
        else:
            goes_left = split.left_bins(binned.max_bins, binned.missing_bin)[
                feature_codes[node.rows]]
            left_rows, right_rows = node.rows[goes_left], node.rows[~goes_left]
        return [
            _Node(left_rows, node.depth + 1, split.wneg[0], split.wpos[0], index, True, n_left),
            _Node(right_rows, node.depth + 1, split.wneg[1], split.wpos[1], index, False,
                  node.n_counted - n_left),
        ]

    def _histograms(self, node: _Node, children: list[_Node], sums_of) -> None:
        """Give a histogram (and bin counts) to the children that may still be split.

        The smaller child is summed directly; when both need one, the larger is its parent's
        minus the smaller's (clipped at 0 against rounding; counts are exact).
        """
        wanted = [self._splittable(c) for c in children]
        if not any(wanted):
            return
        if all(wanted):
            direct = 0 if children[0].rows.shape[0] <= children[1].rows.shape[0] else 1
        else:
            direct = wanted.index(True)
        child = children[direct]
        child.hist, child.counts = sums_of(child.rows)
        if all(wanted):
            other = children[1 - direct]
            # In the parent's array, which its split no longer needs (its counts may be the
            # training data's bin counts: those are not overwritten).
            other.counts = np.empty_like(node.counts)
            sibling_sums(node.hist, child.hist, node.counts, child.counts, other.counts)
            other.hist = node.hist

    @staticmethod
    def fit_regression_tree(*args, **kwargs):
        """:func:`boostkit_weightboost.regression_trees.fit_regression_tree`, for hosts that
        reach plugins only through the registry (the registered ``tree`` component)."""
        from .regression_trees import fit_regression_tree

        return fit_regression_tree(*args, **kwargs)


def _split_nodes(root: _Node, splits: dict) -> list[_Node]:
    """The split nodes of a tree grown level by level, in the order of :class:`DecisionTree`'s
    arrays (depth first, the left child first)."""
    if id(root) not in splits:
        return []
    left, right = splits[id(root)][2]
    return [root, *_split_nodes(left, splits), *_split_nodes(right, splits)]


def _tree_arrays(root: _Node, splits: dict, binned, slots: dict | None = None
                 ) -> tuple[TreeCells, list[_Node]]:
    """``(cells, leaves)`` of a tree grown level by level (``splits``: ``id(node)`` ->
    ``(split, gain, children)``): its :class:`TreeCells` over the histogram's bins and its
    leaves, both numbered depth first, the left child first, as :meth:`TreeLearner.
    boostkit_propose` numbers them. Given ``slots`` (``id(node)`` -> k), a leaf pointer names
    that node's ``k`` instead, and every other leaf ``len(slots)`` (:class:`LevelSums`'
    route)."""
    feature, left_bins, left, right = [], [], [], []
    leaves: list[_Node] = []

    def visit(node: _Node) -> int:
        if id(node) not in splits:
            leaves.append(node)
            return -len(leaves) if slots is None else -1 - slots.get(id(node), len(slots))
        split, _, (left_child, right_child) = splits[id(node)]
        k = len(feature)
        feature.append(split.feature)
        left_bins.append(split.left_bins(binned.max_bins, binned.missing_bin))
        left.append(0)
        right.append(0)
        left[k] = visit(left_child)
        right[k] = visit(right_child)
        return k

    visit(root)
    table = np.array(left_bins, dtype=np.uint8).reshape(len(feature), binned.max_bins)
    return TreeCells(feature, table, left, right), leaves


def _n_left(node: _Node, split, binned) -> int:
    """The examples of positive initial weight that ``split`` sends left, from the node's
    counts per bin."""
    counts = node.counts[split.feature]
    if binned.ordered:
        return int(counts[:split.bin + 1].sum())
    return int(counts[split.left_bins(binned.max_bins, binned.missing_bin)].sum())


def _mixed(node: _Node) -> bool:
    """Whether a node holds two classes (per class: two present, or a column with both
    signs)."""
    if np.ndim(node.wpos):
        return (np.count_nonzero(node.wpos > 0.0) >= 2
                or bool(np.any((node.wpos > 0.0) & (node.wneg > 0.0))))
    return node.wneg > 0.0 and node.wpos > 0.0


def _leaf_score(wpos, wneg, per_class: bool) -> float:
    """A leaf's label: its weighted majority (ties: -1); +1 per class (the calibration gives
    each leaf its per-class values)."""
    return 1.0 if per_class or wpos > wneg else -1.0


def _node_loss(loss, node: _Node) -> float:
    """The node's loss as one cell."""
    if np.ndim(node.wpos):  # one cell of per-class sums: (1, 1, C)
        return float(loss(node.wpos[None, None, :], node.wneg[None, None, :])[0])
    return float(loss(np.array([[node.wpos]]), np.array([[node.wneg]]))[0])


def _category_nodes(category_sets: list) -> tuple[np.ndarray, np.ndarray]:
    """``(categorical, category_left)`` of :class:`DecisionTree` from the left categories of
    every split node (``None`` for a threshold node)."""
    if all(c is None for c in category_sets):  # ordered data: no categorical split
        return np.zeros(len(category_sets), dtype=bool), np.zeros((len(category_sets), 0), bool)
    categorical = np.array([c is not None for c in category_sets], dtype=bool)
    width = max((int(c[-1]) + 1 for c in category_sets if c is not None), default=0)
    category_left = np.zeros((len(category_sets), width), dtype=bool)
    for k, categories in enumerate(category_sets):
        if categories is not None:
            category_left[k, categories] = True
    return categorical, category_left
