"""The quota a stack needs at full scale, which every plan shows: a first `pulumi up` that runs out of
quota fails half-way. Each cloud counts its own units into `QuotaNeed`s; the verdict against live
numbers is `live_quota`'s. How the needs are counted: docs/quota.md. Pure module: no Pulumi.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal, Protocol

from spotkube.platform.contract import Capacity
from spotkube.platform.records import record

#: Where a quota is counted: in the stack's region, or once for the whole subscription or project.
Scope = Literal["region", "global"]


class PoolDemand(Protocol):
    """What the quota reads of one node pool as the program registers it (`platform.cloud.RegisteredPool`):
    it needs its machine's quota at full scale, `max` nodes (a wired, unknown max counts as 0)."""

    @property
    def name(self) -> str: ...
    @property
    def machine(self) -> str: ...
    @property
    def capacity(self) -> Capacity: ...
    @property
    def max(self) -> int | None: ...
    @property
    def gpu_type(self) -> str | None: ...
    @property
    def gpu_count(self) -> int: ...
    @property
    def max_surge(self) -> str | None:
        """Extra nodes an upgrade adds, as registered ("1", "33%"); None: the cloud's default."""
        ...


@record
class QuotaRef:
    """One quota a need may be counted against. `skip_if_zero`: a limit of 0 means the cloud never
    set this quota and counts the need against the next one instead (Google's preemptible quotas)."""

    metric: str
    skip_if_zero: bool = False


@record
class QuotaNeed:
    """What some pools need of one quota: `full_scale` at every pool's max, `surge` on top during an
    upgrade. `quotas` lists where it is counted, in order: the first the cloud lists (and, where
    `skip_if_zero`, sets) is the one."""

    quotas: tuple[QuotaRef, ...]
    title: str
    unit: str
    full_scale: int
    surge: int
    pools: tuple[str, ...]
    scope: Scope = "region"

    @property
    def total(self) -> int:
        return self.full_scale + self.surge

    @property
    def quota(self) -> str:
        """The quota's name as the plan shows it, with the fallbacks in order."""
        head, *rest = self.quotas
        tail = "".join(f", else {ref.metric}" + (" (when unset)" if ref.skip_if_zero else "") for ref in rest)
        return head.metric + (" (when set)" if head.skip_if_zero else "") + tail

    def to_json(self) -> dict[str, Any]:
        return {"quota": self.quotas[0].metric, "fallbacks": [r.metric for r in self.quotas[1:]],
                "title": self.title, "scope": self.scope, "unit": self.unit, "fullScale": self.full_scale,
                "surge": self.surge, "need": self.total, "pools": list(self.pools)}


@record
class QuotaPlan:
    """Every quota a stack needs, the surge assumption in words, and what could not be counted."""

    needs: tuple[QuotaNeed, ...]
    surge: str
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"surge": self.surge, "needs": [n.to_json() for n in self.needs], "notes": list(self.notes)}


def surge_percent(nodes: int, percent: int) -> int:
    """Surge nodes for a pool of `nodes` with a max surge of `percent`: a fraction rounds up, as AKS
    rounds it; an empty pool surges nothing."""
    return math.ceil(nodes * percent / 100) if nodes else 0


def surge_nodes(pool: PoolDemand, default: int | str) -> int:
    """The nodes an upgrade adds to `pool` at full scale: its registered max surge, else the cloud's
    `default`; a count (`1`) or a percent of the pool (`"33%"`, rounded up). An empty pool surges nothing."""
    surge = str(pool.max_surge if pool.max_surge is not None else default).strip()
    if not pool.max:
        return 0
    if surge.endswith("%"):
        return surge_percent(pool.max, int(float(surge[:-1])))
    return int(float(surge))


def summed(needs: Iterable[QuotaNeed]) -> tuple[QuotaNeed, ...]:
    """Needs of the same quotas (and unit) added up into one, pools listed once each, in first-seen order."""
    merged: dict[tuple[tuple[QuotaRef, ...], str, str], QuotaNeed] = {}
    for need in needs:
        if need.total == 0:
            continue
        key = (need.quotas, need.unit, need.scope)
        seen = merged.get(key)
        merged[key] = need if seen is None else QuotaNeed(
            seen.quotas, seen.title, seen.unit, seen.full_scale + need.full_scale, seen.surge + need.surge,
            tuple(dict.fromkeys((*seen.pools, *need.pools))), seen.scope)
    return tuple(merged.values())
