"""The cost model: the articles' example to the cent, rework and idle-floor edges, bad input.

The property test states the promise behind every plan: when the spot price, even with every
eviction rerun in full, is no dearer than on-demand, the model never reports spot as dearer.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spotkube.platform.cost.model import (
    HOURS_PER_MONTH,
    Assumptions,
    PoolUsage,
    pool_cost,
    stack_cost,
    to_cents,
)


def usage(**overrides: object) -> PoolUsage:
    """The articles' pool (D4s_v3, UK South, 3,400 h of spot work), with fields overridden."""
    fields: dict[str, object] = {
        "name": "batch",
        "capacity": "spot",
        "usd_per_hour": Decimal("0.0487"),
        "on_demand_usd_per_hour": Decimal("0.2320"),
        "min_nodes": 0,
        "node_hours": Decimal(3400),
    }
    fields.update(overrides)
    return PoolUsage(**fields)  # type: ignore[arg-type]


# --- the articles' example -----------------------------------------------------------------------


def test_articles_example_to_the_cent() -> None:
    cost = pool_cost(usage(), Assumptions(eviction_rate=Decimal("0.05"), rework_fraction=Decimal(1)))

    assert cost.scenario_hours == Decimal(3400)
    assert cost.effective_hours == Decimal(3570)
    assert cost.on_demand_equivalent_usd == Decimal("788.80")
    assert cost.scenario_usd == Decimal("173.86")
    assert cost.saving_percent == 78
    # The unrounded saving is taken from the cent amounts shown: 1 - 173.86 / 788.80.
    assert cost.saving_percent_exact == (Decimal("788.80") - Decimal("173.86")) / Decimal(
        "788.80"
    ) * 100
    assert Decimal("77.95") < cost.saving_percent_exact < Decimal("77.96")


def test_floats_are_read_through_their_text_so_cents_stay_exact() -> None:
    cost = pool_cost(usage(usd_per_hour=0.0487, on_demand_usd_per_hour=0.2320, node_hours=3400))

    assert cost.scenario_usd == Decimal("173.86")
    assert cost.on_demand_equivalent_usd == Decimal("788.80")


def test_default_assumptions_are_the_articles() -> None:
    assert Assumptions() == Assumptions(eviction_rate=Decimal("0.05"), rework_fraction=Decimal(1))
    assert pool_cost(usage()).scenario_usd == Decimal("173.86")


def test_money_rounds_half_up_to_cents() -> None:
    assert to_cents(Decimal("0.005")) == Decimal("0.01")
    assert to_cents(Decimal("173.8590")) == Decimal("173.86")
    assert to_cents(Decimal("2.344999")) == Decimal("2.34")


# --- rework --------------------------------------------------------------------------------------


def test_rework_zero_adds_no_hours() -> None:
    cost = pool_cost(usage(), Assumptions(eviction_rate=Decimal("0.05"), rework_fraction=Decimal(0)))

    assert cost.effective_hours == Decimal(3400)
    assert cost.scenario_usd == Decimal("165.58")  # 3,400 x 0.0487


def test_rework_half_reruns_half_of_the_evicted_work() -> None:
    cost = pool_cost(
        usage(), Assumptions(eviction_rate=Decimal("0.05"), rework_fraction=Decimal("0.5"))
    )

    assert cost.effective_hours == Decimal(3485)  # 3,400 x (1 + 0.05 x 0.5)
    assert cost.scenario_usd == Decimal("169.72")  # 3,485 x 0.0487 = 169.7195


def test_preemptible_is_evicted_like_spot() -> None:
    spot = pool_cost(usage())
    preemptible = pool_cost(usage(capacity="preemptible"))

    assert preemptible.effective_hours == spot.effective_hours == Decimal(3570)
    assert preemptible.scenario_usd == spot.scenario_usd


def test_on_demand_pool_reruns_nothing_and_saves_nothing() -> None:
    cost = pool_cost(
        usage(capacity="on-demand", usd_per_hour=Decimal("0.2320")),
        Assumptions(eviction_rate=Decimal("0.5"), rework_fraction=Decimal(1)),
    )

    assert cost.effective_hours == Decimal(3400)
    assert cost.scenario_usd == cost.on_demand_equivalent_usd == Decimal("788.80")
    assert cost.saving_percent == 0
    assert cost.saving_percent_exact == 0


# --- idle floor ----------------------------------------------------------------------------------


def test_idle_floor_is_min_nodes_all_month_at_the_pools_own_price() -> None:
    cost = pool_cost(usage(min_nodes=2))

    assert HOURS_PER_MONTH == 730
    assert cost.idle_floor_usd == Decimal("71.10")  # 2 x 730 x 0.0487 = 71.102


def test_idle_floor_is_zero_without_min_nodes() -> None:
    assert pool_cost(usage(min_nodes=0)).idle_floor_usd == Decimal("0.00")


def test_idle_floor_of_an_on_demand_pool_uses_the_on_demand_price() -> None:
    cost = pool_cost(usage(capacity="on-demand", usd_per_hour=Decimal("0.2320"), min_nodes=3))

    assert cost.idle_floor_usd == Decimal("508.08")  # 3 x 730 x 0.2320


def test_idle_floor_is_not_added_to_the_scenario() -> None:
    assert pool_cost(usage(min_nodes=5)).scenario_usd == pool_cost(usage()).scenario_usd


def test_no_work_means_no_saving_and_no_division_by_zero() -> None:
    cost = pool_cost(usage(node_hours=0))

    assert cost.scenario_usd == cost.on_demand_equivalent_usd == Decimal("0.00")
    assert cost.saving_percent == 0


# --- stack totals --------------------------------------------------------------------------------


def test_stack_totals_sum_the_pools_and_compare_the_sums() -> None:
    system = usage(
        name="system",
        capacity="on-demand",
        usd_per_hour=Decimal("0.2320"),
        min_nodes=2,
        node_hours=Decimal(1460),
    )
    stack = stack_cost([system, usage(min_nodes=1)])

    assert [line.name for line in stack.pools] == ["system", "batch"]
    assert stack.idle_floor_usd == Decimal("338.72") + Decimal("35.55")
    assert stack.scenario_usd == Decimal("338.72") + Decimal("173.86")
    assert stack.on_demand_equivalent_usd == Decimal("338.72") + Decimal("788.80")
    expected = (Decimal("1127.52") - Decimal("512.58")) / Decimal("1127.52") * 100
    assert stack.saving_percent_exact == expected
    assert stack.saving_percent == 55
    assert stack.assumptions == Assumptions()


def test_empty_stack_costs_nothing() -> None:
    stack = stack_cost([])

    assert stack.pools == ()
    assert stack.scenario_usd == stack.idle_floor_usd == Decimal(0)
    assert stack.saving_percent == 0


def test_stack_refuses_two_pools_with_one_name() -> None:
    with pytest.raises(ValueError, match=r"unique.*batch"):
        stack_cost([usage(), usage()])


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"eviction_rate": Decimal("-0.01")}, "eviction_rate must be a fraction between 0 and 1"),
        ({"eviction_rate": Decimal("1.5")}, "eviction_rate must be a fraction between 0 and 1"),
        ({"rework_fraction": Decimal("1.01")}, "rework_fraction must be between 0"),
        ({"rework_fraction": Decimal("-1")}, "rework_fraction must be between 0"),
        ({"eviction_rate": "lots"}, "eviction_rate must be a number"),
        ({"eviction_rate": float("nan")}, "eviction_rate must be a finite number"),
        ({"rework_fraction": True}, "rework_fraction must be a number"),
    ],
)
def test_assumptions_out_of_range_are_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Assumptions(**overrides)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": " "}, "pool name must be a non-empty string"),
        ({"capacity": "reserved"}, "capacity must be one of spot, preemptible, flex-start, on-demand"),
        ({"usd_per_hour": Decimal("-0.1")}, "hourly prices cannot be negative"),
        ({"on_demand_usd_per_hour": Decimal("-1")}, "hourly prices cannot be negative"),
        ({"node_hours": Decimal(-1)}, "node_hours cannot be negative"),
        ({"node_hours": float("inf")}, "node_hours must be a finite number"),
        ({"min_nodes": -1}, "min_nodes cannot be negative"),
        ({"min_nodes": 1.5}, "min_nodes must be a whole number"),
        ({"min_nodes": True}, "min_nodes must be a whole number"),
        ({"usd_per_hour": None}, "usd_per_hour must be a number"),
        ({"capacity": "on-demand"}, "an on-demand pool pays the on-demand price"),
    ],
)
def test_pool_usage_out_of_range_is_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        usage(**overrides)


# --- property ------------------------------------------------------------------------------------

_prices = st.decimals(min_value=Decimal(0), max_value=Decimal(100), places=6)
_fractions = st.decimals(min_value=Decimal(0), max_value=Decimal(1), places=4)
_hours = st.decimals(min_value=Decimal(0), max_value=Decimal(100_000), places=2)


@given(
    spot_price=_prices,
    on_demand_price=_prices,
    eviction_rate=_fractions,
    rework_fraction=_fractions,
    node_hours=_hours,
    capacity=st.sampled_from(["spot", "preemptible"]),
)
def test_spot_never_dearer_when_its_worst_case_price_is_not(
    spot_price: Decimal,
    on_demand_price: Decimal,
    eviction_rate: Decimal,
    rework_fraction: Decimal,
    node_hours: Decimal,
    capacity: str,
) -> None:
    # Worst case: every evicted step reruns in full. If that is still no dearer per hour of work
    # than on-demand, any rework fraction up to 1 must keep spot no dearer in the report either,
    # rounding to cents included.
    if spot_price * (1 + eviction_rate) > on_demand_price:
        on_demand_price = spot_price * (1 + eviction_rate)
    cost = pool_cost(
        usage(
            capacity=capacity,
            usd_per_hour=spot_price,
            on_demand_usd_per_hour=on_demand_price,
            node_hours=node_hours,
        ),
        Assumptions(eviction_rate=eviction_rate, rework_fraction=rework_fraction),
    )

    assert cost.scenario_usd <= cost.on_demand_equivalent_usd
    assert cost.saving_percent_exact >= 0
