"""Serving a model without boostkit: ONNX graphs of tree ensembles (the ``onnx`` extra).

:func:`to_onnx` writes a :class:`boostkit.BoostModel` or
:class:`boostkit.multiclass.OneVsRestModel` whose terms are trees over the features as an ONNX
graph: one ``ai.onnx.ml`` ``TreeEnsemble`` operator (opset 5) for the margins, then standard
operators for the labels and the probabilities, as :meth:`boostkit.BoostModel.predict` and
:func:`boostkit.model.margin_probabilities` compute them. A term exports when its hypothesis
has a tree form (:class:`boostkit.tree_form.TreeForm`: ``tree_form()``, or a
``threshold_split()``) and its contribution a value per cell (``Contribution.cell_table``, which
a contribution depending on the running margin does not have); any other term is refused,
named, with the reason.

The graph compares and sums in float64, as boostkit does: thresholds are the model's own
float64 numbers, a float32 input (``dtype="float32"``) is widened exactly, and float32 outputs
are rounded once, at the end. So the labels are boostkit's on the same input values, and the
margins and probabilities differ from boostkit's by the order of the sums only (about 1e-15
relative; 1e-7 when rounded to float32).

Importing this module registers converters with ``skl2onnx`` for
:class:`boostkit.sklearn.BoostClassifier`, :class:`boostkit.sklearn.AdaBoostClassifier` and
:class:`boostkit.sklearn.AdaBoostRegressor` (:func:`register_skl2onnx_converters`), so that
``skl2onnx.to_onnx(estimator, X[:1])`` converts them, in pipelines too (docs/serving.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as exc:  # pragma: no cover - the extra is part of the test extra
    raise ImportError("boostkit.onnx needs the onnx extra: pip install 'boostkit[onnx]'") from exc

from .model import BoostModel
from .model_file import write_atomically
from .splits import TIE_TOLERANCE

__all__ = ["ExportError", "FORMATS", "OPSET", "ML_OPSET", "export_file", "graph_input",
           "register_skl2onnx_converters", "to_onnx", "tree_form"]

#: The formats :func:`export_file` writes.
FORMATS = ("onnx",)
#: The default-domain opset of the graphs :func:`to_onnx` writes, and the ``ai.onnx.ml`` opset
#: (5: the ``TreeEnsemble`` operator, with set membership and float64 values).
OPSET = 21
ML_OPSET = 5
_IR_VERSION = 10  # the IR of opset 21: runtimes that read opset 21 read it
#: The ``ai.onnx.ml`` opset of the skl2onnx converters: skl2onnx writes at most 3.
_SKL2ONNX_ML_OPSET = 3

_BRANCH_LEQ, _BRANCH_MEMBER = 0, 6
_TINY = float(np.finfo(np.float64).tiny)
_BELOW_ONE = float(1.0 - np.finfo(np.float64).epsneg)


class ExportError(ValueError):
    """A model (or estimator) that cannot be written as a tree ensemble, with the reason."""


# -- the trees ----------------------------------------------------------------------------------

def tree_form(hypothesis):
    """The hypothesis' :class:`boostkit.tree_form.TreeForm`, or ``None``: its ``tree_form()``
    when it has one, else the stump of its ``threshold_split()``."""
    from .tree_form import TreeForm

    form = hypothesis.tree_form() if hasattr(hypothesis, "tree_form") else None
    if form is None:
        split = hypothesis.threshold_split()
        form = None if split is None else TreeForm.threshold_stump(*split)
    return form


def _term_trees(hypothesis, contribution, n_columns: int, where: str):
    """``(tree form, (n_leaves, C) leaf values)`` of one term, or an :class:`ExportError`
    naming the term and why it has no tree form."""
    form = tree_form(hypothesis)
    if form is None:
        raise ExportError(
            f"{where}: weak hypothesis {hypothesis.name!r} ({hypothesis.describe()}) is not a "
            "tree over the features (it has no tree_form or threshold_split), so no tree "
            "ensemble holds it; "
            "models of stumps and trees export")
    table = contribution.cell_table(hypothesis)
    if table is None:
        raise ExportError(
            f"{where}: contribution {contribution.name!r} gives no value per cell of "
            f"{hypothesis.name!r} (its cell_table is None: the value depends on the running "
            "margin, or on a score the hypothesis does not give per cell), so the tree's "
            "leaves cannot hold it")
    table = np.asarray(table, dtype=np.float64)
    if table.ndim == 1:
        table = table[:, None]
    if table.shape != (form.n_leaves, n_columns):
        raise ExportError(f"{where}: contribution {contribution.name!r} gives values of shape "
                          f"{table.shape} for the {form.n_leaves} leaves of {hypothesis.name!r} "
                          f"and {n_columns} margin column(s)")
    return form, table


def _model_terms(model) -> tuple[list, int, np.ndarray | None]:
    """``([(tree form, (n_leaves, C) leaf values)], C, offsets)`` of a boostkit model: its
    terms in order (up to ``best_round``); a one-vs-rest class model's terms add to their
    class's column only."""
    models = getattr(model, "models", None)
    if models is None:
        if not isinstance(model, BoostModel):
            raise ExportError(f"cannot export a {type(model).__name__}: expected a "
                              "boostkit.BoostModel or OneVsRestModel")
        parts, n_columns, offsets = [(model, None)], model.n_columns, None
    else:
        parts = [(m, l) for l, m in enumerate(models)]
        n_columns, offsets = len(models), model.offsets
    terms = []
    for part, column in parts:
        n_terms = part.n_rounds if part.best_round is None else part.best_round
        if n_terms == 0:
            raise ExportError("the model has 0 rounds (no term): there is nothing to serve")
        for t in range(n_terms):
            where = f"round {t + 1}" + ("" if column is None else f" of class {column}'s model")
            form, table = _term_trees(part.hypotheses[t], part.contributions[t],
                                      part.n_columns, where)
            if column is not None:  # class model l adds to margin column l only
                wide = np.zeros((form.n_leaves, n_columns))
                wide[:, column] = table[:, 0]
                table = wide
            terms.append((form, table))
    return terms, n_columns, offsets


def _ensemble_attributes(terms, n_targets: int) -> dict:
    """The attributes of one ``TreeEnsemble`` (``ai.onnx.ml`` opset 5, float64) summing the
    ``terms``, ``(tree form, (n_leaves, C) leaf values)``: one tree per term and margin
    column, target the column. A tree whose leaf values are all zero adds nothing and is left
    out (one leaf of 0 stands for a sum of nothing)."""
    from .tree_form import TreeForm

    trees = [(form, table[:, l], l) for form, table in terms for l in range(table.shape[1])
             if table[:, l].any()] or [(TreeForm.leaf(), np.zeros(1), 0)]
    nodes = {k: [] for k in ("featureids", "modes", "splits", "truenodeids", "trueleafs",
                             "falsenodeids", "falseleafs", "missing")}
    roots, members, leaf_targets, leaf_weights = [], [], [], []
    for form, values, target in trees:
        first_node, first_leaf = len(nodes["modes"]), len(leaf_weights)
        roots.append(first_node)
        leaf_targets += [int(target)] * form.n_leaves
        leaf_weights += values.tolist()
        if form.n_split == 0:  # one leaf: a node whose two branches reach it
            for key, value in (("featureids", 0), ("modes", _BRANCH_LEQ), ("splits", 0.0),
                               ("truenodeids", first_leaf), ("trueleafs", 1),
                               ("falsenodeids", first_leaf), ("falseleafs", 1),
                               ("missing", 0)):
                nodes[key].append(value)
            continue
        for k in range(form.n_split):
            nodes["featureids"].append(int(form.feature[k]))
            member = form.members[k]
            nodes["modes"].append(_BRANCH_LEQ if member is None else _BRANCH_MEMBER)
            nodes["splits"].append(float(form.threshold[k]) if member is None else 0.0)
            if member is not None:
                members += member.tolist() + [np.nan]
            for side, child in (("true", form.left[k]), ("false", form.right[k])):
                leaf = child < 0
                nodes[f"{side}leafs"].append(int(leaf))
                nodes[f"{side}nodeids"].append(int(first_leaf - 1 - child if leaf
                                                   else first_node + child))
            nodes["missing"].append(int(form.missing_left[k]))
    attributes = {
        "n_targets": n_targets, "aggregate_function": 1, "post_transform": 0,
        "tree_roots": roots,
        "nodes_featureids": nodes["featureids"],
        "nodes_modes": numpy_helper.from_array(np.array(nodes["modes"], dtype=np.uint8),
                                               "nodes_modes"),
        "nodes_splits": numpy_helper.from_array(np.array(nodes["splits"]), "nodes_splits"),
        "nodes_truenodeids": nodes["truenodeids"], "nodes_trueleafs": nodes["trueleafs"],
        "nodes_falsenodeids": nodes["falsenodeids"], "nodes_falseleafs": nodes["falseleafs"],
        "nodes_missing_value_tracks_true": nodes["missing"],
        "leaf_targetids": leaf_targets,
        "leaf_weights": numpy_helper.from_array(np.array(leaf_weights), "leaf_weights"),
    }
    if members:
        attributes["membership_values"] = numpy_helper.from_array(np.array(members),
                                                                  "membership_values")
    return attributes


def _leaf_index_attributes(forms, feature_map: np.ndarray | None) -> dict:
    """The attributes of a ``TreeEnsembleRegressor`` (``ai.onnx.ml`` opset 3, float64
    thresholds) whose target t is the index of the leaf tree ``forms[t]`` sends a row to,
    counted over all the trees' leaves (exact in its float32 output below 2**24 leaves);
    ``feature_map`` renames the forms' columns (``None``: as they are)."""
    keys = ("treeids", "nodeids", "featureids", "modes", "values", "truenodeids",
            "falsenodeids", "missing")
    nodes = {k: [] for k in keys}
    targets = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    offset = 0
    for t, form in enumerate(forms):
        if any(m is not None for m in form.members):
            raise ExportError(
                f"tree {t} splits on a set of categories, which the ai.onnx.ml opset 3 that "
                "skl2onnx writes cannot test; export the model with boostkit.onnx.to_onnx "
                "(opset 5)")
        n_split = form.n_split
        features = form.feature if feature_map is None else feature_map[form.feature]
        for k in range(n_split):
            children = [n_split - 1 - c if c < 0 else c for c in (form.left[k], form.right[k])]
            for key, value in zip(keys, (t, k, int(features[k]), "BRANCH_LEQ",
                                         float(form.threshold[k]), int(children[0]),
                                         int(children[1]), int(form.missing_left[k]))):
                nodes[key].append(value)
        for j in range(form.n_leaves):
            for key, value in zip(keys, (t, n_split + j, 0, "LEAF", 0.0, 0, 0, 0)):
                nodes[key].append(value)
            for key, value in zip(targets, (t, n_split + j, t, float(offset + j))):
                targets[key].append(value)
        offset += form.n_leaves
    if offset >= 1 << 24:
        raise ExportError(f"{offset} leaves: more than float32 counts exactly (2**24)")
    attributes = {f"nodes_{k}": v for k, v in nodes.items() if k not in ("values", "missing")}
    attributes["nodes_missing_value_tracks_true"] = nodes["missing"]
    attributes["nodes_values_as_tensor"] = numpy_helper.from_array(np.array(nodes["values"]),
                                                                   "nodes_values_as_tensor")
    attributes.update({f"target_{k}": v for k, v in targets.items()})
    return {**attributes, "n_targets": len(forms), "aggregate_function": "SUM",
            "post_transform": "NONE"}


# -- a graph under construction -------------------------------------------------------------------

class _Graph:
    """Nodes and constants of a graph, named by ``fresh`` (a unique name from a prefix): the
    same construction serves :func:`to_onnx` and the skl2onnx converters."""

    def __init__(self, fresh: Callable[[str], str], opset: int):
        self.fresh, self.opset = fresh, opset
        self.nodes: list = []
        self.constants: list = []

    def constant(self, value, prefix: str = "c") -> str:
        name = self.fresh(prefix)
        array = np.asarray(value)
        if array.dtype.kind in "US":
            array = array.astype(object)
        self.constants.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, *inputs: str, out: str | None = None, domain: str = "",
           **attributes) -> str:
        """Add a node of one output (``out``, or a fresh name) and return that output."""
        return self.op_outputs(op_type, *inputs, outs=[out or self.fresh(op_type.lower())],
                               domain=domain, **attributes)[0]

    def op_outputs(self, op_type: str, *inputs: str, outs: list[str], domain: str = "",
                   **attributes) -> list[str]:
        """Add a node whose outputs are ``outs`` and return them."""
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, domain=domain,
                                           name=self.fresh(f"n_{op_type}"), **attributes))
        return outs

    def reduce(self, op_type: str, x: str, axis: int, keepdims: int = 1) -> str:
        """``op_type`` (ReduceMax, ReduceSum) over ``axis``."""
        if self.opset >= 18 or op_type == "ReduceSum" and self.opset >= 13:
            return self.op(op_type, x, self.constant(np.array([axis], dtype=np.int64)),
                           keepdims=keepdims)
        return self.op(op_type, x, axes=[axis], keepdims=keepdims)

    def tree_sums(self, x: str, terms, n_columns: int) -> str:
        """``(N, C)`` float64: the sum of the terms' leaf values (one ``TreeEnsemble``)."""
        return self.op("TreeEnsemble", x, domain="ai.onnx.ml",
                       **_ensemble_attributes(terms, n_columns))

    def leaf_values(self, x: str, terms, feature_map: np.ndarray | None = None) -> str:
        """``(N, T, C)`` float64: every term's leaf values on every row, from the leaves'
        indices (a ``TreeEnsembleRegressor`` of ``ai.onnx.ml`` opset 3, which sums in float32
        only) gathered from a float64 table, so that the sums stay float64."""
        forms = [form for form, _ in terms]
        table = np.concatenate([values for _, values in terms])
        leaves = self.op("TreeEnsembleRegressor", x, domain="ai.onnx.ml",
                         **_leaf_index_attributes(forms, feature_map))
        return self.op("Gather", self.constant(table),
                       self.op("Cast", leaves, to=TensorProto.INT64), axis=0)

    def column(self, x: str, j: int) -> str:
        """Column ``j`` of the 2-D ``x``, as ``(N, 1)``."""
        return self.op("Gather", x, self.constant(np.array([j], dtype=np.int64)), axis=1)

    def flat(self, x: str, out: str | None = None) -> str:
        return self.op("Reshape", x, self.constant(np.array([-1], dtype=np.int64)), out=out)


def _as_double(g: _Graph, x: str, elem_type: int) -> str:
    return x if elem_type == TensorProto.DOUBLE else g.op("Cast", x, to=TensorProto.DOUBLE)


def _finish(g: _Graph, value: str, out: str, elem_type: int) -> None:
    """The float64 ``value`` as the output ``out``, of the input's float type."""
    if elem_type == TensorProto.DOUBLE:
        g.op("Identity", value, out=out)
    else:
        g.op("Cast", value, out=out, to=elem_type)


def _softmax(g: _Graph, scores: str) -> str:
    """exp(s - max s) / sum, row by row (``(N, C)``), as boostkit's probabilities and
    scikit-learn's AdaBoost compute it."""
    p = g.op("Exp", g.op("Sub", scores, g.reduce("ReduceMax", scores, 1)))
    return g.op("Div", p, g.reduce("ReduceSum", p, 1))


def _probabilities(g: _Graph, margin: str, n_columns: int, multilabel: bool) -> str:
    """The graph of :func:`boostkit.model.margin_probabilities` on the ``(N, C)`` float64
    margins."""
    if n_columns == 1:  # p = (1 + tanh F) / 2 for classes[1]; (1 - p, p)
        p = g.op("Mul", g.op("Add", g.op("Tanh", margin), g.constant(1.0)), g.constant(0.5))
        return g.op("Concat", g.op("Sub", g.constant(1.0), p), p, axis=1)
    # log sigma(2F) = -(max(z, 0) + log(1 + exp(-|z|))), z = -2F
    z = g.op("Mul", margin, g.constant(-2.0))
    soft = g.op("Add", g.op("Relu", z),
                g.op("Log", g.op("Add", g.constant(1.0), g.op("Exp", g.op("Neg", g.op("Abs", z))))))
    log_p = g.op("Neg", soft)
    if multilabel:
        return g.op("Clip", g.op("Exp", log_p), g.constant(_TINY), g.constant(_BELOW_ONE))
    return _softmax(g, log_p)


def _class_index(g: _Graph, margin: str, n_columns: int, multilabel: bool) -> str:
    """The graph of :func:`boostkit.model.margin_labels`'s choice: int64 ``(N,)`` class index
    (F > 0, or the first class within the tie tolerance of the largest margin), or the ``(N,
    C)`` 0/1 indicator matrix of multi-label models."""
    if n_columns == 1 or multilabel:
        positive = g.op("Cast", g.op("Greater", margin, g.constant(0.0)), to=TensorProto.INT64)
        return g.flat(positive) if n_columns == 1 else positive
    top = g.reduce("ReduceMax", margin, 1)
    scale = g.reduce("ReduceMax", g.op("Abs", margin), 1)
    floor = g.op("Sub", top, g.op("Mul", g.constant(TIE_TOLERANCE), scale))
    tied = g.op("Cast", g.op("GreaterOrEqual", margin, floor), to=TensorProto.INT32)
    return g.flat(g.op("ArgMax", tied, axis=1, keepdims=1, select_last_index=0))


def _label_array(classes) -> np.ndarray:
    classes = np.asarray(classes)
    if classes.dtype.kind in "iub":
        return classes.astype(np.int64) if classes.dtype.kind != "b" else classes
    if classes.dtype.kind == "f":
        return classes.astype(np.float64)
    return classes.astype(str)


# -- boostkit models ------------------------------------------------------------------------------

def graph_input(model, X) -> np.ndarray:
    """The float64 matrix the graph of ``model`` takes for ``X`` (an array or a table): the
    columns as the model's terms read them. A categorical column holds the index of each row's
    category among ``model.features.categories[j]`` (as a float), and NaN for a missing value
    or a category not seen in training; numeric columns are their values."""
    from .data import check_features
    from .features import FeatureSchema

    part = getattr(model, "models", (model,))[0]
    schema = part.features or FeatureSchema(part.n_features)
    X = schema.transform(X)
    return np.asarray(check_features(X, n_features=part.n_features, allow_missing=True,
                                     features=part.features), dtype=np.float64)


def to_onnx(model, *, dtype: str = "float64", name: str = "boostkit") -> onnx.ModelProto:
    """The ONNX graph of a boostkit model whose terms are trees over the features.

    Input ``X``: ``(N, d)`` of ``dtype`` (``"float64"`` or ``"float32"``), the matrix of
    :func:`graph_input` (categorical columns as category indices). Outputs:

    * ``label``: :meth:`boostkit.BoostModel.predict`, ``(N,)`` class labels (int64, float64,
      bool or string, as ``model.classes``), or the ``(N, C)`` int64 0/1 matrix of a
      multi-label model;
    * ``probabilities``: :meth:`boostkit.BoostModel.predict_proba`, ``(N, 2)`` or ``(N, C)``;
    * ``margin``: :meth:`boostkit.BoostModel.decision_function`, ``(N,)`` or ``(N, C)``.

    The graph computes in float64 whatever ``dtype`` (see the module's note). Raises
    :class:`ExportError` for a model with no term, or with a term that has no tree form or no
    value per cell, naming the round and the component.
    """
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    terms, n_columns, offsets = _model_terms(model)
    part = getattr(model, "models", (model,))[0]
    elem_type = TensorProto.DOUBLE if dtype == "float64" else TensorProto.FLOAT
    counter = iter(range(1 << 62))
    g = _Graph(lambda prefix: f"{prefix}_{next(counter)}", OPSET)
    margin = g.tree_sums(_as_double(g, "X", elem_type), terms, n_columns)
    if offsets is not None:
        margin = g.op("Add", margin, g.constant(np.asarray(offsets, dtype=np.float64)))
    index = _class_index(g, margin, n_columns, model.multilabel)
    if model.multilabel:
        g.op("Identity", index, out="label")
    else:
        g.op("Gather", g.constant(_label_array(model.classes)), index, axis=0, out="label")
    _finish(g, _probabilities(g, margin, n_columns, model.multilabel), "probabilities",
            elem_type)
    _finish(g, g.flat(margin) if n_columns == 1 else margin, "margin", elem_type)
    labels = _label_array(model.classes)
    label_type = (TensorProto.INT64 if model.multilabel
                  else helper.np_dtype_to_tensor_dtype(labels.dtype) if labels.dtype.kind != "U"
                  else TensorProto.STRING)
    per_row = [None] if n_columns == 1 else [None, n_columns]
    graph = helper.make_graph(
        g.nodes, name,
        [helper.make_tensor_value_info("X", elem_type, [None, part.n_features])],
        [helper.make_tensor_value_info("label", label_type,
                                       [None, n_columns] if model.multilabel else [None]),
         helper.make_tensor_value_info("probabilities", elem_type,
                                       [None, 2 if n_columns == 1 else n_columns]),
         helper.make_tensor_value_info("margin", elem_type, per_row)],
        initializer=g.constants)
    out = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                   helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                            producer_name="boostkit", ir_version=_IR_VERSION)
    out.doc_string = (f"boostkit model: recipe {part.recipe.name!r}, "
                      f"{len(terms)} terms, classes {np.asarray(model.classes).tolist()!r}")
    onnx.checker.check_model(out)
    return out


def export_file(model_path, output, *, format: str = "onnx") -> Path:
    """Load the model file ``model_path`` (:func:`boostkit.load_model`), convert it
    (:func:`to_onnx`) and write it to ``output`` atomically: a temporary file beside it,
    renamed over it, so that a failure leaves no file behind. Returns the path written.

    ``format``: one of :data:`FORMATS`. Raises ``ValueError`` for another format,
    :class:`ExportError` for a model that cannot be converted, and the loader's errors
    (:class:`boostkit.ModelFormatError`, ``OSError``) for a file that cannot be read.
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}, got "
                         f"{format!r}")
    from . import load_model

    graph = to_onnx(load_model(model_path))
    blob = graph.SerializeToString()
    return write_atomically(output, lambda fh: fh.write(blob))


# -- skl2onnx converters for the scikit-learn estimators ------------------------------------------

def _skl2onnx_graph(scope, operator, container):
    """A :class:`_Graph` naming through skl2onnx's scope, the operator's input as float64, and
    its float type (the outputs' type)."""
    from skl2onnx.common.data_types import DoubleTensorType, FloatTensorType

    if container.target_opset_any_domain("ai.onnx.ml") < _SKL2ONNX_ML_OPSET:
        raise ExportError(f"boostkit's converters need the ai.onnx.ml opset "
                          f"{_SKL2ONNX_ML_OPSET} (TreeEnsembleRegressor with float64 "
                          f"thresholds), and the conversion targets "
                          f"{container.target_opset_any_domain('ai.onnx.ml')}")
    given = operator.inputs[0].type
    if not isinstance(given, (FloatTensorType, DoubleTensorType)):
        raise ExportError(f"{type(operator.raw_operator).__name__} converts float or double "
                          f"inputs, got {type(given).__name__}")
    elem_type = TensorProto.DOUBLE if isinstance(given, DoubleTensorType) else TensorProto.FLOAT
    return (_Graph(scope.get_unique_variable_name, container.target_opset),
            operator.inputs[0].full_name, elem_type)


def _emit(g: _Graph, container) -> None:
    """Add ``g``'s constants and nodes to a skl2onnx container."""
    for tensor in g.constants:
        if tensor.data_type == TensorProto.STRING:
            container.add_initializer(tensor.name, TensorProto.STRING, list(tensor.dims),
                                      numpy_helper.to_array(tensor).ravel().tolist())
        else:
            container.add_initializer(tensor.name, tensor.data_type, list(tensor.dims), tensor)
    for node in g.nodes:
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        version = _SKL2ONNX_ML_OPSET if node.domain == "ai.onnx.ml" else None
        container.add_node(node.op_type, list(node.input), list(node.output),
                           op_domain=node.domain, op_version=version, name=node.name,
                           **attributes)


def _skl2onnx_labels(scope, operator, classes) -> np.ndarray:
    """The classes as the label output's type (int64 or string) that skl2onnx's parser gave;
    their indices with the ``nocl`` option."""
    from skl2onnx.common.data_types import Int64TensorType

    if scope.get_options(operator.raw_operator, dict(nocl=False))["nocl"]:
        return np.arange(len(classes), dtype=np.int64)
    if isinstance(operator.outputs[0].type, Int64TensorType):
        return np.asarray(classes).astype(np.int64)
    return np.asarray(classes).astype(str)


def _as_tree_input(g: _Graph, x: str, elem_type: int) -> str:
    """The graph of :func:`boostkit.sklearn_native.as_tree_input`: float32 values, in
    float64."""
    if elem_type == TensorProto.DOUBLE:
        x = g.op("Cast", x, to=TensorProto.FLOAT)
    return g.op("Cast", x, to=TensorProto.DOUBLE)


def _convert_boost_classifier(scope, operator, container) -> None:
    """skl2onnx converter of :class:`boostkit.sklearn.BoostClassifier`: its ``model_``'s
    graph (:func:`to_onnx`), with the label and probability outputs skl2onnx asks for."""
    estimator = operator.raw_operator
    model = estimator.model_
    if model.multilabel:
        raise ExportError("a multi-label BoostClassifier has several labels per row, which "
                          "skl2onnx's classifier outputs do not hold; export its model_ with "
                          "boostkit.onnx.to_onnx")
    g, x, elem_type = _skl2onnx_graph(scope, operator, container)
    terms, n_columns, offsets = _model_terms(model)
    margin = g.reduce("ReduceSum", g.leaf_values(_as_double(g, x, elem_type), terms), 1,
                      keepdims=0)
    if offsets is not None:
        margin = g.op("Add", margin, g.constant(np.asarray(offsets, dtype=np.float64)))
    index = _class_index(g, margin, n_columns, False)
    g.op("Gather", g.constant(_skl2onnx_labels(scope, operator, model.classes)), index, axis=0,
         out=operator.outputs[0].full_name)
    _finish(g, _probabilities(g, margin, n_columns, False), operator.outputs[1].full_name,
            elem_type)
    _emit(g, container)


def _native_estimators(estimator, kind):
    """The drop-in's native estimators (``kind``: SammeEstimator or R2Tree), or an
    :class:`ExportError` when scikit-learn's own loop fitted foreign estimators."""
    fitted = estimator.estimators_
    if not fitted or not all(isinstance(e, kind) for e in fitted):
        raise ExportError(
            f"this {type(estimator).__name__} holds {type(fitted[0]).__name__ if fitted else 'no'}"
            " estimators, fitted by scikit-learn's own loop: only the native stumps and trees "
            "export (estimator=None or a DecisionTree of max_depth <= 8); convert "
            f"sklearn.ensemble.{type(estimator).__name__} with skl2onnx instead")
    columns = fitted[0].columns
    feature_map = None if columns is None else np.array([j for j, _, _ in columns],
                                                        dtype=np.int64)
    return fitted, feature_map


def _convert_adaboost_classifier(scope, operator, container) -> None:
    """skl2onnx converter of :class:`boostkit.sklearn.AdaBoostClassifier` (native path):
    scikit-learn's SAMME votes, decision function and probabilities."""
    from .sklearn_native import SammeEstimator

    estimator = operator.raw_operator
    fitted, feature_map = _native_estimators(estimator, SammeEstimator)
    n_classes = estimator.n_classes_
    # Estimator t's vote: alpha_t for the class of the row's leaf, -alpha_t / (K - 1) for
    # the others (as scikit-learn computes it).
    terms = [(tree_form(member.hypothesis),
              np.where(member.cell_classes[:, None] == np.arange(n_classes), weight,
                       -1 / (n_classes - 1) * weight))
             for member, weight in zip(fitted, estimator.estimator_weights_)]
    g, x, elem_type = _skl2onnx_graph(scope, operator, container)
    votes = g.reduce("ReduceSum", g.leaf_values(_as_tree_input(g, x, elem_type), terms,
                                                feature_map), 1, keepdims=0)
    pred = g.op("Div", votes, g.constant(float(estimator.estimator_weights_.sum())))
    labels = g.constant(_skl2onnx_labels(scope, operator, estimator.classes_))
    if n_classes == 2:
        decision = g.op("Add", g.op("Neg", g.column(pred, 0)), g.column(pred, 1))
        index = g.flat(g.op("Cast", g.op("Greater", decision, g.constant(0.0)),
                            to=TensorProto.INT64))
        scores = g.op("Div", g.op("Concat", g.op("Neg", decision), decision, axis=1),
                      g.constant(2.0))
    else:
        index = g.flat(g.op("ArgMax", pred, axis=1, keepdims=1, select_last_index=0))
        scores = g.op("Div", pred, g.constant(float(n_classes - 1)))
    g.op("Gather", labels, index, axis=0, out=operator.outputs[0].full_name)
    _finish(g, _softmax(g, scores), operator.outputs[1].full_name, elem_type)
    _emit(g, container)


def _convert_adaboost_regressor(scope, operator, container) -> None:
    """skl2onnx converter of :class:`boostkit.sklearn.AdaBoostRegressor` (native trees): the
    weighted median of the trees' predictions, the smallest whose cumulative weight reaches
    half the total, as scikit-learn's AdaBoost.R2 predicts."""
    from .sklearn_native import R2Tree

    estimator = operator.raw_operator
    fitted, feature_map = _native_estimators(estimator, R2Tree)
    n_trees = len(fitted)
    terms = [(tree_form(member.hypothesis), member.hypothesis.leaf_scores[:, None])
             for member in fitted]
    g, x, elem_type = _skl2onnx_graph(scope, operator, container)
    predictions = g.op("Reshape", g.leaf_values(_as_tree_input(g, x, elem_type), terms,
                                                feature_map),
                       g.constant(np.array([0, -1], dtype=np.int64)))
    ordered, order = g.op_outputs(
        "TopK", predictions, g.constant(np.array([n_trees], dtype=np.int64)),
        outs=[g.fresh("sorted"), g.fresh("order")], axis=1, largest=0, sorted=1)
    weights = np.asarray(estimator.estimator_weights_[:n_trees], dtype=np.float64)
    cdf = g.op("CumSum", g.op("Gather", g.constant(weights), order, axis=0),
               g.constant(np.array(1, dtype=np.int64)))
    half = g.op("Mul", g.constant(0.5), g.column(cdf, n_trees - 1))
    reached = g.op("Cast", g.op("GreaterOrEqual", cdf, half), to=TensorProto.INT32)
    at_median = g.op("ArgMax", reached, axis=1, keepdims=1, select_last_index=0)
    _finish(g, g.op("GatherElements", ordered, at_median, axis=1),
            operator.outputs[0].full_name, elem_type)
    _emit(g, container)


def register_skl2onnx_converters() -> None:
    """Register the converters of :class:`boostkit.sklearn.BoostClassifier`,
    :class:`~boostkit.sklearn.AdaBoostClassifier` and
    :class:`~boostkit.sklearn.AdaBoostRegressor` with skl2onnx (done when this module is
    imported; calling it again changes nothing). Classifiers take skl2onnx's ``zipmap`` and
    ``nocl`` options."""
    from skl2onnx import update_registered_converter
    from skl2onnx.common.shape_calculator import (
        calculate_linear_classifier_output_shapes,
        calculate_linear_regressor_output_shapes,
    )

    from .sklearn import AdaBoostClassifier, AdaBoostRegressor, BoostClassifier

    classifier_options = {"zipmap": [True, False, "columns"], "nocl": [False, True]}
    for cls, convert in ((BoostClassifier, _convert_boost_classifier),
                         (AdaBoostClassifier, _convert_adaboost_classifier)):
        update_registered_converter(cls, f"Boostkit{cls.__name__}",
                                    calculate_linear_classifier_output_shapes, convert,
                                    options=classifier_options)
    update_registered_converter(AdaBoostRegressor, "BoostkitAdaBoostRegressor",
                                calculate_linear_regressor_output_shapes,
                                _convert_adaboost_regressor)


register_skl2onnx_converters()
