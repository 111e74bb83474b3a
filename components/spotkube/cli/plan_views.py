"""How `spotkube plan` shows a `PlanDocument`: a terminal table, or Markdown for a pull request.

Both views read the typed document, never its JSON, so they can't disagree with it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.cli import cost_views
from spotkube.cli.terminal import fit_columns
from spotkube.platform.cloud import RegisteredPool
from spotkube.platform.posture import Setting
from spotkube.platform.preflight import Verdict
from spotkube.platform.startup import PoolStartup, duration
from spotkube.review.acknowledgements import AcknowledgedWarning
from spotkube.review.fallback import GpuFallback
from spotkube.review.plan_document import PlanDocument
from spotkube.review.resource_list import Resource


def _gpu(pool: RegisteredPool) -> str:
    """`1 × nvidia-a100-80gb`, with a partitioned size's share and its sharing as registered: `, MIG 1g.10gb`."""
    if not pool.gpu_type:
        return "-"
    share = f" ({pool.gpu_share} of a GPU each)" if pool.gpu_share else ""
    return f"{pool.gpu_count} × {pool.gpu_type}{share}" + (f", {pool.gpu_sharing}" if pool.gpu_sharing else "")


def _price(pool: RegisteredPool) -> str:
    price = pool.max_price
    if price is None:
        return "-"
    return "on-demand cap" if price == -1 else f"${price}/h"


def _pool_cost(document: PlanDocument, pool: str) -> str:
    """Idle floor and scenario cost a month, for the pool's row; "unpriced" without a price."""
    return cost_views.pool_cost_text(document.cost, pool)


def cost_summary(document: PlanDocument) -> str:
    """The stack's monthly total in one line (shared with `spotkube cost`): idle floor, scenario,
    what spot saves, and the pools left out for want of a price; "unpriced" when none has one."""
    return cost_views.summary(document.cost)


def catalog_lines(document: PlanDocument) -> list[str]:
    """The line that says which GPU catalog judged the stack: its date, source and where it came from."""
    return [document.catalog.line()] if document.catalog else []


_POOL_COLUMNS = ("pool", "taints", "cost / month")


def _pool_cells(document: PlanDocument, pool: RegisteredPool) -> tuple[str, ...]:
    """What a pool is (name; role and capacity; machine and GPUs; nodes; eviction and max price; zones),
    its taints one a line, and its cost: three columns, so that a pool's row keeps every value whole at
    120 columns, a GKE compute class taint included."""
    what = [pool.name, f"{pool.role}, {pool.capacity}", pool.machine, *([_gpu(pool)] if pool.gpu_type else []),
            f"nodes {pool.min}..{pool.max}"]
    if pool.eviction_policy:
        what.append(f"eviction {pool.eviction_policy}")
    if pool.max_price is not None:
        what.append(f"max price {_price(pool)}")
    if pool.zones:
        what.append(f"zones {', '.join(pool.zones)}")
    return ("\n".join(what), "\n".join(pool.taints) or "-", _pool_cost(document, pool.name))


def pool_table(document: PlanDocument, width: int | None = None) -> Table:
    """The pools, one row each in three columns, wrapped only at spaces. Given the console's `width`,
    when even the longest words don't fit, each pool becomes a block of lines in a single column
    instead, so a taint or a machine is never cut."""
    title = f"{document.title}  ({document.cloud}, {document.region}, {document.environment})"
    table = Table(title=title, title_justify="left", expand=False, show_lines=True)
    for column in _POOL_COLUMNS:
        table.add_column(column, overflow="ellipsis")
    for pool in document.pools:
        table.add_row(*(Text(cell) for cell in _pool_cells(document, pool)))
    if width is not None and not fit_columns(table, width):
        return _pool_cards(document, title)
    return table


def _pool_cards(document: PlanDocument, title: str) -> Table:
    """Narrow terminals: one block per pool (what it is, its size, its taints one a line, its cost),
    in a single column so that a long taint, such as a GKE pool's compute class taint, keeps its line."""
    table = Table(title=title, title_justify="left", expand=False, show_lines=True)
    table.add_column("pool", overflow="ellipsis")
    for pool in document.pools:
        lines = [f"{pool.name}: {pool.role}, {pool.capacity}, {pool.machine}"
                 + (f", {_gpu(pool)}" if pool.gpu_type else ""),
                 f"nodes {pool.min}..{pool.max}"
                 + (f", eviction {pool.eviction_policy}" if pool.eviction_policy else "")
                 + (f", max price {_price(pool)}" if pool.max_price is not None else "")]
        if pool.zones:
            lines.append("zones " + ", ".join(pool.zones))
        if pool.taints:
            lines += ["taints:", *pool.taints]
        lines.append("cost / month: " + _pool_cost(document, pool.name).replace("\n", "; "))
        table.add_row(Text("\n".join(lines)))
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
    table.add_column("workload", overflow="ellipsis", max_width=70)
    for column in ("kind", "namespace", "pools"):
        table.add_column(column, overflow="ellipsis")
    for names, kind, namespace, pools, _ in placement_rows(document):
        table.add_row(names, kind, namespace, pools, style="red" if pools.startswith("NOWHERE") else None)
    return table


def _verdict(check: Verdict) -> str:
    return "pass" if check.ok else "FAIL"


def preflight_table(document: PlanDocument) -> Table:
    table = Table(title="deploy preflight", title_justify="left", expand=False)
    for column in ("rule", "verdict", "why"):
        table.add_column(column, overflow="ellipsis", max_width=110 if column == "why" else None)
    for check in document.preflight:
        table.add_row(check.title, _verdict(check), check.detail, style=None if check.ok else "red")
    return table


def _setting_text(setting: Setting) -> str:
    return f"{setting.value} (weak: {setting.concern})" if setting.concern else setting.value


def posture_rows(document: PlanDocument) -> list[tuple[str, str, Setting]]:
    """(where, setting name, setting) for each cluster's security settings, then the add-ons', the GPU
    supply's and the upgrades'."""
    rows = [(cluster.resource, s.name, s) for cluster in document.posture for s in cluster.settings]
    rows += [("add-ons", s.name, s) for s in document.addons]
    rows += supply_rows(document)
    rows += [("upgrades", f"{u.kind} {u.pool}", Setting(
        f"{u.kind} {u.pool}", u.text(),
        "a node image update can drain it in the middle of a step" if u.gpu and u.window is None else None))
        for u in document.upgrades]
    return rows


def supply_rows(document: PlanDocument) -> list[tuple[str, str, Setting]]:
    """(where, name, setting) for each GPU pool's capacity reservation and image streaming, and the
    nodes' registry grants."""
    return [("GPU supply", s.name, s) for s in document.supply]


def posture_table(document: PlanDocument) -> Table:
    table = Table(title=f"{document.title}: security posture, add-ons, GPU supply and upgrades", title_justify="left",
                  expand=False)
    for column in ("setting", "value"):
        table.add_column(column, overflow="ellipsis")
    for _, name, setting in posture_rows(document):
        table.add_row(name, _setting_text(setting), style="yellow" if setting.concern else None)
    return table


def _tier_price(document: PlanDocument, pool: str) -> str:
    """A pool's hourly price for the fallback's tiers, or why it has none."""
    priced = next((p for p in document.cost.pools if p.pool.name == pool), None)
    if priced is not None and priced.price is not None:
        return f"{pool} {cost_views.money(priced.price.usd_per_hour)}/h"
    recorded = any(u.pool == pool and u.why for u in document.cost.unpriced)
    return f"{pool} unpriced" + (" (the cost notes say why)" if recorded else "")


def fallback_tiers(document: PlanDocument, fallback: GpuFallback) -> list[str]:
    """Each tier of a GPU type's fallback, in the order tried: its capacity, its pools with their prices,
    and what bounds the wait on it before the next tier."""
    return [f"{step.capacity}: {', '.join(_tier_price(document, p) for p in step.pools)}"
            + (f" ({step.bound})" if step.bound else "") for step in fallback.order]


def fallback_rows(document: PlanDocument) -> list[tuple[str, str, str, str]]:
    """(GPU type, tiers tried in order one a line, worst case before on-demand, note) for each GPU type."""
    return [(f.gpu_type, "\n".join(fallback_tiers(document, f)), f.worst_case_text(),
             f.warning or f.note or f"ordered by {f.ordered_by}") for f in document.fallback]


def fallback_table(document: PlanDocument) -> Table:
    table = Table(title=f"{document.title}: fallback per GPU type", title_justify="left", expand=False)
    for column in ("gpu", "tried in order: price, bound", "worst case before on-demand", "note"):
        table.add_column(column, overflow="fold")
    for gpu, order, worst, note in fallback_rows(document):
        table.add_row(gpu, order, worst, note)
    return table


def _image_text(startup: PoolStartup) -> str:
    image = startup.image
    size = f" {image.size_gb:g} GB" if image.size_gb is not None and image.figure and image.figure.per_gb else ""
    what = f"{image.delivery}{size}: "
    if image.span is None:
        return what + (image.note or "unknown")
    kind = f" ({image.figure.kind})" if image.figure else ""
    return what + image.span.text() + kind + (f"; {image.note}" if image.note else "")


def _out_of_capacity_text(startup: PoolStartup) -> str:
    if startup.capacity == "on-demand":
        return "-"
    fallback = startup.fallback
    if fallback is None:
        return startup.fallback_note or "-"
    then = startup.out_of_capacity
    return (f"up to {duration(fallback.bound_seconds)} before on-demand {', '.join(fallback.pools)}, then "
            f"{fallback.then.text() if fallback.then else 'its own start (image size not declared)'}"
            + (f": {then.text()} in all" if then else ""))


def startup_rows(document: PlanDocument) -> list[tuple[str, str, str, str, str]]:
    """(pool, node, image, total, when its capacity is out) for each GPU pool from 0 nodes."""
    rows = []
    for s in document.startup:
        total = s.total
        rows.append((s.pool, f"{s.node_span.text()} ({s.node.kind})", _image_text(s),
                     total.text() if total else f"at least {duration(s.node_span.low)}", _out_of_capacity_text(s)))
    return rows


def startup_table(document: PlanDocument) -> Table:
    table = Table(title=f"{document.title}: time to a running GPU step from 0 nodes (docs/time-to-gpu.md)",
                  title_justify="left", expand=False)
    for column in ("pool", "node", "image", "total", "when its capacity is out"):
        table.add_column(column, overflow="ellipsis")
    for row in startup_rows(document):
        table.add_row(*row)
    return table


def quota_rows(document: PlanDocument) -> list[tuple[str, str, str, str]]:
    """(quota, need, of which upgrade surge, pools) for each quota the stack counts against."""
    if document.quota is None:
        return []
    return [(f"{n.quota}" + (" (all regions)" if n.scope == "global" else f" ({document.region})"),
             f"{n.total} {n.unit}", str(n.surge), ", ".join(n.pools)) for n in document.quota.needs]


def quota_notes(document: PlanDocument) -> list[str]:
    """The surge assumption, what could not be counted, and how to check it live."""
    if document.quota is None:
        return []
    return [f"surge: {document.quota.surge}", *document.quota.notes,
            f"check it against the live limits: spotkube quota --stack {document.stack}"]


def quota_table(document: PlanDocument) -> Table:
    table = Table(title=f"{document.title}: quota at full scale", title_justify="left", expand=False)
    for column in ("quota", "need", "of which surge", "pools"):
        table.add_column(column, overflow="fold")
    for row in quota_rows(document):
        table.add_row(*row)
    return table


def policy_lines(document: PlanDocument) -> list[str]:
    if not document.policy:
        return ["policy pack: every rule passes"]
    return [f"policy {finding.rule}: {finding.message}" for finding in document.policy]


def _options(resource: Resource) -> str:
    options = ["protect"] * resource.protect
    if resource.replace_on_changes:
        options.append("replace on " + ", ".join(resource.replace_on_changes))
    if resource.delete_before_replace:
        options.append("delete before replace")
    return "; ".join(options)


def resource_table(document: PlanDocument) -> Table:
    """The resource tree: each name with its type under it, and what it is beside them. Two columns,
    so names, type tokens and option names keep their words whole at 120 columns."""
    table = Table(title=f"{len(document.resources)} resources and components", title_justify="left", expand=False)
    for column in ("name and type", "what it is"):
        table.add_column(column, overflow="ellipsis")
    for resource in document.resources:
        what = "; ".join(part for part in (resource.note, _options(resource)) if part) or "-"
        indent = "  " * (len(resource.path) - 1)
        table.add_row(Text(f"{indent}{resource.name}\n{indent}  {resource.type}"), what,
                      style="dim" if resource.kind == "provider" else None)
    return table


def others_line(document: PlanDocument) -> str | None:
    """The stack's resources outside every spotkube cluster, by type; None when there are none."""
    if not document.others:
        return None
    kinds = "; ".join(f"{len(o.names)} × {o.type} ({', '.join(o.names)})" for o in document.others)
    return f"other resources of the stack (in no spotkube cluster): {kinds}"


def outputs_line(document: PlanDocument) -> Text:
    outputs = ", ".join(f"{n} (secret)" if secret else n for n, secret in document.outputs.items())
    return Text(f"outputs: {outputs}")


def details_text(document: PlanDocument) -> str:
    """Every resource's registered inputs, secrets masked as Pulumi masks them (`--details`)."""
    blocks = [f"{resource.type} {'/'.join(resource.path)}\n{_inputs_json(resource)}" for resource in document.resources]
    return "\n\n".join(blocks)


def _inputs_json(resource: Resource) -> str:
    return json.dumps(resource.inputs, indent=2, ensure_ascii=False)


def render_table(documents: Sequence[PlanDocument], console: Console, details: bool = False) -> None:
    for document in documents:
        parts: list[Any] = [posture_table(document), pool_table(document, console.width), Text(cost_summary(document)),
                            *(Text(f"fixed: {line}") for line in cost_views.fixed_lines(document.cost, sources=False)),
                            *(Text(f"note: {note}") for note in document.cost.price_notes),
                            *(Text(f"cost basis: {line}") for line in document.cost.basis),
                            *(Text(line) for line in catalog_lines(document)), fallback_table(document),
                            *([startup_table(document)] if document.startup else []), quota_table(document)]
        parts += [Text(f"note: {n}", style="dim") for n in quota_notes(document)]
        parts += [placement_table(document), preflight_table(document)]
        parts += [Text(line, style="red" if document.policy else None) for line in policy_lines(document)]
        parts += [Text(f"note: {n}", style="dim") for n in placement_notes(document)]
        parts += [resource_table(document), *(Text(line) for line in [others_line(document)] if line),
                  outputs_line(document)]
        if details:
            parts.append(Text(details_text(document)))
        parts += [Text(f"warning {cost_views.warning_text(w)}", style="yellow") for w in document.warnings]
        parts += [Text(acknowledged_text(a), style="dim") for a in document.acknowledged]
        parts += [Text(f"error: {e}", style="red") for e in document.errors]
        for part in parts:  # the other tables keep their words whole too; only the longest lose their ends
            if isinstance(part, Table) and part.columns[0].width is None:
                fit_columns(part, console.width, squeeze=True)
        console.print(Group(*parts))
        console.print()


def _until(acknowledged: AcknowledgedWarning) -> str:
    expires = acknowledged.acknowledgement.expires
    return f" (until {expires})" if expires else ""


def acknowledged_text(acknowledged: AcknowledgedWarning) -> str:
    """An acknowledged warning with the team's reason: shown, but no longer failing `--strict`."""
    return (f"acknowledged [{acknowledged.warning.id}]: {acknowledged.warning.message}; reason: "
            f"{acknowledged.acknowledgement.reason}{_until(acknowledged)}")


def _md_text(text: str) -> str:
    return text.replace("\n", " ")


def _md_setting(setting: Setting) -> str:
    return f"{setting.value} **weak: {setting.concern}**" if setting.concern else setting.value


def _md_resources(document: PlanDocument, details: bool) -> list[str]:
    """The resource tree in a collapsed block, with each resource's inputs under `--details`."""
    lines = ["<details><summary>" f"{len(document.resources)} resources and components</summary>", "",
             "| name | type | what it is |", "|---|---|---|"]
    for resource in document.resources:
        what = "; ".join(part for part in (resource.note, _options(resource)) if part) or "-"
        indent = "&nbsp;&nbsp;" * (len(resource.path) - 1)
        lines.append(f"| {indent}{resource.name} | `{resource.type}` | {what} |")
    if details:
        for resource in document.resources:
            lines += ["", f"`{resource.type}` {'/'.join(resource.path)}", "", "```json", _inputs_json(resource), "```"]
    return [*lines, "", "</details>"]


def to_markdown(documents: Sequence[PlanDocument], details: bool = False) -> str:
    """A compact block for a pull-request comment."""
    lines = ["## spotkube plan", ""]
    for document in documents:
        lines += [f"### {document.title} ({document.cloud}, {document.region})", "",
                  "| security, add-ons, GPU supply and upgrades | value |", "|---|---|"]
        lines += [f"| {name} | {_md_setting(setting)} |" for _, name, setting in posture_rows(document)]
        lines += ["",
                  "| pool | capacity | machine | gpu | nodes | taints | max price | cost / month |",
                  "|---|---|---|---|---|---|---|---|"]
        for pool in document.pools:
            taints = "<br>".join(f"`{t}`" for t in pool.taints) or "-"
            lines.append(f"| {pool.name} | {pool.capacity} | {pool.machine} | {_gpu(pool)} | "
                         f"{pool.min}..{pool.max} | {taints} | {_price(pool)} | "
                         f"{_pool_cost(document, pool.name).replace(chr(10), '<br>')} |")
        lines += ["", f"**{cost_summary(document)}**"]
        lines += [f"- fixed: {line}" for line in cost_views.fixed_lines(document.cost, sources=False)]
        lines += [f"- note: {note}" for note in document.cost.price_notes]
        lines += [f"- cost basis: {line}" for line in document.cost.basis]
        lines += ["", *catalog_lines(document)]
        lines += ["", "| gpu | tried in order: price, bound | worst case before on-demand | note |",
                  "|---|---|---|---|"]
        lines += [f"| {gpu} | {order.replace(chr(10), '<br>')} | {worst} | {note} |"
                  for gpu, order, worst, note in fallback_rows(document)]
        if document.startup:
            lines += ["", "| pool | time to a running step: node | image | total | when its capacity is out |",
                      "|---|---|---|---|---|"]
            lines += [f"| {' | '.join(row)} |" for row in startup_rows(document)]
        if document.quota is not None:
            lines += ["", "| quota at full scale | need | of which surge | pools |", "|---|---|---|---|"]
            lines += [f"| {quota} | {need} | {surge} | {pools} |" for quota, need, surge, pools in quota_rows(document)]
            lines += ["", *(f"- {n}" for n in quota_notes(document))]
        lines += ["", "| workload | kind | namespace | pools |", "|---|---|---|---|"]
        lines += [f"| {names} | {kind} | {namespace} | {pools} |"
                  for names, kind, namespace, pools, _ in placement_rows(document)]
        lines += ["", *(f"- {n}" for n in placement_notes(document))]
        lines += ["", "| deploy preflight | verdict | why |", "|---|---|---|"]
        lines += [f"| {c.title} | {'pass' if c.ok else '**FAIL**'} | {c.detail} |" for c in document.preflight]
        lines += ["", *(f"- {line}" for line in policy_lines(document))]
        lines += ["", *_md_resources(document, details), ""]
        lines += [line + "\n" for line in [others_line(document)] if line]
        lines += ["secret outputs: " + (", ".join(document.secret_outputs) or "none"), ""]
        # A blank line after each, so that each quote stays a paragraph of its own.
        for w in document.warnings:
            lines += [f"> **warning** `{w.id}`: {_md_text(w.message)}", ""]
        for a in document.acknowledged:
            lines += [f"> acknowledged `{a.warning.id}`: {_md_text(a.warning.message)} **Reason:** "
                      f"{_md_text(a.acknowledgement.reason)}{_until(a)}", ""]
        lines += [""]
        for e in document.errors:
            lines += [f"> **error:** {e}", ""]
    return "\n".join(lines).rstrip() + "\n"
