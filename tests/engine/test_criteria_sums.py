"""The partition losses of boostkit.criteria add their cells as numpy's reduction does, bit for bit
(the stump search's scores, and so the binary reference models, depend on it)."""

from __future__ import annotations

import numpy as np
import pytest

from boostkit.criteria import CRITERIA


def reference_losses(wpos, wneg):
    """The criteria as numpy reductions over the cells' axis."""
    total = wpos + wneg
    with np.errstate(invalid="ignore", divide="ignore"):
        gini = np.where(total > 0, 2.0 * wpos * wneg / total, 0.0).sum(axis=-1)
        plogp = np.where(wpos > 0, wpos * np.log(wpos / total), 0.0)
        nlogn = np.where(wneg > 0, wneg * np.log(wneg / total), 0.0)
    return {
        "error": np.minimum(wpos, wneg).sum(axis=-1),
        "z": 2.0 * np.sqrt(wpos * wneg).sum(axis=-1),
        "gini": gini,
        "entropy": -(plogp + nlogn).sum(axis=-1),
    }


@pytest.mark.parametrize("cells", [1, 2, 3, 9])
@pytest.mark.parametrize("name", sorted(CRITERIA))
def test_criteria_add_the_cells_as_numpy_does(name, cells):
    rng = np.random.default_rng(cells)
    shape = (7, 254, cells)
    # Weights over many magnitudes, with empty and pure cells: any other order of the additions
    # would show in the last bits somewhere.
    wpos = rng.random(shape) * 10.0 ** rng.integers(-12, 2, shape)
    wneg = rng.random(shape) * 10.0 ** rng.integers(-12, 2, shape)
    wpos[0, :50] = 0.0
    wneg[1, :50] = 0.0
    got = CRITERIA[name](wpos, wneg)
    assert got.shape == shape[:-1]
    np.testing.assert_array_equal(got, reference_losses(wpos, wneg)[name])


def test_two_cells_of_one_candidate_give_a_scalar():
    assert CRITERIA["error"](np.array([0.25, 0.5]), np.array([0.5, 0.125])) == 0.375
