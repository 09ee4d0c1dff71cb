"""docs/bibliography.md is boostkit.references.REFERENCES, and sources and pages cite papers by it.

A page cites "[Jin et al. 2003](../bibliography.md#jin2003), eq. 4"; a docstring "Jin et al. 2003,
eq. 4". Neither names the file of a copy of a paper nor cites it by number ("000 eq. 6").
"""

import re
from pathlib import Path

from boostkit.references import REFERENCES

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "bibliography.md"
ROW = re.compile(r'^\| <a id="(?P<key>[^"]+)"></a>(?P<short>[^|]+) \| `(?P=key)` \| (?P<text>.+) \|$')

#: A paper's file name ("001_e064afeb8d6bf0ca.txt") or its number used as a citation ("000 eq. 6",
#: "(003; 004", "002's", "the slides 003 print"): 000-004 standing alone, not a digit group of a
#: number such as "1 000 000", "0.001", "2,000" or "#rounds-at-20-000-20".
FILE_NAME = re.compile(r"\b00[0-4]_[0-9a-f]{16}\b")
NUMBER = re.compile(r"(?<![\w.,#-])(?<!\d )00[0-4](?![\w-]|[.,]\d| \d{3})")


def expected_row(key: str) -> str:
    reference = REFERENCES[key]
    return f'| <a id="{key}"></a>{reference.short} | `{key}` | {reference.text()} |'


def test_the_page_lists_exactly_the_references_with_an_anchor_each():
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if ROW.match(line)]
    keys = [ROW.match(row)["key"] for row in rows]
    # The page's table is REFERENCES, one row per key (sorted by authors): regenerate a row from
    # expected_row(key) when a reference changes.
    assert sorted(keys) == sorted(REFERENCES), "the page's keys differ from REFERENCES"
    assert len(set(keys)) == len(keys)
    assert rows == [expected_row(key) for key in keys]
    assert keys == sorted(keys, key=lambda key: (REFERENCES[key].authors, REFERENCES[key].year))


def test_pages_link_to_anchors_the_bibliography_has():
    linked = set()
    for page in (ROOT / "docs").rglob("*.md"):
        linked |= set(re.findall(r"bibliography\.md#([\w-]+)", page.read_text(encoding="utf-8")))
    linked |= set(re.findall(r"bibliography\.md#([\w-]+)",
                             (ROOT / "README.md").read_text(encoding="utf-8")))
    assert linked and linked <= set(REFERENCES)


def cited_by_file_or_number(text: str) -> list[str]:
    return [m[0] for m in FILE_NAME.finditer(text)] + [m[0] for m in NUMBER.finditer(text)]


def test_the_pattern_finds_file_names_and_numbered_citations_but_not_numbers():
    assert cited_by_file_or_number("(001_e064afeb8d6bf0ca.txt)") == ["001_e064afeb8d6bf0ca"]
    for citation in ["(000 eq. 6)", "004 Fig. 2", "(003; 004, AOC*)", "002's advantage",
                     "(000 + 001)", "the slides 003 print", "(003, \"RankBoost\")"]:
        assert cited_by_file_or_number(citation), citation
    for number in ["1 000 000 x 20", "alpha = 0.001", "(#rounds-at-20-000-20)", "2 000 000 bytes",
                   "Jin et al. 2003, eq. 4", "10 000, 20 000"]:
        assert cited_by_file_or_number(number) == [], number


def test_no_source_or_page_cites_a_paper_by_file_name_or_number():
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    for folder in ("boostkit", "plugins", "benchmarks"):
        files += [path for pattern in ("*.py", "*.md", "*.json")
                  for path in (ROOT / folder).rglob(pattern)]
    found = {}
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if cited_by_file_or_number(line):
                found[f"{path.relative_to(ROOT)}:{number}"] = line.strip()
    assert found == {}, "cite papers by their short form (docs/bibliography.md)"
