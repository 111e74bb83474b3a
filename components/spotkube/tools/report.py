"""The plan's output: one JSON document per stack, and its table and markdown renderings.

The JSON document is the contract with machines and CI (its key names are stable; later features
add keys). The table and markdown views are drawn from that same document, so all three always
say the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.core.contract import PoolContract
from spotkube.core.costing import price_plan
from spotkube.core.inventory import registered_pools
from spotkube.core.placements import StackPlacements, stack_placements
from spotkube.core.plan import plan_platform
from spotkube.core.preflight import Deployment, preflight
from spotkube.tools.offline import StackRun


def _contracts(run: StackRun) -> list[PoolContract] | None:
    """The pool contracts the program exports, which carry every node label (declared, cloud-added
    and well-known); None without a readable poolContracts output."""
    output = run.outputs.get("poolContracts")
    if output is None or output.secret:
        return None
    return [PoolContract.from_json(pool) for pool in output.value or ()]


def _placements(run: StackRun, contracts: list[PoolContract] | None) -> StackPlacements:
    if contracts is None:
        return StackPlacements(notes=["placements unknown: the stack exports no readable poolContracts output"])
    return stack_placements(run.spec.cloud, run.registrations, contracts)


def _pools(run: StackRun, contracts: list[PoolContract] | None) -> list[dict[str, Any]]:
    """The registered pools, each with its contract's node labels and zones: the plan shows the very
    labels the `poolContracts` output gives to workloads."""
    by_name = {c.name: c for c in contracts or ()}
    rows = registered_pools(run.spec.cloud, run.registrations)
    for row in rows:
        pool = by_name.get(row["name"])
        if pool is not None:
            row["labels"] = pool.to_json()["labels"]
            row["zoneLabels"] = list(pool.zones)
    return rows


def stack_document(run: StackRun) -> dict[str, Any]:
    """Everything the plan says about one stack, in the stable JSON shape."""
    custom = [r for r in run.registrations if r.custom]
    cost = price_plan(plan_platform(run.spec))
    contracts = _contracts(run)
    placed = _placements(run, contracts)
    checks = preflight(Deployment(run.registrations, run.invokes, run.spec, run.source))
    return {
        "stack": run.stack,
        "cloud": run.spec.cloud,
        "region": run.spec.region,
        "environment": run.spec.environment,
        "pools": _pools(run, contracts),
        "resources": [{"type": r.type, "name": r.name} for r in custom],
        "outputs": {name: {"secret": out.secret} for name, out in sorted(run.outputs.items())},
        "cost": cost.to_json(),
        "placements": placed.placements,
        "notes": placed.notes,
        "preflight": [check.to_json() for check in checks],
        "errors": placed.errors + [f"preflight: {c.title}: {c.detail}" for c in checks if not c.ok],
        "warnings": [line for line in run.log if line.startswith("warning")]
        + [f"cost: {w}" for w in cost.warnings],
    }


def to_json(documents: Sequence[dict[str, Any]], single: bool) -> str:
    body: Any = documents[0] if single else {"stacks": list(documents)}
    return json.dumps(body, indent=2, sort_keys=False)


def _gpu(pool: dict[str, Any]) -> str:
    return f"{pool['gpu']['count']} × {pool['gpu']['type']}" if pool["gpu"] else "-"


def _price(pool: dict[str, Any]) -> str:
    price = pool["maxPrice"]
    if price is None:
        return "-"
    return "on-demand cap" if price == -1 else f"${price}/h"


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _pool_cost(document: dict[str, Any], pool: str) -> str:
    """Idle floor and scenario cost a month, for the pool's row."""
    line = next((c for c in document["cost"]["pools"] if c["pool"] == pool), None)
    if line is None or not line["priced"]:
        return "no price"
    text = f"idle {_money(line['idleFloor'])}"
    if line["scenarioHours"]:
        text += f"\n{line['scenarioHours']:g} h: {_money(line['scenario'])}"
        if line["capacity"] != "on-demand":
            text += f" (on-demand {_money(line['onDemandEquivalent'])})"
    return text


def cost_summary(document: dict[str, Any]) -> str:
    """The stack's monthly total in one line: idle floor, scenario, and what spot saves."""
    total = document["cost"]["total"]
    text = (f"monthly cost: idle floor {_money(total['idleFloor'])}; scenario {_money(total['scenario'])} "
            f"vs {_money(total['onDemandEquivalent'])} on demand, saving {total['savingPercent']} %")
    if total["unpricedPools"]:
        text += f" (unpriced: {', '.join(total['unpricedPools'])})"
    return text + f" [prices as of {document['cost']['priceTableDate']}]"


def pool_table(document: dict[str, Any]) -> Table:
    table = Table(title=f"{document['stack']}  ({document['cloud']}, {document['region']}, "
                  f"{document['environment']})", title_justify="left", expand=False)
    for column in ("pool", "role", "capacity", "machine", "gpu", "nodes", "taints",
                   "eviction", "max price", "zones", "cost / month"):
        table.add_column(column, overflow="fold")
    for pool in document["pools"]:
        table.add_row(
            pool["name"], pool["role"], pool["capacity"], pool["machine"], _gpu(pool),
            f"{pool['min']}..{pool['max']}", "\n".join(pool["taints"]) or "-",
            pool["evictionPolicy"] or "-", _price(pool), ",".join(pool["zones"]) or "-",
            _pool_cost(document, pool["name"]),
        )
    return table


def _placement_rows(document: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(workloads, kind, namespace, pools, note) with workloads that land alike on one row, so the
    14 KFP Deployments read as one line; the JSON keeps one entry per workload."""
    rows: dict[tuple[str, str, str, str], list[str]] = {}
    for entry in document["placements"]:
        pools = ", ".join(entry["pools"]) or f"NOWHERE: {entry.get('reason', '')}"
        rows.setdefault((entry["kind"], entry["namespace"], pools, entry.get("note", "")), []).append(entry["workload"])
    return [(", ".join(names), kind, namespace, pools, note) for (kind, namespace, pools, note), names in rows.items()]


def placement_notes(document: dict[str, Any]) -> list[str]:
    """The stack's notes and each distinct placement note, once."""
    notes = [n for *_, n in _placement_rows(document) if n]
    return [*document["notes"], *dict.fromkeys(notes)]


def placement_table(document: dict[str, Any]) -> Table:
    table = Table(title="where workloads land", title_justify="left", expand=False)
    table.add_column("workload", overflow="fold", max_width=70)
    for column in ("kind", "namespace", "pools"):
        table.add_column(column, overflow="fold")
    for names, kind, namespace, pools, _ in _placement_rows(document):
        table.add_row(names, kind, namespace, pools, style="red" if pools.startswith("NOWHERE") else None)
    return table


def _verdict(check: dict[str, Any]) -> str:
    return "pass" if check["ok"] else "FAIL"


def preflight_table(document: dict[str, Any]) -> Table:
    table = Table(title="deploy preflight", title_justify="left", expand=False)
    for column in ("rule", "verdict", "why"):
        table.add_column(column, overflow="fold", max_width=110 if column == "why" else None)
    for check in document["preflight"]:
        table.add_row(check["title"], _verdict(check), check["detail"], style=None if check["ok"] else "red")
    return table


def resource_summary(document: dict[str, Any]) -> Text:
    counts: dict[str, int] = {}
    for resource in document["resources"]:
        counts[resource["type"]] = counts.get(resource["type"], 0) + 1
    lines = [f"  {n} × {t}" for t, n in counts.items()]
    secrets = [name for name, out in document["outputs"].items() if out["secret"]]
    outputs = ", ".join(f"{n} (secret)" if n in secrets else n for n in document["outputs"])
    return Text("\n".join(["resources:", *lines, f"outputs: {outputs}"]))


def render_table(documents: Sequence[dict[str, Any]], console: Console) -> None:
    for document in documents:
        parts: list[Any] = [pool_table(document), Text(cost_summary(document)), placement_table(document),
                            preflight_table(document)]
        parts += [Text(f"note: {n}", style="dim") for n in placement_notes(document)]
        parts.append(resource_summary(document))
        parts += [Text(w, style="yellow") for w in document["warnings"]]
        parts += [Text(f"error: {e}", style="red") for e in document["errors"]]
        console.print(Group(*parts))
        console.print()


def to_markdown(documents: Sequence[dict[str, Any]]) -> str:
    """A compact block for a pull-request comment."""
    lines = ["## spotkube plan", ""]
    for document in documents:
        lines += [f"### {document['stack']} ({document['cloud']}, {document['region']})", "",
                  "| pool | capacity | machine | gpu | nodes | taints | max price | cost / month |",
                  "|---|---|---|---|---|---|---|---|"]
        for pool in document["pools"]:
            taints = "<br>".join(f"`{t}`" for t in pool["taints"]) or "-"
            lines.append(f"| {pool['name']} | {pool['capacity']} | {pool['machine']} | {_gpu(pool)} | "
                         f"{pool['min']}..{pool['max']} | {taints} | {_price(pool)} | "
                         f"{_pool_cost(document, pool['name']).replace(chr(10), '<br>')} |")
        lines += ["", f"**{cost_summary(document)}**"]
        lines += ["", "| workload | kind | namespace | pools |", "|---|---|---|---|"]
        lines += [f"| {names} | {kind} | {namespace} | {pools} |"
                  for names, kind, namespace, pools, _ in _placement_rows(document)]
        lines += ["", *(f"- {n}" for n in placement_notes(document))]
        lines += ["", "| deploy preflight | verdict | why |", "|---|---|---|"]
        lines += [f"| {c['title']} | {'pass' if c['ok'] else '**FAIL**'} | {c['detail']} |"
                  for c in document["preflight"]]
        lines += ["", f"{len(document['resources'])} resources; secret outputs: "
                  + (", ".join(n for n, o in document["outputs"].items() if o["secret"]) or "none"), ""]
        lines += [f"> {w}" for w in document["warnings"]]
        lines += [""]
        lines += [f"> **error:** {e}" for e in document["errors"]]
    return "\n".join(lines).rstrip() + "\n"
