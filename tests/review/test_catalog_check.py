"""The GPU sizes teams run on, the declared way past the catalog, and messages that stay true.

- The ND A100 v4, NDm A100 v4, ND H100 v5, ND H200 v5 and NVads A10 v5 sizes on AKS, and the A4,
  A3 Ultra and A3 Mega machine types on GKE, plan in every region the shipped catalog offers them in
  (AKS: the shipped catalog knows no regions yet, so every region spotkube knows), each with its GPU
  type and count, the zones offering it, a spot GPU step landing on it, a device plugin, and a cost
  or "unpriced" said plainly. Built with the plan's own pure steps: spec, plan, contract, costing.
- A machine the catalog doesn't know is accepted when the pool declares its GPU, with a
  `catalog-unlisted-size` warning; without a declaration the refusal says "not in spotkube's
  catalog of <date>" and how to declare or refresh, never that a GPU machine has no GPU.
- Every size a retired-size message recommends is accepted.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from planned_costs import price_plan
from spotkube.clouds import CLOUDS, bundled_catalog, parse_spec, plan_platform, profile
from spotkube.clouds.aks import catalog as aks
from spotkube.clouds.gke import catalog as gke
from spotkube.platform import contract
from spotkube.platform.addons.device_plugin import (
    DAEMONSET_NAME,
    device_plugin_daemonset,
    plugins_per_pool,
)
from spotkube.platform.catalog import UNKNOWN_OFFER, UNLISTED_SIZE
from spotkube.platform.errors import SpecError
from spotkube.review.catalog_check import catalog_note

AKS_SIZES = {
    "Standard_ND96asr_v4": ("nvidia-tesla-a100", 8, None),
    "Standard_ND96amsr_A100_v4": ("nvidia-a100-80gb", 8, None),
    "Standard_ND96isr_H100_v5": ("nvidia-h100-80gb", 8, None),
    "Standard_ND96isr_H200_v5": ("nvidia-h200-141gb", 8, None),
    "Standard_NV6ads_A10_v5": ("nvidia-a10", 1, "1/6"),
    "Standard_NV12ads_A10_v5": ("nvidia-a10", 1, "1/3"),
    "Standard_NV18ads_A10_v5": ("nvidia-a10", 1, "1/2"),
    "Standard_NV36ads_A10_v5": ("nvidia-a10", 1, None),
    "Standard_NV36adms_A10_v5": ("nvidia-a10", 1, None),
    "Standard_NV72ads_A10_v5": ("nvidia-a10", 2, None),
}
GKE_SIZES = {
    "a4-highgpu-8g": ("nvidia-b200", 8, None),
    "a3-ultragpu-8g": ("nvidia-h200-141gb", 8, None),
    "a3-megagpu-8g": ("nvidia-h100-mega-80gb", 8, None),
}
CATALOG = bundled_catalog()


#: What each cloud's stacks need beyond the GPU pool (GKE: a project).
EXTRA: dict[str, dict[str, Any]] = {"aks": {}, "gke": {"cluster": {"project": "acme-ml-dev"}}}
#: Whether the catalog knows a machine's family (GKE) or series (AKS) to have no GPU.
CARRIES_NO_GPU = {"aks": aks.carries_no_gpu, "gke": gke.carries_no_gpu}
#: A region and a machine no catalog knows, per cloud.
UNKNOWN_MACHINE = {"aks": ("eastus", "Standard_ND128isr_GB300_v6"), "gke": ("us-central1", "a5-highgpu-8g")}
assert set(UNKNOWN_MACHINE) <= set(CLOUDS)


def stack(cloud: str, region: str, pool: dict[str, Any]) -> dict[str, Any]:
    return {"cloud": cloud, "environment": "dev", "region": region,
            "gpuPools": [{"name": "gpu", "capacity": "spot", "min": 0, "max": 2, **pool}], **EXTRA[cloud]}


def regions_offering(cloud: str, machine: str) -> tuple[str, ...]:
    """The shipped catalog's regions for the machine, or, where it knows none, every region spotkube knows."""
    return CATALOG.cloud(cloud).regions_offering(machine) or tuple(sorted(CLOUDS[cloud].regions))


SIZES = [("aks", machine, region) for machine in AKS_SIZES for region in regions_offering("aks", machine)]
SIZES += [("gke", machine, region) for machine in GKE_SIZES for region in regions_offering("gke", machine)]


@pytest.mark.parametrize(("cloud", "machine", "region"), SIZES, ids=[f"{c}-{m}-{r}" for c, m, r in SIZES])
def test_the_sizes_teams_run_on_plan_wherever_the_catalog_offers_them(cloud: str, machine: str, region: str) -> None:
    gpu_type, count, share = {**AKS_SIZES, **GKE_SIZES}[machine]
    spec = parse_spec(stack(cloud, region, {"machine": machine}), f"{cloud} {machine} {region}")
    plan = plan_platform(spec)
    pool = next(p for p in plan.pools if p.name == "gpu")
    # GPU type and count, from the catalog, with the part of a GPU where the size gets one.
    assert (pool.gpu_type, pool.gpu_count) == (gpu_type, count)
    assert CATALOG.cloud(cloud).machines[machine].gpu.share == share
    facts = CATALOG.gpu(gpu_type)
    assert facts is not None and facts.memory_gb and facts.mig is not None  # what MIG and sharing rules read
    # Placement: the zones that offer it (GKE fills them in), and a spot GPU step lands on the pool.
    offer = CATALOG.cloud(cloud).offer(machine, region)
    if offer.zones:
        assert set(pool.zones) <= set(offer.zones) and pool.zones
    placement = contract.spot_gpu(gpu_type, gpus=count)
    assert contract.landing_pools(placement, plan.contracts()) == ["gpu"]
    # A device plugin serves its GPUs: spotkube's DaemonSet on AKS, GKE's own on GKE.
    managed = profile(cloud).managed_device_plugin
    daemonsets = [device_plugin_daemonset(spec.device_plugin)["spec"]["template"]["spec"]] if managed is None else []
    assert plugins_per_pool(plan.contracts(), daemonsets, managed)["gpu"] == (
        [DAEMONSET_NAME] if managed is None else [managed.name])
    # Cost, or the pool named as unpriced. From 0 with no scenario hours it adds to no total, so no
    # total turns unknown and there is no warning: the plan names the pool in a note.
    report = price_plan(plan)
    if "gpu" in report.unpriced_pools:
        (unpriced,) = [u for u in report.unpriced if u.pool == "gpu"]
        assert (unpriced.machine, unpriced.region, unpriced.blocks) == (machine, region, ())
        assert not [w for w in report.warnings if w.id == "cost-unpriced:gpu"]
    else:
        assert report.line("gpu") is not None
    # The catalog knows the size: no warning.
    assert catalog_note(spec).warnings == ()


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_every_region_in_the_catalog_is_one_spotkube_knows(cloud: str) -> None:
    machines = CATALOG.cloud(cloud).machines
    assert machines, f"the {cloud} catalog lists no machine"
    for machine in machines:
        assert set(CATALOG.cloud(cloud).regions_offering(machine)) <= CLOUDS[cloud].regions, machine


# --- Where a size is offered ------------------------------------------------------------------------------

H100_REGIONS = ("australiaeast, canadacentral, centralus, eastus, eastus2, japaneast, japanwest, koreacentral, "
                "northcentralus, polandcentral, southafricanorth, southafricawest, southcentralus, spaincentral, "
                "swedencentral, switzerlandnorth, uaenorth, uksouth, westcentralus, westeurope, westus, westus2, "
                "westus3")


def test_a_size_in_a_region_known_without_it_is_refused_naming_where_it_is_offered() -> None:
    with pytest.raises(SpecError) as refused:
        parse_spec(stack("aks", "northeurope", {"machine": "Standard_ND96isr_H100_v5"}), "test")
    message = str(refused.value)
    assert "gpuPools[0].machine: Standard_ND96isr_H100_v5 is not offered in northeurope" in message
    assert f"regions that offer it: {H100_REGIONS}" in message


def test_a_size_in_a_region_no_source_read_is_warned_with_an_id() -> None:
    spec = parse_spec(stack("aks", "denmarkeast", {"machine": "Standard_ND96isr_H100_v5"}), "test")
    note = catalog_note(spec)
    (warning,) = note.warnings
    assert (warning.id, warning.pool) == (UNKNOWN_OFFER, "gpu")
    assert "knows Standard_ND96isr_H100_v5 but not whether denmarkeast offers it" in warning.message
    assert f"regions where it is offered: {H100_REGIONS}" in warning.message
    assert [w.id for w in note.plan_warnings()] == ["catalog-unknown-offer:gpu"]


# --- The declared way past the catalog ------------------------------------------------------------------

UNLISTED = [
    ("aks", "uksouth", {"machine": "Standard_ND128isr_GB300_v6", "gpu": {"type": "nvidia-gb300", "count": 4}}),
    ("aks", "eastus", {"machine": "Standard_NC4as_T4_v9", "gpu": {"type": "nvidia-tesla-t4", "count": 1}}),
    ("gke", "us-central1", {"machine": "a4-highgpu-4g", "gpu": {"type": "nvidia-b200", "count": 4}}),
    ("gke", "us-central1", {"machine": "a5-highgpu-8g", "gpu": {"type": "nvidia-b300", "count": 8},
                            "zones": ["us-central1-b"]}),
]


@pytest.mark.parametrize(("cloud", "region", "pool"), UNLISTED, ids=[p["machine"] for _, _, p in UNLISTED])
def test_an_unlisted_machine_with_a_declared_gpu_plans_with_a_warning(
        cloud: str, region: str, pool: dict[str, Any]) -> None:
    spec = parse_spec(stack(cloud, region, pool), "test")
    planned = next(p for p in plan_platform(spec).pools if p.name == "gpu")
    assert (planned.gpu_type, planned.gpu_count) == (pool["gpu"]["type"], pool["gpu"]["count"])
    defaults = profile(cloud).pool_defaults(spec, spec.gpu_pools[0])
    assert planned.zones == tuple(pool.get("zones") or defaults.zones)
    (warning,) = catalog_note(spec).warnings
    section = CATALOG.cloud(cloud)
    assert (warning.id, warning.pool) == (UNLISTED_SIZE, "gpu")
    assert f"{pool['machine']} is not in spotkube's catalog of {section.date.isoformat()} ({section.source})" \
        in warning.message
    assert f"taken as declared: {pool['gpu']['count']} × {pool['gpu']['type']}" in warning.message
    assert f"`spotkube catalog refresh --cloud {cloud}`" in warning.message
    assert str(warning).startswith(f"[{UNLISTED_SIZE}] gpu: ")


@pytest.mark.parametrize(("cloud", "region", "pool"), UNLISTED, ids=[p["machine"] for _, _, p in UNLISTED])
def test_without_a_declaration_the_refusal_says_how_to_declare_or_refresh(
        cloud: str, region: str, pool: dict[str, Any]) -> None:
    undeclared = {k: v for k, v in pool.items() if k != "gpu"}
    with pytest.raises(SpecError) as refused:
        parse_spec(stack(cloud, region, undeclared), "test")
    message = str(refused.value)
    assert f"gpuPools[0].machine: '{pool['machine']}' is not in spotkube's catalog of " \
           f"{CATALOG.cloud(cloud).date.isoformat()}" in message
    assert "declare" in message and "gpu: {type: <GPU type" in message
    assert f"spotkube catalog refresh --cloud {cloud}" in message
    assert "no GPU" not in message


@pytest.mark.parametrize(("cloud", "region", "machine"), [
    ("gke", "us-central1", "a4-highgpu-8g"), ("gke", "us-central1", "a3-ultragpu-8g"),
    ("aks", "eastus", "Standard_ND96asr_v4"), ("aks", "eastus2", "Standard_ND96isr_H200_v5")])
def test_no_message_says_a_gpu_machine_has_no_gpu(cloud: str, region: str, machine: str) -> None:
    """The cases that used to say so ("'a4-highgpu-8g' carries no GPU"), and every machine in the catalog."""
    assert parse_spec(stack(cloud, region, {"machine": machine}), "test").gpu_pools[0].gpu is not None
    machines = CATALOG.cloud(cloud).machines
    assert machine in machines
    for name in machines:
        assert profile(cloud).machine_gpu(name) is not None
        assert not CARRIES_NO_GPU[cloud](name), name


@pytest.mark.parametrize(("cloud", "region", "machine", "says"), [
    ("aks", "eastus", "Standard_D8s_v3", "'Standard_D8s_v3' carries no GPU: Azure's D series has none"),
    ("gke", "us-central1", "n2-standard-8", "'n2-standard-8' carries no GPU: the n2 family has none"),
])
def test_a_machine_of_a_family_without_gpus_is_refused_even_when_declared(
        cloud: str, region: str, machine: str, says: str) -> None:
    for pool in ({"machine": machine}, {"machine": machine, "gpu": {"type": "nvidia-l4", "count": 1}}):
        with pytest.raises(SpecError) as refused:
            parse_spec(stack(cloud, region, pool), "test")
        assert says in str(refused.value)


@pytest.mark.parametrize("cloud", sorted(UNKNOWN_MACHINE))
@pytest.mark.parametrize("gpu_type", ["NVIDIA H100", "nvidia_h100", "-h100", "x" * 55])
def test_a_declared_gpu_type_must_be_usable_as_a_label(cloud: str, gpu_type: str) -> None:
    region, machine = UNKNOWN_MACHINE[cloud]
    with pytest.raises(SpecError) as refused:
        parse_spec(stack(cloud, region, {"machine": machine, "gpu": {"type": gpu_type, "count": 1}}), "test")
    assert "gpuPools[0].gpu: GPU type" in str(refused.value)
    assert "lower-case letters, digits and hyphens" in str(refused.value)


def test_a_declared_gpu_the_catalog_cannot_place_needs_zones_on_gke() -> None:
    pool = {"machine": "a5-highgpu-8g", "gpu": {"type": "nvidia-b300", "count": 8}}
    with pytest.raises(SpecError) as refused:
        parse_spec(stack("gke", "us-central1", pool), "test")
    assert "gpuPools[0].zones: spotkube's GPU catalog (" in str(refused.value)
    assert "doesn't know which zones offer 'nvidia-b300'; list them in zones" in str(refused.value)


# --- Retired sizes point at sizes that plan -----------------------------------------------------------------


REPLACEMENTS = sorted({(retired, size) for retired, advice in aks.RETIRED_VM_SIZES.items()
                       for size in re.findall(r"Standard_\w+", advice)})


@pytest.mark.parametrize(("retired", "replacement"), REPLACEMENTS, ids=[f"{r}->{s}" for r, s in REPLACEMENTS])
def test_every_replacement_a_retired_size_recommends_is_accepted(retired: str, replacement: str) -> None:
    with pytest.raises(SpecError) as refused:
        parse_spec(stack("aks", "westeurope", {"machine": retired}), "test")
    assert f"'{retired}' is retired; use " in str(refused.value)
    # westeurope: a region the catalog knows completely, which offers every replacement
    spec = parse_spec(stack("aks", "westeurope", {"machine": replacement}), "test")
    assert spec.gpu_pools[0].gpu is not None
    assert catalog_note(spec).warnings == ()


def test_the_retired_nv6_points_at_the_a10_sixth() -> None:
    assert ("Standard_NV6", "Standard_NV6ads_A10_v5") in REPLACEMENTS

