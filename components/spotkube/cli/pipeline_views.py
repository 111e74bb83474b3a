"""How `spotkube pipeline-check` shows its verdicts: a terminal table, Markdown for a pull request, JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.cli.terminal import fit_columns
from spotkube.platform.contract import GPU_RESOURCE, Placement
from spotkube.platform.pipeline_reader import Retry
from spotkube.review.pipeline_check import CheckReport


def _retry_text(retry: Retry | None) -> str:
    if retry is None or retry.max_retries <= 0:
        return "-"
    growth = f" ×{retry.backoff_factor:g}" if retry.backoff_factor not in (None, 1) else ""
    backoff = f", backoff {retry.backoff_seconds:g}s{growth}" if retry.backoff_seconds else ""
    via = f" (via {retry.source})" if retry.source else ""
    return f"{retry.max_retries}{backoff}{via}"


def _gpus(placement: Placement) -> str:
    """`1`, or `1 nvidia.com/mig-1g.10gb` when the step asks for a MIG profile's own resource."""
    if not placement.gpus:
        return "-"
    if placement.gpu_resource == GPU_RESOURCE:
        return str(placement.gpus)
    return f"{placement.gpus} {placement.gpu_resource}"


def render_reports_table(reports: Sequence[CheckReport], console: Console) -> None:
    """One table per stack: each step, its GPUs and retries, and the pools it can land on."""
    for report in reports:
        table = Table(title=f"{report.pipeline.name} on {report.stack}", title_justify="left")
        for column in ("step", "gpus", "retries", "lands on (preferred first)"):
            table.add_column(column, overflow="ellipsis")
        for result in report.steps:
            if result.error:
                where = Text(f"nowhere: {result.error}", style="red")
            else:
                where = Text(", ".join(result.pool_text(p) for p in result.pools))
            table.add_row(result.step.name, _gpus(result.step.placement),
                          _retry_text(result.step.retry), where)
        fit_columns(table, console.width, squeeze=True)
        lines: list[Any] = [table]
        lines += [Text(f"warning: {r.step.name}: {w}", style="yellow") for r in report.steps for w in r.warnings]
        lines += [Text(f"warning: {w}", style="yellow") for w in report.warnings]
        console.print(Group(*lines))
        console.print()


def reports_markdown(reports: Sequence[CheckReport]) -> str:
    """A compact block for a pull-request comment."""
    lines = []
    for report in reports:
        lines += [f"### {report.pipeline.name} on {report.stack}", "",
                  "| step | gpus | retries | lands on |", "|---|---|---|---|"]
        for r in report.steps:
            where = f"**nowhere**: {r.error}" if r.error else ", ".join(r.pool_text(p) for p in r.pools)
            lines.append(f"| {r.step.name} | {_gpus(r.step.placement)} | {_retry_text(r.step.retry)} | {where} |")
        lines.append("")
        lines += [f"> {r.step.name}: {w}" for r in report.steps for w in r.warnings]
        lines += [f"> {w}" for w in report.warnings]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def reports_json(reports: Sequence[CheckReport]) -> str:
    """Every stack's verdict for one pipeline file."""
    first = reports[0].pipeline
    return json.dumps({"pipeline": first.name, "file": first.source, "ok": all(r.ok for r in reports),
                       "checks": [r.to_json() for r in reports]}, indent=2)
