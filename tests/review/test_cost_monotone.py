"""A stack that grows never reads as cheaper: a property of the cost model and of `plan --diff`.

For any stack and any price table in which a larger size of a family never costs less than a smaller
one, each of these changes (adding a pool, raising a pool's min, choosing a larger size of the same
family) leaves every total the plan shows at least as high as before, and every cost delta the diff
shows at least zero. A total or delta that can't be computed like with like (a pool without a price
would add to it) is not shown as a number at all, and names the pool instead.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planned_costs import price_plan
from spotkube.clouds import parse_spec, plan_platform
from spotkube.platform.cost.prices import PriceRow, PriceTable
from spotkube.review.costing import FIGURES, CostReport
from spotkube.review.plan_diff import DIFF_FIGURES, stack_diff

SIZES = (2, 4, 8, 16, 32, 64)
DAY = datetime.date(2026, 11, 1)


def machine(size: int) -> str:
    return f"Standard_D{size}s_v3"


@st.composite
def price_tables(draw: st.DrawFn) -> PriceTable:
    """Rows for some sizes of the D v3 family, dearer as they grow, at spot and on demand."""
    rows = []
    for capacity in ("on-demand", "spot"):
        steps = draw(st.lists(st.integers(0, 500), min_size=len(SIZES), max_size=len(SIZES)))
        price = Decimal(0)
        for size, step in zip(SIZES, steps, strict=True):
            price += Decimal(step + 1) / Decimal(1000)  # never cheaper than the smaller size
            if draw(st.booleans()) or draw(st.booleans()):  # some sizes have no price
                rows.append(PriceRow(cloud="azure", region="uksouth", sku=machine(size), kind="machine",
                                     capacity=capacity, usd_per_hour=price, source="generated", date=DAY))
    return PriceTable(currency="USD", date=DAY, notes=(), rows=tuple(rows))


pool_strategy = st.fixed_dictionaries({
    "size": st.sampled_from(SIZES), "min": st.integers(0, 5), "hours": st.sampled_from([0, 0, 10, 250, 3400])})


@st.composite
def stacks(draw: st.DrawFn) -> dict[str, Any]:
    return {"system": draw(pool_strategy), "platform": draw(pool_strategy),
            "spot": draw(st.lists(pool_strategy, max_size=3))}


def config(stack: dict[str, Any]) -> dict[str, Any]:
    def pool(p: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"machine": machine(p["size"]), "min": p["min"], "max": 20, **extra}

    spot = [pool(p, name=f"spot{i}", capacity="spot") for i, p in enumerate(stack["spot"])]
    names = {"system": stack["system"], "platform": stack["platform"],
             **{f"spot{i}": p for i, p in enumerate(stack["spot"])}}
    return {"cloud": "aks", "environment": "dev", "region": "uksouth",
            "systemPool": pool({**stack["system"], "min": max(1, stack["system"]["min"])}),
            "platformPool": pool(stack["platform"]), "spotPools": spot,
            "cost": {"hours": {name: p["hours"] for name, p in names.items() if p["hours"]}}}


def priced(stack: dict[str, Any], table: PriceTable) -> tuple[CostReport, dict[str, Any]]:
    """The cost report and the plan JSON the diff reads (pools, region, cost) of a stack."""
    plan = plan_platform(parse_spec(config(stack), "generated"))
    report = price_plan(plan, table=table)
    document = {"stack": "s", "cloud": "aks", "region": "uksouth", "cost": report.to_json(),
                "pools": [{"name": p.name, "min": p.min, "machine": p.machine} for p in plan.pools]}
    return report, document


def stated(document: dict[str, Any], figure: str) -> Decimal | None:
    """A total as the plan's JSON states it (the idle floor's two parts too); a plan that reviews no fixed
    lines counts none."""
    if figure == "fixedIdleFloor" and document["cost"].get("fixed") is None:
        return Decimal(0)
    value = document["cost"]["total"].get(figure)
    return None if value is None else Decimal(str(value))


@st.composite
def growths(draw: st.DrawFn, stack: dict[str, Any]) -> dict[str, Any]:
    """The stack after one change that can only make it cost more: a pool more, a higher min, a bigger size."""
    grown = {"system": dict(stack["system"]), "platform": dict(stack["platform"]),
             "spot": [dict(p) for p in stack["spot"]]}
    pools = [grown["system"], grown["platform"], *grown["spot"]]
    kind = draw(st.sampled_from(["add", "min", "size"] if len(grown["spot"]) < 3 else ["min", "size"]))
    if kind == "add":
        grown["spot"].append(draw(pool_strategy))
    elif kind == "min":
        chosen = draw(st.sampled_from(pools))
        chosen["min"] = max(chosen["min"], 1 if chosen is grown["system"] else 0) + draw(st.integers(1, 5))
    else:
        chosen = draw(st.sampled_from(pools))
        chosen["size"] = draw(st.sampled_from([s for s in SIZES if s >= chosen["size"]]))
    return grown


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), table=price_tables(), stack=stacks())
def test_growing_a_stack_never_lowers_a_shown_total_or_delta(data: st.DataObject, table: PriceTable,
                                                            stack: dict[str, Any]) -> None:
    grown = data.draw(growths(stack))
    before, old_document = priced(stack, table)
    after, new_document = priced(grown, table)

    assert FIGURES, "the report has figures to compare"
    for figure in FIGURES:
        old, new = before.total(figure), after.total(figure)
        if old is not None and new is not None:
            assert new >= old, (figure, old, new)
        if new is None:  # not a number over fewer pools: the pool is named
            assert after.blockers(figure), figure

    cost = stack_diff("s", old_document, new_document).cost
    assert cost is not None
    assert DIFF_FIGURES, "the diff has figures to compare"
    for figure in DIFF_FIGURES:
        delta = cost.delta(figure)
        old_total, new_total = (stated(document, figure) for document in (old_document, new_document))
        if old_total is None or new_total is None:
            assert delta is None
            reason = cost.why_not(figure)
            assert reason is not None and reason.startswith("not comparable: ") and "no price" in reason
        else:
            assert delta is not None and delta >= 0
            assert Decimal(str(delta)) == new_total - old_total
