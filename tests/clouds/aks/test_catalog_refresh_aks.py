"""The AKS catalog refresh against a local Resource SKUs API that answers as Azure's does.

The server serves today's catalog in the API's own shapes (capabilities as strings, one entry per
size and region, zone and location restrictions, pages chained by nextLink), so a refresh must give
back every size spotkube accepts today, apply the subscription's restrictions, and keep a GPU family
it has no neutral name for under Azure's own name.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken

from cloud_apis import (
    AZURE_REGIONS,
    SUBSCRIPTION,
    CloudApis,
    azure_sku,
    azure_skus,
    location_restriction,
    serving,
    zone_restriction,
)
from spotkube.clouds import bundled_catalog, gpu_catalog, parse_spec
from spotkube.clouds.aks import catalog as aks
from spotkube.clouds.aks.catalog_source import AzureCatalog, fetch
from spotkube.platform.catalog import (
    CatalogSourceError,
    with_cloud,
    write_catalog,
)
from spotkube.platform.errors import SpecError

TODAY = datetime.date(2026, 12, 1)
BUNDLED = bundled_catalog().cloud("aks")


class Token:
    """A credential that hands out one bearer token, as azure-core asks for it."""

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("test-token", int(time.time()) + 3600)


def extra_skus() -> list[dict[str, Any]]:
    """What a real subscription also lists: a GPU family spotkube has no name for, an AMD size,
    and restrictions on two sizes."""
    gb300 = {"vCPUs": "128", "MemoryGB": "900", "GPUs": "4", "LowPriorityCapable": "False"}
    mi300x = {"vCPUs": "96", "MemoryGB": "1850", "GPUs": "8", "LowPriorityCapable": "True"}
    return [
        azure_sku("Standard_ND128isr_GB300_v6", "StandardNDGB300v6Family", "eastus", ("1", "2"), gb300),
        azure_sku("Standard_ND96isr_MI300X_v5", "standardNDISRMI300Xv5Family", "eastus", ("1",), mi300x),
    ]


def restricted(skus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ND H100 v5 not in zone 1 of eastus, NV6ads A10 v5 not in uksouth at all, for this subscription."""
    for sku in skus:
        region = sku["locations"][0]
        if sku["name"] == "Standard_ND96isr_H100_v5" and region == "eastus":
            sku["restrictions"] = [zone_restriction("eastus", ["1"])]
        if sku["name"] == "Standard_NV6ads_A10_v5" and region == "uksouth":
            sku["restrictions"] = [location_restriction("uksouth")]
    return skus


@pytest.fixture
def api() -> Iterator[CloudApis]:
    with serving(CloudApis(azure_skus=restricted(azure_skus(BUNDLED)) + extra_skus(), page_size=40)) as apis:
        yield apis


def refreshed(api: CloudApis) -> AzureCatalog:
    return fetch(SUBSCRIPTION, credential=Token(), endpoint=api.endpoint, today=TODAY, retry_total=0)


def test_the_refresh_reads_every_page_with_a_bearer_token(api: CloudApis) -> None:
    refreshed(api)
    asked = api.asked(f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/skus")
    pages = -(-len(api.azure_skus) // api.page_size)
    assert len(asked) == pages > 2
    assert asked[0].query == {"api-version": ["2021-07-01"]}
    assert [r.query.get("$skiptoken") for r in asked[1:]] == [[str(api.page_size * n)] for n in range(1, pages)]
    assert all(r.headers["authorization"] == "Bearer test-token" for r in asked)


def test_a_refresh_gives_back_every_size_accepted_today(api: CloudApis) -> None:
    section = refreshed(api).section
    assert section.date == TODAY
    assert BUNDLED.machines, "the bundled sizes"
    for name, machine in BUNDLED.machines.items():
        fresh = section.machine(name)
        assert fresh is not None, name
        assert (fresh.gpu.type, fresh.gpu.count, fresh.gpu.share) == (machine.gpu.type, machine.gpu.count,
                                                                       machine.gpu.share), name
        assert (fresh.vcpus, fresh.memory_gb, fresh.spot, fresh.family) == (machine.vcpus, machine.memory_gb, True,
                                                                             machine.family)


def test_the_partitioned_a10_sizes_keep_their_part_of_a_gpu(api: CloudApis) -> None:
    section = refreshed(api).section
    shares = {name: section.machines[name].gpu.share for name in section.machines if "_A10_" in name}
    assert shares == {"Standard_NV6ads_A10_v5": "1/6", "Standard_NV12ads_A10_v5": "1/3",
                      "Standard_NV18ads_A10_v5": "1/2", "Standard_NV36ads_A10_v5": None,
                      "Standard_NV36adms_A10_v5": None, "Standard_NV72ads_A10_v5": None}
    assert section.machines["Standard_NV72ads_A10_v5"].gpu.count == 2


def test_restrictions_take_zones_and_regions_away(api: CloudApis) -> None:
    section = refreshed(api).section
    assert section.offer("Standard_ND96isr_H100_v5", "eastus").zones == ("2", "3")
    assert section.offer("Standard_ND96isr_H100_v5", "westeurope").zones == ("1", "2", "3")
    assert section.offer("Standard_NV6ads_A10_v5", "uksouth").status == "absent"
    assert section.offer("Standard_NV6ads_A10_v5", "swedencentral").zones == ("1", "2", "3")
    assert section.offer("Standard_NC4as_T4_v3", "westcentralus").zones == ()
    assert set(section.regions) == set(AZURE_REGIONS)


def test_a_family_without_a_neutral_name_keeps_azures_and_amd_sizes_stay_out(api: CloudApis) -> None:
    found = refreshed(api)
    gb300 = found.section.machine("Standard_ND128isr_GB300_v6")
    assert gb300 is not None
    assert (gb300.gpu.type, gb300.gpu.count, gb300.spot) == ("standardndgb300v6family", 4, False)
    assert found.unnamed == {"StandardNDGB300v6Family": ["Standard_ND128isr_GB300_v6"]}
    assert found.section.machine("Standard_ND96isr_MI300X_v5") is None
    assert found.not_nvidia == ["Standard_ND96isr_MI300X_v5"]


def test_series_without_gpus_are_recorded_and_disks_are_ignored(api: CloudApis) -> None:
    section = refreshed(api).section
    assert section.cpu_families == ("D", "E", "NP")
    assert section.machine("Premium_LRS") is None


def test_a_refreshed_catalog_plans_every_size_in_every_region_it_offers(
        api: CloudApis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "catalog.json"
    write_catalog(with_cloud(bundled_catalog(), "aks", refreshed(api).section, {}), user)
    monkeypatch.setenv("SPOTKUBE_CATALOG", str(user))
    assert gpu_catalog().origin("aks") == str(user)
    for name, machine in BUNDLED.machines.items():
        for region in aks.section().regions_offering(name):
            zones = list(aks.section().offer(name, region).zones or ())
            pool = {"name": "gpu", "machine": name, "capacity": "spot", "min": 0, "max": 2, "zones": zones}
            spec = parse_spec({"cloud": "aks", "environment": "dev", "region": region, "gpuPools": [pool]}, "test")
            assert spec.gpu_pools[0].gpu is not None
            assert (spec.gpu_pools[0].gpu.type, spec.gpu_pools[0].gpu.count) == (machine.gpu.type, machine.gpu.count)
    # A GPU family spotkube has no name for plans under Azure's own name.
    pool = {"name": "gb300", "machine": "Standard_ND128isr_GB300_v6", "capacity": "spot", "min": 0, "max": 1}
    spec = parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus", "gpuPools": [pool]}, "test")
    assert spec.gpu_pools[0].gpu is not None
    assert (spec.gpu_pools[0].gpu.type, spec.gpu_pools[0].gpu.count) == ("standardndgb300v6family", 4)


def test_a_refreshed_catalog_refuses_what_the_subscription_cannot_deploy(
        api: CloudApis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "catalog.json"
    write_catalog(with_cloud(bundled_catalog(), "aks", refreshed(api).section, {}), user)
    monkeypatch.setenv("SPOTKUBE_CATALOG", str(user))

    def stack(region: str, machine: str, zones: list[str]) -> dict[str, Any]:
        pool = {"name": "gpu", "machine": machine, "capacity": "spot", "min": 0, "max": 2, "zones": zones}
        return {"cloud": "aks", "environment": "dev", "region": region, "gpuPools": [pool]}

    with pytest.raises(SpecError) as absent:
        parse_spec(stack("uksouth", "Standard_NV6ads_A10_v5", []), "test")
    assert ("gpuPools[0].machine: Standard_NV6ads_A10_v5 is not offered in uksouth (catalog of 2026-12-01, Azure "
            "Resource SKUs API") in str(absent.value)
    assert "regions that offer it: eastus, swedencentral, westcentralus, westeurope" in str(absent.value)
    with pytest.raises(SpecError) as zones:
        parse_spec(stack("eastus", "Standard_ND96isr_H100_v5", ["1", "2"]), "test")
    assert ("gpuPools[0].zones: '1': Standard_ND96isr_H100_v5 is offered in eastus only in zones 2, 3"
            in str(zones.value))


def test_an_expired_token_is_one_sentence(api: CloudApis) -> None:
    api.failures["/subscriptions/"] = (401, {"error": {"code": "ExpiredAuthenticationToken",
                                                       "message": "The access token expiry UTC time is earlier"}})
    with pytest.raises(CatalogSourceError, match=r"Azure refused the credentials .*az login"):
        refreshed(api)


def test_a_server_error_names_the_status(api: CloudApis) -> None:
    api.failures["/subscriptions/"] = (503, {"error": {"code": "ServerBusy", "message": "try later"}})
    with pytest.raises(CatalogSourceError, match="answered 503"):
        refreshed(api)


def test_plain_http_is_refused_beyond_this_machine() -> None:
    with pytest.raises(CatalogSourceError, match="use an https:// URL"):
        fetch(SUBSCRIPTION, credential=Token(), endpoint="http://management.example.com", today=TODAY)


# --- The mapping from Azure's families to spotkube's GPU names ----------------------------------------


@pytest.mark.parametrize(("family", "gpu"), [
    ("Standard NCASv3_T4 Family", "nvidia-tesla-t4"),
    ("standardNCASv3_T4Family", "nvidia-tesla-t4"),
    ("StandardNCADSA100v4Family", "nvidia-a100-80gb"),
    ("standardNCADSA100v4Family", "nvidia-a100-80gb"),
    ("StandardNCadsH100v5Family", "nvidia-h100-nvl"),
    ("Standard NDASv4_A100 Family", "nvidia-tesla-a100"),
    ("standardNDASv4_A100Family", "nvidia-tesla-a100"),
    ("standard NDAMSv4_A100Family", "nvidia-a100-80gb"),
    ("standardNDSH100v5Family", "nvidia-h100-80gb"),
    ("standardNDISRH200V5Family", "nvidia-h200-141gb"),
    ("StandardNVADSA10v5Family", "nvidia-a10"),
    ("standardNVadsA10v5Family", "nvidia-a10"),
])
def test_azure_families_map_to_neutral_names_whatever_their_spelling(family: str, gpu: str) -> None:
    assert aks.gpu_type_of_family(family) == gpu
    assert bundled_catalog().gpu(gpu) is not None  # the neutral name has its facts


def test_every_mapped_gpu_and_every_size_has_gpu_facts() -> None:
    catalog = bundled_catalog()
    gpus = {*aks.AZURE_GPU_FAMILIES.values(), *(m.gpu.type for m in BUNDLED.machines.values())}
    assert gpus, "the mapped and bundled GPUs"
    for gpu in gpus:
        facts = catalog.gpu(gpu)
        assert facts is not None and facts.memory_gb and facts.mig is not None, gpu
    for name, machine in BUNDLED.machines.items():
        assert machine.family is not None and aks.gpu_type_of_family(machine.family) == machine.gpu.type, name


def test_an_unmapped_family_is_azures_own_name_and_a_valid_gpu_type() -> None:
    assert aks.gpu_type_of_family("StandardNDGB300v6Family") is None
    assert aks.own_gpu_name("Standard NDGB300 v6 Family") == "standardndgb300v6family"
