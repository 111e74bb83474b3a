"""The spot fallback as deployed, per GPU type: the order capacity is tried in, what bounds each tier,
and how long a spot stock-out can hold a step before on-demand. Read from the registered resources,
so the plan states what is really deployed, not what the spec meant.

The worst case on AKS (docs/architecture.md#spot-first-on-demand-as-fallback): Azure reports no spot
stock-out to the autoscaler, so it gives up on a spot pool only when `maxNodeProvisionTime` runs out,
and moves on at its next scan. With N spot pools of a GPU type ranked above its on-demand pool:

    worst case = newPodScaleUpDelay + N × (maxNodeProvisionTime + scanInterval)

It excludes the on-demand node's own start, and assumes the spot pools are not retried in between
(each failed pool is backed off for 5 minutes or more, longer than a scan).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Protocol

from spotkube.clouds import profile
from spotkube.platform.cloud import AutoscalerFacts
from spotkube.platform.contract import FLEX_START
from spotkube.platform.plan import FALLBACK_ORDER, FallbackPool, fallback_pools, no_fallback_text
from spotkube.platform.records import record
from spotkube.platform.registration import Registration


class PoolLike(FallbackPool, Protocol):
    cloud_name: str

    @property
    def max_run_seconds(self) -> int | None: ...


#: Each capacity's place in the fallback: spot or preemptible first, then flex-start, then on-demand.
RANK = {capacity: rank for rank, tier in enumerate(FALLBACK_ORDER) for capacity in tier}


@record
class Step:
    """Pools tried together (one priority tier, or one capacity where nothing ranks them), and what
    bounds the wait on them before the next step (`bound`, None when nothing is stated)."""

    pools: tuple[str, ...]
    capacity: str
    priority: int | None
    bound: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"pools": list(self.pools), "capacity": self.capacity, "priority": self.priority, "bound": self.bound}


def _bound(facts: AutoscalerFacts, capacity: str, members: Sequence[PoolLike]) -> str | None:
    runs = sorted({p.max_run_seconds for p in members if p.max_run_seconds is not None})
    hours = [f"{r // 3600} h" if r % 3600 == 0 else duration(r) for r in runs]
    limit = f"a node runs at most {' or '.join(hours)}, then the cloud deletes it" if runs else None
    parts = [text for text in (facts.tier_bounds.get(capacity), limit) if text]
    return "; ".join(parts) or None


@record
class GpuFallback:
    gpu_type: str
    order: tuple[Step, ...]
    ordered_by: str
    #: Whether the registered resources guarantee spot is tried before on-demand.
    guaranteed: bool
    #: Seconds before on-demand is used, at worst; None without on-demand or when nothing bounds it.
    worst_case_seconds: int | None
    formula: str | None
    warning: str | None = None
    note: str | None = None

    @property
    def on_demand_pools(self) -> tuple[str, ...]:
        return tuple(p for s in self.order if s.capacity == "on-demand" for p in s.pools)

    def worst_case_text(self) -> str:
        if not self.on_demand_pools:
            return "no on-demand fallback"
        if self.worst_case_seconds is None:
            return "not bounded (not stated by the cloud)"
        return duration(self.worst_case_seconds)

    def to_json(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu_type,
            "order": [s.to_json() for s in self.order],
            "orderedBy": self.ordered_by,
            "guaranteed": self.guaranteed,
            "worstCaseSeconds": self.worst_case_seconds,
            "formula": self.formula,
            "warning": self.warning,
            "note": self.note,
        }


def duration(total: int) -> str:
    """`610` -> `10m10s`."""
    minutes, secs = divmod(total, 60)
    return f"{minutes}m{secs}s" if minutes and secs else f"{minutes}m" if minutes else f"{secs}s"


def _tier(facts: AutoscalerFacts, cloud_name: str) -> int | None:
    """The priority expander's tier for a pool: the highest priority whose regex matches its node group."""
    if facts.priorities is None or facts.node_group is None:
        return None
    group = facts.node_group(cloud_name)
    matching = [p for p, patterns in facts.priorities.items() if any(re.search(r, group) for r in patterns)]
    return max(matching, default=None)


def gpu_fallback(gpu_type: str, pools: Sequence[PoolLike], facts: AutoscalerFacts) -> GpuFallback:
    ranked = [(_tier(facts, p.cloud_name), p) for p in pools]
    steps = []
    if facts.priorities is not None:
        tiers = sorted({t for t, _ in ranked}, key=lambda t: -1 if t is None else t, reverse=True)
        for tier in tiers:
            members = [p for t, p in ranked if t == tier]
            for capacity in dict.fromkeys(p.capacity for p in members):
                group = [p for p in members if p.capacity == capacity]
                steps.append(Step(tuple(p.name for p in group), capacity, tier, _bound(facts, capacity, group)))
    else:
        for capacity in sorted({p.capacity for p in pools}, key=lambda c: RANK.get(c, len(RANK))):
            group = [p for p in pools if p.capacity == capacity]
            steps.append(Step(tuple(p.name for p in group), capacity, None, _bound(facts, capacity, group)))
    order = tuple(steps)
    first_on_demand = next((i for i, s in enumerate(order) if s.capacity == "on-demand"), None)
    ahead = order[:first_on_demand] if first_on_demand is not None else order
    spot_ahead = sum(len(s.pools) for s in ahead if s.capacity != "on-demand")
    interruptible = [p.name for p in pools if p.capacity != "on-demand"]
    guaranteed = (
        facts.priorities is not None and None not in [t for t, _ in ranked] and _earlier_capacity_ranks_higher(ranked)
    )  # type: ignore[arg-type]
    warning = note = None
    worst = None
    if first_on_demand is None:
        warning = no_fallback_text(gpu_type, interruptible)
    elif not interruptible:
        note = f"{gpu_type} runs on on-demand only"
    else:
        if facts.give_up_seconds is not None and facts.priorities is not None:
            worst = facts.first_look_seconds + spot_ahead * facts.give_up_seconds
        if facts.caveat and not guaranteed:
            note = facts.caveat
        elif not guaranteed and any(p.capacity == FLEX_START for p in pools):
            note = f"a pool of {gpu_type} ranks with or above a pool of an earlier tier (spot, flex-start, on-demand)"
        elif not guaranteed:
            note = f"an on-demand pool of {gpu_type} ranks with or above a spot pool"
    return GpuFallback(
        gpu_type=gpu_type,
        order=order,
        ordered_by=facts.ordered_by,
        guaranteed=guaranteed and bool(interruptible) and first_on_demand is not None,
        worst_case_seconds=worst,
        formula=facts.formula if first_on_demand is not None and interruptible else None,
        warning=warning,
        note=note,
    )


def _earlier_capacity_ranks_higher(ranked: Sequence[tuple[int, PoolLike]]) -> bool:
    """Whether every pool of an earlier capacity has a higher priority than every pool of a later one,
    in one pass rather than over every pair: a stack may have dozens of pools of one GPU."""
    by_rank: dict[int, list[int]] = {}
    for tier, pool in ranked:
        by_rank.setdefault(RANK.get(pool.capacity, len(RANK)), []).append(tier)
    highest_after = -math.inf
    for rank in sorted(by_rank, reverse=True):
        if min(by_rank[rank]) <= highest_after:
            return False
        highest_after = max(by_rank[rank])  # above every later one, as the check just found
    return True


def stack_fallback(cloud: str, resources: Sequence[Registration], pools: Sequence[PoolLike]) -> tuple[GpuFallback, ...]:
    reader = profile(cloud).read_autoscaler
    facts = reader([(r.type, r.name, r.inputs) for r in resources]) if reader else None
    if facts is None:
        return ()
    return tuple(gpu_fallback(gpu, members, facts) for gpu, members in fallback_pools(pools).items())
