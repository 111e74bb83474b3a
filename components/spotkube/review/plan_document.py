"""What the plan says about one stack, as a typed value that every view reads, so all formats say the
same thing. The JSON shape (`to_json`) is the contract with machines and CI: its keys are stable.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from spotkube.clouds import RegisteredPool, gpu_catalog, profile
from spotkube.platform.catalog import CloudCatalog
from spotkube.platform.contract import PoolContract
from spotkube.platform.maintenance import UpgradeExposure
from spotkube.platform.plan import fallback_warning_id
from spotkube.platform.posture import ClusterPosture, Setting, concern_warning
from spotkube.platform.preflight import Verdict
from spotkube.platform.quota import QuotaPlan
from spotkube.platform.records import record
from spotkube.platform.registration import Registration
from spotkube.platform.spec import Acknowledgement
from spotkube.platform.startup import PoolStartup
from spotkube.platform.warnings import PlanWarning
from spotkube.review.acknowledgements import AcknowledgedWarning, Judged, judge
from spotkube.review.catalog_check import CatalogNote
from spotkube.review.costing import CostReport
from spotkube.review.fallback import GpuFallback
from spotkube.review.placements import StackPlacements
from spotkube.review.policy_rules import Finding
from spotkube.review.resource_list import Resource

#: The version of the plan's JSON shape (`{"schemaVersion": N, "stacks": [...]}`): raised when a key
#: changes meaning or goes away; new keys keep it. schemas/plan.schema.json describes it. Version 2:
#: each warning is `{id, message}` (was text), acknowledged warnings are listed apart, and a cost total
#: is null unless it covers every pool (was the sum of the priced pools).
SCHEMA_VERSION = 2
#: The versions `plan --diff` reads on the base side: what the diff compares means the same in both.
BASE_SCHEMA_VERSIONS = (1, 2)


#: Row order of the plan: the system pool, the platform pool, then the others by name.
_ROLE_ORDER = {"system": 0, "platform": 1}


def pool_rows(
    cloud: str, resources: Sequence[Registration], contracts: Sequence[PoolContract] | None = None
) -> tuple[RegisteredPool, ...]:
    """The pools the program registers, read back from their inputs and completed with their contracts,
    sorted: the mock monitor records registrations from worker threads, so their order changes from run
    to run, and a plan must not."""
    by_name = {c.name: c for c in contracts or ()}
    read = profile(cloud).read_pools
    machines = gpu_catalog().cloud(cloud)
    rows = [
        pool.with_contract(by_name.get(pool.name), _share(machines, pool))
        for r in resources
        for pool in read(r.type, r.name, r.inputs)
    ]
    return tuple(sorted(rows, key=lambda row: (_ROLE_ORDER.get(row.role, len(_ROLE_ORDER)), row.name)))


def _share(machines: CloudCatalog, pool: RegisteredPool) -> str | None:
    machine = machines.machine(pool.machine)
    return machine.gpu.share if machine else None


@record
class OtherResources:
    type: str
    names: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "names": list(self.names)}


@record
class PlanDocument:
    """Everything the plan says about one spotkube cluster of a stack (most stacks build one)."""

    stack: str
    cloud: str
    region: str
    environment: str
    pools: tuple[RegisteredPool, ...]
    resources: tuple[Resource, ...]
    #: Output name -> whether it is a secret (a secret's value is never read).
    outputs: dict[str, bool]
    cost: CostReport
    placements: StackPlacements
    preflight: tuple[Verdict, ...]
    #: The security settings of each cluster resource, as registered.
    posture: tuple[ClusterPosture, ...] = ()
    #: The add-ons' reviewable settings (KFP version and UI, device plugin image).
    addons: tuple[Setting, ...] = ()
    #: The policy pack's violations over these registrations and outputs.
    policy: tuple[Finding, ...] = ()
    #: The program's own warnings (its log).
    program_warnings: tuple[PlanWarning, ...] = ()
    #: Each GPU type's spot fallback as deployed: order, worst case, warning (review/fallback.py).
    fallback: tuple[GpuFallback, ...] = ()
    #: The cloud quotas the registered pools need at full scale and while upgrading (review/quota.py).
    quota: QuotaPlan | None = None
    #: The warnings the stack accepts (`spotkube:acknowledgements`), and the day they are judged on.
    acknowledgements: tuple[Acknowledgement, ...] = ()
    today: datetime.date = field(default_factory=datetime.date.today)
    #: The GPU catalog the stack was judged with, and its warnings (review/catalog_check.py).
    catalog: CatalogNote | None = None
    #: When and how the cloud upgrades each worker pool, as registered.
    upgrades: tuple[UpgradeExposure, ...] = ()
    #: The advisory policy rules' findings: warnings, not errors.
    advisories: tuple[Finding, ...] = ()
    #: The cluster component's name, and whether the program builds other clusters in the same stack.
    cluster: str = ""
    shares_stack: bool = False
    #: The stack's resources that no spotkube cluster owns, by type.
    others: tuple[OtherResources, ...] = ()
    #: Each GPU pool's expected time to a running step from 0 nodes (review/startup.py).
    startup: tuple[PoolStartup, ...] = ()
    #: What stands between a pending GPU step and a running one besides capacity, as registered: each GPU
    #: pool's capacity reservation and how its nodes get images, and the nodes' registry read grants.
    supply: tuple[Setting, ...] = ()
    #: A cluster spotkube didn't make, which the program adds pools to: what those pools depend on that only
    #: the cluster's owner can set, each a warning with its fix (none where the program shows it is set).
    external: tuple[PlanWarning, ...] | None = None

    @property
    def title(self) -> str:
        return f"{self.stack}/{self.cluster}" if self.shares_stack else self.stack

    @property
    def errors(self) -> list[str]:
        """What makes the plan unsafe (exit 1)."""
        return (
            self.placements.errors
            + [f"preflight: {c.title}: {c.detail}" for c in self.preflight if not c.ok]
            + [f"policy {f.rule}: {f.message}" for f in self.policy]
            + list(self.judged.errors)
        )

    @property
    def all_warnings(self) -> list[PlanWarning]:
        """Every warning, acknowledged or not."""
        concerns = [w for cluster in self.posture for w in cluster.warnings]
        concerns += [w for w in map(concern_warning, self.addons) if w is not None]
        fallback = [PlanWarning(fallback_warning_id(f.gpu_type), f.warning) for f in self.fallback if f.warning]
        catalog = self.catalog.plan_warnings() if self.catalog else []
        advisories = [PlanWarning(f.warning_id, f"policy {f.rule} (advisory): {f.message}") for f in self.advisories]
        return [
            *self.program_warnings,
            *self.cost.warnings,
            *concerns,
            *fallback,
            *catalog,
            *advisories,
            *(self.external or ()),
        ]

    @functools.cached_property
    def judged(self) -> Judged:
        return judge(self.all_warnings, self.acknowledgements, self.today)

    @property
    def warnings(self) -> list[PlanWarning]:
        """What `--strict` also fails on, an acknowledgement that matches no warning included."""
        return list(self.judged.open)

    @property
    def acknowledged(self) -> list[AcknowledgedWarning]:
        return list(self.judged.acknowledged)

    @property
    def secret_outputs(self) -> list[str]:
        return [name for name, secret in self.outputs.items() if secret]

    def to_json(self, details: bool = False) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "cluster": self.cluster,
            **({"external": True} if self.external is not None else {}),
            "cloud": self.cloud,
            "region": self.region,
            "environment": self.environment,
            "posture": [cluster.to_json() for cluster in self.posture],
            "addons": [addon.to_json() for addon in self.addons],
            "supply": [setting.to_json() for setting in self.supply],
            "pools": [pool.to_json() for pool in self.pools],
            "resources": [r.to_json(details) for r in self.resources],
            "otherResources": [o.to_json() for o in self.others],
            "outputs": {name: {"secret": secret} for name, secret in self.outputs.items()},
            "cost": self.cost.to_json(),
            "catalog": self.catalog.to_json() if self.catalog else None,
            "fallback": [f.to_json() for f in self.fallback],
            "startup": [s.to_json() for s in self.startup],
            "upgrades": [u.to_json() for u in self.upgrades],
            "quota": None if self.quota is None else self.quota.to_json(),
            "placements": [p.to_json() for p in self.placements.placements],
            "notes": self.placements.notes,
            "preflight": [check.to_json() for check in self.preflight],
            "policy": [{"rule": f.rule, "message": f.message} for f in self.policy],
            "errors": self.errors,
            "warnings": [w.to_json() for w in self.warnings],
            "acknowledged": [a.to_json() for a in self.acknowledged],
        }
