"""The GKE catalog refresh against a local Compute Engine API that answers as Google's does.

The server serves today's catalog as aggregated machine types and accelerator types (scopes keyed
`zones/...`, NO_RESULTS_ON_PAGE warnings, pages chained by nextPageToken), so a refresh must give
back every machine type and GPU zone spotkube accepts today, and take a GPU type new to spotkube
under Compute Engine's own name.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cloud_apis import PROJECT, CloudApis, gcp_accelerator_type, gcp_machine_type, gcp_types, serving
from spotkube.clouds import bundled_catalog, parse_spec
from spotkube.clouds.gke import catalog as gke
from spotkube.platform.catalog import (
    CatalogSourceError,
    CloudCatalog,
    GpuFacts,
    with_cloud,
    write_catalog,
)

TODAY = datetime.date(2026, 12, 1)
BUNDLED = bundled_catalog().cloud("gke")
DESCRIPTIONS = {name: facts.model for name, facts in bundled_catalog().gpus.items()}


def served() -> CloudApis:
    """Today's catalog, plus what the API also lists: a new GPU machine (A4X, GB200), a deprecated type
    and the virtual-workstation flavour of the T4, which a refresh leaves out."""
    machine_types, accelerator_types = gcp_types(BUNDLED, DESCRIPTIONS)
    machine_types["us-central1-b"] += [
        gcp_machine_type("a4x-highgpu-4g", "us-central1-b", 140, 905216, ("nvidia-gb200", 4)),
        gcp_machine_type("a2-oldgpu-1g", "us-central1-b", 12, 87040, ("nvidia-tesla-a100", 1), deprecated="DEPRECATED"),
    ]
    accelerator_types["us-central1-b"] += [gcp_accelerator_type("nvidia-gb200", "us-central1-b", "NVIDIA GB200", 4)]
    accelerator_types["us-central1-a"] += [
        gcp_accelerator_type("nvidia-tesla-t4-vws", "us-central1-a", "NVIDIA Tesla T4 Virtual Workstation", 4)]
    return CloudApis(gcp_machine_types=machine_types, gcp_accelerator_types=accelerator_types, page_size=60)


@pytest.fixture
def api() -> Iterator[CloudApis]:
    with serving(served()) as apis:
        yield apis


@pytest.fixture(scope="module")
def served_api() -> Iterator[CloudApis]:
    """served(), refreshed once for the module's tests that only read the refresh (each refresh is a
    process of its own that loads Google's client libraries: seconds)."""
    with serving(served()) as apis:
        yield apis


@dataclass(frozen=True)
class Refreshed:
    """What `catalog_source.fetch` found, as the refresh's own process hands it back."""

    section: CloudCatalog
    new_gpus: dict[str, GpuFacts]


def refreshed(api: CloudApis) -> Refreshed:
    """The refresh, run in a process of its own as `spotkube catalog refresh` runs: Google's client
    libraries and Pulumi's provider host (which other tests load) each register `google.rpc.Status`,
    so the two can't share one process. The child answers in JSON."""
    code = ("import datetime, json\n"
            "from google.auth.credentials import AnonymousCredentials\n"
            "from spotkube.clouds.gke.catalog_source import fetch\n"
            "from spotkube.clouds import bundled_catalog\n"
            "from spotkube.platform.catalog import CatalogSourceError\n"
            "try:\n"
            f"    found = fetch({PROJECT!r}, bundled_catalog().gpus, credentials=AnonymousCredentials(),\n"
            f"                  endpoint={api.endpoint!r}, today=datetime.date.fromisoformat({TODAY.isoformat()!r}))\n"
            "    print(json.dumps({'section': found.section.model_dump(mode='json'),\n"
            "                      'new_gpus': {k: v.model_dump(mode='json') for k, v in found.new_gpus.items()}}))\n"
            "except CatalogSourceError as err:\n"
            "    print(json.dumps({'error': str(err)}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    answer = json.loads(done.stdout)
    if "error" in answer:
        raise CatalogSourceError(answer["error"])
    return Refreshed(CloudCatalog.model_validate(answer["section"]),
                     {k: GpuFacts.model_validate(v) for k, v in answer["new_gpus"].items()})


@pytest.fixture(scope="module")
def found(served_api: CloudApis) -> Refreshed:
    """One refresh of served_api, which the tests that read what it found share."""
    return refreshed(served_api)


def test_the_refresh_reads_every_page_of_both_lists(found: Refreshed, served_api: CloudApis) -> None:
    api = served_api
    for kind, items in (("machineTypes", api.gcp_machine_types), ("acceleratorTypes", api.gcp_accelerator_types)):
        asked = api.asked(f"/compute/v1/projects/{PROJECT}/aggregated/{kind}")
        pages = -(-sum(len(v) for v in items.values()) // api.page_size)
        assert len(asked) == pages > 1, kind
        assert [r.query.get("pageToken") for r in asked] == [None, *([str(api.page_size * n)]
                                                                     for n in range(1, pages))]


def test_a_refresh_gives_back_every_machine_type_accepted_today(found: Refreshed) -> None:
    section = found.section
    assert section.date == TODAY
    assert BUNDLED.machines, "the bundled machine types"
    for name, machine in BUNDLED.machines.items():
        fresh = section.machine(name)
        assert fresh is not None, name
        assert (fresh.gpu.type, fresh.gpu.count, fresh.vcpus) == (machine.gpu.type, machine.gpu.count, machine.vcpus)
        assert fresh.memory_gb == machine.memory_gb, name
        assert fresh.regions == machine.regions, name


def test_a_refresh_gives_back_every_gpu_zone(found: Refreshed) -> None:
    section = found.section
    assert BUNDLED.regions and BUNDLED.accelerators, "the bundled regions and GPUs"
    for region in BUNDLED.regions:
        assert section.regions[region] == BUNDLED.regions[region]
        for gpu in BUNDLED.accelerators:
            assert section.accelerator_zones(gpu, region) == BUNDLED.accelerator_zones(gpu, region), (region, gpu)
    assert section.accelerators["nvidia-b200"].max_per_machine == 8
    assert section.accelerators["nvidia-b200"].description == "NVIDIA B200"


def test_a_new_gpu_is_taken_under_compute_engines_name(found: Refreshed) -> None:
    a4x = found.section.machine("a4x-highgpu-4g")
    assert a4x is not None and (a4x.gpu.type, a4x.gpu.count) == ("nvidia-gb200", 4)
    assert a4x.regions == {"us-central1": ("us-central1-b",)}
    assert found.new_gpus["nvidia-gb200"].model == "NVIDIA GB200"
    assert found.new_gpus["nvidia-gb200"].memory_gb is None


def test_deprecated_types_and_workstation_gpus_stay_out(found: Refreshed) -> None:
    section = found.section
    assert section.machine("a2-oldgpu-1g") is None
    assert "nvidia-tesla-t4-vws" not in section.accelerators


def test_families_without_gpus_are_recorded_but_not_n1(found: Refreshed) -> None:
    assert found.section.cpu_families == ("e2",)


def test_a_refreshed_catalog_plans_every_machine_in_every_zone_it_offers(
        found: Refreshed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "catalog.json"
    write_catalog(with_cloud(bundled_catalog(), "gke", found.section, found.new_gpus), user)
    monkeypatch.setenv("SPOTKUBE_CATALOG", str(user))
    for name, machine in {**BUNDLED.machines, "a4x-highgpu-4g": found.section.machines["a4x-highgpu-4g"]}.items():
        assert machine.regions, name
        for region, zones in machine.regions.items():
            pool = {"name": "gpu", "machine": name, "capacity": "spot", "min": 0, "max": 2}
            values: dict[str, Any] = {"cloud": "gke", "environment": "dev", "region": region, "gpuPools": [pool],
                                      "cluster": {"project": PROJECT, "allowUnlistedRegion": True}}
            spec = parse_spec(values, "test")
            planned = spec.gpu_pools[0]
            assert planned.gpu is not None and planned.gpu.type == machine.gpu.type, (name, region)
            assert set(planned.zones) >= set(zones or ()), (name, region)
    assert gke.zones_offering("us-central1", "nvidia-gb200") == ("us-central1-b",)


def test_an_api_error_is_one_sentence(api: CloudApis) -> None:
    api.failures["/compute/v1/"] = (403, {"error": {"code": 403, "message": "Compute Engine API has not been used "
                                                     "in project acme-ml-catalog before or it is disabled.",
                                                     "errors": [{"reason": "accessNotConfigured"}]}})
    with pytest.raises(CatalogSourceError, match=r"the Compute Engine API answered 403: .*Compute Engine API has not"):
        refreshed(api)
