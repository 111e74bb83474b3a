"""A stack's quota need against a cloud's live limits and usage: `spotkube quota` and `doctor`.

Only the live commands load this (the need itself, `quota`, is every plan's); the SDK call lives in
`clouds/<cloud>/usage_api.py`. How the needs are counted and checked: docs/quota.md.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any, Literal

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.input_messages import timeout_problem
from spotkube.platform.quota import QuotaNeed, QuotaPlan, Scope
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec

#: How a quota stands against the need: enough, short whatever runs, short with what runs now, unlisted.
Verdict = Literal["ok", "short", "tight", "unknown"]


@record
class Usage:
    """One live quota: its limit and what is in use now, as the cloud reports them."""

    limit: float
    used: float


@record
class QuotaCheck:
    """One quota the stack counts against, with the live numbers and the verdict: `short`, the limit
    itself is below the need; `tight`, not with what is in use now (this stack's own nodes included)."""

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


@record
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


@record
class QuotaQuery(TimedQuery):
    """What to read live: the stack, the machines whose families the cloud may have to name, where
    to ask (`endpoint`: the cloud's own by default, e.g. a sovereign cloud's or a proxy's otherwise)
    and, on Azure, the subscription (`account`); Google Cloud reads the stack's project."""

    spec: PlatformSpec
    machines: tuple[str, ...]
    endpoint: str | None = None
    account: str | None = None
    timeout: float = 30.0



@record
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

