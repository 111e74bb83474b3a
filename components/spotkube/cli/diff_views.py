"""How `spotkube plan --diff REF` shows what changed: a terminal table, Markdown for the pull
request, or JSON. All three read the same `StackDiff` values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.cli import cost_views
from spotkube.cli.markdown_cells import cell
from spotkube.cli.terminal import fit_columns
from spotkube.review.plan_diff import Change, CostDelta, NamedDiff, ResourceDiff, StackDiff
from spotkube.review.plan_document import SCHEMA_VERSION

#: Longest value shown in a terminal's diff cell; longer ones are cut (Markdown and JSON keep them whole).
VALUE_WIDTH = 80


def _value(value: Any, whole: bool = False) -> str:
    text = "(absent)" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if whole or len(text) <= VALUE_WIDTH else text[:VALUE_WIDTH - 1] + "…"


def change_text(change: Change, whole: bool = False) -> str:
    """`path: old → new`; a setting's own value has no path: `old → new`. Cut for a terminal column;
    `whole` for Markdown, which has no width limit."""
    values = f"{_value(change.old, whole)} → {_value(change.new, whole)}"
    return f"{change.path}: {values}" if change.path else values


def _money(value: float | None) -> str:
    return cost_views.NOT_KNOWN if value is None else cost_views.money(Decimal(str(value)))


def _signed(value: float) -> str:
    return ("+" if value >= 0 else "-") + _money(abs(value))


def _figure_change(cost: CostDelta, figure: str) -> str:
    """`$508.08 → $677.44 (+$169.36)`; one side for a stack added or removed; the pools without a price
    instead of a delta over different pools."""
    (old, new), delta = cost.pair(figure), cost.delta(figure)
    if delta is None:
        shown = _money(new) if cost.new.present else _money(old)
        if cost.old.present and cost.new.present:
            shown = f"{_money(old)} → {_money(new)}"
        return f"{shown} ({cost.why_not(figure)})"
    if not cost.old.present:
        return f"{_money(new)} ({_signed(delta)})"
    if not cost.new.present:
        return f"{_money(old)} ({_signed(delta)})"
    return f"{_money(old)} → {_money(new)} ({_signed(delta)})"


def cost_line(cost: CostDelta) -> str:
    head = ("monthly cost" if cost.old.present and cost.new.present
            else "monthly cost (new stack)" if cost.new.present else "monthly cost (stack removed)")
    floor = f"idle floor {_figure_change(cost, 'idleFloor')}"
    if cost.delta("idleFloor") is None:  # each part it knows, on its own: an unknown disk hides no node cost
        floor += (f"; of it, nodes {_figure_change(cost, 'nodesIdleFloor')}, fixed "
                  f"{_figure_change(cost, 'fixedIdleFloor')}")
    return f"{head}: {floor}; scenario {_figure_change(cost, 'scenario')}"


def _action(resource: ResourceDiff) -> str:
    if resource.action != "replace":
        return resource.action
    return "replace (delete first)" if resource.delete_before_replace else "replace (create first)"


def _title(diff: StackDiff, ref: str) -> str:
    return f"{diff.stack}: {diff.status} since {ref}"


def _added(label: str, item: NamedDiff, whole: bool = False) -> str:
    """What an added pool or setting is, in one phrase, not field by field from `(absent)`."""
    new = {c.path: c.new for c in item.changes}
    if label == "pool":
        gpu = f", {new.get('gpu.count')} × {new.get('gpu.type')}" if new.get("gpu.type") else ""
        return (f"{new.get('role')}, {new.get('capacity')}, {new.get('machine')}{gpu}, "
                f"{new.get('min')}..{new.get('max')} nodes")
    return "; ".join(_plain(c.new, whole) if not c.path else f"{c.path} {_plain(c.new, whole)}"
                     for c in item.changes)


def _plain(value: Any, whole: bool = False) -> str:
    """A value as a phrase: text without JSON's quotes, cut as `_value` cuts."""
    text = value if isinstance(value, str) else _value(value, whole)
    return text if whole or len(text) <= VALUE_WIDTH else text[:VALUE_WIDTH - 1] + "…"


def _named_line(label: str, item: NamedDiff, whole: bool = False) -> str:
    if item.action == "add":
        return f"{label} {item.name} added: {_added(label, item, whole)}"
    if item.action == "remove":
        return f"{label} {item.name} removed"
    return f"{label} {item.name} update: " + "; ".join(change_text(c, whole) for c in item.changes)


def _named_lines(label: str, items: Sequence[NamedDiff], whole: bool = False) -> list[str]:
    return [_named_line(label, item, whole) for item in items]


def render_table(diffs: Sequence[StackDiff], ref: str, console: Console) -> None:
    for diff in diffs:
        if diff.status == "unchanged":  # one line: nothing else to say
            console.print(Text(_title(diff, ref)))
            continue
        parts: list[Any] = [Text(_title(diff, ref), style="bold")]
        parts += [Text(line) for line in _named_lines("pool", diff.pools) + _named_lines("security", diff.posture)]
        if diff.resources:
            table = Table(title="resources", title_justify="left", expand=False)
            for column in ("action", "resource", "changes"):
                table.add_column(column, overflow="ellipsis")
            for resource in diff.resources:
                changes = "\n".join(change_text(c) for c in resource.changes) or "-"
                if resource.replace_reasons:
                    changes += "\nreplaces because " + "; ".join(resource.replace_reasons)
                table.add_row(_action(resource), f"{resource.type}\n{resource.name}", changes,
                              style="red" if resource.action in ("replace", "remove") else None)
            fit_columns(table, console.width, squeeze=True)  # wrap at spaces, never mid-word
            parts.append(table)
        if diff.cost is not None:
            parts.append(Text(cost_line(diff.cost)))
        parts += [Text(f"new error: {e}", style="red") for e in diff.new_errors]
        console.print(Group(*parts))
        console.print()


def to_markdown(diffs: Sequence[StackDiff], ref: str) -> str:
    lines = [f"## spotkube plan: changes since `{ref}`", ""]
    for diff in diffs:
        if diff.status == "unchanged":  # one line: nothing else to say
            lines += [f"- {_title(diff, ref)}", ""]
            continue
        lines += [f"### {_title(diff, ref)}", ""]
        named = _named_lines("pool", diff.pools, whole=True) + _named_lines("security", diff.posture, whole=True)
        lines += [f"- {cell(line)}" for line in named]
        if diff.cost is not None:
            lines += ["", f"**{cost_line(diff.cost)}**"]
        if diff.resources:
            lines += ["", "| action | resource | changes |", "|---|---|---|"]
            for resource in diff.resources:
                changes = [f"`{cell(change_text(c, whole=True))}`" for c in resource.changes]
                if resource.replace_reasons:
                    changes.append("**replaces** because " + cell("; ".join(resource.replace_reasons)))
                action = f"**{_action(resource)}**" if resource.action in ("replace", "remove") else _action(resource)
                lines.append(f"| {action} | `{resource.type}` {resource.name} | {'<br>'.join(changes) or '-'} |")
        lines += ["", *(f"> **new error:** {cell(e)}" for e in diff.new_errors)] if diff.new_errors else []
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def to_json(diffs: Sequence[StackDiff], ref: str) -> str:
    return json.dumps({"schemaVersion": SCHEMA_VERSION, "base": ref, "stacks": [d.to_json() for d in diffs]},
                      indent=2)
