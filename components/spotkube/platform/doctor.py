"""What `spotkube doctor` asks a cloud before a stack's first `pulumi up`, and the shape of its answer.

Each cloud reads live what a first `up` would fail on half-way (APIs, provider namespaces, roles,
quota, sizes) into a `LiveAccess`; `review/doctor.py` judges it. Pure module: no Pulumi, no cloud SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, Literal, Protocol

from spotkube.platform.identities import Assignment, Identity
from spotkube.platform.live_quota import TimedQuery
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec

#: What a live read that failed tells the user to do, on every cloud.
LIVE_READ_HINT = "Check the endpoint, the network and the identity's rights, then run spotkube doctor again."
#: ok; fail: the first `up` fails on it (exit 1); warn: worth knowing, doesn't fail the check.
Level = Literal["ok", "warn", "fail"]


@record
class Finding:
    """One checked item: what (`check`: apis, roles, quota, sizes), about what, and the command that fixes it."""

    check: str
    subject: str
    level: Level
    message: str
    fix: str | None = None

    def line(self) -> str:
        mark = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[self.level]
        return f"{mark} {self.check}: {self.message}" + (f"; fix: {self.fix}" if self.fix else "")

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "subject": self.subject, "level": self.level, "message": self.message,
                "fix": self.fix}


class PoolSize(Protocol):
    """What the live size check reads of a registered pool (`platform.cloud.RegisteredPool`): its machine,
    and GPU type where the cloud lists it apart, in the zones it asks for (none: any zone of the region)."""

    @property
    def name(self) -> str: ...
    @property
    def machine(self) -> str: ...
    @property
    def gpu_type(self) -> str | None: ...
    @property
    def zones(self) -> tuple[str, ...]: ...


@record
class DoctorQuery(TimedQuery):
    """What to read live: the stack, the types its program registers, its pools' sizes, whose roles to
    read (`principals`: an Azure object id, a Google IAM member or e-mail, per CI identity), where to ask
    (`endpoint`: the cloud's own by default; a plain-HTTP one is sent no credential) and, on Azure, the
    subscription (`account`)."""

    spec: PlatformSpec
    type_tokens: tuple[str, ...]
    sizes: tuple[PoolSize, ...]
    principals: Mapping[Identity, str]
    endpoint: str | None = None
    account: str | None = None
    timeout: float = 30.0



@record
class LiveAccess:
    """A cloud's answer, and how to word its fixes. `apis_unknown`: the types spotkube can't place;
    `held`: each principal's role assignments in the identity table's terms, unless reading them was
    refused (`unreadable`); `sizes` the cloud judges itself, knowing how it restricts a size."""

    where: str
    apis_what: str
    apis_needed: tuple[str, ...]
    apis_unknown: tuple[str, ...]
    apis_enabled: frozenset[str]
    enable_command: Callable[[str], str]
    held: Mapping[Identity, tuple[Assignment, ...]]
    grant_command: Callable[[str, Assignment], str]
    sizes: tuple[Finding, ...] = ()
    #: Identities whose roles could not be read, and the cloud's answer.
    unreadable: Mapping[Identity, str] = field(default_factory=dict)


@record
class BackendPolicy:
    """Who holds which role on a self-managed backend's bucket or container, as the cloud answers (`roles`:
    role -> members), and which of those roles write the state or only read it. `member` is how the cloud
    names a principal the user gave (`--deploy`, `--preview`) among the members."""

    where: str
    roles: Mapping[str, tuple[str, ...]]
    writes: frozenset[str]
    reads: frozenset[str]
    member: Callable[[str], str]
    #: Members that are everyone (`allUsers`): on a state store, a leak whatever the role.
    public: frozenset[str] = frozenset()
    #: How to grant the state's write or read role on it, for a fix: (member, "write" | "read") -> command.
    grant_command: Callable[[str, str], str] = lambda member, role: ""
    #: Why there is nothing to read (the storage account doesn't exist), said as a failure.
    missing: str | None = None
