"""How `spotkube quota` shows its reports: a terminal table, Markdown for a pull request, or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.platform.live_quota import QuotaCheck, QuotaReport

_VERDICT = {"ok": "ok", "short": "SHORT", "tight": "tight now", "unknown": "unknown"}


def _cells(check: QuotaCheck) -> tuple[str, ...]:
    limit = "-" if check.limit is None else f"{check.limit:g}"
    used = "-" if check.used is None else f"{check.used:g}"
    return (check.quota, f"{check.need} {check.unit} ({check.surge} surge)", limit, used, _VERDICT[check.verdict])


def render_table(reports: Sequence[QuotaReport], console: Console) -> None:
    for report in reports:
        table = Table(title=f"{report.stack}: quota ({report.where})", title_justify="left", expand=False)
        for column in ("quota", "need", "limit", "in use", "verdict"):
            table.add_column(column, overflow="fold")
        for check in report.checks:
            table.add_row(*_cells(check), style={"short": "red", "tight": "yellow", "unknown": "yellow"}
                          .get(check.verdict))
        parts: list[Text | Table] = [table]
        parts += [Text(f"{_VERDICT[c.verdict]}: {c.message}", style="red" if c.verdict == "short" else "yellow")
                  for c in report.checks if c.verdict != "ok"]
        parts += [Text(f"note: {n}", style="dim") for n in (f"surge: {report.surge}", *report.notes)]
        console.print(Group(*parts))
        console.print()


def to_markdown(reports: Sequence[QuotaReport]) -> str:
    lines = ["## spotkube quota", ""]
    for report in reports:
        lines += [f"### {report.stack} ({report.where})", "",
                  "| quota | need | limit | in use | verdict |", "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(_cells(c)).replace("SHORT", "**SHORT**") + " |" for c in report.checks]
        lines += [""] + [f"- **{_VERDICT[c.verdict]}**: {c.message}" for c in report.checks if c.verdict != "ok"]
        lines += [f"- surge: {report.surge}", *(f"- {n}" for n in report.notes), ""]
    return "\n".join(lines).rstrip() + "\n"


def to_json(reports: Sequence[QuotaReport]) -> str:
    return json.dumps({"stacks": [r.to_json() for r in reports]}, indent=2)
