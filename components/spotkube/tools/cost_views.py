"""How `spotkube cost` shows a stack's monthly cost: a table per pool, the total, and the warnings."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from spotkube.core.costing import CostReport


def render_cost(stack: str, report: CostReport, console: Console) -> None:
    table = Table(title=f"{stack}: monthly cost (USD, prices as of {report.table_date})", title_justify="left")
    for column in ("pool", "capacity", "$/h", "idle floor", "hours", "scenario", "on demand", "saving"):
        table.add_column(column, justify="left" if column in ("pool", "capacity") else "right")
    for priced in report.pools:
        pool, hours = priced.pool, f"{float(priced.hours):g}"
        line = report.line(pool.name)
        if line is None:
            table.add_row(pool.name, pool.capacity, "no price", "-", hours, "-", "-", "-")
            continue
        _, cost = line
        assert priced.price is not None  # a priced line has its price
        table.add_row(pool.name, pool.capacity, f"{float(priced.price.usd_per_hour):g}",
                      f"{float(cost.idle_floor_usd):,.2f}", hours, f"{float(cost.scenario_usd):,.2f}",
                      f"{float(cost.on_demand_equivalent_usd):,.2f}", f"{cost.saving_percent} %")
    total = report.stack_cost
    table.add_row("total", "", "", f"{float(total.idle_floor_usd):,.2f}", "", f"{float(total.scenario_usd):,.2f}",
                  f"{float(total.on_demand_equivalent_usd):,.2f}", f"{total.saving_percent} %", style="bold")
    console.print(table)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
