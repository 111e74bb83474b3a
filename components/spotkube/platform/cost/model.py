"""The cost model: what a pool costs a month on spot (or preemptible) capacity against on-demand.

Why a model at all: a spot price alone overstates the saving. Work that is evicted runs again, so the
model charges that rework, keeps the idle floor apart from the work, and prices the same work on demand.

Money is `decimal.Decimal`, rounded half-up to cents at the end of each calculation, never in between,
so the figures match a hand calculation: D4s_v3 in UK South, 3,400 h of work, 5 % eviction rate, full
rework: 3,400 x 1.05 = 3,570 h x $0.0487 = $173.86 on spot against 3,400 h x $0.2320 = $788.80 on demand.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

from spotkube.platform.records import record

#: Hours in a billing month as both clouds' price pages count them (365 x 24 / 12).
HOURS_PER_MONTH = 730

Capacity = Literal["spot", "preemptible", "flex-start", "on-demand"]

#: The capacities a pool can run on. Spot and preemptible can be evicted; flex-start (a discounted VM the
#: cloud provisions when it can, for a bounded run) and on-demand cannot.
CAPACITIES: tuple[Capacity, ...] = ("spot", "preemptible", "flex-start", "on-demand")
#: The capacities whose work is evicted and runs again.
EVICTABLE: tuple[Capacity, ...] = ("spot", "preemptible")

_CENT = Decimal("0.01")
_HUNDRED = Decimal(100)


def to_decimal(value: Decimal | int | float | str, name: str) -> Decimal:
    """Convert a number to `Decimal` through its text, so 0.0487 stays exactly 0.0487.

    `Decimal(0.0487)` would carry the binary float error into the cents; `Decimal(str(0.0487))`
    does not. Booleans, NaN and infinities are refused because they are never a price or an hour
    count, and would otherwise slip through as 1/0 or poison every sum.
    """
    if isinstance(value, bool) or not isinstance(value, Decimal | int | float | str):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not number.is_finite():
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def to_cents(amount: Decimal) -> Decimal:
    """Round money half-up to whole cents, the way price pages and invoices show it."""
    return amount.quantize(_CENT, rounding=ROUND_HALF_UP)


def _percent_saved(on_demand: Decimal, actual: Decimal) -> Decimal:
    """Share of the on-demand cost saved, in percent; 0 when there is nothing to compare with."""
    if on_demand == 0:
        return Decimal(0)
    return (on_demand - actual) / on_demand * _HUNDRED


def _whole_percent(percent: Decimal) -> int:
    """Round a percentage half-up to a whole number, as a report shows it."""
    return int(percent.quantize(Decimal(1), rounding=ROUND_HALF_UP))


@record
class Assumptions:
    """How often spot capacity is taken back, and how much of an evicted step runs again.

    `eviction_rate` is the fraction of work that is evicted once (0.05 = 5 %). `rework_fraction` is
    how much of an evicted step is lost: 1.0 means it restarts from scratch, 0.5 means a checkpoint
    halfway keeps half of it, 0 means nothing is lost. Both are assumptions the user states; Azure
    publishes eviction rates only behind authentication, GCP not at all.
    """

    eviction_rate: Decimal = Decimal("0.05")
    rework_fraction: Decimal = Decimal(1)

    def __post_init__(self) -> None:
        eviction_rate = to_decimal(self.eviction_rate, "eviction_rate")
        rework_fraction = to_decimal(self.rework_fraction, "rework_fraction")
        if not 0 <= eviction_rate <= 1:
            raise ValueError(
                f"eviction_rate must be a fraction between 0 and 1 (0.05 = 5 %), got {eviction_rate}"
            )
        if not 0 <= rework_fraction <= 1:
            raise ValueError(
                "rework_fraction must be between 0 (checkpoints lose nothing) and 1 (an evicted "
                f"step restarts from scratch), got {rework_fraction}"
            )
        object.__setattr__(self, "eviction_rate", eviction_rate)
        object.__setattr__(self, "rework_fraction", rework_fraction)

    @property
    def rework_multiplier(self) -> Decimal:
        """Billed hours per hour of work on evictable capacity: 1 + eviction rate x rework."""
        return 1 + self.eviction_rate * self.rework_fraction


@record
class PoolUsage:
    """One pool's prices and a month of its use: the input the model prices.

    `on_demand_usd_per_hour` is the same machine on demand, the yardstick for the saving; `min_nodes` is
    the autoscaler floor that runs all month; `node_hours` the work in the scenario. Numbers may be
    given as int, float or str (`to_decimal`).
    """

    name: str
    capacity: Capacity
    usd_per_hour: Decimal
    on_demand_usd_per_hour: Decimal
    min_nodes: int
    node_hours: Decimal

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"pool name must be a non-empty string, got {self.name!r}")
        if self.capacity not in CAPACITIES:
            raise ValueError(
                f"pool {self.name}: capacity must be one of {', '.join(CAPACITIES)}, "
                f"got {self.capacity!r}"
            )
        price = to_decimal(self.usd_per_hour, f"pool {self.name}: usd_per_hour")
        on_demand = to_decimal(
            self.on_demand_usd_per_hour, f"pool {self.name}: on_demand_usd_per_hour"
        )
        hours = to_decimal(self.node_hours, f"pool {self.name}: node_hours")
        if price < 0 or on_demand < 0:
            raise ValueError(f"pool {self.name}: hourly prices cannot be negative")
        if hours < 0:
            raise ValueError(f"pool {self.name}: node_hours cannot be negative, got {hours}")
        if isinstance(self.min_nodes, bool) or not isinstance(self.min_nodes, int):
            raise ValueError(f"pool {self.name}: min_nodes must be a whole number")
        if self.min_nodes < 0:
            raise ValueError(f"pool {self.name}: min_nodes cannot be negative, got {self.min_nodes}")
        if self.capacity == "on-demand" and price != on_demand:
            raise ValueError(
                f"pool {self.name}: an on-demand pool pays the on-demand price, but usd_per_hour "
                f"is {price} and on_demand_usd_per_hour is {on_demand}"
            )
        object.__setattr__(self, "usd_per_hour", price)
        object.__setattr__(self, "on_demand_usd_per_hour", on_demand)
        object.__setattr__(self, "node_hours", hours)

    @property
    def evictable(self) -> bool:
        """Whether the cloud can take the nodes back, so evicted work runs again."""
        return self.capacity in EVICTABLE


@record
class PoolCost:
    """What one pool costs a month, in USD rounded to cents, next to the on-demand yardstick.

    `idle_floor_usd` (`min_nodes` all month with no work) is not added to `scenario_usd`, because the
    scenario's work may run on those same nodes. `saving_percent_exact` is computed from the cent amounts
    shown, so a reader can check it.
    """

    name: str
    capacity: Capacity
    idle_floor_usd: Decimal
    scenario_hours: Decimal
    effective_hours: Decimal
    scenario_usd: Decimal
    on_demand_equivalent_usd: Decimal
    saving_percent_exact: Decimal
    saving_percent: int


@record
class StackCost:
    """Monthly totals over every pool of a stack, with the per-pool lines they add up from."""

    pools: tuple[PoolCost, ...]
    idle_floor_usd: Decimal
    scenario_usd: Decimal
    on_demand_equivalent_usd: Decimal
    saving_percent_exact: Decimal
    saving_percent: int
    assumptions: Assumptions


def pool_cost(usage: PoolUsage, assumptions: Assumptions | None = None) -> PoolCost:
    """Price one pool's month: idle floor, the work on its own capacity, and the work on demand.

    On spot or preemptible capacity the work is billed for `node_hours x (1 + eviction_rate x
    rework_fraction)` hours, because evicted work runs again. A flex-start VM is not taken back, so its
    work is billed for the plain `node_hours` at its own (discounted) price. The on-demand yardstick
    bills the plain `node_hours`: on-demand nodes are not evicted, so nothing runs twice.
    """
    assumptions = assumptions or Assumptions()
    hours = usage.node_hours
    effective_hours = hours * assumptions.rework_multiplier if usage.evictable else hours
    scenario = to_cents(effective_hours * usage.usd_per_hour)
    on_demand = to_cents(hours * usage.on_demand_usd_per_hour)
    saving = _percent_saved(on_demand, scenario) if usage.capacity != "on-demand" else Decimal(0)
    return PoolCost(
        name=usage.name,
        capacity=usage.capacity,
        idle_floor_usd=to_cents(usage.min_nodes * HOURS_PER_MONTH * usage.usd_per_hour),
        scenario_hours=hours,
        effective_hours=effective_hours,
        scenario_usd=scenario,
        on_demand_equivalent_usd=on_demand,
        saving_percent_exact=saving,
        saving_percent=_whole_percent(saving),
    )


def stack_cost(pools: Iterable[PoolUsage], assumptions: Assumptions | None = None) -> StackCost:
    """Price every pool of a stack and add them up; the saving compares the sums, not an average.

    Averaging per-pool percentages would let a cheap pool with a big saving hide an expensive pool
    with none, so the stack saving is taken from the summed cent amounts.
    """
    assumptions = assumptions or Assumptions()
    lines = tuple(pool_cost(pool, assumptions) for pool in pools)
    names = [line.name for line in lines]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"pool names must be unique in a stack, repeated: {', '.join(duplicates)}")
    scenario = sum((line.scenario_usd for line in lines), Decimal(0))
    on_demand = sum((line.on_demand_equivalent_usd for line in lines), Decimal(0))
    saving = _percent_saved(on_demand, scenario)
    return StackCost(
        pools=lines,
        idle_floor_usd=sum((line.idle_floor_usd for line in lines), Decimal(0)),
        scenario_usd=scenario,
        on_demand_equivalent_usd=on_demand,
        saving_percent_exact=saving,
        saving_percent=_whole_percent(saving),
        assumptions=assumptions,
    )
