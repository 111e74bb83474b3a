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

from spotkube.inventory import registered_pools
from spotkube.offline import StackRun


def stack_document(run: StackRun) -> dict[str, Any]:
    """Everything the plan says about one stack, in the stable JSON shape."""
    custom = [r for r in run.registrations if r.custom]
    return {
        "stack": run.stack,
        "cloud": run.spec.cloud,
        "region": run.spec.region,
        "environment": run.spec.environment,
        "pools": registered_pools(run.spec.cloud, run.registrations),
        "resources": [{"type": r.type, "name": r.name} for r in custom],
        "outputs": {name: {"secret": out.secret} for name, out in sorted(run.outputs.items())},
        "warnings": [line for line in run.log if line.startswith("warning")],
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


def pool_table(document: dict[str, Any]) -> Table:
    table = Table(title=f"{document['stack']}  ({document['cloud']}, {document['region']}, "
                  f"{document['environment']})", title_justify="left", expand=False)
    for column in ("pool", "role", "capacity", "machine", "gpu", "nodes", "taints",
                   "eviction", "max price", "zones"):
        table.add_column(column, overflow="fold")
    for pool in document["pools"]:
        table.add_row(
            pool["name"], pool["role"], pool["capacity"], pool["machine"], _gpu(pool),
            f"{pool['min']}..{pool['max']}", "\n".join(pool["taints"]) or "-",
            pool["evictionPolicy"] or "-", _price(pool), ",".join(pool["zones"]) or "-",
        )
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
        parts: list[Any] = [pool_table(document), resource_summary(document)]
        parts += [Text(w, style="yellow") for w in document["warnings"]]
        console.print(Group(*parts))
        console.print()


def to_markdown(documents: Sequence[dict[str, Any]]) -> str:
    """A compact block for a pull-request comment."""
    lines = ["## spotkube plan", ""]
    for document in documents:
        lines += [f"### {document['stack']} ({document['cloud']}, {document['region']})", "",
                  "| pool | capacity | machine | gpu | nodes | taints | max price |",
                  "|---|---|---|---|---|---|---|"]
        for pool in document["pools"]:
            taints = "<br>".join(f"`{t}`" for t in pool["taints"]) or "-"
            lines.append(f"| {pool['name']} | {pool['capacity']} | {pool['machine']} | {_gpu(pool)} | "
                         f"{pool['min']}..{pool['max']} | {taints} | {_price(pool)} |")
        lines += ["", f"{len(document['resources'])} resources; secret outputs: "
                  + (", ".join(n for n, o in document["outputs"].items() if o["secret"]) or "none"), ""]
        lines += [f"> {w}" for w in document["warnings"]]
    return "\n".join(lines).rstrip() + "\n"
