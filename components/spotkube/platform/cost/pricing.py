"""A platform's pools priced with a price table, and the warnings their prices raise.

Why here and not with the judges: the plan (`review/costing.py`) and the cluster components under
`pulumi up` both warn about a stack's prices, and a warning at build time must be the one the plan
shows, with the same id and text, so both price the pools through `priced_pools`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Literal, Protocol

from spotkube.platform.contract import GpuSharing
from spotkube.platform.cost.model import HOURS_PER_MONTH, to_cents
from spotkube.platform.cost.prices import (
    CloudPricing,
    Price,
    PriceRow,
    PriceTable,
    hourly_price,
    user_file_path,
    with_stack_rows,
)
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.warnings import PlanWarning

#: The word for a figure spotkube has no price for, in every view.
UNPRICED = "unpriced"

Figure = Literal["idleFloor", "scenario", "onDemandEquivalent"]
#: The totals in words.
FIGURE_WORDS: dict[Figure, str] = {"idleFloor": "idle floor", "scenario": "scenario",
                                   "onDemandEquivalent": "on-demand equivalent"}

#: The command that writes a missing price to the user's price file, by region and machine (a cloud's
#: `ReviewFacts.price_refresh`); None where no refresh reads that cloud's prices.
PriceRefresh = Callable[[str, str], str] | None


class PoolToPrice(Protocol):
    """What pricing reads of a pool: a pool as registered (`platform.cloud.RegisteredPool`: the plan and
    `spotkube cost`) or as planned (`platform.plan.PoolPlan`: the warnings a cluster component logs under
    `pulumi up`), so both are priced alike. Read-only, as both are."""

    @property
    def name(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def capacity(self) -> str: ...
    @property
    def machine(self) -> str: ...
    @property
    def gpu_type(self) -> str | None: ...
    @property
    def gpu_count(self) -> int: ...
    @property
    def min(self) -> int | None: ...
    @property
    def max_price(self) -> float | None: ...
    @property
    def sharing(self) -> GpuSharing | None: ...


@record
class PricedPool:
    """One pool with the prices found for it (None when no table has one)."""

    pool: PoolToPrice
    hours: Decimal
    price: Price | None
    on_demand: Price | None

    @property
    def floor(self) -> int:
        """The nodes the pool keeps with no work (its registered minimum; none when unset)."""
        return self.pool.min or 0

    @property
    def priced(self) -> bool:
        """Both prices are known: the pool's own and the on-demand yardstick."""
        return self.price is not None and self.on_demand is not None

    @property
    def blocks(self) -> tuple[Figure, ...]:
        """The totals this pool leaves unknown: none when priced; the idle floor when it keeps nodes
        (min > 0); the scenario and its on-demand yardstick when the scenario gives it hours."""
        if self.priced:
            return ()
        out: list[Figure] = ["idleFloor"] if self.floor > 0 else []
        return (*out, "scenario", "onDemandEquivalent") if self.hours > 0 else tuple(out)

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


def missing_prices(priced: PricedPool) -> tuple[str, ...]:
    """The capacities a pool lacks a price for: its own, and on-demand (its yardstick) unless it is on-demand."""
    missing = [priced.pool.capacity] if priced.price is None else []
    if priced.on_demand is None and priced.pool.capacity != "on-demand":
        missing.append("on-demand")
    return tuple(missing)


def scenario_hours(spec: PlatformSpec) -> dict[str, Decimal]:
    """Node-hours per pool from the stack's cost scenario: per pool plus per workload class."""
    settings = spec.cost
    hours = {name: Decimal(str(value)) for name, value in settings.hours.items()}
    for workload in settings.workloads:
        hours[workload.pool] = hours.get(workload.pool, Decimal(0)) + Decimal(str(workload.hours))
    return hours


def stack_prices(spec: PlatformSpec, table: PriceTable, pricing: CloudPricing) -> PriceTable:
    """`table` with the stack's own prices (`spotkube:cost.prices`) over it, in the stack's cloud and region."""
    rows = [PriceRow.model_validate({"cloud": pricing.name, "region": spec.region, "sku": p.sku,
                                     "kind": p.kind, "capacity": p.capacity,
                                     "usdPerHour": Decimal(str(p.usd_per_hour)), "source": p.source, "date": p.date},
                                    context={pricing.name: pricing})
            for p in spec.cost.prices]
    return with_stack_rows(table, rows)


def _price(
    spec: PlatformSpec, pool: PoolToPrice, capacity: str, table: PriceTable, pricing: CloudPricing
) -> Price | None:
    return hourly_price(pricing, spec.region, pool.machine, capacity, pool.gpu_type, pool.gpu_count, table=table)


def _unpriced_warning(spec: PlatformSpec, priced: PricedPool, table: PriceTable, pricing: CloudPricing,
                      refresh: PriceRefresh) -> PlanWarning:
    """Which price is missing, from which tables, which totals it leaves unknown, and how to supply it."""
    pool, region = priced.pool, spec.region
    missing = list(missing_prices(priced))
    what = pool.machine
    if any(table.find(pricing.name, region, pool.machine, "machine", c) for c in missing):
        # The machine has its row, so what is missing is the GPU billed on top of it (GCP N1).
        what += f" with {pool.gpu_count} × {pool.gpu_type} (no {pool.gpu_type} accelerator row)"
    tables = f"the bundled table (dated {table.date.isoformat()})"
    if table.user_file is not None:
        tables = f"the bundled table or the user price file {table.user_file}"
    target = table.user_file or user_file_path()
    fix = f"add a row for it to your price file {target} or to the stack's cost.prices"
    if refresh is not None:
        command = refresh(region, pool.machine)
        if target != user_file_path():
            command += f" --table {target}"
        fix = f"run `{command}`, which writes it to your price file {target}, or add the row there yourself"
    blocked = " and ".join(FIGURE_WORDS[f] for f in priced.blocks if f != "onDemandEquivalent")
    return PlanWarning(
        f"cost-unpriced:{pool.name}",
        f"{pool.name}: {UNPRICED}: no {' or '.join(missing)} price for {what} in {region} in {tables}, so the "
        f"stack's {blocked} can't be totalled. To price it, {fix}")


def _warnings(spec: PlatformSpec, priced: PricedPool, table: PriceTable, pricing: CloudPricing,
              refresh: PriceRefresh) -> list[PlanWarning]:
    pool = priced.pool
    out: list[PlanWarning] = []
    if priced.price is None or priced.on_demand is None:
        if priced.blocks:
            out.append(_unpriced_warning(spec, priced, table, pricing, refresh))
        if pool.role == "gpu" and priced.floor > 0:
            out.append(PlanWarning(f"cost-idle-gpu:{pool.name}",
                                   f"{pool.name}: GPU pool min is {pool.min}, so it keeps {pool.min} GPU node(s) "
                                   f"running while idle ({UNPRICED}); use min 0 to scale to zero"))
        return out
    if pool.max_price is not None and pool.max_price != -1:
        cap = Decimal(f"{pool.max_price:g}")
        if cap > priced.on_demand.usd_per_hour:
            out.append(PlanWarning(f"cost-max-price-above-on-demand:{pool.name}",
                                   f"{pool.name}: maxPrice ${cap}/h is above the on-demand price "
                                   f"${priced.on_demand.usd_per_hour}/h; spot could cost more than on-demand"))
        if cap < priced.price.usd_per_hour:
            out.append(PlanWarning(f"cost-max-price-below-spot:{pool.name}",
                                   f"{pool.name}: maxPrice ${cap}/h is below the current spot price "
                                   f"${priced.price.usd_per_hour}/h; nodes would be evicted at once or never start"))
    if pool.role == "gpu" and priced.floor > 0:
        idle = to_cents(priced.floor * HOURS_PER_MONTH * priced.price.usd_per_hour)
        out.append(PlanWarning(f"cost-idle-gpu:{pool.name}",
                               f"{pool.name}: GPU pool min is {pool.min}, so it costs ${idle}/month while idle; "
                               "use min 0 to scale to zero"))
    return out


def priced_pools(
    spec: PlatformSpec, pools: Sequence[PoolToPrice], table: PriceTable, pricing: CloudPricing, refresh: PriceRefresh,
    *, hours: Mapping[str, Decimal] | None = None,
) -> tuple[tuple[PricedPool, ...], tuple[PlanWarning, ...]]:
    """Price the pools of one platform with its region and cost scenario (`spec`), from `table` (with the
    stack's own prices over it: `stack_prices`), and say what their prices warn about, pool by pool. `hours`
    overrides the scenario per pool (what-if questions); `pricing` and `refresh` are the stack's cloud's."""
    work = {**scenario_hours(spec), **(hours or {})}
    priced = tuple(
        PricedPool(pool, work.get(pool.name, Decimal(0)), _price(spec, pool, pool.capacity, table, pricing),
                   _price(spec, pool, "on-demand", table, pricing))
        for pool in pools
    )
    return priced, tuple(w for p in priced for w in _warnings(spec, p, table, pricing, refresh))
