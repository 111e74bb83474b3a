"""The quota a stack needs at full scale, and how it compares with a cloud's live limits.

A first `pulumi up` that runs out of quota fails half-way, with the cluster and some pools already
created. Quota is counted per cloud in its own units (Azure: vCPUs per VM family, total regional
vCPUs, Spot vCPUs; Google Cloud: CPUs per machine family, GPUs per type, preemptible quotas apart),
so each cloud's profile turns the registered pools into `QuotaNeed`s; this module holds the neutral
shape, the sums, and the verdict against live numbers. Pure module: no Pulumi, no cloud SDK.

How the needs are counted and checked: docs/quota.md.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from spotkube.platform.contract import Capacity
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.input_messages import timeout_problem
from spotkube.platform.spec import PlatformSpec

#: Where a quota is counted: in the stack's region, or once for the whole subscription or project.
Scope = Literal["region", "global"]
Verdict = Literal["ok", "short", "tight", "unknown"]


@dataclass(frozen=True)
class PoolDemand:
    """One node pool at full scale, as the program registers it."""

    name: str
    machine: str
    capacity: Capacity
    max_nodes: int
    gpu_type: str | None
    gpu_count: int
    #: Extra nodes an upgrade adds, as registered ("1", "33%"); None: the cloud's default.
    max_surge: str | None = None


@dataclass(frozen=True)
class QuotaRef:
    """One quota a need may be counted against. `skip_if_zero`: a limit of 0 means the cloud never
    set this quota and counts the need against the next one instead (Google's preemptible quotas)."""

    metric: str
    skip_if_zero: bool = False


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
    if not pool.max_nodes:
        return 0
    if surge.endswith("%"):
        return surge_percent(pool.max_nodes, int(float(surge[:-1])))
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


@dataclass(frozen=True)
class Usage:
    """One live quota: its limit and what is in use now, as the cloud reports them."""

    limit: float
    used: float


@dataclass(frozen=True)
class QuotaCheck:
    """One quota the stack counts against, with the live numbers and the verdict.

    `short`: the limit itself is below the need, so the apply fails whatever else runs there;
    `tight`: the limit would do, but not with what is in use now (which includes this stack's own
    nodes when it is deployed); `unknown`: the cloud lists none of the quotas.
    """

    quota: str
    scope: Scope
    unit: str
    full_scale: int
    surge: int
    pools: tuple[str, ...]
    limit: float | None
    used: float | None
    verdict: Verdict

    @property
    def need(self) -> int:
        return self.full_scale + self.surge

    @property
    def message(self) -> str:
        need = f"{self.quota}: needs {self.need} {self.unit} ({self.full_scale} at full scale + {self.surge} " \
               f"upgrade surge; pools {', '.join(self.pools)})"
        if self.verdict == "unknown" or self.limit is None or self.used is None:
            return f"{need}, but the cloud lists no such quota here; check it by hand"
        limit = f"limit {self.limit:g}, {self.used:g} in use"
        if self.verdict == "short":
            return f"{need}; {limit}: the limit is short by {self.need - self.limit:g}; ask for an increase"
        if self.verdict == "tight":
            free = self.limit - self.used
            return (f"{need}; {limit}: only {free:g} free now (what is in use includes this stack's own nodes "
                    "if it is deployed)")
        return f"{need}; {limit}"

    def to_json(self) -> dict[str, Any]:
        return {"quota": self.quota, "scope": self.scope, "unit": self.unit, "fullScale": self.full_scale,
                "surge": self.surge, "need": self.need, "pools": list(self.pools), "limit": self.limit,
                "used": self.used, "verdict": self.verdict, "message": self.message}


def _normal(name: str) -> str:
    """Quota names compare without case and spaces: Azure's SKU and usage APIs spell families differently."""
    return name.replace(" ", "").lower()


def _resolve(need: QuotaNeed, live: Mapping[str, Usage]) -> str | None:
    """The quota `need` counts against, given what the cloud lists; None when it lists none of them."""
    for ref in need.quotas:
        usage = live.get(_normal(ref.metric))
        if usage is None or (ref.skip_if_zero and usage.limit == 0):
            continue
        return ref.metric
    return None


def compare(plan: QuotaPlan, regional: Mapping[str, Usage], global_: Mapping[str, Usage]) -> list[QuotaCheck]:
    """Each quota the stack's needs land on, summed where several needs land on one (Google counts an
    E2 and an N1 pool both against CPUS), with the live limit and usage and a verdict."""
    live = {"region": {_normal(k): v for k, v in regional.items()},
            "global": {_normal(k): v for k, v in global_.items()}}
    landed: dict[tuple[str, str, str], list[QuotaNeed]] = {}
    for need in plan.needs:
        metric = _resolve(need, live[need.scope]) or need.quotas[0].metric
        landed.setdefault((metric, need.scope, need.unit), []).append(need)
    checks = []
    for (metric, scope, unit), needs in landed.items():
        usage = live[scope].get(_normal(metric))
        full = sum(n.full_scale for n in needs)
        surge = sum(n.surge for n in needs)
        pools = tuple(dict.fromkeys(p for n in needs for p in n.pools))
        verdict: Verdict
        if usage is None:
            verdict = "unknown"
        elif usage.limit < full + surge:
            verdict = "short"
        elif usage.limit - usage.used < full + surge:
            verdict = "tight"
        else:
            verdict = "ok"
        checks.append(QuotaCheck(metric, scope, unit, full, surge, pools,  # type: ignore[arg-type]
                                 None if usage is None else usage.limit, None if usage is None else usage.used,
                                 verdict))
    return checks


@dataclass(frozen=True)
class QuotaReport:
    """The live comparison of one stack: where it was read, each check, and the plan's notes."""

    stack: str
    where: str
    checks: tuple[QuotaCheck, ...]
    surge: str
    notes: tuple[str, ...] = ()

    @property
    def short(self) -> list[QuotaCheck]:
        return [c for c in self.checks if c.verdict == "short"]

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "where": self.where, "surge": self.surge,
                "checks": [c.to_json() for c in self.checks], "notes": list(self.notes),
                "ok": not self.short}


class TimedQuery:
    """A live query whose timeout is refused before any request when no HTTP client can use it (0,
    negative, infinite); the dataclasses that mix it in declare `timeout` themselves."""

    timeout: float

    def __post_init__(self) -> None:
        if (problem := timeout_problem(self.timeout)) is not None:
            raise SpotkubeError(problem)


@dataclass(frozen=True)
class QuotaQuery(TimedQuery):
    """What to read live: the stack, the machines whose families the cloud may have to name, where
    to ask (`endpoint`: the cloud's own by default, e.g. a sovereign cloud's or a proxy's otherwise)
    and, on Azure, the subscription (`account`); Google Cloud reads the stack's project."""

    spec: PlatformSpec
    machines: tuple[str, ...]
    endpoint: str | None = None
    account: str | None = None
    timeout: float = 30.0



@dataclass(frozen=True)
class LiveQuota:
    """A cloud's answer: the region's quotas, the subscription's or project's, and each machine's quota
    family when the cloud had to name it (`learnt`)."""

    where: str
    regional: Mapping[str, Usage]
    global_: Mapping[str, Usage]
    learnt: Mapping[str, str]


def plain_http(endpoint: str | None) -> bool:
    """A plain-HTTP endpoint (a local proxy or test server) is called without a credential: a token
    must never travel unencrypted, and azure-core refuses to send one there anyway."""
    return bool(endpoint) and str(endpoint).startswith("http://")


def installed(*modules: str) -> bool:
    """Whether every module can be imported (without importing it): the cloud SDKs are an extra."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in modules)
    except ModuleNotFoundError:  # a parent package is missing
        return False

