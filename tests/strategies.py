"""hypothesis strategies shared by the property tests of several plugins."""

from __future__ import annotations

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

#: Sample weights: zero or up to 10.
WEIGHTS = st.floats(0.0, 10.0)


@st.composite
def weighted_datasets(draw, max_n: int = 60, max_d: int = 5, weights=WEIGHTS):
    """(X, y in {-1, +1} with both classes, sample_weight) with n in 5..max_n and d in 1..max_d.

    Features are small integers (many ties, often constant columns) or floats up to 1e6; each
    class has positive weight (a class of weight 0 is refused as having no example).
    """
    n = draw(st.integers(5, max_n))
    d = draw(st.integers(1, max_d))
    values = draw(st.sampled_from([
        st.integers(-3, 3).map(float),
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    ]))
    X = draw(arrays(np.float64, (n, d), elements=values))
    y = draw(arrays(np.float64, n, elements=st.sampled_from([-1.0, 1.0])))
    y[:2] = (-1.0, 1.0)
    sample_weight = draw(arrays(np.float64, n, elements=weights))
    assume(sample_weight.sum() > 0)
    normalised = sample_weight / sample_weight.sum()
    assume(normalised[y > 0].sum() > 0 and normalised[y < 0].sum() > 0)
    return X, y, sample_weight
