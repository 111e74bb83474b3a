"""The bundled table prices every GPU size of the catalog in every region the catalog says offers it,
and every pool of the shipped stacks and of the stacks `new-stack` writes for the regions the README
and the CLI's messages give as examples, at spot and on demand. A price that no public source offered
is listed under the table's `unpriced` with the reason, and the plan says so by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from planned_costs import price_plan
from spotkube.clouds import (
    CLOUDS,
    bundled_catalog,
    load_price_table,
    load_stack_spec,
    parse_spec,
    plan_platform,
    profile,
)
from spotkube.clouds.gke import catalog as gke_catalog
from spotkube.platform.cost import PRICES_ENV
from spotkube.platform.plan import PlatformPlan
from spotkube.platform.project import find_project

#: The flags a new stack of each cloud is made with (`spotkube new-stack --deployer-object-id` on AKS,
#: `--gcp-project` on GKE), by the fields of the cloud's options model.
NEW_STACK_FLAGS = {"aks": {"deployer_object_id": "11111111-2222-4333-8444-555555555555"},
                   "gke": {"project": "acme-ml-qa"}}

REPO = Path(__file__).resolve().parents[2]
TABLE = load_price_table()

#: (cloud, region, machine) that no dated copy of the cloud's price list reachable offline prices, as the
#: table records them; the plan must name them. aks-dev-uksouth prices its D4s_v3 pools itself (the
#: articles' example).
UNSOURCED = {(gap.cloud, gap.region, gap.sku) for gap in TABLE.unpriced if gap.kind == "machine"}

#: Regions the CLI's own messages offer as examples (profiles' region errors).
MESSAGE_REGIONS = [("aks", "eastus"), ("aks", "westeurope"), ("aks", "uksouth"),
                   ("gke", "us-central1"), ("gke", "europe-west4")]


def readme_examples() -> list[tuple[str, str]]:
    """The `new-stack` commands the README and the docs show, as (cloud, region)."""
    text = "".join(path.read_text() for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])
    found = re.findall(r"spotkube new-stack --cloud (\w+) --env \S+ --region (\S+)", text)
    assert found, "neither the README nor the docs show a new-stack example"
    return found


def shipped() -> dict[str, PlatformPlan]:
    project = find_project(REPO)
    return {name: plan_platform(load_stack_spec(project, name)) for name in project.stacks()}


def new_stacks() -> dict[str, PlatformPlan]:
    """What `new-stack` writes for every example region (and every GKE region it accepts)."""
    regions = {*readme_examples(), *MESSAGE_REGIONS, *(("gke", region) for region in gke_catalog.gpu_regions())}
    plans = {}
    for cloud, region in sorted(regions):
        flags = profile(cloud).commands.options.new_stack.model_validate(NEW_STACK_FLAGS[cloud])
        config = profile(cloud).commands.new_stack_config("qa", region, flags)
        plans[f"new-stack {cloud} {region}"] = plan_platform(parse_spec(config, f"new-stack {cloud} {region}"))
    return plans


PLANS = {**shipped(), **new_stacks()}


@pytest.fixture(autouse=True)
def _bundled_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user price file: this is about the bundled table."""
    monkeypatch.delenv(PRICES_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


def test_the_examples_cover_the_readme_and_every_shipped_stack() -> None:
    assert ("gke", "us-east4") in readme_examples()
    assert {"aks-dev-uksouth", "aks-prod-eastus", "gke-dev-us-central1", "gke-prod-europe-west4"} <= set(PLANS)


@pytest.mark.parametrize("stack", list(PLANS))
def test_every_pool_is_priced_or_the_plan_says_why(stack: str) -> None:
    plan = PLANS[stack]
    cloud = profile(plan.cloud).pricing.name
    report = price_plan(plan, table=TABLE)

    assert plan.pools, stack
    for pool in plan.pools:
        key = (cloud, plan.spec.region, pool.machine)
        if pool.name in report.priced_pools:
            continue
        assert key in UNSOURCED, f"{stack}: {pool.name}: no price for {key}"
        (unpriced,) = [u for u in report.unpriced if u.pool == pool.name]
        assert unpriced.text() == f"{pool.name}, {pool.machine} in {plan.spec.region}, has no price"
        if not unpriced.blocks:  # min 0 and no hours: a note, and the totals stay whole
            assert any(note.startswith(unpriced.text()) for note in report.notes)
            continue
        (warning,) = [w for w in report.warnings if w.id == f"cost-unpriced:{pool.name}"]
        assert (f"{pool.name}: unpriced: no spot or on-demand price for {pool.machine} in {plan.spec.region}"
                in warning.message) or (f"{pool.name}: unpriced: no on-demand price for {pool.machine}"
                                        in warning.message)
        assert f"spotkube prices refresh --cloud azure --region {plan.spec.region} --sku {pool.machine}" in (
            warning.message)
        assert "price file" in warning.message
        assert report.total("idleFloor") is None


def test_the_shipped_stacks_are_priced_whole() -> None:
    """Every shipped stack's totals cover all its pools offline, from the bundled table and its own prices."""
    plans = shipped()
    assert plans, "the shipped stacks"
    for name, plan in plans.items():
        report = price_plan(plan, table=TABLE)
        assert all(report.total(f) is not None for f in ("idleFloor", "scenario", "onDemandEquivalent")), name


def test_every_size_the_catalog_offers_is_priced_or_says_why() -> None:
    catalog = bundled_catalog()
    gaps = {gap.key for gap in TABLE.unpriced}
    checked = 0
    for name, cloud in CLOUDS.items():
        pricing = cloud.pricing
        capacities = ("on-demand", "spot", "preemptible") if pricing.name == "gcp" else ("on-demand", "spot")
        for machine, entry in catalog.cloud(name).machines.items():
            for region in entry.regions:
                for capacity in capacities:
                    key = (pricing.name, region, machine, "machine", capacity)
                    assert TABLE.find(*key) is not None or key in gaps, f"{key}: neither priced nor listed as unpriced"
                    checked += 1
    assert checked > 1000  # the whole map, not a sample


#: The sizes teams pick (issue 34): each plans with a price, on-demand and spot, in a new stack.
PICKED = [("aks", "westeurope", "Standard_ND96isr_H100_v5"), ("aks", "westeurope", "Standard_NC24ads_A100_v4"),
          ("aks", "eastus", "Standard_ND96asr_v4"), ("gke", "us-central1", "a3-highgpu-8g"),
          ("gke", "us-central1", "g2-standard-24"), ("gke", "europe-west4", "a2-highgpu-1g")]


def new_stack_with(cloud: str, region: str, machine: str) -> PlatformPlan:
    flags = {"gke": {"project": "acme-ml-qa"},
             "aks": {"deployer_object_id": "c0ffee00-0000-4000-8000-000000000001"}}[cloud]
    config = profile(cloud).commands.new_stack_config("qa", region, profile(cloud).commands.options.new_stack(**flags))
    config["gpuPools"] = [{"name": "gpu", "machine": machine, "capacity": "spot", "min": 0, "max": 2}]
    return plan_platform(parse_spec(config, f"new-stack {cloud} {region}"))


@pytest.mark.parametrize(("cloud", "region", "machine"), PICKED)
def test_the_sizes_teams_pick_plan_with_a_price(cloud: str, region: str, machine: str) -> None:
    report = price_plan(new_stack_with(cloud, region, machine), table=TABLE)
    (gpu,) = [p for p in report.pools if p.pool.name == "gpu"]
    assert gpu.price is not None and gpu.on_demand is not None
    assert gpu.price.usd_per_hour < gpu.on_demand.usd_per_hour
    assert report.complete and not [w for w in report.warnings if w.id.startswith("cost-unpriced")]


def test_a_t4_in_uk_south_is_unpriced_and_the_table_says_why() -> None:
    """No dated copy of a UK South price list was reachable: the plan names the pool, the table the reason."""
    report = price_plan(new_stack_with("aks", "uksouth", "Standard_NC4as_T4_v3"), table=TABLE)
    assert "gpu" in [u.pool for u in report.unpriced]  # its D4s_v3 system pools too: no UK South copy
    (gap,) = [g for g in TABLE.unpriced if g.key == ("azure", "uksouth", "Standard_NC4as_T4_v3", "machine", "spot")]
    assert "no reachable dated copy" in gap.reason
