"""A stack's quota need against the cloud's live limits and usage, for `spotkube quota` and `doctor`."""

from __future__ import annotations

from collections.abc import Sequence

from spotkube.platform.cloud import RegisteredPool
from spotkube.platform.live_quota import LiveQuota, QuotaReport, compare
from spotkube.review.quota import stack_quota


def live_report(stack: str, cloud: str, pools: Sequence[RegisteredPool], live: LiveQuota) -> QuotaReport:
    """The need, with the families the cloud named, against the cloud's live limits and usage."""
    plan = stack_quota(cloud, pools, live.learnt)
    if plan is None:
        return QuotaReport(stack, live.where, (), "", (f"spotkube counts no quota for {cloud}",))
    return QuotaReport(stack, live.where, tuple(compare(plan, live.regional, live.global_)), plan.surge, plan.notes)
