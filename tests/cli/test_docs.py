"""The design notes live in the repository: every reference into docs/ names a heading that exists,
and nothing refers to notes outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = [*sorted((REPO / "components").rglob("*.py")), *sorted((REPO / "docs").glob("*.md")),
           REPO / "README.md", REPO / "pyproject.toml", REPO / "Makefile", REPO / "infra" / "__main__.py",
           REPO / "policy" / "__main__.py"]
LINK = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def anchors(markdown: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", markdown.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_references_into_docs_name_existing_headings(source: Path) -> None:
    for name, anchor in LINK.findall(source.read_text()):
        target = REPO / "docs" / name
        assert target.is_file(), f"{source.name}: docs/{name} does not exist"
        assert not anchor or anchor in anchors(target), f"{source.name}: docs/{name}#{anchor} names no heading"


def test_nothing_refers_to_notes_outside_the_repository() -> None:
    files = [p for p in REPO.rglob("*") if p.is_file() and p.suffix in {".py", ".md", ".toml", ".yaml", ".yml", ".json"}
             and not {".git", ".venv", ".venv-core"} & set(p.relative_to(REPO).parts) and "egg-info" not in str(p)]
    outside = re.compile(r"FACTS\.md|ARCHITECTURE\.md|\.\./shared")
    assert [str(p.relative_to(REPO)) for p in files if outside.search(p.read_text(errors="ignore"))] == []


def test_the_link_check_sees_a_broken_anchor(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n## The one-way flow\n")
    assert "the-one-way-flow" in anchors(notes)
    assert "the-one-way-flows" not in anchors(notes)
