"""A planned platform's cost report, for the tests that price a stack's settings without running its
program: its planned pools priced as the plan prices registered ones (`review.costing.price_pools`)."""

from __future__ import annotations

from typing import Any

from spotkube.platform.plan import PlatformPlan
from spotkube.review.costing import CostReport, price_pools


def price_plan(plan: PlatformPlan, **options: Any) -> CostReport:
    """Every pool of `plan` priced with its stack's region and cost scenario."""
    return price_pools(plan.spec, plan.pools, **options)
