"""What a planned platform costs a month: the plan's pools priced with the bundled table.

This joins three pure pieces (the plan, the price table, the cost model) and adds the warnings a
FinOps-minded reviewer wants next to the numbers: prices we do not have, spot max prices that
would cost more than on-demand or evict at once, and GPU pools that cost money while idle.

The model: docs/architecture.md#the-cost-model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from spotkube.core.cost import Assumptions, PoolCost, PoolUsage, StackCost, hourly_price, load_table, stack_cost
from spotkube.core.cost.model import HOURS_PER_MONTH, to_cents
from spotkube.core.cost.prices import Price, PriceTable
from spotkube.core.plan import PlatformPlan, PoolPlan
from spotkube.core.profiles import profile


@dataclass(frozen=True)
class PricedPool:
    """One pool with the prices found for it (None when the table has none)."""

    pool: PoolPlan
    hours: Decimal
    price: Price | None
    on_demand: Price | None


@dataclass
class CostReport:
    """Per-pool prices, the stack's monthly totals over the priced pools, and warnings."""

    stack_cost: StackCost
    pools: list[PricedPool]
    table_date: str
    warnings: list[str] = field(default_factory=list)

    def line(self, pool: str) -> tuple[PricedPool, PoolCost] | None:
        """A priced pool and its monthly cost; None when the table has no price for it."""
        priced = next((p for p in self.pools if p.pool.name == pool), None)
        cost = next((c for c in self.stack_cost.pools if c.name == pool), None)
        if priced is None or cost is None or priced.price is None or priced.on_demand is None:
            return None
        return priced, cost

    @property
    def unpriced_pools(self) -> list[str]:
        return [p.pool.name for p in self.pools if p.price is None]

    def to_json(self) -> dict[str, Any]:
        lines = {line.name: line for line in self.stack_cost.pools}
        assumptions = self.stack_cost.assumptions
        return {
            "currency": "USD",
            "priceTableDate": self.table_date,
            "assumptions": {"evictionRate": float(assumptions.eviction_rate),
                            "reworkFraction": float(assumptions.rework_fraction),
                            "hoursPerMonth": HOURS_PER_MONTH},
            "pools": [_pool_json(p, lines.get(p.pool.name)) for p in self.pools],
            "total": {
                "idleFloor": float(self.stack_cost.idle_floor_usd),
                "scenario": float(self.stack_cost.scenario_usd),
                "onDemandEquivalent": float(self.stack_cost.on_demand_equivalent_usd),
                "savingPercent": self.stack_cost.saving_percent,
                "unpricedPools": self.unpriced_pools,
            },
        }


def _pool_json(priced: PricedPool, line: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"pool": priced.pool.name, "capacity": priced.pool.capacity,
                            "scenarioHours": float(priced.hours)}
    if line is None or priced.price is None or priced.on_demand is None:
        return {**base, "priced": False}
    return {
        **base,
        "priced": True,
        "usdPerHour": float(priced.price.usd_per_hour),
        "onDemandUsdPerHour": float(priced.on_demand.usd_per_hour),
        "idleFloor": float(line.idle_floor_usd),
        "scenario": float(line.scenario_usd),
        "onDemandEquivalent": float(line.on_demand_equivalent_usd),
        "savingPercent": line.saving_percent,
        "priceSource": priced.price.source,
        "priceDate": priced.price.date.isoformat(),
    }


def scenario_hours(plan: PlatformPlan) -> dict[str, Decimal]:
    """Node-hours per pool from the stack's cost scenario: per pool plus per workload class."""
    settings = plan.spec.cost
    hours = {name: Decimal(str(value)) for name, value in settings.hours.items()}
    for workload in settings.workloads:
        hours[workload.pool] = hours.get(workload.pool, Decimal(0)) + Decimal(str(workload.hours))
    return hours


def _price(plan: PlatformPlan, pool: PoolPlan, capacity: str, table: PriceTable) -> Price | None:
    return hourly_price(profile(plan.cloud).price_cloud, plan.spec.region, pool.machine, capacity,
                        pool.gpu_type, pool.gpu_count, table=table)


def _warnings(plan: PlatformPlan, priced: PricedPool, table_date: str) -> list[str]:
    pool = priced.pool
    out: list[str] = []
    if priced.price is None or priced.on_demand is None:
        refresh = profile(plan.cloud).price_refresh
        out.append(f"{pool.name}: no {pool.capacity} price for {pool.machine} in {plan.spec.region} in the bundled "
                   f"table (dated {table_date}); its cost is left out of the totals"
                   + (f" (refresh: {refresh(plan.spec.region, pool.machine)})" if refresh else ""))
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
    """Price every pool of a plan; `hours` overrides the scenario per pool (what-if questions)."""
    table = table or load_table()
    table_date = table.date.isoformat()
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
    report = CostReport(stack_cost(usages, assumptions), priced, table_date)
    for p in priced:
        report.warnings.extend(_warnings(plan, p, table_date))
    return report
