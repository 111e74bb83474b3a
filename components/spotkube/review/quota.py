"""The quota each stack needs, read from the pools the program registers.

The plan counts what the registrations ask the cloud for (each pool's machine, GPUs, capacity and
max nodes, as the pool table shows them), so the need can't drift from the program; the cloud's
profile turns that into its own quota names (docs/quota.md). The live verdict is `live_quota`'s, which
only the commands that read the cloud load. Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spotkube.clouds import profile
from spotkube.platform.quota import PoolDemand, QuotaPlan
from spotkube.review.plan_document import PoolRow


def pool_demands(pools: Sequence[PoolRow]) -> list[PoolDemand]:
    """Each registered pool at full scale; a pool whose max is unknown (a wired output) counts as 0."""
    return [PoolDemand(name=p.name, machine=p.machine, capacity=p.capacity,  # type: ignore[arg-type]
                       max_nodes=p.max or 0, gpu_type=p.gpu_type, gpu_count=p.gpu_count if p.gpu_type else 0,
                       max_surge=p.max_surge)
            for p in pools]


def stack_quota(cloud: str, pools: Sequence[PoolRow], learnt: Mapping[str, str] | None = None) -> QuotaPlan | None:
    """The stack's quota need, or None for a cloud whose profile counts none."""
    plan = profile(cloud).quota_plan
    return None if plan is None else plan(pool_demands(pools), learnt or {})
