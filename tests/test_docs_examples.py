"""Every python example of README.md and docs/ runs as written.

``tests/test_docs.py`` runs the runnable blocks of the plugin-author and user-guide pages it
lists (:data:`test_docs.PAGES`); this file runs those of every other page, README.md included,
with the same runner (one fresh interpreter per page, the page's blocks in order in one
namespace). Every page is covered by one of the two: a new page cannot be left out.

Before anything runs, every python block, run or not, is checked for names it uses that
nothing defines (an earlier block of the page, an import, an assignment, a builtin): an example
with an undefined ``X_train`` fails here even where it is only shown. A block that cannot run
here is listed in :data:`NOT_RUN` with the reason; a ``# not-run`` block elsewhere needs one too.
"""

from __future__ import annotations

import ast
import builtins
import sys
from pathlib import Path

import pytest

from boostkit.datasets import data_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_docs import (  # noqa: E402 - the shared block reader and runner
    NOT_RUN_MARKER,
    PAGES as PAGES_RUN_BY_TEST_DOCS,
    REPO,
    CodeBlock,
    code_blocks,
    run_blocks,
)

ALL_PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
PAGES = [page for page in ALL_PAGES if page not in PAGES_RUN_BY_TEST_DOCS]

#: Blocks shown but not run, by page and a line of the block: why they cannot run here.
NOT_RUN = {
    ("docs/distributed.md", 'client = Client("scheduler-address:8786")'):
        "connects to a Dask scheduler at an address of the reader's own cluster",
    ("docs/cookbook.md", "from boostkit.metrics import accuracy, stratified_folds"):
        "the study behind a table: 5 folds x 2 datasets x 4 fits of 300 rounds, minutes",
    ("docs/plugins.md", "registry.add_capability(boostkit.Capability("):
        "the body of a plugin's boostkit_register_components hook (registry is its argument)",
    ("docs/plugins.md", 'pytest_plugins = ["boostkit.testing"]'):
        "a plugin's conftest.py, which pytest loads; not a script",
    ("docs/plugins.md", "def test_my_calibration():"):
        "a test of a plugin's own 'my-calibration', which is not installed here",
    ("docs/statistics.md", 'with ResultStore("keel-study/study.sqlite", readonly=True) as store:'):
        "reads the results database of a study run before (keel-study/study.sqlite)",
}

#: Pages whose examples read datasets that are not bundled: run with the data directory
#: (``boostkit.datasets.data_dir()``: ``BOOSTKIT_DATA`` or ``shared/datasets``), else skipped.
NEEDS_DATA = {
    "docs/algorithms/onepass.md": "reads the Reuters corn texts, which are not bundled",
}

#: Pages whose examples take longer than the default run allows: run with ``-m slow``.
SLOW_PAGES = {
    "docs/dropin.md": "100 depth-2 trees on digits and AdaBoost.R2 on diabetes, about 12 s",
    "docs/algorithms/weightboost.md": "six fits of up to 100 WeightBoost rounds, about 10 s",
}


def _name(page: Path) -> str:
    return page.relative_to(REPO).as_posix() if page.is_relative_to(REPO) else page.name


def _not_run_reason(block: CodeBlock) -> str | None:
    for (page, line), reason in NOT_RUN.items():
        if _name(block.page) == page and line in block.code.splitlines():
            return reason
    return None


def _python_blocks(page: Path) -> list[CodeBlock]:
    return [block for block in code_blocks(page)
            if block.language == "python" and block.excerpt_of is None]


# -- undefined names ----------------------------------------------------------------------------


class _Names(ast.NodeVisitor):
    """The names a module binds (anywhere: assignments, imports, definitions, arguments, loop
    and comprehension variables) and the names it reads at module level before binding them."""

    def __init__(self):
        self.bound: set[str] = set()
        self.read: list[tuple[str, int]] = []

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.read.append((node.id, node.lineno))
        else:
            self.bound.add(node.id)

    def visit_alias(self, node):
        self.bound.add((node.asname or node.name).split(".")[0])

    def visit_arg(self, node):
        self.bound.add(node.arg)

    def _definition(self, node):
        self.bound.add(node.name)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_ExceptHandler(self, node):
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)


def undefined_names(blocks: list[CodeBlock]) -> list[str]:
    """``"page:line: name"`` for each name read in ``blocks`` that no block binds."""
    known = set(dir(builtins)) | {"__name__", "__file__"}
    found = []
    for block in blocks:
        code = block.code.removeprefix(NOT_RUN_MARKER)
        names = _Names()
        names.visit(ast.parse(code, filename=_name(block.page)))
        known |= names.bound
        found += [f"{_name(block.page)}:{block.line + line - 1}: {name}"
                  for name, line in names.read if name not in known]
    return found


@pytest.mark.parametrize("page", ALL_PAGES, ids=_name)
def test_examples_use_no_undefined_name(page):
    assert undefined_names(_python_blocks(page)) == []


def test_the_undefined_name_check_can_fail(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nimport boostkit\nmodel = boostkit.Booster('adaboost')\n```\n\n"
                    "```python\nfor name in ['a']:\n    print(name)\n"
                    "model.fit(X_train, y_train)\n```\n", encoding="utf-8")
    assert undefined_names(code_blocks(page)) == ["page.md:9: X_train", "page.md:9: y_train"]


# -- the blocks that do not run are listed ------------------------------------------------------


@pytest.mark.parametrize("page", ALL_PAGES, ids=_name)
def test_a_block_that_does_not_run_says_why(page):
    for block in _python_blocks(page):
        marked = block.code.startswith(NOT_RUN_MARKER)
        reason = _not_run_reason(block)
        assert marked == (reason is not None), (
            f"{block.where}: a '# not-run' block must be listed in NOT_RUN with the reason it "
            "cannot run here, and a listed block must be marked '# not-run'")


def test_every_page_is_run_by_one_of_the_two_tests():
    assert set(PAGES) | set(PAGES_RUN_BY_TEST_DOCS) == set(ALL_PAGES)
    assert not set(PAGES) & set(PAGES_RUN_BY_TEST_DOCS)


# -- running ------------------------------------------------------------------------------------


def _run_marks(page: Path):
    reason = SLOW_PAGES.get(_name(page))
    return [pytest.mark.slow] if reason else []


RUN_PAGES = [pytest.param(page, id=_name(page), marks=_run_marks(page)) for page in PAGES
             if any(block.runnable for block in _python_blocks(page))]


@pytest.mark.parametrize("page", RUN_PAGES)
def test_runnable_blocks_run(page, tmp_path):
    env = {}
    if _name(page) in NEEDS_DATA:
        directory = data_dir()
        if directory is None:
            pytest.skip(f"{_name(page)} {NEEDS_DATA[_name(page)]}; set BOOSTKIT_DATA to run it")
        env["BOOSTKIT_DATA"] = str(directory)
    run_blocks([block for block in _python_blocks(page) if block.runnable], tmp_path, **env)
