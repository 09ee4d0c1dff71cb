"""Term counts of texts as a scipy.sparse CSR matrix: the input of Barutcuoglu et al. 2007's Reuters
experiments.

Barutcuoglu et al. 2007, section 4: "the text was converted into lower case ... a base classifier
for each stem of length at most 5; ... the confidence of a base classifier was taken to be the
number of times its stem appeared in the text". The paper does not say which stemmer; here a
word's stem is its first ``prefix_length`` letters (words are runs of the letters a-z), so
"corn", "cornered" and "corners" share "corne". ``prefix_length=None`` keeps whole words.
"""

from __future__ import annotations

import re
from typing import Iterable

import numpy as np

_WORD = re.compile(r"[a-z]+")


def tokenize(text: str, prefix_length: int | None = 5) -> list[str]:
    """The stems of ``text``: lower-cased runs of a-z, cut to ``prefix_length`` letters."""
    words = _WORD.findall(text.lower())
    return words if prefix_length is None else [w[:prefix_length] for w in words]


class TermCounts:
    """Fit a vocabulary of stems on training texts; turn texts into CSR term-count matrices.

    Parameters
    ----------
    prefix_length:
        Letters kept of each word (the paper's "stem of length at most 5"); ``None``: whole words.
    min_documents:
        Keep stems that occur in at least this many training texts.

    Attributes (after :meth:`fit`): ``vocabulary_`` (stem -> column) and ``terms_`` (column ->
    stem, sorted). Stems unseen in training are dropped by :meth:`transform`.
    """

    def __init__(self, prefix_length: int | None = 5, min_documents: int = 1):
        if prefix_length is not None and prefix_length < 1:
            raise ValueError(f"prefix_length must be None or >= 1, got {prefix_length!r}")
        if min_documents < 1:
            raise ValueError(f"min_documents must be >= 1, got {min_documents!r}")
        self.prefix_length = prefix_length
        self.min_documents = min_documents

    def fit(self, texts: Iterable[str]) -> TermCounts:
        document_frequency: dict[str, int] = {}
        for text in texts:
            for stem in set(tokenize(text, self.prefix_length)):
                document_frequency[stem] = document_frequency.get(stem, 0) + 1
        self.terms_ = sorted(s for s, f in document_frequency.items() if f >= self.min_documents)
        self.vocabulary_ = {stem: j for j, stem in enumerate(self.terms_)}
        return self

    def transform(self, texts: Iterable[str]):
        """CSR float64 matrix (texts x stems) of counts, with sorted indices."""
        from scipy import sparse

        if not hasattr(self, "vocabulary_"):
            raise AttributeError("TermCounts is not fitted: call fit(texts) first")
        indptr, indices, counts = [0], [], []
        for text in texts:
            columns = [self.vocabulary_[s] for s in tokenize(text, self.prefix_length)
                       if s in self.vocabulary_]
            unique, count = np.unique(np.asarray(columns, dtype=np.int64), return_counts=True)
            indices.append(unique)
            counts.append(count)
            indptr.append(indptr[-1] + unique.shape[0])
        matrix = sparse.csr_matrix(
            (np.concatenate(counts).astype(np.float64) if counts else np.empty(0),
             np.concatenate(indices) if indices else np.empty(0, dtype=np.int64),
             np.asarray(indptr)),
            shape=(len(indptr) - 1, len(self.terms_)),
        )
        matrix.sort_indices()
        return matrix

    def fit_transform(self, texts) -> object:
        texts = list(texts)
        return self.fit(texts).transform(texts)
