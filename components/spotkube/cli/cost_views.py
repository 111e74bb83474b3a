"""How a stack's monthly cost is shown: the `spotkube cost` table, Markdown and JSON, and the cost
cell and summary line the plan's views reuse.

One vocabulary everywhere: a pool without a price is "unpriced", never $0.00 or 0 %. A total is shown
only when it covers every pool; when an unpriced pool would add to it, it is "not known" and the pool
is named (`platform, Standard_D8s_v3 in uksouth, has no price`).
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from spotkube.cli.figures import plain_width, unit_price, wrapped
from spotkube.cli.terminal import fit_columns
from spotkube.platform.cost.fixed import FixedLine
from spotkube.platform.cost.pricing import UNPRICED, Figure, PricedPool
from spotkube.platform.warnings import PlanWarning
from spotkube.review.costing import CostReport, price_origin

#: A total that an unpriced pool would add to.
NOT_KNOWN = "not known"

COLUMNS = ("pool", "capacity", "$/h", "price from", "idle floor", "hours", "scenario", "on demand", "saving")


def money(value: Decimal) -> str:
    """USD to the cent with thousands separators: $1,175.36."""
    return f"${value:,.2f}"


def _hours(value: Decimal) -> str:
    return f"{float(value):g}"


def _prices_note(report: CostReport) -> str:
    """Where the stack's prices come from and how old they are: per origin (bundled, the user's file,
    the stack file) the days its prices were read, so a stale figure looks stale."""
    dates: dict[str, list[datetime.date]] = {}
    for priced in report.pools:
        for price in (priced.price, priced.on_demand):
            if price is not None:
                dates.setdefault(price_origin(price), []).append(price.date)
    if not dates:
        return f"no price found; bundled table of {report.table_date}"
    parts = []
    for origin, days in sorted(dates.items()):
        low, high = min(days).isoformat(), max(days).isoformat()
        where = f"user file {report.user_file}" if origin == "user file" and report.user_file else origin
        parts.append(f"{where} {low}" + (f" to {high}" if high != low else ""))
    return "prices: " + "; ".join(parts)


def pool_cost_text(report: CostReport, pool: str) -> str:
    """Idle floor and scenario cost a month, for a pool's row in the plan; "unpriced" without a price."""
    line = report.line(pool)
    if line is None:
        return UNPRICED
    priced, cost = line
    text = f"idle {money(cost.idle_floor_usd)}"
    if priced.hours:
        text += f"\n{_hours(priced.hours)} h: {money(cost.scenario_usd)}"
        if priced.pool.capacity != "on-demand":
            text += f" (on-demand {money(cost.on_demand_equivalent_usd)})"
    if "user file" in price_origin(priced.price) or "user file" in price_origin(priced.on_demand):
        text += "\nprice: user file"
    return text


def _figure(report: CostReport, figure: Figure) -> str:
    """A total, or why it is not known: the pools (and fixed lines) without a price that would add to it."""
    value = report.total(figure)
    if value is not None:
        return money(value)
    return "not known (" + "; ".join(report.blocker_texts(figure)) + ")"


def _idle_floor(report: CostReport) -> str:
    """The idle floor, split into the nodes kept at their minimum and the fixed lines when both are known."""
    text = _figure(report, "idleFloor")
    nodes, fixed = report.nodes_idle_floor, report.fixed.total_usd if report.fixed else None
    if report.total("idleFloor") is not None and nodes is not None and fixed is not None:
        text += f" (nodes {money(nodes)} + fixed {money(fixed)})"
    return text


def _rate(usd: Decimal) -> str:
    """A unit price for people: $0.10, $0.025, $19.71 (the JSON keeps every digit)."""
    return unit_price(usd)


def fixed_line_text(line: FixedLine, sources: bool = True) -> str:
    """One fixed line: `cluster management fee: $73.00 ($0.10/hour; Cluster 'spotkube-gke'; a regional ...)`,
    with the price's source and date unless `sources` is off (the plan keeps its lines short)."""
    monthly = line.monthly_usd
    row = line.row
    rate = None if row is None else f"{_rate(row.usd)}/{row.per}"
    parts = [rate, line.item.resource, line.item.note,
             f"{row.source}, {row.date.isoformat()}" if row and sources else None]
    amount = f"{UNPRICED} (no {line.item.price_key} price in {line.region})" if monthly is None else money(monthly)
    return f"{line.item.what}: {amount} (" + "; ".join(p for p in parts if p) + ")"


def fixed_lines(report: CostReport, sources: bool = True) -> list[str]:
    """Each fixed line of the idle floor, as the views list it under the totals."""
    return [fixed_line_text(line, sources) for line in report.fixed.lines] if report.fixed else []


def summary(report: CostReport) -> str:
    """The stack's monthly totals in one line: idle floor, scenario, what spot saves. A total that an
    unpriced pool or fixed line would add to is "not known", with it named, never a sum over fewer."""
    text = f"monthly cost: idle floor {_idle_floor(report)}; "
    if not any(p.hours for p in report.pools):
        text += "no node-hours in the cost scenario"
    elif report.total("scenario") is None:
        text += f"scenario {_figure(report, 'scenario')}"
    else:
        text += (f"scenario {money(report.stack_cost.scenario_usd)} vs "
                 f"{_figure(report, 'onDemandEquivalent')} on demand, saving {report.saving_percent} %")
    for note in report.notes:
        text += f"; {note}"
    return text + f" [{_prices_note(report)}]"


def _pool_cells(report: CostReport, priced: PricedPool) -> list[str]:
    pool, hours = priced.pool, _hours(priced.hours)
    line = report.line(pool.name)
    if line is None:
        return [pool.name, pool.capacity, UNPRICED, "-", "-", hours, "-", "-", "-"]
    _, cost = line
    assert priced.price is not None  # a priced line has its price
    return [pool.name, pool.capacity, unit_price(priced.price.usd_per_hour), price_origin(priced.price),
            money(cost.idle_floor_usd), hours, money(cost.scenario_usd), money(cost.on_demand_equivalent_usd),
            f"{cost.saving_percent} %"]


def _fixed_cells(report: CostReport) -> list[str]:
    """The fixed lines as one row of the table, in the idle floor column (listed one by one below it)."""
    total = report.fixed.total_usd if report.fixed else None
    return ["fixed (cluster, network, disks)", "-", "", "", NOT_KNOWN if total is None else money(total),
            "", "-", "-", ""]


def _total_cells(report: CostReport) -> list[str]:
    """Each total, or "not known" when an unpriced pool would add to it (the summary names the pool)."""
    def cell(figure: Figure) -> str:
        value = report.total(figure)
        return NOT_KNOWN if value is None else money(value)

    saving = report.saving_percent
    return ["total", "", "", "", cell("idleFloor"), "", cell("scenario"), cell("onDemandEquivalent"),
            NOT_KNOWN if saving is None else f"{saving} %"]


def render_cost(stack: str, report: CostReport, console: Console) -> None:
    """`spotkube cost` as a terminal table, then the summary and the warnings."""
    table = Table(title=f"{stack}: monthly cost (USD, {_prices_note(report)})", title_justify="left")
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("pool", "capacity", "price from") else "right")
    for priced in report.pools:
        table.add_row(*_pool_cells(report, priced))
    if report.fixed is not None:
        table.add_row(*_fixed_cells(report))
    table.add_row(*_total_cells(report), style="bold")
    width = plain_width(console.width, console.is_terminal)
    fit_columns(table, min(console.width, width), wrap=False, squeeze=True)
    console.print(table, width=min(console.width, width))
    lines = [summary(report)] if not report.complete or report.fixed is not None else []
    lines += [f"fixed: {line}" for line in fixed_lines(report)]
    lines += [f"note: {note}" for note in report.price_notes]
    lines += [f"cost basis: {line}" for line in report.basis]
    for line in lines:
        console.print(wrapped(line, width), markup=False, highlight=False, soft_wrap=True)
    for warning in report.warnings:
        text = wrapped(f"warning {warning_text(warning)}", width).removeprefix("warning")
        console.print(f"[yellow]warning[/yellow]{escape(text)}", highlight=False, soft_wrap=True)


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def cost_markdown(stack: str, report: CostReport) -> str:
    """`spotkube cost` as Markdown for a pull-request comment, in the plan's Markdown style."""
    lines = [f"## spotkube cost: {stack}", "", f"USD a month; {_prices_note(report)}.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(map(_markdown_cell, _pool_cells(report, p))) + " |" for p in report.pools]
    if report.fixed is not None:
        lines.append("| " + " | ".join(map(_markdown_cell, _fixed_cells(report))) + " |")
    total = _total_cells(report)
    lines.append("| " + " | ".join(f"**{_markdown_cell(cell)}**" if cell else "" for cell in total) + " |")
    lines += ["", f"**{summary(report)}**", ""]
    lines += [f"- fixed: {_markdown_cell(line)}" for line in fixed_lines(report)]
    lines += [f"> **note**: {_markdown_cell(note)}\n" for note in report.price_notes]
    lines += [f"- cost basis: {_markdown_cell(line)}" for line in report.basis]
    lines += [""] if report.basis or report.fixed else []
    for warning in report.warnings:
        lines += [f"> **warning** `{warning.id}`: {_markdown_cell(warning.message)}", ""]
    return "\n".join(lines).rstrip() + "\n"


def cost_json(stack: str, report: CostReport) -> str:
    """`spotkube cost --format json`: the plan's cost block, with the warnings (`{id, message}`)."""
    return json.dumps({"stack": stack, "cost": report.to_json(), "warnings": [w.to_json() for w in report.warnings]},
                      indent=2)


def warning_text(warning: PlanWarning) -> str:
    """A warning as the terminal shows it: `[id]: message`, the id being what a stack acknowledges."""
    return f"[{warning.id}]: {warning.message}"
