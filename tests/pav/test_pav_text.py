"""Term counts for section 7 of Wilbur et al. 2005, and the Reuters stand-in experiment."""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit_pav.text import Vocabulary, tokenize


def test_tokenize_lowercases_and_drops_entities_and_single_letters():
    assert tokenize("GRAIN exports rose 5.9 PCT, a U.S. official said.&#3;") == [
        "grain", "exports", "rose", "pct", "official", "said"]
    assert tokenize("wheat2 2wheat") == ["wheat2", "wheat"]


def test_the_vocabulary_ranks_terms_by_documents_then_alphabet():
    texts = ["corn corn wheat", "wheat oats", "corn barley", "wheat rye"]
    assert Vocabulary.fit(texts, max_terms=2).terms == ("wheat", "corn")
    assert Vocabulary.fit(texts, min_documents=1).terms == ("wheat", "corn", "barley", "oats", "rye")
    with pytest.raises(ValueError, match="no term"):
        Vocabulary.fit(["a b", "c d"], min_documents=3)


def test_counts_are_term_frequencies_in_vocabulary_order():
    vocabulary = Vocabulary(("wheat", "corn"))
    counts = vocabulary.counts(["corn corn wheat", "rice", "Wheat, WHEAT and corn"])
    np.testing.assert_array_equal(counts, [[1, 2], [0, 0], [2, 1]])
    assert counts.dtype == np.float64


@pytest.mark.slow
@pytest.mark.skipif(boostkit.datasets.data_dir() is None, reason="needs the data directory (Reuters)")
def test_section_7_on_reuters_grain_pav_boosts_cmass_and_linear_adaboost_does_not():
    from boostkit_pav.reproduce import reuters

    result = reuters("grain", rounds=40)
    boosted = result["boosted"]
    # Wilbur et al. 2005, section 7.1: PAV-AdaBoost lifts Cmass far above its first round; linear
    # AdaBoost "fails to boost with Cmass" (its alphas fall to 0)
    assert boosted["PAV-AdaBoost, Cmass"]["last"] > 3 * boosted["PAV-AdaBoost, Cmass"]["first"]
    assert boosted["linear AdaBoost, Cmass"]["best"] < 0.5 * boosted["PAV-AdaBoost, Cmass"]["last"]
    # 7.2: PAV-AdaBoost with Nscore peaks above linear AdaBoost without the xlap window
    assert boosted["PAV-AdaBoost, Nscore"]["best"] > boosted["linear AdaBoost, Nscore"]["best"]
