"""The pull-request comment `spotkube plan --diff REF --format markdown` prints, whole and within GitHub's limit.

Why one command: the workflow used to glue the diff to the whole plan and cut the text at 60,000
characters, so a reviewer of ten stacks read half of them and no word of what was cut. Here the comment
is built to fit: a summary table first (per stack: what changes, the cost delta, the `--strict` verdict),
then each stack's diff and plan collapsed under `<details>`. Stacks are taken in order of what a
reviewer needs (changed, then failing, then the rest) while they fit; a stack whose plan doesn't fit
gets its diff alone, one whose diff doesn't fit either only its summary row, and the comment ends by
naming each such stack and where its whole plan is (the job's artifact). Even the summary table is
budgeted, so the comment fits for any number of stacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from spotkube.cli import diff_views, plan_views
from spotkube.cli.cost_views import money
from spotkube.cli.markdown_cells import GITHUB_COMMENT_LIMIT, cell
from spotkube.review.plan_diff import CostDelta, StackDiff
from spotkube.review.plan_document import PlanDocument

#: Where the workflow keeps each stack's whole plan, for the comment to point at.
ARTIFACT = "the `spotkube-plan` artifact of this run (spotkube-plan.md)"


def _changes(diff: StackDiff | None) -> str:
    if diff is None:
        return "unchanged"
    if diff.status != "changed":
        return diff.status
    parts = [f"{len(items)} {label}" for label, items in (("pool(s)", diff.pools), ("security", diff.posture),
                                                            ("resource(s)", diff.resources)) if items]
    cost = diff.cost is not None and diff.cost.changed
    return ", ".join(parts) + (" changed" if parts else "cost changed" if cost else "unchanged")


def _delta(cost: CostDelta | None, figure: str) -> str:
    if cost is None:
        return "-"
    delta = cost.delta(figure)
    if delta is None:
        return "not known"
    return "±$0.00" if delta == 0 else ("+" if delta > 0 else "-") + money(Decimal(str(abs(delta))))


def verdict(documents: Sequence[PlanDocument], strict: bool) -> str:
    """`pass`, `fails: 2 warnings` (under --strict), `unsafe: 1 error`, or `-` for a stack removed."""
    if not documents:
        return "-"
    errors = sum(len(d.errors) for d in documents)
    warnings = sum(len(d.warnings) for d in documents)
    if errors:
        return f"unsafe: {errors} error(s)"
    if warnings and strict:
        return f"fails: {warnings} warning(s)"
    return f"pass, {warnings} warning(s)" if warnings else "pass"


def _bold_failure(text: str) -> str:
    return f"**{text}**" if text.startswith(("unsafe", "fails")) else text


def _stack_names(diffs: Sequence[StackDiff], documents: Sequence[PlanDocument]) -> list[str]:
    return list(dict.fromkeys([*(d.stack for d in documents), *(d.stack for d in diffs)]))


def _body(markdown: str) -> str:
    """A rendered block without its `## ...` heading (the comment has one of its own)."""
    lines = markdown.splitlines()
    return "\n".join(lines[1:] if lines and lines[0].startswith("## ") else lines).strip()


def comment(diffs: Sequence[StackDiff], documents: Sequence[PlanDocument], ref: str, *, strict: bool,
            limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """The whole comment, at most `limit` characters."""
    by_stack = {d.stack: d for d in diffs}
    docs: dict[str, list[PlanDocument]] = {}
    for document in documents:
        docs.setdefault(document.stack, []).append(document)
    names = _stack_names(diffs, documents)
    rows = {name: f"| {cell(name)} | {cell(_changes(by_stack.get(name)))} | "
                  f"{_delta((by_stack.get(name) or _NO_DIFF).cost, 'idleFloor')} | "
                  f"{_delta((by_stack.get(name) or _NO_DIFF).cost, 'scenario')} | "
                  f"{_bold_failure(verdict(docs.get(name, []), strict))} |" for name in names}

    def urgency(name: str) -> tuple[int, int]:
        changed = _changes(by_stack.get(name)) != "unchanged"
        failing = verdict(docs.get(name, []), strict).startswith(("unsafe", "fails"))
        return (0 if changed else 1 if failing else 2, names.index(name))

    order = sorted(names, key=urgency)
    head = [f"## spotkube plan: {len(names)} stack(s), changes since `{ref}`", "",
            "| stack | changes | idle floor Δ / month | scenario Δ / month | "
            f"{'`--strict`' if strict else 'verdict'} |", "|---|---|---|---|---|"]
    sections = {name: _section(name, by_stack.get(name), docs.get(name, []), ref, strict) for name in order}
    short = {name: _section(name, by_stack.get(name), [], ref, strict, plan_left_out=True) for name in order}

    def render(listed: list[str], full: set[str], shortened: set[str]) -> str:
        out = [*head, *(rows[n] for n in listed)]
        if len(listed) < len(order):
            out.append(f"| … {len(order) - len(listed)} more stack(s) | see {ARTIFACT} | | | |")
        out.append("")
        out += [sections[n] if n in full else short[n] for n in order if n in full | shortened]
        missing = [n for n in listed if n not in full]
        unlisted = len(order) - len(listed)
        if missing or unlisted:
            named = [*(f"`{n}`" for n in missing), *([f"the {unlisted} stack(s) not in the table"] if unlisted else [])]
            out += ["", f"**Not in this comment** (GitHub takes at most {GITHUB_COMMENT_LIMIT:,} characters): the "
                        f"whole plan of {', '.join(named)}; read it in {ARTIFACT}, or run "
                        "`spotkube plan --stack NAME --format markdown`."]
        return "\n".join(out).rstrip() + "\n"

    listed = list(order)
    while listed and len(render(listed, set(), set())) > limit:
        listed.pop()
    full: set[str] = set()
    shortened: set[str] = set()
    for name in order:
        if name not in listed:
            break
        if len(render(listed, full | {name}, shortened)) <= limit:
            full.add(name)
        elif len(render(listed, full, shortened | {name})) <= limit:
            shortened.add(name)
    return render(listed, full, shortened)


_NO_DIFF = StackDiff(stack="", status="unchanged")


def _section(name: str, diff: StackDiff | None, documents: Sequence[PlanDocument], ref: str, strict: bool,
             plan_left_out: bool = False) -> str:
    """One stack under `<details>`: its diff, then its whole plan (or where to read it)."""
    summary = f"<b>{name}</b>: {_changes(diff)} since <code>{ref}</code>; {verdict(documents, strict)}" \
        if documents else f"<b>{name}</b>: {_changes(diff)} since <code>{ref}</code>"
    parts = ["<details>", f"<summary>{summary}</summary>", ""]
    if diff is not None and diff.status != "unchanged":
        parts += [_body(diff_views.to_markdown([diff], ref)), ""]
    if plan_left_out:
        parts += [f"Its whole plan didn't fit in this comment: read it in {ARTIFACT}.", ""]
    elif documents:
        parts += [_body(plan_views.to_markdown(documents)), ""]
    parts.append("</details>")
    return "\n".join(parts) + "\n"
