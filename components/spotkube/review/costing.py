"""What a planned platform costs a month: the plan's pools priced with the bundled table and the
user's price file.

This joins three pure pieces (the plan, the price table, the cost model) and adds the warnings a
FinOps-minded reviewer wants next to the numbers: prices we do not have, spot max prices that
would cost more than on-demand or evict at once, and GPU pools that cost money while idle.

A pool without a price is "unpriced", never $0.00: its figures are None (null in JSON), the totals
cover the priced pools only and say which pools they leave out, and when no pool is priced there
are no totals at all. The model: docs/architecture.md#the-cost-model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from spotkube.clouds import price_table, profile
from spotkube.platform.cost import Assumptions, PoolCost, PoolUsage, StackCost, hourly_price, stack_cost
from spotkube.platform.cost.model import HOURS_PER_MONTH, to_cents
from spotkube.platform.cost.prices import BUNDLED, Price, PriceTable, user_file_path
from spotkube.platform.plan import PlatformPlan, PoolPlan

#: The word for a figure spotkube has no price for, in every view.
UNPRICED = "unpriced"
#: How a cluster component tags the plan's warnings it logs under `pulumi up`
#: (`AksGpuCluster 'ml': plan warning: cost: ...`). The offline plan computes them itself, with the
#: price file its user chose, so it leaves these log lines out rather than show each warning twice.
LOGGED_PLAN_WARNING = "plan warning"


@dataclass(frozen=True)
class PricedPool:
    """One pool with the prices found for it (None when the table has none)."""

    pool: PoolPlan
    hours: Decimal
    price: Price | None
    on_demand: Price | None

    @property
    def priced(self) -> bool:
        """Both prices are known: the pool's own and the on-demand yardstick."""
        return self.price is not None and self.on_demand is not None

    @property
    def clients(self) -> int:
        """Pods one node serves at once on its GPUs: its GPU slices when shared, else 1."""
        sharing = self.pool.sharing
        return self.pool.gpu_count * sharing.slices_per_gpu if sharing else 1

    def per_client(self, price: Price | None) -> Decimal | None:
        """What one client (one slice of a shared GPU) costs an hour at `price`, to the cent's hundredth."""
        if price is None:
            return None
        return (price.usd_per_hour / self.clients).quantize(Decimal("0.0001"))


@dataclass
class CostReport:
    """Per-pool prices, the stack's monthly totals over the priced pools, and warnings.

    `user_file` is the user price file merged over the bundled table, when there was one.
    """

    stack_cost: StackCost
    pools: list[PricedPool]
    table_date: str
    warnings: list[str] = field(default_factory=list)
    user_file: str | None = None
    #: Costs the plan states the basis of rather than guess a figure for (logs billed per GB
    #: ingested), and what a shared GPU costs per client.
    basis: list[str] = field(default_factory=list)

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

    @property
    def has_totals(self) -> bool:
        """Whether any pool is priced: with none, the totals are unpriced rather than $0.00."""
        return bool(self.priced_pools)

    @property
    def complete(self) -> bool:
        """Whether the totals cover every pool."""
        return not self.unpriced_pools

    def to_json(self) -> dict[str, Any]:
        lines = {line.name: line for line in self.stack_cost.pools}
        assumptions = self.stack_cost.assumptions
        total = self.stack_cost
        figures = self.has_totals
        return {
            "currency": "USD",
            "priceTableDate": self.table_date,
            "userPriceFile": self.user_file,
            "assumptions": {"evictionRate": float(assumptions.eviction_rate),
                            "reworkFraction": float(assumptions.rework_fraction),
                            "hoursPerMonth": HOURS_PER_MONTH},
            "pools": [_pool_json(p, lines.get(p.pool.name)) for p in self.pools],
            "basis": list(self.basis),
            "total": {
                "idleFloor": float(total.idle_floor_usd) if figures else None,
                "scenario": float(total.scenario_usd) if figures else None,
                "onDemandEquivalent": float(total.on_demand_equivalent_usd) if figures else None,
                "savingPercent": total.saving_percent if figures else None,
                "complete": self.complete,
                "pricedPools": self.priced_pools,
                "unpricedPools": self.unpriced_pools,
            },
        }


def _money(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def _price_json(price: Price | None, prefix: str) -> dict[str, Any]:
    """Where one price came from: its row's source and date, and "bundled" or the user file."""
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


def scenario_hours(plan: PlatformPlan) -> dict[str, Decimal]:
    """Node-hours per pool from the stack's cost scenario: per pool plus per workload class."""
    settings = plan.spec.cost
    hours = {name: Decimal(str(value)) for name, value in settings.hours.items()}
    for workload in settings.workloads:
        hours[workload.pool] = hours.get(workload.pool, Decimal(0)) + Decimal(str(workload.hours))
    return hours


def _price(plan: PlatformPlan, pool: PoolPlan, capacity: str, table: PriceTable) -> Price | None:
    return hourly_price(profile(plan.cloud).pricing, plan.spec.region, pool.machine, capacity,
                        pool.gpu_type, pool.gpu_count, table=table)


def _unpriced_warning(plan: PlatformPlan, priced: PricedPool, table: PriceTable) -> str:
    """Which price is missing, from which tables, and the two ways to supply it."""
    pool, region = priced.pool, plan.spec.region
    cloud = profile(plan.cloud)
    missing = [pool.capacity] if priced.price is None else []
    if priced.on_demand is None and pool.capacity != "on-demand":
        missing.append("on-demand")
    what = pool.machine
    if any(table.find(cloud.pricing.name, region, pool.machine, "machine", c) for c in missing):
        # The machine has its row, so what is missing is the GPU billed on top of it (GCP N1).
        what += f" with {pool.gpu_count} × {pool.gpu_type} (no {pool.gpu_type} accelerator row)"
    tables = f"the bundled table (dated {table.date.isoformat()})"
    if table.user_file is not None:
        tables = f"the bundled table or the user price file {table.user_file}"
    target = table.user_file or user_file_path()
    fix = f"add a row for it to your price file {target}"
    if cloud.price_refresh is not None:
        command = cloud.price_refresh(region, pool.machine)
        if target != user_file_path():
            command += f" --table {target}"
        fix = f"run `{command}`, which writes it to your price file {target}, or add the row there yourself"
    return (f"{pool.name}: {UNPRICED}: no {' or '.join(missing)} price for {what} in {region} in {tables}; "
            f"its cost is left out of the totals. To price it, {fix}")


def _warnings(plan: PlatformPlan, priced: PricedPool, table: PriceTable) -> list[str]:
    pool = priced.pool
    out: list[str] = []
    if priced.price is None or priced.on_demand is None:
        out.append(_unpriced_warning(plan, priced, table))
        if pool.role == "gpu" and pool.min > 0:
            out.append(f"{pool.name}: GPU pool min is {pool.min}, so it keeps {pool.min} GPU node(s) running while "
                       f"idle ({UNPRICED}); use min 0 to scale to zero")
        return out
    if pool.max_price is not None and pool.max_price != -1:
        cap = Decimal(f"{pool.max_price:g}")
        if cap > priced.on_demand.usd_per_hour:
            out.append(f"{pool.name}: maxPrice ${cap}/h is above the on-demand price "
                       f"${priced.on_demand.usd_per_hour}/h; spot could cost more than on-demand")
        if cap < priced.price.usd_per_hour:
            out.append(f"{pool.name}: maxPrice ${cap}/h is below the current spot price "
                       f"${priced.price.usd_per_hour}/h; nodes would be evicted at once or never start")
    if pool.role == "gpu" and pool.min > 0:
        idle = to_cents(pool.min * HOURS_PER_MONTH * priced.price.usd_per_hour)
        out.append(f"{pool.name}: GPU pool min is {pool.min}, so it costs ${idle}/month while idle; "
                   "use min 0 to scale to zero")
    return out


def price_plan(
    plan: PlatformPlan, *, hours: Mapping[str, Decimal] | None = None, table: PriceTable | None = None,
) -> CostReport:
    """Price every pool of a plan; `hours` overrides the scenario per pool (what-if questions).

    Without `table`, the prices are `price_table()`'s: the bundled table with the user's price file
    ($SPOTKUBE_PRICES, or the per-user default when it exists) merged over it. A user file that
    can't be used raises PriceFileError.
    """
    table = table if table is not None else price_table()
    work = {**scenario_hours(plan), **(hours or {})}
    priced = [
        PricedPool(pool, work.get(pool.name, Decimal(0)),
                   _price(plan, pool, pool.capacity, table), _price(plan, pool, "on-demand", table))
        for pool in plan.pools
    ]
    usages = [
        PoolUsage(p.pool.name, p.pool.capacity, p.price.usd_per_hour, p.on_demand.usd_per_hour,
                  p.pool.min, p.hours)
        for p in priced if p.price is not None and p.on_demand is not None
    ]
    spec_cost = plan.spec.cost
    assumptions = Assumptions(Decimal(str(spec_cost.eviction_rate)), Decimal(str(spec_cost.rework_fraction)))
    user_file = str(table.user_file) if table.user_file is not None else None
    report = CostReport(stack_cost(usages, assumptions), priced, table.date.isoformat(), user_file=user_file)
    for p in priced:
        report.warnings.extend(_warnings(plan, p, table))
        if p.pool.sharing is not None and p.price is not None:
            report.basis.append(
                f"{p.pool.name}: a shared GPU costs ${p.per_client(p.price)}/h per client ({p.pool.capacity} "
                f"${p.price.usd_per_hour}/h over {p.clients} clients: {p.pool.gpu_count} × {p.pool.gpu_type}, "
                f"{p.pool.sharing.text()})")
    logs = profile(plan.cloud).logs_cost_basis(plan.spec)
    if logs:
        report.basis.append(logs)
    return report


def price_origin(price: Price | None) -> str:
    """A short name for where a price came from: "bundled", "user file", or both."""
    if price is None:
        return UNPRICED
    return " + ".join("bundled" if part == BUNDLED else "user file" for part in price.origin.split(" + "))
