"""The plugin documentation stays true to the code (datasette's documentation meta-tests).

* Every hook specification has a docstring and a section of ``docs/hooks.md`` whose heading shows
  its exact argument list and whose flavour line says whether it is firstresult.
* Every hook is exercised by some test: its name appears in the tests tree outside this file.
* Code blocks in ``docs/plugins.md``, ``docs/hooks.md``, ``docs/cookbook.md``,
  ``docs/getting-started.md`` and ``docs/tabular.md`` follow one convention:

  - a fenced ``python`` block is *runnable*: a page's runnable blocks are run in order, in one
    namespace, in a fresh interpreter whose working directory is a temporary directory and
    whose path holds the example plugin's package (``tests/third_party/example_plugin``);
  - a block whose first line is ``# excerpt: <path>`` (path relative to the repository) quotes
    that file: the rest of the block must appear in it verbatim;
  - a ``python`` block whose first line is ``# not-run`` is only shown.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from boostkit import hookspecs

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
HOOKS_PAGE = REPO / "docs" / "hooks.md"
PLUGINS_PAGE = REPO / "docs" / "plugins.md"
EXAMPLE_PACKAGE = TESTS / "third_party" / "example_plugin" / "boostkit_example"

EXCERPT_MARKER = "# excerpt: "
NOT_RUN_MARKER = "# not-run"
HOOK_HEADING = re.compile(r"^### (boostkit_\w+)\((.*)\)\s*$")
FENCE = re.compile(r"^(\s*)```(\w*)")


def _hookspecs() -> dict[str, object]:
    specs = {}
    for group in (hookspecs.DiscoverySpecs, hookspecs.RoundSpecs):
        for name, function in vars(group).items():
            if hasattr(function, f"{hookspecs.PROJECT}_spec"):
                specs[name] = function
    return specs


HOOKSPECS = _hookspecs()


@attrs.frozen
class CodeBlock:
    page: Path
    line: int  # line of the first code line (after the opening fence), 1-based
    language: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def excerpt_of(self) -> str | None:
        first = self.code.split("\n", 1)[0]
        return first[len(EXCERPT_MARKER):].strip() if first.startswith(EXCERPT_MARKER) else None

    @property
    def runnable(self) -> bool:
        return (self.language == "python" and self.excerpt_of is None
                and not self.code.startswith(NOT_RUN_MARKER))


def code_blocks(page: Path) -> list[CodeBlock]:
    """The fenced code blocks of a Markdown page (an indented fence's indent is removed)."""
    blocks, lines = [], page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, language = opening.groups()
        start = i + 1
        i = start
        while not lines[i].strip().startswith("```"):
            i += 1
        code = "\n".join(line[len(indent):] for line in lines[start:i]) + "\n"
        blocks.append(CodeBlock(page, start + 1, language, code))
        i += 1
    return blocks


def hook_sections() -> dict[str, tuple[str, str]]:
    """``{hook name: (argument list as shown, section text)}`` from the ``###`` headings."""
    sections, current, in_code = {}, None, False
    for line in HOOKS_PAGE.read_text(encoding="utf-8").splitlines():
        in_code ^= FENCE.match(line) is not None
        heading = None if in_code else HOOK_HEADING.match(line)
        if heading:
            current = heading.group(1)
            assert current not in sections, f"docs/hooks.md has two sections for {current}"
            sections[current] = (heading.group(2), "")
        elif line.startswith("#") and not in_code:
            current = None
        elif current is not None:
            arguments, text = sections[current]
            sections[current] = (arguments, text + line + "\n")
    return sections


# -- hooks -------------------------------------------------------------------------------------


@pytest.mark.parametrize("hook", sorted(HOOKSPECS))
def test_hookspec_has_a_docstring(hook):
    assert inspect.getdoc(HOOKSPECS[hook]), f"hookspec {hook} has no docstring"


@pytest.mark.parametrize("hook", sorted(HOOKSPECS))
def test_hook_section_shows_the_spec_arguments(hook):
    sections = hook_sections()
    assert hook in sections, f"docs/hooks.md has no '### {hook}(...)' section"
    shown = [a.strip() for a in sections[hook][0].split(",") if a.strip()]
    declared = [p for p in inspect.signature(HOOKSPECS[hook]).parameters if p != "self"]
    assert shown == declared, f"docs/hooks.md shows {hook}({', '.join(shown)})"


@pytest.mark.parametrize("hook", sorted(HOOKSPECS))
def test_hook_section_states_the_flavour(hook):
    text = hook_sections()[hook][1]
    flavour = [line for line in text.splitlines() if line.startswith("**Flavour:**")]
    assert len(flavour) == 1, f"the {hook} section needs one '**Flavour:**' line"
    firstresult = getattr(HOOKSPECS[hook], f"{hookspecs.PROJECT}_spec")["firstresult"]
    assert ("firstresult" in flavour[0]) == firstresult, flavour[0]


def test_hooks_page_documents_no_other_hooks():
    assert set(hook_sections()) == set(HOOKSPECS)


@pytest.mark.parametrize("hook", sorted(HOOKSPECS))
def test_hook_is_exercised_by_a_test(hook):
    this_file = Path(__file__).resolve()
    users = [
        path for path in TESTS.rglob("*.py")
        if path.resolve() != this_file and hook in path.read_text(encoding="utf-8")
    ]
    assert users, f"no test under tests/ mentions {hook}"


# -- code blocks -------------------------------------------------------------------------------

PAGES = [PLUGINS_PAGE, HOOKS_PAGE, REPO / "docs" / "cookbook.md", REPO / "docs" / "getting-started.md",
         REPO / "docs" / "tabular.md", REPO / "docs" / "distributed.md"]
EXCERPTS = [block for page in PAGES for block in code_blocks(page) if block.excerpt_of]


@pytest.mark.parametrize("block", EXCERPTS, ids=[block.where for block in EXCERPTS])
def test_excerpt_is_verbatim(block):
    source = REPO / block.excerpt_of
    assert source.is_file(), f"{block.where} quotes {block.excerpt_of}, which does not exist"
    quoted = block.code.split("\n", 1)[1]
    text = source.read_text(encoding="utf-8")
    if quoted not in text:
        lines = text.splitlines()
        stale = next((line for line in quoted.splitlines() if line not in lines), None)
        pytest.fail(
            f"{block.where} is no longer an excerpt of {block.excerpt_of}; update the page "
            f"from the source (first line not found there: {stale!r})"
        )


# Runs each block as if it were written at its place in the page, so a traceback shows the
# page's own line.
RUNNER = r"""
import json
import sys

namespace = {"__name__": "__main__"}
for page, line, code in json.load(open(sys.argv[1], encoding="utf-8")):
    exec(compile("\n" * (line - 1) + code, page, "exec"), namespace)
"""


def run_blocks(blocks: list[CodeBlock], tmp_path: Path, **env_vars: str) -> None:
    """Run ``blocks`` in order in one namespace, in a fresh interpreter (no ``BOOSTKIT_*``
    variable but ``env_vars``) whose working directory is a temporary directory; fail the test
    with the traceback if one raises."""
    # A copy of the example package, so numba's cache is written outside the repository.
    shutil.copytree(EXAMPLE_PACKAGE, tmp_path / "path" / EXAMPLE_PACKAGE.name,
                    ignore=shutil.ignore_patterns("__pycache__"))
    blocks_file = tmp_path / "blocks.json"
    blocks_file.write_text(json.dumps([[str(b.page), b.line, b.code] for b in blocks]),
                           encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOSTKIT_")}
    env.update(env_vars)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path / "path"), env.get("PYTHONPATH")]))
    work = tmp_path / "work"
    work.mkdir()
    completed = subprocess.run([sys.executable, "-c", RUNNER, str(blocks_file)], cwd=work,
                               env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        pytest.fail(f"a runnable block of {blocks[0].page.name} failed:\n{completed.stderr}",
                    pytrace=False)


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_runnable_blocks_run(page, tmp_path):
    blocks = [block for block in code_blocks(page) if block.runnable]
    assert blocks, f"{page.name} has no runnable python block"
    run_blocks(blocks, tmp_path)
