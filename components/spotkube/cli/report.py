"""The plan of a stack run offline: the typed `PlanDocument`, and the JSON the CLI prints.

The views (`plan_views`) render the same document as a table or Markdown.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi.runtime import rpc

from spotkube.clouds import plan_platform, profile, upgrade_exposures
from spotkube.components.offline import StackRun
from spotkube.platform.contract import PoolContract
from spotkube.platform.cost import PriceTable
from spotkube.platform.maintenance import UpgradeExposure, window_of
from spotkube.platform.posture import ClusterPosture
from spotkube.platform.preflight import Deployment
from spotkube.platform.registration import Registration
from spotkube.platform.warnings import PlanWarning, from_log
from spotkube.review.addons import addon_settings
from spotkube.review.catalog_check import catalog_note
from spotkube.review.costing import LOGGED_PLAN_WARNING, price_plan
from spotkube.review.fallback import stack_fallback
from spotkube.review.fixed_costs import stack_fixed_costs
from spotkube.review.placements import StackPlacements, stack_placements
from spotkube.review.plan_document import SCHEMA_VERSION, PlanDocument, pool_rows
from spotkube.review.policy_rules import check_outputs, check_registrations, check_stack
from spotkube.review.preflight import preflight
from spotkube.review.quota import stack_quota
from spotkube.review.resource_list import resource_list

#: How Pulumi shows a secret value in a preview's details.
SECRET_MASK = "[secret]"


def masked(value: Any) -> Any:
    """Registered inputs as JSON with every secret replaced by `[secret]`, as Pulumi masks them."""
    if rpc.is_rpc_secret(value):
        return SECRET_MASK
    if isinstance(value, Mapping):
        return {str(k): masked(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [masked(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire has only floats; Pulumi shows whole numbers without ".0"
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def unwrapped(value: Any) -> Any:
    """Registered inputs with secrets unwrapped: what pulumi-policy hands a policy pack's rules."""
    if rpc.is_rpc_secret(value):
        return unwrapped(value["value"])
    if isinstance(value, Mapping):
        return {k: unwrapped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unwrapped(v) for v in value]
    return value


def _as_the_pack_sees(registration: Registration) -> Registration:
    return dataclasses.replace(registration, inputs=unwrapped(registration.inputs))


def _contracts(run: StackRun) -> list[PoolContract] | None:
    """The pool contracts the program exports, which carry every node label (declared, cloud-added
    and well-known); None without a readable poolContracts output."""
    output = run.outputs.get("poolContracts")
    if output is None or output.secret:
        return None
    return [PoolContract.from_json(pool) for pool in output.value or ()]


def _placements(run: StackRun, contracts: list[PoolContract] | None) -> StackPlacements:
    if contracts is None:
        return StackPlacements(notes=["placements unknown: the stack exports no readable poolContracts output"])
    return stack_placements(run.spec.cloud, run.registrations, contracts)


def _posture(run: StackRun) -> tuple[ClusterPosture, ...]:
    read = profile(run.spec.cloud).read_posture
    found = (read(r.type, r.name, r.inputs, r.protect) for r in run.registrations)
    return tuple(sorted((p for p in found if p is not None), key=lambda p: p.resource))


def _program_warnings(run: StackRun) -> tuple[PlanWarning, ...]:
    """The program's own warnings, with the ids they are logged with, less the plan warnings its
    clusters log for `pulumi up` (cost, fallback, security): the plan computes those itself, with the
    price file its user chose."""
    tag = f": {LOGGED_PLAN_WARNING}: "
    return tuple(from_log(line.removeprefix("warning: ")) for line in run.log
                 if line.startswith("warning") and tag not in line)


def stack_document(run: StackRun, table: PriceTable | None = None) -> PlanDocument:
    """Everything the plan says about one stack. The pools show the very labels the `poolContracts`
    output gives to workloads; the policy findings are the pack's, over the inputs as it sees them."""
    contracts = _contracts(run)
    seen_by_pack = [_as_the_pack_sees(r) for r in run.registrations]
    pools = pool_rows(run.spec.cloud, run.registrations, contracts)
    return PlanDocument(
        stack=run.stack,
        cloud=run.spec.cloud,
        region=run.spec.region,
        environment=run.spec.environment,
        pools=pools,
        resources=resource_list(run.registrations, {r.urn: masked(r.inputs) for r in run.registrations}),
        outputs={name: out.secret for name, out in sorted(run.outputs.items())},
        cost=dataclasses.replace(price_plan(plan_platform(run.spec), table=table),
                                 fixed=stack_fixed_costs(run.spec, run.registrations)),
        placements=_placements(run, contracts),
        preflight=tuple(preflight(Deployment(run.registrations, run.invokes, run.spec, run.source))),
        posture=_posture(run),
        addons=addon_settings(run.spec, run.registrations),
        policy=tuple(sorted({*check_registrations(seen_by_pack), *check_outputs(run.outputs)},
                            key=lambda f: (f.rule, f.message))),
        program_warnings=_program_warnings(run),
        fallback=stack_fallback(run.spec.cloud, seen_by_pack, pools),
        quota=stack_quota(run.spec.cloud, pools),
        acknowledgements=run.spec.acknowledgements,
        catalog=catalog_note(run.spec),
        upgrades=_upgrades(run, seen_by_pack),
        advisories=tuple(sorted(set(check_stack(seen_by_pack)), key=lambda f: (f.rule, f.message))),
    )


def _upgrades(run: StackRun, seen_by_pack: Sequence[Registration]) -> tuple[UpgradeExposure, ...]:
    """Each pool's exposure as registered, with the window as the stack declared it wherever the
    cloud registered it in other terms (GKE's, in UTC), so the plan shows the local and the cloud's."""
    window = run.spec.cluster.maintenance.window
    declared = window_of(window) if window is not None else None
    return tuple(dataclasses.replace(u, declared=declared) if u.window and u.window != declared else u
                 for u in upgrade_exposures([(r.type, r.name, r.inputs) for r in seen_by_pack]))


def plan_json(documents: Sequence[PlanDocument], details: bool = False) -> dict[str, Any]:
    """The plan's JSON: always `{"schemaVersion": N, "stacks": [...]}`, whatever the number of stacks."""
    return {"schemaVersion": SCHEMA_VERSION, "stacks": [d.to_json(details) for d in documents]}


def to_json(documents: Sequence[PlanDocument], details: bool = False) -> str:
    return json.dumps(plan_json(documents, details), indent=2)
