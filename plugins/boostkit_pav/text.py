"""Term counts for the document-classification experiments (Wilbur et al. 2005, section 7).

A corpus becomes a (documents x terms) matrix of term counts over a vocabulary of the most
widespread terms. ``nscore`` and ``binary-naive-bayes`` read such counts and ``cmass`` works on
them as vectors, dense or as a scipy.sparse CSR matrix, which they never densify.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

import attrs
import numpy as np

__all__ = ["tokenize", "Vocabulary"]

_TOKEN = re.compile(r"[a-z][a-z0-9]+")
_SGML_ENTITY = re.compile(r"&#?\w+;")


def tokenize(text: str) -> list[str]:
    """Lower-cased words of two or more letters and digits, starting with a letter (SGML
    entities such as Reuters' end marker ``&#3;`` removed)."""
    return _TOKEN.findall(_SGML_ENTITY.sub(" ", text.lower()))


@attrs.frozen
class Vocabulary:
    """An ordered list of terms; column j of :meth:`counts` counts ``terms[j]``."""

    terms: tuple[str, ...]

    @classmethod
    def fit(cls, texts: Iterable[str], max_terms: int = 3000, min_documents: int = 2) -> Vocabulary:
        """The ``max_terms`` terms found in the most documents (at least ``min_documents``),
        ties broken alphabetically so the vocabulary does not depend on document order."""
        if max_terms < 1 or min_documents < 1:
            raise ValueError("max_terms and min_documents must be at least 1")
        document_frequency = Counter()
        for text in texts:
            document_frequency.update(set(tokenize(text)))
        ranked = sorted((term for term, df in document_frequency.items() if df >= min_documents),
                        key=lambda term: (-document_frequency[term], term))
        if not ranked:
            raise ValueError(f"no term occurs in {min_documents} or more documents")
        return cls(tuple(ranked[:max_terms]))

    def counts(self, texts: Sequence[str]) -> np.ndarray:
        """The (documents x terms) float64 matrix of term counts; other words are ignored."""
        index = {term: j for j, term in enumerate(self.terms)}
        rows, columns = [], []
        for row, text in enumerate(texts):
            found = [index[token] for token in tokenize(text) if token in index]
            rows.extend([row] * len(found))
            columns.extend(found)
        n_terms = len(self.terms)
        flat = np.asarray(rows, dtype=np.int64) * n_terms + np.asarray(columns, dtype=np.int64)
        return np.bincount(flat, minlength=len(texts) * n_terms).astype(np.float64).reshape(
            len(texts), n_terms)
