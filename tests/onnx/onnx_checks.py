"""What the ONNX tests share: running an exported graph with onnxruntime, and the comparison
of its outputs with boostkit's own predictions."""

from __future__ import annotations

import warnings

import numpy as np
import onnxruntime

from boostkit.onnx import graph_input, to_onnx


def session(graph) -> onnxruntime.InferenceSession:
    return onnxruntime.InferenceSession(graph.SerializeToString(),
                                        providers=["CPUExecutionProvider"])


def assert_serves_as_boostkit(model, X, *, dtype: str = "float64") -> None:
    """The graph of ``model`` gives boostkit's labels on ``X`` (identical), its probabilities
    and margins (float64: within 1e-12 relative; float32 outputs: within float32 rounding,
    1e-6, under the issue's 1e-5), on the input as the graph sees it (``X`` rounded to
    float32 for a float32 graph)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tables read by position, unseen categories
        matrix = graph_input(model, X).astype(dtype)
        label, probabilities, margin = session(to_onnx(model, dtype=dtype)).run(
            None, {"X": matrix})
        # boostkit on the values the graph read (an array: categorical columns as indices)
        seen = X if dtype == "float64" else matrix.astype(np.float64)
        want = (model.predict(seen), model.predict_proba(seen), model.decision_function(seen))
    np.testing.assert_array_equal(label, want[0])
    assert label.shape == want[0].shape
    scale = max(1.0, float(np.abs(want[2]).max()))
    tolerance = 1e-12 * scale if dtype == "float64" else 1e-6 * scale
    np.testing.assert_allclose(probabilities, want[1], rtol=0, atol=tolerance)
    np.testing.assert_allclose(margin, want[2], rtol=0, atol=tolerance)
    assert probabilities.dtype == margin.dtype == np.dtype(dtype)
