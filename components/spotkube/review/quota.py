"""The quota each stack needs, read from the pools the program registers so it can't drift from the
program (docs/quota.md). The live verdict is `live_quota`'s, which only the commands that read the cloud load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spotkube.clouds import profile
from spotkube.platform.cloud import RegisteredPool
from spotkube.platform.quota import QuotaPlan


def stack_quota(
    cloud: str, pools: Sequence[RegisteredPool], learnt: Mapping[str, str] | None = None
) -> QuotaPlan | None:
    """The stack's quota need, or None for a cloud whose profile counts none."""
    plan = profile(cloud).quota_plan
    return None if plan is None else plan(pools, learnt or {})
