"""The plan of a stack run offline: the typed `PlanDocument`, and the JSON the CLI prints.

The views (`plan_views`) render the same document as a table or Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from spotkube.core.contract import PoolContract
from spotkube.core.costing import price_plan
from spotkube.core.placements import StackPlacements, stack_placements
from spotkube.core.plan import plan_platform
from spotkube.core.plan_document import PlanDocument, Resource, pool_rows
from spotkube.core.preflight import Deployment, preflight
from spotkube.tools.offline import StackRun


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


def stack_document(run: StackRun) -> PlanDocument:
    """Everything the plan says about one stack. The pools show the very labels the `poolContracts`
    output gives to workloads."""
    contracts = _contracts(run)
    return PlanDocument(
        stack=run.stack,
        cloud=run.spec.cloud,
        region=run.spec.region,
        environment=run.spec.environment,
        pools=pool_rows(run.spec.cloud, run.registrations, contracts),
        # Sorted: the mocks record registrations from worker threads, in an order that changes per run.
        resources=tuple(sorted(Resource(r.type, r.name) for r in run.registrations if r.custom)),
        outputs={name: out.secret for name, out in sorted(run.outputs.items())},
        cost=price_plan(plan_platform(run.spec)),
        placements=_placements(run, contracts),
        preflight=tuple(preflight(Deployment(run.registrations, run.invokes, run.spec, run.source))),
        program_warnings=tuple(line for line in run.log if line.startswith("warning")),
    )


def to_json(documents: Sequence[PlanDocument], single: bool) -> str:
    body: Any = documents[0].to_json() if single else {"stacks": [d.to_json() for d in documents]}
    return json.dumps(body, indent=2, sort_keys=False)
