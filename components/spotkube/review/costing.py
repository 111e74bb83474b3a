"""What a platform costs a month: the pools its program registers (or, for the warnings a component logs,
those it plans) priced with the bundled table, the user's price file and the stack's own prices.

This joins three pure pieces (the pools priced with the price table, the cost model, the cloud's facts)
into the report a FinOps-minded reviewer reads: per-pool prices and monthly totals, and next to them the
warnings about prices we do not have, spot max prices that would cost more than on-demand or evict at
once, and GPU pools that cost money while idle. Those warnings are the neutral layer's rules
(`spotkube.platform.cost.pricing`), the same the cluster components log under `pulumi up`.

A pool without a price is "unpriced", never $0.00: its figures are None (null in JSON). A total is
shown only when it covers every pool (like with like): an unpriced pool that would add to a total
(nodes kept at `min`, or scenario hours) makes that total unknown, and the plan names the pool
instead of printing a sum over fewer pools. An unpriced pool that adds nothing (min 0, no hours)
leaves the totals whole and is named in a note. The model: docs/cost.md.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from spotkube.clouds import price_table, profile
from spotkube.platform.cost import Assumptions, PoolCost, PoolUsage, StackCost, stack_cost
from spotkube.platform.cost.fixed import FixedCosts
from spotkube.platform.cost.model import HOURS_PER_MONTH
from spotkube.platform.cost.prices import BUNDLED, STACK_FILE, CloudPricing, Price, PriceTable
from spotkube.platform.cost.pricing import (
    UNPRICED,
    Figure,
    PoolToPrice,
    PricedPool,
    missing_prices,
    priced_pools,
    stack_prices,
)
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.warnings import PlanWarning

#: The monthly totals, as the JSON names them.
FIGURES: tuple[Figure, ...] = ("idleFloor", "scenario", "onDemandEquivalent")


@record
class UnpricedPool:
    """A pool without a price, as a reviewer needs it named: which machine, where, which totals it blocks."""

    pool: str
    machine: str
    gpu: str | None
    region: str
    missing: tuple[str, ...]
    blocks: tuple[str, ...]
    #: Why the shipped table has no such price, as it records it (None where it records nothing).
    why: str | None = None

    def text(self, tense: str = "has") -> str:
        """`platform, Standard_D8s_v3 in uksouth, has no price` (`had` for the base of a diff)."""
        what = self.machine + (f" with {self.gpu}" if self.gpu else "")
        return f"{self.pool}, {what} in {self.region}, {tense} no price"

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "machine": self.machine, "gpu": self.gpu, "region": self.region,
                "missing": list(self.missing), "blocks": list(self.blocks), **({"why": self.why} if self.why else {})}


#: How old a price may be before the plan notes it: spot prices move (Azure's at any time, GCP's up
#: to once a day), and a quarter is long enough for a list price to change too.
STALE_AFTER_DAYS = 90


@dataclass
class CostReport:
    """Per-pool prices, the stack's monthly totals, and warnings.

    `stack_cost` sums the priced pools; a total is reported (`total`) only when no unpriced pool would
    add to it. `user_file` is the user price file merged over the bundled table, when there was one.
    """

    stack_cost: StackCost
    pools: list[PricedPool]
    table_date: str
    warnings: list[PlanWarning] = field(default_factory=list)
    user_file: str | None = None
    #: Every pool without a price, with the totals it blocks (possibly none).
    unpriced: list[UnpricedPool] = field(default_factory=list)
    #: Costs the plan states the basis of rather than guess a figure for (logs billed per GB
    #: ingested), and what a shared GPU costs per client.
    basis: list[str] = field(default_factory=list)
    #: What the registered resources cost a month besides the nodes (cluster fee, NAT, IPs, disks,
    #: volumes), part of the idle floor; None when priced without the program's registrations.
    fixed: FixedCosts | None = None
    #: The day the prices are judged on: one read more than `STALE_AFTER_DAYS` before it gets a note.
    today: datetime.date = field(default_factory=datetime.date.today)

    def line(self, pool: str) -> tuple[PricedPool, PoolCost] | None:
        """A priced pool and its monthly cost; None when the table has no price for it."""
        priced = next((p for p in self.pools if p.pool.name == pool), None)
        cost = next((c for c in self.stack_cost.pools if c.name == pool), None)
        if priced is None or cost is None or not priced.priced:
            return None
        return priced, cost

    @property
    def unpriced_pools(self) -> list[str]:
        return [p.pool.name for p in self.pools if not p.priced]

    @property
    def priced_pools(self) -> list[str]:
        return [p.pool.name for p in self.pools if p.priced]

    def blockers(self, figure: Figure) -> list[UnpricedPool]:
        """The unpriced pools that leave `figure` unknown."""
        return [u for u in self.unpriced if figure in u.blocks]

    def blocker_texts(self, figure: Figure) -> list[str]:
        """Everything without a price that leaves `figure` unknown: pools, and for the idle floor the
        fixed lines too."""
        fixed = self.fixed.unpriced if self.fixed is not None and figure == "idleFloor" else []
        return [u.text() for u in self.blockers(figure)] + [line.unpriced_text() for line in fixed]

    def total(self, figure: Figure) -> Decimal | None:
        """A monthly total over every pool (and, for the idle floor, every fixed line), or None when
        something without a price would add to it."""
        if self.blocker_texts(figure):
            return None
        if figure == "idleFloor":
            fixed = self.fixed.total_usd if self.fixed is not None else None
            return self.stack_cost.idle_floor_usd + (fixed or Decimal(0))
        return {"scenario": self.stack_cost.scenario_usd,
                "onDemandEquivalent": self.stack_cost.on_demand_equivalent_usd}[figure]

    @property
    def nodes_idle_floor(self) -> Decimal | None:
        """The pools' part of the idle floor (nodes kept at their minimum), when every such pool is priced."""
        return None if self.blockers("idleFloor") else self.stack_cost.idle_floor_usd

    @property
    def saving_percent(self) -> int | None:
        """What spot saves on the scenario, when both of its totals are known."""
        if self.total("scenario") is None or self.total("onDemandEquivalent") is None:
            return None
        return self.stack_cost.saving_percent

    @property
    def complete(self) -> bool:
        """Whether every pool is priced."""
        return not self.unpriced_pools

    @property
    def notes(self) -> list[str]:
        """The unpriced pools that add nothing to the totals, named so a missing price stays visible."""
        return [f"{u.text()}; at min 0 with no scenario hours it adds nothing to the totals"
                + (f" ({u.why})" if u.why else "") for u in self.unpriced if not u.blocks]

    @property
    def price_notes(self) -> list[str]:
        """A note when a price the plan used was read more than `STALE_AFTER_DAYS` ago, from the bundled
        table or the user's file: spot prices move, and `spotkube prices refresh` reads fresh ones. A note,
        not a warning: an old price is still the best figure offline, and `--strict` should not fail on it.
        A stack's own prices (`cost.prices`) are its own reasoning, which no refresh replaces."""
        old: dict[str, list[datetime.date]] = {}
        for priced in self.pools:
            for price in (priced.price, priced.on_demand):
                if price is not None and STACK_FILE not in price.origin.split(" + ") and \
                        (self.today - price.date).days > STALE_AFTER_DAYS:
                    old.setdefault(priced.pool.name, []).append(price.date)
        if not old:
            return []
        oldest = min(day for days in old.values() for day in days)
        return [f"prices older than {STALE_AFTER_DAYS} days (the oldest read {oldest.isoformat()}, "
                f"{(self.today - oldest).days} days ago) price {', '.join(old)}; spot prices move, so run "
                "`spotkube prices refresh` for fresh ones"]

    def to_json(self) -> dict[str, Any]:
        lines = {line.name: line for line in self.stack_cost.pools}
        assumptions = self.stack_cost.assumptions
        return {
            "currency": "USD",
            "priceTableDate": self.table_date,
            "userPriceFile": self.user_file,
            "assumptions": {"evictionRate": float(assumptions.eviction_rate),
                            "reworkFraction": float(assumptions.rework_fraction),
                            "hoursPerMonth": HOURS_PER_MONTH},
            "pools": [_pool_json(p, lines.get(p.pool.name)) for p in self.pools],
            "basis": list(self.basis),
            "fixed": None if self.fixed is None else self.fixed.to_json(),
            "priceNotes": self.price_notes,
            "total": {
                **{figure: _money(self.total(figure)) for figure in FIGURES},
                "nodesIdleFloor": _money(self.nodes_idle_floor),
                "fixedIdleFloor": _money(self.fixed.total_usd if self.fixed else None),
                "savingPercent": self.saving_percent,
                "complete": self.complete,
                "pricedPools": self.priced_pools,
                "unpricedPools": self.unpriced_pools,
                "unpriced": [u.to_json() for u in self.unpriced],
            },
        }


def _recorded_gap(table: PriceTable, cloud: str, region: str, priced: PricedPool) -> str | None:
    """The reason the table records for a missing machine price of the pool (its own capacity first)."""
    keys = [(cloud, region, priced.pool.machine, "machine", capacity) for capacity in missing_prices(priced)]
    return next((gap.reason for key in keys for gap in table.unpriced if gap.key == key), None)


def _separate_gpu(pricing: CloudPricing, pool: PoolToPrice) -> str | None:
    """The GPUs billed on top of the machine (GKE N1), which the pool's price must include too."""
    if not pool.gpu_type or not pool.gpu_count or not pricing.gpus_billed_separately(pool.machine):
        return None
    return f"{pool.gpu_count} × {pool.gpu_type}"


def _money(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def _price_json(price: Price | None, prefix: str) -> dict[str, Any]:
    """Where one price came from: its row's source and date, and "bundled", the user file or the stack file."""
    return {
        f"{prefix}Source": price.source if price else None,
        f"{prefix}Date": price.date.isoformat() if price else None,
        f"{prefix}From": price.origin if price else None,
    }


def _pool_json(priced: PricedPool, line: PoolCost | None) -> dict[str, Any]:
    """One pool's figures; those an unpriced pool lacks are null, never 0."""
    known = line if priced.priced else None
    return {
        "pool": priced.pool.name,
        "capacity": priced.pool.capacity,
        "scenarioHours": float(priced.hours),
        "priced": priced.priced,
        "usdPerHour": _money(priced.price.usd_per_hour if priced.price else None),
        "onDemandUsdPerHour": _money(priced.on_demand.usd_per_hour if priced.on_demand else None),
        "idleFloor": _money(known.idle_floor_usd if known else None),
        "scenario": _money(known.scenario_usd if known else None),
        "onDemandEquivalent": _money(known.on_demand_equivalent_usd if known else None),
        "savingPercent": known.saving_percent if known else None,
        "usdPerClientHour": _money(priced.per_client(priced.price)) if priced.pool.sharing else None,
        **_price_json(priced.price, "price"),
        **_price_json(priced.on_demand, "onDemandPrice"),
    }


def price_pools(
    spec: PlatformSpec, pools: Sequence[PoolToPrice], *, hours: Mapping[str, Decimal] | None = None,
    table: PriceTable | None = None, today: datetime.date | None = None,
) -> CostReport:
    """Price the pools of one platform with its region and cost scenario (`spec`); `hours` overrides the
    scenario per pool (what-if questions).

    `today` is the day the prices' age is judged on (the report notes prices older than
    `STALE_AFTER_DAYS`); by default the day it runs.

    Without `table`, the prices are `price_table()`'s: the bundled table with the user's price file
    ($SPOTKUBE_PRICES, or the per-user default when it exists) merged over it. The stack's own prices
    (`cost.prices`) go over either. A user file that can't be used raises PriceFileError.
    """
    cloud = profile(spec.cloud)
    pricing = cloud.pricing
    table = stack_prices(spec, table if table is not None else price_table(), pricing)
    priced, warnings = priced_pools(spec, pools, table, pricing, cloud.price_refresh, hours=hours)
    usages = [
        PoolUsage(p.pool.name, p.pool.capacity, p.price.usd_per_hour, p.on_demand.usd_per_hour, p.floor, p.hours)
        for p in priced if p.price is not None and p.on_demand is not None
    ]
    spec_cost = spec.cost
    assumptions = Assumptions(Decimal(str(spec_cost.eviction_rate)), Decimal(str(spec_cost.rework_fraction)))
    user_file = str(table.user_file) if table.user_file is not None else None
    unpriced = [UnpricedPool(p.pool.name, p.pool.machine, _separate_gpu(pricing, p.pool), spec.region,
                             missing_prices(p), p.blocks, _recorded_gap(table, pricing.name, spec.region, p))
                for p in priced if not p.priced]
    report = CostReport(stack_cost(usages, assumptions), list(priced), table.date.isoformat(),
                        warnings=list(warnings), user_file=user_file, unpriced=unpriced,
                        today=today or datetime.date.today())
    for p in priced:
        if p.pool.sharing is not None and p.price is not None:
            report.basis.append(
                f"{p.pool.name}: a shared GPU costs ${p.per_client(p.price)}/h per client ({p.pool.capacity} "
                f"${p.price.usd_per_hour}/h over {p.clients} clients: {p.pool.gpu_count} × {p.pool.gpu_type}, "
                f"{p.pool.sharing.text()})")
    logs = cloud.logs_cost_basis(spec)
    if logs:
        report.basis.append(logs)
    return report


def price_origin(price: Price | None) -> str:
    """A short name for where a price came from: "bundled", "user file", "stack file", or a mix."""
    if price is None:
        return UNPRICED
    names = {BUNDLED: "bundled", STACK_FILE: "stack file"}
    return " + ".join(dict.fromkeys(names.get(part, "user file") for part in price.origin.split(" + ")))
