"""The papers boostkit cites, in one place: key -> authors, title, venue and year.

Docstrings, pages and reports cite a paper by its key ("Jin et al. 2003, eq. 4" is
``REFERENCES["jin2003"]``; ``docs/bibliography.md`` lists them all). A recipe's ``paper``
text names its paper in free form (the short form, or authors and year, with the place:
"Wilbur et al. 2005, section 3.2"); :func:`cited` finds the keys such a text refers to, so a
report can print full references.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["REFERENCES", "Reference", "cited"]


@attrs.frozen
class Reference:
    """One paper: ``authors`` as printed ("Jin, R., Liu, Y., ..."), ``short`` the in-text
    form ("Jin et al. 2003"), and ``patterns``: regular expressions that find it in a recipe's
    free-form ``paper`` text."""

    key: str = attrs.field(validator=attrs.validators.matches_re(r"[a-z]+\d{4}[a-z]?"))
    authors: str
    title: str
    venue: str
    year: int
    short: str
    patterns: tuple[str, ...] = attrs.field(default=(), converter=tuple)

    def text(self) -> str:
        """The full reference: "Authors (year). Title. Venue."."""
        return f"{self.authors} ({self.year}). {self.title}. {self.venue}."


def _table(*references: Reference) -> dict[str, Reference]:
    return {reference.key: reference for reference in references}


REFERENCES: dict[str, Reference] = _table(
    # The texts the plugins implement.
    Reference("wilbur2005", "Wilbur, W. J., Yeganova, L., & Kim, W.",
              "The synergy between PAV and AdaBoost", "Machine Learning 61(1-3), 71-103", 2005,
              "Wilbur et al. 2005", (r"Wilbur",)),
    Reference("jin2003", "Jin, R., Liu, Y., Si, L., Carbonell, J., & Hauptmann, A. G.",
              "A new boosting algorithm using input-dependent regularizer",
              "Proceedings of the 20th International Conference on Machine Learning (ICML)",
              2003, "Jin et al. 2003", (r"Jin et al",)),
    Reference("barutcuoglu2007", "Barutcuoglu, Z., Long, P. M., & Servedio, R. A.",
              "One-pass boosting", "Advances in Neural Information Processing Systems 20 (NIPS)",
              2007, "Barutcuoglu et al. 2007",
              (r"Barutcuoglu",)),
    Reference("yoder2011", "Yoder, J.", "AdaBoost and RankBoost",
              "Seminar slides, Robot Vision Lab, School of Electrical and Computer Engineering, "
              "Purdue University", 2011, "Yoder 2011",
              (r"Yoder",)),
    Reference("scholz2006", "Scholz, M.", "Boosting in PN spaces",
              "Proceedings of the 17th European Conference on Machine Learning (ECML), "
              "LNCS 4212, 377-388", 2006, "Scholz 2006",
              (r"Scholz",)),
    # The algorithms the first-party recipes take from the literature.
    Reference("freund1997", "Freund, Y., & Schapire, R. E.",
              "A decision-theoretic generalization of on-line learning and an application to "
              "boosting", "Journal of Computer and System Sciences 55(1), 119-139", 1997,
              "Freund & Schapire 1997", (r"Freund & Schapire \(1997\)",)),
    Reference("freund2003", "Freund, Y., Iyer, R., Schapire, R. E., & Singer, Y.",
              "An efficient boosting algorithm for combining preferences",
              "Journal of Machine Learning Research 4, 933-969", 2003, "Freund et al. 2003",
              (r"Freund et al\.? \(2003\)", r"RankBoost")),
    Reference("schapire1999", "Schapire, R. E., & Singer, Y.",
              "Improved boosting algorithms using confidence-rated predictions",
              "Machine Learning 37(3), 297-336", 1999, "Schapire & Singer 1999",
              (r"Schapire & Singer \(1999\)",)),
    Reference("schapire2000", "Schapire, R. E., & Singer, Y.",
              "BoosTexter: a boosting-based system for text categorization",
              "Machine Learning 39(2-3), 135-168", 2000, "Schapire & Singer 2000",
              (r"Schapire & Singer \(2000\)", r"BoosTexter")),
    Reference("friedman2000", "Friedman, J., Hastie, T., & Tibshirani, R.",
              "Additive logistic regression: a statistical view of boosting",
              "The Annals of Statistics 28(2), 337-407 (technical report 1998)", 2000,
              "Friedman et al. 2000",
              (r"Friedman, Hastie & Tibshirani", r"Friedman et al\.? \(1998\)")),
    Reference("ratsch1998", "Rätsch, G., Onoda, T., & Müller, K.-R.",
              "An improvement of AdaBoost to avoid overfitting",
              "Proceedings of the International Conference on Neural Information Processing "
              "(ICONIP), 506-509", 1998, "Rätsch et al. 1998",
              (r"R(ae|ä|a)tsch et al\.? \(1998\)",)),
    Reference("domingo2000", "Domingo, C., & Watanabe, O.",
              "MadaBoost: a modification of AdaBoost",
              "Proceedings of the 13th Annual Conference on Computational Learning Theory "
              "(COLT), 180-189", 2000, "Domingo & Watanabe 2000", (r"Domingo & Watanabe",)),
    Reference("zhu2009", "Zhu, J., Zou, H., Rosset, S., & Hastie, T.", "Multi-class AdaBoost",
              "Statistics and Its Interface 2(3), 349-360", 2009, "Zhu et al. 2009",
              (r"Zhu, Zou, Rosset & Hastie",)),
    Reference("kegl2013", "Kégl, B.", "The return of AdaBoost.MH: multi-class Hamming trees",
              "arXiv:1312.6086; International Conference on Learning Representations (ICLR) "
              "2014", 2013, "Kégl 2013", (r"K[ée]gl \(2013\)",)),
    Reference("mason2000", "Mason, L., Baxter, J., Bartlett, P., & Frean, M.",
              "Boosting algorithms as gradient descent",
              "Advances in Neural Information Processing Systems 12 (NIPS)", 2000,
              "Mason et al. 2000", (r"Mason, Baxter, Bartlett & Frean", r"AnyBoost")),
    Reference("collins2002", "Collins, M., Schapire, R. E., & Singer, Y.",
              "Logistic regression, AdaBoost and Bregman distances",
              "Machine Learning 48(1-3), 253-285", 2002, "Collins et al. 2002",
              (r"Collins, Schapire & Singer",)),
    Reference("mccallum1998", "McCallum, A., & Nigam, K.",
              "A comparison of event models for naive Bayes text classification",
              "AAAI-98 Workshop on Learning for Text Categorization", 1998,
              "McCallum & Nigam 1998", (r"McCallum & Nigam",)),
    # Comparing classifiers over many datasets (boostkit.study).
    Reference("demsar2006", "Demšar, J.",
              "Statistical comparisons of classifiers over multiple data sets",
              "Journal of Machine Learning Research 7, 1-30", 2006, "Demšar 2006",
              (r"Dem[šs]ar \(?2006",)),
    Reference("benavoli2017", "Benavoli, A., Corani, G., Demšar, J., & Zaffalon, M.",
              "Time for a change: a tutorial for comparing multiple classifiers through "
              "Bayesian analysis", "Journal of Machine Learning Research 18(77), 1-36", 2017,
              "Benavoli et al. 2017", (r"Benavoli",)),
    Reference("friedman1937", "Friedman, M.",
              "The use of ranks to avoid the assumption of normality implicit in the analysis "
              "of variance", "Journal of the American Statistical Association 32(200), 675-701",
              1937, "Friedman 1937"),
    Reference("iman1980", "Iman, R. L., & Davenport, J. M.",
              "Approximations of the critical region of the Friedman statistic",
              "Communications in Statistics - Theory and Methods 9(6), 571-595", 1980,
              "Iman & Davenport 1980", (r"Iman", )),
    Reference("nemenyi1963", "Nemenyi, P. B.", "Distribution-free multiple comparisons",
              "PhD thesis, Princeton University", 1963, "Nemenyi 1963"),
    Reference("wilcoxon1945", "Wilcoxon, F.", "Individual comparisons by ranking methods",
              "Biometrics Bulletin 1(6), 80-83", 1945, "Wilcoxon 1945"),
    Reference("holm1979", "Holm, S.", "A simple sequentially rejective multiple test procedure",
              "Scandinavian Journal of Statistics 6(2), 65-70", 1979, "Holm 1979"),
    Reference("alcala2011", "Alcalá-Fdez, J., Fernández, A., Luengo, J., Derrac, J., García, S., "
              "Sánchez, L., & Herrera, F.",
              "KEEL data-mining software tool: data set repository, integration of algorithms "
              "and experimental analysis framework",
              "Journal of Multiple-Valued Logic and Soft Computing 17(2-3), 255-287", 2011,
              "Alcalá-Fdez et al. 2011", (r"KEEL",)),
)


def cited(text: str) -> tuple[str, ...]:
    """The keys of :data:`REFERENCES` that ``text`` (a recipe's ``paper``) refers to, in the
    order of :data:`REFERENCES`."""
    return tuple(key for key, reference in REFERENCES.items()
                 if any(re.search(pattern, text or "") for pattern in reference.patterns))
