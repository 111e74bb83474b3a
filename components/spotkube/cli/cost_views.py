"""How a stack's monthly cost is shown: the `spotkube cost` table, Markdown and JSON, and the cost
cell and summary line the plan's views reuse.

One vocabulary everywhere: a pool without a price is "unpriced", never $0.00 or 0 %. Totals over
some pools say they cover the priced pools only and name the others; with no pool priced there are
no totals, only "unpriced".
"""

from __future__ import annotations

import json
from decimal import Decimal

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from spotkube.review.costing import UNPRICED, CostReport, PricedPool, price_origin

COLUMNS = ("pool", "capacity", "$/h", "price from", "idle floor", "hours", "scenario", "on demand", "saving")


def money(value: Decimal) -> str:
    """USD to the cent with thousands separators: $1,175.36."""
    return f"${value:,.2f}"


def _hours(value: Decimal) -> str:
    return f"{float(value):g}"


def _prices_note(report: CostReport) -> str:
    """Which tables the prices come from: the bundled one's date, and the user file if one was read."""
    note = f"prices as of {report.table_date}"
    return note + (f"; user prices from {report.user_file}" if report.user_file else "")


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


def summary(report: CostReport) -> str:
    """The stack's monthly total in one line: idle floor, scenario, what spot saves, and which pools
    the totals leave out for want of a price."""
    if not report.has_totals:
        return (f"monthly cost: {UNPRICED} (no price for {', '.join(report.unpriced_pools)}) "
                f"[{_prices_note(report)}]")
    total = report.stack_cost
    head = "monthly cost" if report.complete else f"monthly cost of the priced pools ({', '.join(report.priced_pools)})"
    text = f"{head}: idle floor {money(total.idle_floor_usd)}; "
    if any(p.hours for p in report.pools if p.priced):
        text += (f"scenario {money(total.scenario_usd)} vs {money(total.on_demand_equivalent_usd)} on demand, "
                 f"saving {total.saving_percent} %")
    else:
        text += "no node-hours in the cost scenario"
    if not report.complete:
        text += f"; {UNPRICED}, left out of the totals: {', '.join(report.unpriced_pools)}"
    return text + f" [{_prices_note(report)}]"


def _pool_cells(report: CostReport, priced: PricedPool) -> list[str]:
    pool, hours = priced.pool, _hours(priced.hours)
    line = report.line(pool.name)
    if line is None:
        return [pool.name, pool.capacity, UNPRICED, "-", "-", hours, "-", "-", "-"]
    _, cost = line
    assert priced.price is not None  # a priced line has its price
    return [pool.name, pool.capacity, f"{priced.price.usd_per_hour:f}", price_origin(priced.price),
            money(cost.idle_floor_usd), hours, money(cost.scenario_usd), money(cost.on_demand_equivalent_usd),
            f"{cost.saving_percent} %"]


def _total_cells(report: CostReport) -> list[str]:
    if not report.has_totals:
        return ["total", "", "", "", UNPRICED, "", UNPRICED, UNPRICED, UNPRICED]
    total = report.stack_cost
    label = "total" if report.complete else "total (priced pools only)"
    return [label, "", "", "", money(total.idle_floor_usd), "", money(total.scenario_usd),
            money(total.on_demand_equivalent_usd), f"{total.saving_percent} %"]


def render_cost(stack: str, report: CostReport, console: Console) -> None:
    """`spotkube cost` as a terminal table, then the summary and the warnings."""
    table = Table(title=f"{stack}: monthly cost (USD, {_prices_note(report)})", title_justify="left")
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("pool", "capacity", "price from") else "right")
    for priced in report.pools:
        table.add_row(*_pool_cells(report, priced))
    table.add_row(*_total_cells(report), style="bold")
    console.print(table)
    if not report.complete:
        console.print(summary(report), markup=False, highlight=False, soft_wrap=True)
    for line in report.basis:
        console.print(f"cost basis: {line}", markup=False, highlight=False, soft_wrap=True)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False, soft_wrap=True)


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def cost_markdown(stack: str, report: CostReport) -> str:
    """`spotkube cost` as Markdown for a pull-request comment, in the plan's Markdown style."""
    lines = [f"## spotkube cost: {stack}", "", f"USD a month; {_prices_note(report)}.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(map(_markdown_cell, _pool_cells(report, p))) + " |" for p in report.pools]
    total = _total_cells(report)
    lines.append("| " + " | ".join(f"**{_markdown_cell(cell)}**" if cell else "" for cell in total) + " |")
    lines += ["", f"**{summary(report)}**", ""]
    lines += [f"- cost basis: {_markdown_cell(line)}" for line in report.basis]
    lines += [""] if report.basis else []
    for warning in report.warnings:
        lines += [f"> **warning:** {_markdown_cell(warning)}", ""]
    return "\n".join(lines).rstrip() + "\n"


def cost_json(stack: str, report: CostReport) -> str:
    """`spotkube cost --format json`: the plan's cost block, with the warnings."""
    return json.dumps({"stack": stack, "cost": report.to_json(), "warnings": report.warnings}, indent=2)
