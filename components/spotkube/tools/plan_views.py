"""How `spotkube plan` shows a `PlanDocument`: a terminal table, or Markdown for a pull request.

Both views read the typed document, never its JSON, so they can't disagree with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.core.plan_document import PlanDocument, PoolRow
from spotkube.core.preflight import Verdict


def _gpu(pool: PoolRow) -> str:
    return f"{pool.gpu_count} × {pool.gpu_type}" if pool.gpu_type else "-"


def _price(pool: PoolRow) -> str:
    price = pool.max_price
    if price is None:
        return "-"
    return "on-demand cap" if price == -1 else f"${price}/h"


def _money(value: Decimal) -> str:
    from spotkube.tools.cost_views import money  # the cost views own money's format

    return money(value)


def _pool_cost(document: PlanDocument, pool: str) -> str:
    """Idle floor and scenario cost a month, for the pool's row; "unpriced" without a price."""
    from spotkube.tools.cost_views import pool_cost_text  # shared with `spotkube cost`

    return pool_cost_text(document.cost, pool)


def cost_summary(document: PlanDocument) -> str:
    """The stack's monthly total in one line (shared with `spotkube cost`): idle floor, scenario,
    what spot saves, and the pools left out for want of a price; "unpriced" when none has one."""
    from spotkube.tools.cost_views import summary

    return summary(document.cost)


def pool_table(document: PlanDocument) -> Table:
    table = Table(title=f"{document.stack}  ({document.cloud}, {document.region}, {document.environment})",
                  title_justify="left", expand=False)
    for column in ("pool", "role", "capacity", "machine", "gpu", "nodes", "taints",
                   "eviction", "max price", "zones", "cost / month"):
        table.add_column(column, overflow="fold")
    for pool in document.pools:
        table.add_row(
            pool.name, pool.role, pool.capacity, pool.machine, _gpu(pool),
            f"{pool.min}..{pool.max}", "\n".join(pool.taints) or "-",
            pool.eviction_policy or "-", _price(pool), ",".join(pool.zones) or "-",
            _pool_cost(document, pool.name),
        )
    return table


def placement_rows(document: PlanDocument) -> list[tuple[str, str, str, str, str]]:
    """(workloads, kind, namespace, pools, note) with workloads that land alike on one row, so the
    14 KFP Deployments read as one line; the JSON keeps one entry per workload."""
    rows: dict[tuple[str, str, str, str], list[str]] = {}
    for entry in document.placements.placements:
        pools = ", ".join(entry.pools) or f"NOWHERE: {entry.reason or ''}"
        rows.setdefault((entry.kind, entry.namespace, pools, entry.note or ""), []).append(entry.workload)
    return [(", ".join(names), kind, namespace, pools, note) for (kind, namespace, pools, note), names in rows.items()]


def placement_notes(document: PlanDocument) -> list[str]:
    """The stack's notes and each distinct placement note, once."""
    notes = [n for *_, n in placement_rows(document) if n]
    return [*document.placements.notes, *dict.fromkeys(notes)]


def placement_table(document: PlanDocument) -> Table:
    table = Table(title="where workloads land", title_justify="left", expand=False)
    table.add_column("workload", overflow="fold", max_width=70)
    for column in ("kind", "namespace", "pools"):
        table.add_column(column, overflow="fold")
    for names, kind, namespace, pools, _ in placement_rows(document):
        table.add_row(names, kind, namespace, pools, style="red" if pools.startswith("NOWHERE") else None)
    return table


def _verdict(check: Verdict) -> str:
    return "pass" if check.ok else "FAIL"


def preflight_table(document: PlanDocument) -> Table:
    table = Table(title="deploy preflight", title_justify="left", expand=False)
    for column in ("rule", "verdict", "why"):
        table.add_column(column, overflow="fold", max_width=110 if column == "why" else None)
    for check in document.preflight:
        table.add_row(check.title, _verdict(check), check.detail, style=None if check.ok else "red")
    return table


def resource_summary(document: PlanDocument) -> Text:
    counts: dict[str, int] = {}
    for resource in document.resources:
        counts[resource.type] = counts.get(resource.type, 0) + 1
    lines = [f"  {n} × {t}" for t, n in counts.items()]
    outputs = ", ".join(f"{n} (secret)" if secret else n for n, secret in document.outputs.items())
    return Text("\n".join(["resources:", *lines, f"outputs: {outputs}"]))


def render_table(documents: Sequence[PlanDocument], console: Console) -> None:
    for document in documents:
        parts: list[Any] = [pool_table(document), Text(cost_summary(document)), placement_table(document),
                            preflight_table(document)]
        parts += [Text(f"note: {n}", style="dim") for n in placement_notes(document)]
        parts.append(resource_summary(document))
        parts += [Text(w, style="yellow") for w in document.warnings]
        parts += [Text(f"error: {e}", style="red") for e in document.errors]
        console.print(Group(*parts))
        console.print()


def to_markdown(documents: Sequence[PlanDocument]) -> str:
    """A compact block for a pull-request comment."""
    lines = ["## spotkube plan", ""]
    for document in documents:
        lines += [f"### {document.stack} ({document.cloud}, {document.region})", "",
                  "| pool | capacity | machine | gpu | nodes | taints | max price | cost / month |",
                  "|---|---|---|---|---|---|---|---|"]
        for pool in document.pools:
            taints = "<br>".join(f"`{t}`" for t in pool.taints) or "-"
            lines.append(f"| {pool.name} | {pool.capacity} | {pool.machine} | {_gpu(pool)} | "
                         f"{pool.min}..{pool.max} | {taints} | {_price(pool)} | "
                         f"{_pool_cost(document, pool.name).replace(chr(10), '<br>')} |")
        lines += ["", f"**{cost_summary(document)}**"]
        lines += ["", "| workload | kind | namespace | pools |", "|---|---|---|---|"]
        lines += [f"| {names} | {kind} | {namespace} | {pools} |"
                  for names, kind, namespace, pools, _ in placement_rows(document)]
        lines += ["", *(f"- {n}" for n in placement_notes(document))]
        lines += ["", "| deploy preflight | verdict | why |", "|---|---|---|"]
        lines += [f"| {c.title} | {'pass' if c.ok else '**FAIL**'} | {c.detail} |" for c in document.preflight]
        lines += ["", f"{len(document.resources)} resources; secret outputs: "
                  + (", ".join(document.secret_outputs) or "none"), ""]
        lines += [f"> {w}" for w in document.warnings]
        lines += [""]
        lines += [f"> **error:** {e}" for e in document.errors]
    return "\n".join(lines).rstrip() + "\n"
