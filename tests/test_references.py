"""boostkit.references: every paper by key, the recipes' papers found, the bibliography page."""

from pathlib import Path

import pytest

from boostkit.plugins import get_registry
from boostkit.references import REFERENCES, Reference, cited

PAGE = Path(__file__).resolve().parents[1] / "docs" / "bibliography.md"


def test_every_first_party_recipe_cites_a_known_paper():
    papers = {name: recipe.paper for name, recipe in get_registry().algorithms().items()}
    assert {name: paper for name, paper in papers.items() if paper and not cited(paper)} == {}
    assert cited(papers["weightboost"]) == ("jin2003",)
    assert cited(papers["logitboost"]) == ("friedman2000",)


def test_the_bibliography_page_lists_every_reference_by_key():
    text = PAGE.read_text(encoding="utf-8")
    for key, reference in REFERENCES.items():
        assert f"| `{key}` | {reference.text()} |" in text


def test_a_key_is_a_surname_and_a_year():
    with pytest.raises(ValueError, match="key"):
        Reference("Jin 2003", "Jin, R.", "t", "v", 2003, "Jin 2003")
