"""Every plan states each GPU type's fallback order and worst case, read from what is registered; on
GKE the registered resources themselves make spot first the only way to on-demand capacity."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from spotkube.cli import plan_views, report
from spotkube.clouds.gke import resources as gke
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform import contract
from spotkube.platform.contract import Placement, PoolContract, Requirement, Taint, Toleration
from spotkube.platform.project import Project
from spotkube.review.placements import kfp_deployments_as_applied
from spotkube.review.plan_document import PlanDocument
from spotkube.review.program_review import stack_document

REPO = Path(__file__).resolve().parents[2]
A100 = "nvidia-tesla-a100"


@pytest.fixture(scope="module")
def runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {stack: shipped_run(stack) for stack in repo_project.stacks()}


@pytest.fixture(scope="module")
def documents(runs: dict[str, StackRun]) -> dict[str, PlanDocument]:
    return {stack: stack_document(run) for stack, run in runs.items()}


def contracts(run: StackRun) -> list[PoolContract]:
    """The pool contracts the stack exports, which the plan and pipeline-check judge against."""
    return [PoolContract.from_json(pool) for pool in run.outputs["poolContracts"].value]


def node_pools(run: StackRun) -> dict[str, dict]:
    return {r.inputs["name"]: r.inputs for r in run.of_type(gke.NODE_POOL_TYPE)}


def compute_classes(run: StackRun) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in run.of_type(gke.COMPUTE_CLASS_TYPE)}


def test_every_gpu_type_of_every_stack_has_its_fallback_stated(documents: dict[str, PlanDocument]) -> None:
    assert documents, "the shipped stacks' plans"
    for stack, document in documents.items():
        gpus = {pool.gpu_type for pool in document.pools if pool.gpu_type}
        assert {f.gpu_type for f in document.fallback} == gpus, stack
        for fallback in document.fallback:
            assert fallback.order and fallback.worst_case_text(), (stack, fallback)


def test_aks_prod_falls_back_to_on_demand_within_the_bounded_time(documents: dict[str, PlanDocument]) -> None:
    (a100,) = documents["aks-prod-eastus"].fallback
    assert [(s.capacity, s.pools) for s in a100.order] == [("spot", ("a100spot",)), ("on-demand", ("a100ondemand",))]
    assert a100.guaranteed and a100.worst_case_seconds == 10 * 60 + 10


def test_a_gpu_type_without_on_demand_is_a_warning(documents: dict[str, PlanDocument]) -> None:
    # The shipped dev stack accepts it (spotkube:acknowledgements); it is a warning all the same.
    assert any(w.id == "fallback-no-on-demand:nvidia-tesla-t4"
               and w.message.startswith("no on-demand fallback for nvidia-tesla-t4")
               for w in documents["aks-dev-uksouth"].all_warnings)
    gke = {f.gpu_type: f for f in documents["gke-prod-europe-west4"].fallback}
    assert gke["nvidia-tesla-a100"].on_demand_pools == ("a100-ondemand",)
    assert gke["nvidia-tesla-t4"].warning


def test_the_json_carries_the_fallback_and_meets_the_schema(documents: dict[str, PlanDocument]) -> None:
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())
    plan = report.plan_json(list(documents.values()))
    jsonschema.validate(plan, schema)
    (prod,) = [s for s in plan["stacks"] if s["stack"] == "aks-prod-eastus"]
    assert prod["fallback"][0]["worstCaseSeconds"] == 610


def test_the_markdown_comment_shows_the_fallback(documents: dict[str, PlanDocument]) -> None:
    markdown = plan_views.to_markdown([documents["aks-prod-eastus"]])
    assert ("| nvidia-a100-80gb | spot: a100spot $0.44/h<br>on-demand: a100ondemand $3.67/h | 10m10s |"
            in markdown)


def test_the_plan_shows_gke_prod_s_three_tiers_with_their_prices_and_bounds(documents: dict[str, PlanDocument]) -> None:
    """spot, then flex-start, then on-demand: each tier with its price (flex-start's unpriced, the cost
    notes saying why) and what bounds it."""
    (a100,) = [row for row in plan_views.fallback_rows(documents["gke-prod-europe-west4"]) if row[0] == A100]
    spot, flex, on_demand = a100[1].splitlines()
    assert spot.startswith("spot: a100-spot $1.69/h (no timer: a stock-out is an error that backs the pool off")
    assert flex.startswith("flex-start: a100-flex unpriced (the cost notes say why) (no timer on node-pool "
                           "priorities: the next priority once Dynamic Workload Scheduler can't provision the node")
    assert flex.endswith("a node runs at most 24 h, then the cloud deletes it)")
    assert on_demand == "on-demand: a100-ondemand $3.75/h"
    markdown = plan_views.to_markdown([documents["gke-prod-europe-west4"]])
    assert "| nvidia-tesla-a100 | spot: a100-spot $1.69/h" in markdown
    assert "<br>flex-start: a100-flex unpriced" in markdown and "<br>on-demand: a100-ondemand $3.75/h |" in markdown


# --- GKE: on-demand capacity only through the compute class's order ------------------------------


def test_gke_prod_reaches_on_demand_a100s_only_through_the_compute_class(runs: dict[str, StackRun]) -> None:
    run = runs["gke-prod-europe-west4"]
    class_name = f"spotkube-{A100}"
    # Every pool of the type joins the class: its label and its taint, as registered.
    a100_pools = {name: inputs for name, inputs in node_pools(run).items()
                  if inputs["nodeConfig"]["labels"].get(contract.ACCELERATOR_LABEL) == A100}
    assert set(a100_pools) == {"a100-spot", "a100-flex", "a100-ondemand"}
    for inputs in a100_pools.values():
        config = inputs["nodeConfig"]
        assert config["labels"][contract.COMPUTE_CLASS_LABEL] == class_name
        assert {"key": contract.COMPUTE_CLASS_LABEL, "value": class_name, "effect": "NO_SCHEDULE"} in config["taints"]
    # The class tries spot, then flex-start, and on-demand only in a later priority of its own; it never
    # goes beyond them.
    spec = compute_classes(run)[class_name]["spec"]
    assert spec["priorities"] == [{"nodepools": ["a100-spot"]}, {"nodepools": ["a100-flex"]},
                                  {"nodepools": ["a100-ondemand"]}]
    assert a100_pools["a100-flex"]["nodeConfig"]["flexStart"] is True
    assert a100_pools["a100-spot"]["nodeConfig"]["spot"] is True
    assert "spot" not in a100_pools["a100-ondemand"]["nodeConfig"]
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp" and spec["nodePoolAutoCreation"] == {"enabled": False}
    assert spec["activeMigration"] == {"optimizeRulePriority": True}
    # A pod that does not select the class is not admitted on the on-demand pool, even if it tolerates
    # every other taint and asks for the GPU type.
    pools = {p.name: p for p in contracts(run)}
    hand_written = Placement(
        tolerations=(*contract.tolerate_interruptible(), Toleration.for_taint(contract.GPU_TAINT)),
        required=((Requirement(contract.ACCELERATOR_LABEL, "In", (A100,)),),), gpus=1)
    verdict = contract.judge(hand_written, pools["a100-ondemand"])
    class_taint = Taint(contract.COMPUTE_CLASS_LABEL, class_name)
    assert not verdict.fits and verdict.reason == f"does not tolerate taint {class_taint}"
    # The same pod selecting the class is admitted: GKE adds the class's toleration to it.
    selecting = Placement(tolerations=hand_written.tolerations, required=hand_written.required, gpus=1,
                          node_selector={contract.COMPUTE_CLASS_LABEL: class_name})
    assert contract.landing_pools(selecting, list(pools.values())) == ["a100-spot", "a100-flex", "a100-ondemand"]
    # spotkube's fallback placement (what GpuTarget(..., fallback_to_on_demand=True) compiles into, see
    # tests/pipelines) selects the class, prefers spot, and accepts on-demand.
    fallback = contract.spot_gpu(A100, fallback_to_on_demand=True)
    assert fallback.node_selector == {contract.COMPUTE_CLASS_LABEL: class_name}
    assert contract.landing_pools(fallback, list(pools.values())) == ["a100-spot", "a100-flex", "a100-ondemand"]
    # Without the fallback, a step stays on spot.
    assert contract.landing_pools(contract.spot_gpu(A100), list(pools.values())) == ["a100-spot"]


def test_the_plan_states_gke_s_order_as_guaranteed_with_no_timer(documents: dict[str, PlanDocument]) -> None:
    a100 = {f.gpu_type: f for f in documents["gke-prod-europe-west4"].fallback}[A100]
    assert [(s.capacity, s.pools) for s in a100.order] == [
        ("spot", ("a100-spot",)), ("flex-start", ("a100-flex",)), ("on-demand", ("a100-ondemand",))]
    assert a100.guaranteed and a100.worst_case_seconds is None and a100.warning is None
    assert a100.formula and "no ComputeClass timer" in a100.formula
    assert a100.worst_case_text() == "not bounded (not stated by the cloud)"


def test_a_gke_stack_without_an_on_demand_pool_has_one_priority_and_the_warning(
    runs: dict[str, StackRun], documents: dict[str, PlanDocument],
) -> None:
    run = runs["gke-dev-us-central1"]
    assert [p for p in node_pools(run).values() if p["nodeConfig"]["labels"].get(contract.ACCELERATOR_LABEL)
            not in (None, contract.NO_ACCELERATOR) and "spot" not in p["nodeConfig"]] == []
    assert compute_classes(run)["spotkube-nvidia-l4"]["spec"]["priorities"] == [{"nodepools": ["l4-spot"]}]
    (l4,) = documents["gke-dev-us-central1"].fallback
    assert not l4.guaranteed and l4.warning and "no on-demand fallback for nvidia-l4" in l4.warning


def test_a_class_pool_without_the_class_taint_breaks_the_guarantee(runs: dict[str, StackRun]) -> None:
    """The plan reads what is registered: a pool that lost its taint is no longer counted in the class."""
    run = runs["gke-prod-europe-west4"]
    resources = []
    for r in run.registrations:
        inputs = r.inputs
        if r.type == gke.NODE_POOL_TYPE and inputs["name"] == "a100-spot":
            config = inputs["nodeConfig"]
            inputs = {**inputs, "nodeConfig": {**config, "taints": [
                t for t in config["taints"] if t["key"] != contract.COMPUTE_CLASS_LABEL]}}
        resources.append((r.type, r.name, inputs))
    facts = gke.read_autoscaler(resources)
    assert facts is not None and facts.priorities is not None
    assert all("a100-spot" not in " ".join(patterns) for patterns in facts.priorities.values())


def test_a_fallback_step_lands_on_both_clouds_and_the_platform_stays_out_of_the_class(
    runs: dict[str, StackRun], documents: dict[str, PlanDocument],
) -> None:
    """Promise A: one pod spec, spot first on AKS and GKE; promise B: Kubeflow stays on the platform pool."""
    aks = contract.spot_gpu("nvidia-a100-80gb", fallback_to_on_demand=True)
    assert contract.landing_pools(aks, contracts(runs["aks-prod-eastus"])) == ["a100spot", "a100ondemand"]
    gke = contract.spot_gpu("nvidia-tesla-a100", fallback_to_on_demand=True)
    assert contract.landing_pools(gke, contracts(runs["gke-prod-europe-west4"])) == [
        "a100-spot", "a100-flex", "a100-ondemand"]
    specs = [d["spec"]["template"]["spec"] for d in kfp_deployments_as_applied()]
    assert specs, "KFP's Deployments as applied"
    for spec in specs:
        assert contract.COMPUTE_CLASS_LABEL not in json.dumps(spec)
    assert documents, "the shipped stacks' plans"
    for stack, document in documents.items():
        kubeflow = [p for p in document.placements.placements if p.namespace == "kubeflow"]
        assert kubeflow and all(p.pools == ("platform",) for p in kubeflow), stack


def test_a_stack_with_a_flex_start_tier_plans_spot_flex_start_on_demand_each_with_its_price(
        project_with_stack: Any) -> None:
    """The middle tier, priced from the bundled table where a dated copy of Google's price list has it
    (a2-highgpu-1g in us-central1): the fallback states spot, then flex-start, then on-demand, each with
    its hourly price, and the scenario bills the flex-start hours at that price."""
    config = {"cloud": "gke", "environment": "dev", "region": "us-central1",
              "cluster": {"project": "spotkube-test"}, "kubeflow": {"enabled": False},
              "gpuPools": [{"name": "a100-spot", "machine": "a2-highgpu-1g", "capacity": "spot", "max": 4},
                           {"name": "a100-flex", "machine": "a2-highgpu-1g", "capacity": "flex-start", "max": 4,
                            "maxRunHours": 48},
                           {"name": "a100-ondemand", "machine": "a2-highgpu-1g", "capacity": "on-demand", "max": 2}],
              "cost": {"hours": {"a100-flex": 100}}}
    document = stack_document(run_stack(project_with_stack("gke-flex-us-central1", config), "gke-flex-us-central1"))
    (a100,) = document.fallback
    assert [(tier.capacity, tier.pools) for tier in a100.order] == [
        ("spot", ("a100-spot",)), ("flex-start", ("a100-flex",)), ("on-demand", ("a100-ondemand",))]
    line = document.cost.line("a100-flex")
    assert line is not None
    priced, cost = line
    assert priced.price is not None and priced.price.usd_per_hour == Decimal("2.02038")
    assert cost.scenario_usd == Decimal("202.04")
    assert not [n for n in document.cost.notes if n.startswith("a100-flex,")], "nothing unpriced to explain"
    rows = {gpu: order for gpu, order, _, _ in plan_views.fallback_rows(document)}
    assert rows["nvidia-tesla-a100"].splitlines()[0].startswith("spot: a100-spot $1.93/h")
    assert rows["nvidia-tesla-a100"].splitlines()[1].startswith("flex-start: a100-flex $2.02/h")
    assert any(line.startswith("on-demand: a100-ondemand $3.67/h") for line in rows["nvidia-tesla-a100"].splitlines())
