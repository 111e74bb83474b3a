"""The pull-request comment `spotkube plan --diff REF --format markdown` prints: a summary table first,
each stack's diff and plan under `<details>`, within GitHub's 65,536 characters for any number of
stacks, naming each stack whose plan it leaves out and where to read it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import pytest

from spotkube.cli.plan_comment import ARTIFACT, GITHUB_COMMENT_LIMIT, comment
from spotkube.components.offline import StackRun
from spotkube.platform.project import Project
from spotkube.review.plan_diff import plan_diff
from spotkube.review.plan_document import PlanDocument
from spotkube.review.program_review import stack_document


@pytest.fixture(scope="module")
def shipped(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> list[PlanDocument]:
    """The shipped stacks' plans, one document each."""
    return [stack_document(shipped_run(stack)) for stack in repo_project.stacks()]


def stacks(documents: list[PlanDocument], count: int) -> list[PlanDocument]:
    """`count` stacks, each a shipped stack's plan under a name of its own."""
    picked = [documents[i % len(documents)] for i in range(count)]
    return [dataclasses.replace(d, stack=f"team{i:03d}-{d.stack}") for i, d in enumerate(picked)]


def summary_rows(text: str) -> list[str]:
    table = text.split("\n\n", 2)[1].splitlines()
    return [row.split(" | ")[0].removeprefix("| ") for row in table[2:]]


def in_full(text: str, document: PlanDocument) -> bool:
    return f"### {document.title} ({document.cloud}, {document.region})" in text


def test_ten_stacks_fit_with_the_changed_ones_first_and_every_left_out_plan_named(
        shipped: list[PlanDocument]) -> None:
    ten = stacks(shipped, 10)
    base = [d.to_json(details=True) for d in ten[5:]]  # the first five are new in this pull request

    text = comment(plan_diff(base, [d.to_json(details=True) for d in ten]), ten, "origin/main", strict=True)

    assert len(text) <= GITHUB_COMMENT_LIMIT
    assert text.startswith("## spotkube plan: 10 stack(s), changes since `origin/main`\n\n| stack | changes |")
    rows = summary_rows(text)
    assert ten[:5] and rows == [d.stack for d in ten]  # the five added first, in order, then the five unchanged
    assert all(f"| {d.stack} | added |" in text for d in ten[:5])
    for document in ten:
        assert f"<summary><b>{document.stack}</b>: " in text
    left_out = [d for d in ten if not in_full(text, d)]
    assert left_out and len(left_out) < len(ten)  # some plans fit whole, the rest are named
    (note,) = [line for line in text.splitlines() if line.startswith("**Not in this comment**")]
    assert ARTIFACT in note
    assert re.findall(r"`(team\d{3}-[a-z0-9-]+)`", note) == [d.stack for d in left_out]


def test_any_number_of_stacks_fits_and_says_how_many_the_table_leaves_out(shipped: list[PlanDocument]) -> None:
    many = stacks(shipped, 1200)

    text = comment([], many, "origin/main", strict=False)

    assert len(text) <= GITHUB_COMMENT_LIMIT
    rows = summary_rows(text)
    assert 0 < len(rows) < len(many)
    (more,) = [row for row in rows if row.startswith("… ")]
    unlisted = int(more.split()[1])
    assert len(rows) - 1 + unlisted == len(many)
    assert f"the {unlisted} stack(s) not in the table" in text


def test_the_verdict_column_is_strict_s_and_a_failing_stack_comes_before_an_unchanged_one(
        shipped: list[PlanDocument]) -> None:
    warned = next(d for d in shipped if d.acknowledged)
    # The same stack once with its acknowledgements, once without them: its warnings then open.
    quiet = dataclasses.replace(warned, stack="quiet")
    loud = dataclasses.replace(warned, stack="loud", acknowledgements=())
    assert quiet.warnings == [] and loud.warnings

    strict = comment([], [quiet, loud], "main", strict=True)
    lenient = comment([], [quiet, loud], "main", strict=False)

    assert summary_rows(strict) == ["loud", "quiet"]
    assert f"| loud | unchanged | - | - | **fails: {len(loud.warnings)} warning(s)** |" in strict
    assert f"| loud | unchanged | - | - | pass, {len(loud.warnings)} warning(s) |" in lenient
    assert "| quiet | unchanged | - | - | pass |" in strict
