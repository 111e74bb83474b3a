"""How `spotkube pipeline-check` shows its verdicts on a TrainJob: a terminal table, Markdown, JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.cli.terminal import fit_columns
from spotkube.review.trainjob_check import TrainJobReport


def _rows(report: TrainJobReport) -> list[tuple[str, str]]:
    job = report.job
    tiers = "; ".join(f"{t.tier} ({', '.join(t.pools)}): {t.workers} at once"
                      f"{'' if t.fits(job.num_nodes) else ' - too few'}" for t in report.tiers) or "-"
    return [
        ("runtime", job.runtime),
        ("queue", f"{job.queue} (admitted whole)" if job.queue else "none (not gang-admitted)"),
        ("workers", str(job.num_nodes)),
        ("each lands on", ", ".join(report.pools) or "nowhere"),
        ("tiers", tiers),
        ("survives", report.survives()),
        ("time to save", f"{report.grace_seconds} s after SIGTERM" if report.grace_seconds is not None else "-"),
        ("checkpoints", (job.checkpoint_dir or "none") + (f" (the stack's: {report.checkpoint_location})"
                                                          if report.checkpoint_location else "")),
    ]


def render_table(reports: Sequence[TrainJobReport], console: Console) -> None:
    for report in reports:
        table = Table(title=f"TrainJob {report.job.name} on {report.stack}", title_justify="left")
        table.add_column("check")
        table.add_column("verdict", overflow="fold")
        for key, value in _rows(report):
            table.add_row(key, value)
        fit_columns(table, console.width, squeeze=True)
        lines: list[Text | Table] = [table]
        lines += [Text(f"error: {e}", style="red") for e in report.errors]
        lines += [Text(f"warning: {w}", style="yellow") for w in report.warnings]
        console.print(Group(*lines))
        console.print()


def to_markdown(reports: Sequence[TrainJobReport]) -> str:
    lines = []
    for report in reports:
        lines += [f"### TrainJob {report.job.name} on {report.stack}", "", "| check | verdict |", "|---|---|"]
        lines += [f"| {key} | {value} |" for key, value in _rows(report)]
        lines.append("")
        lines += [f"> **error**: {e}" for e in report.errors]
        lines += [f"> {w}" for w in report.warnings]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def to_json(reports: Sequence[TrainJobReport]) -> str:
    first = reports[0].job
    return json.dumps({"trainJob": first.name, "file": first.source, "ok": all(r.ok for r in reports),
                       "checks": [r.to_json() for r in reports]}, indent=2)
