"""What every registered cloud must do, checked for each one in `spotkube.clouds.CLOUDS`: a new cloud
inherits these tests by registering, and brings one file of test data, its smallest stack
(`tests/clouds/<cloud>/minimal_stack.yaml`, a stack file as a user writes it).

Each cloud's minimal stack runs once per module through the real program under the offline engine
(`run_stack`, what `spotkube plan` runs), and every test reads that run: the spec survives each way
it travels, the registered pools read back as planned, the plan has no errors, a spot GPU step lands
on the spot GPU pool first, every pool and fixed line is priced, and the configuration reference and
the stack schema know the cloud. Each cloud's own tests (`tests/clouds/<cloud>/`) keep what only it
has: its spelling of the resources, its rules, its preflight, its catalog sources.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import spotkube
from spotkube.clouds import (
    CLOUDS,
    PROFILES,
    bundled_catalog,
    checked,
    parse_spec,
    plan_platform,
    read_spec,
    registered_pools,
)
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform import contract, reference
from spotkube.platform.cloud import Cloud
from spotkube.platform.contract import POOL_LABEL
from spotkube.platform.plan import PlatformPlan
from spotkube.platform.project import Project, as_pulumi_config, stack_config
from spotkube.review.plan_document import PlanDocument
from spotkube.review.program_review import stack_document

TESTS = Path(__file__).resolve().parents[1]
SCHEMA = TESTS.parent / "schemas" / "stack.schema.json"


def minimal_stack_file(cloud: str) -> Path:
    return TESTS / "clouds" / cloud / "minimal_stack.yaml"


def minimal_values(cloud: str) -> dict[str, Any]:
    """The minimal stack's `spotkube:` keys, without the namespace."""
    config = yaml.safe_load(minimal_stack_file(cloud).read_text())["config"]
    return {key.removeprefix("spotkube:"): value for key, value in config.items()}


class CloudRun:
    """One cloud's minimal stack, planned once: the offline run, its plan document and the plan."""

    def __init__(self, cloud: str, project: Project) -> None:
        self.cloud = cloud
        self.profile: Cloud = CLOUDS[cloud]
        self.project = project
        self.stack = f"{cloud}-dev-minimal"
        self.run: StackRun = run_stack(project, self.stack)
        self.document: PlanDocument = stack_document(self.run)
        self.plan: PlatformPlan = plan_platform(self.run.spec)


@pytest.fixture(scope="module", params=sorted(CLOUDS))
def planned(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
    project_copy: Callable[[Path, str, dict[str, Any]], Project],
) -> CloudRun:
    cloud: str = request.param
    folder = tmp_path_factory.mktemp(f"minimal-{cloud}")
    return CloudRun(cloud, project_copy(folder, f"{cloud}-dev-minimal", minimal_values(cloud)))


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_every_registered_cloud_brings_its_minimal_stack(cloud: str) -> None:
    path = minimal_stack_file(cloud)
    assert path.is_file(), f"{cloud} is registered but has no {path.relative_to(TESTS.parent)}"
    assert minimal_values(cloud)["cloud"] == cloud
    capacities = sorted(pool["capacity"] for pool in minimal_values(cloud).get("gpuPools", ()))
    assert capacities == ["on-demand", "spot"], "the minimal stack has a spot GPU pool and its on-demand fallback"


# --- the spec --------------------------------------------------------------------------------------


def test_the_spec_round_trips_through_every_path(planned: CloudRun) -> None:
    """The stack file, the program's Pulumi config, the Python API and the component all hold one spec."""
    spec = planned.run.spec
    assert spec.cloud == planned.cloud and isinstance(spec, planned.profile.spec_model)
    # Written back in the stack file's spelling, it reads as the same spec (resolving is idempotent).
    assert parse_spec(spec.model_dump(mode="json", by_alias=True, exclude_unset=True), "round trip") == spec
    # The program reads the same spec from the strings Pulumi hands it.
    config = as_pulumi_config(stack_config(planned.project, planned.stack))
    assert read_spec(config, planned.project, planned.stack) == spec
    # A spec built in Python passes the API's check unchanged, and the component planned from it.
    assert checked(spec, "round trip", "python") == spec
    (cluster,) = planned.run.clusters
    assert cluster.spec == spec


# --- the resources ---------------------------------------------------------------------------------


def test_the_registered_pools_read_back_as_planned(planned: CloudRun) -> None:
    """What the cloud's component registers, read back by its profile, is what the plan decided."""
    read = {p.labels[POOL_LABEL]: p for r in planned.run.seen_by_pack
            for p in registered_pools(r.type, r.name, r.inputs)}
    assert set(read) == {p.name for p in planned.plan.pools}
    for pool in planned.plan.pools:
        back = read[pool.name]
        assert (back.machine, back.capacity, back.min, back.max) == (
            pool.machine, pool.capacity, pool.min, pool.max), pool.name
        assert back.labels == pool.labels and back.parsed_taints == frozenset(pool.taints), pool.name
        assert (back.has_gpu, back.gpu_count) == (pool.gpu_type is not None, pool.gpu_count), pool.name
        assert back.system == (pool.role == "system"), pool.name
        assert not pool.zones or back.zones == pool.zones, pool.name


# --- the plan --------------------------------------------------------------------------------------


def test_the_minimal_stack_plans_without_errors(planned: CloudRun) -> None:
    document = planned.document
    assert document.errors == []
    assert (document.cloud, document.environment) == (planned.cloud, "dev")
    assert sorted(row.name for row in document.pools) == sorted(p.name for p in planned.plan.pools)
    assert any(f.gpu_type == planned.plan.gpu_pools[0].gpu_type for f in document.fallback)


def test_a_gpu_step_lands_spot_first_and_a_steady_step_on_demand_without_gpus(planned: CloudRun) -> None:
    """The contracts the component gives workloads: a spot step goes to the spot GPU pool alone (never the
    system pool or the on-demand fallback), a step with fallback to the spot pool and then the on-demand
    one, and an on-demand step to on-demand pools without GPUs."""
    (cluster,) = planned.run.clusters
    assert cluster.contracts is not None
    pools = {p.name: p for p in planned.plan.pools}
    (spot,) = [p for p in planned.plan.gpu_pools if p.capacity == "spot"]
    (fallback,) = [p for p in planned.plan.gpu_pools if p.capacity == "on-demand"]
    step = contract.spot_gpu(spot.gpu_type)
    assert contract.landing_pools(step, cluster.contracts) == [spot.name]
    assert f"{planned.plan.system_pool.name}: " in contract.why_nowhere(step, cluster.contracts)
    with_fallback = contract.spot_gpu(spot.gpu_type, fallback_to_on_demand=True)
    assert contract.landing_pools(with_fallback, cluster.contracts) == [spot.name, fallback.name]
    steady = contract.landing_pools(contract.on_demand_only(), cluster.contracts)
    assert "platform" in steady
    assert all(pools[name].gpu_type is None and pools[name].capacity == "on-demand" for name in steady)


# --- the cost --------------------------------------------------------------------------------------


def test_every_pool_and_fixed_line_is_priced(planned: CloudRun) -> None:
    cost = planned.document.cost
    assert cost.unpriced == [] and cost.pools and all(p.priced for p in cost.pools)
    assert cost.stack_cost.idle_floor_usd > 0  # the on-demand system pool runs all month
    gpu = planned.plan.gpu_pools[0].name
    assert cost.line(gpu) is not None
    if planned.profile.fixed_prices is not None:
        assert cost.fixed is not None and cost.fixed.lines and not cost.fixed.unpriced


# --- the reference ---------------------------------------------------------------------------------


def test_the_reference_and_the_stack_schema_know_the_cloud(planned: CloudRun) -> None:
    """The configuration reference has the cloud's own tables, the stack schema accepts its stack, and its
    catalog knows its machines."""
    text = reference.readme_reference(CLOUDS)
    assert f"**`cluster`** ({planned.profile.title}): " in text
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    stack_file = yaml.safe_load(minimal_stack_file(planned.cloud).read_text())
    assert [e.message for e in validator.iter_errors(stack_file)] == []
    # The cloud's part of the GPU catalog, which its rules and the plan read, knows the stack's GPU machine.
    section = bundled_catalog().cloud(planned.cloud)
    assert section.machine(planned.plan.gpu_pools[0].machine) is not None


# --- the folder --------------------------------------------------------------------------------------


def _imports(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    return names


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_a_cloud_s_folder_never_imports_another_cloud_or_its_sdk(cloud: str) -> None:
    modules = sorted((Path(__file__).resolve().parents[2] / "components/spotkube/clouds" / cloud).glob("*.py"))
    assert modules, cloud
    others = [m for name, m in PROFILES.items() if name != cloud]
    for module in modules:
        imported = _imports(module)
        assert not any(m.sdk in imported or any(n.startswith(m.module("")) for n in imported) for m in others), module


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_a_cloud_s_components_are_exported_under_its_name(cloud: str) -> None:
    """`spotkube` finds a cloud's public names by the cloud's name they start with, loading no other cloud."""
    profile = CLOUDS[cloud]
    names = {profile.component, profile.node_pool.component}
    assert all(name.startswith(cloud.capitalize()) for name in names)
    assert names <= set(spotkube.__all__)
    assert all(getattr(spotkube, name).__name__ == name for name in names)
