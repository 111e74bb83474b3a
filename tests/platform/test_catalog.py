"""The GPU catalog file: what ships, how a user's copy overrides it, and how a bad file is refused.

The user's copy is found by the price file's rule (an explicit path, else $SPOTKUBE_CATALOG, else
catalog.json in the config directory when it exists); each cloud part it has replaces the bundled
one whole, and validation reads the result at once.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from spotkube.clouds import CATALOG_PARTS, CLOUDS, bundled_catalog, gpu_catalog, parse_spec
from spotkube.platform.catalog import (
    BUNDLED,
    CATALOG_ENV,
    CATALOG_FILE,
    CatalogFileError,
    bundled_facts_path,
    catalog_text,
    parse_catalog,
    parse_part,
)
from spotkube.platform.cost.prices import PRICE_FILE
from spotkube.platform.errors import SpecError

#: A user's catalog with a GKE part that knows one machine type in one zone.
USER_GKE: dict[str, Any] = {
    "schemaVersion": 1,
    "gpus": {"nvidia-rtx-pro-6000": {"model": "NVIDIA RTX PRO 6000", "memoryGb": 96, "mig": True}},
    "clouds": {"gke": {
        "date": "2027-01-05", "source": "Compute Engine API (machine types and accelerator types)",
        "regions": {"us-central1": ["us-central1-a", "us-central1-b"]},
        "machines": {"g4-standard-48": {"gpu": {"type": "nvidia-rtx-pro-6000", "count": 1}, "vcpus": 48,
                                        "memoryGb": 180, "regions": {"us-central1": ["us-central1-b"]}}},
        "accelerators": {"nvidia-rtx-pro-6000": {"maxPerMachine": 8, "regions": {"us-central1": ["us-central1-b"]}}},
        "cpuFamilies": ["e2"],
    }},
}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def gke_pool(machine: str) -> dict[str, Any]:
    return {"cloud": "gke", "environment": "dev", "region": "us-central1", "cluster": {"project": "acme-ml-dev"},
            "gpuPools": [{"name": "gpu", "machine": machine, "capacity": "spot", "min": 0, "max": 2}]}


def test_the_shipped_catalog_is_what_its_files_say() -> None:
    text = bundled_facts_path().read_text()
    assert catalog_text(parse_catalog(text, "catalog.json")) == text  # written by catalog_text, nothing by hand
    assert set(CATALOG_PARTS) == set(CLOUDS)
    for cloud, file in CATALOG_PARTS.items():
        part = file.read_text("utf-8")
        assert catalog_text(parse_part(part, cloud)) == part, cloud
        assert str(file).endswith(f"clouds/{cloud}/catalog.json")  # each cloud's part in its own folder
    catalog = bundled_catalog()
    assert set(catalog.clouds) == set(CLOUDS)
    assert not parse_catalog(text, "catalog.json").clouds  # the neutral file holds no cloud's part
    for cloud, section in catalog.clouds.items():
        assert section.source and section.date and section.machines, cloud
        for name, machine in section.machines.items():
            assert catalog.gpu(machine.gpu.type) is not None, (cloud, name)


@pytest.mark.parametrize(("gpu", "memory", "mig"), [
    ("nvidia-tesla-a100", 40, True), ("nvidia-a100-80gb", 80, True), ("nvidia-h100-80gb", 80, True),
    ("nvidia-h200-141gb", 141, True), ("nvidia-b200", 180, True), ("nvidia-tesla-t4", 16, False),
    ("nvidia-l4", 24, False), ("nvidia-a10", 24, False),
])
def test_per_gpu_facts_that_mig_and_sharing_rules_read(gpu: str, memory: int, mig: bool) -> None:
    facts = bundled_catalog().gpu(gpu)
    assert facts is not None and (facts.memory_gb, facts.mig) == (memory, mig)


def test_a_partitioned_size_keeps_its_part_of_a_gpu() -> None:
    a10 = bundled_catalog().cloud("aks").machines
    assert a10["Standard_NV6ads_A10_v5"].gpu.fraction == Fraction(1, 6)
    assert a10["Standard_NV36ads_A10_v5"].gpu.fraction == 1


def test_the_catalog_file_is_found_by_the_price_files_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert CATALOG_FILE.default().parent == PRICE_FILE.default().parent
    assert gpu_catalog() is bundled_catalog()  # no user file yet
    default = write(CATALOG_FILE.default(), USER_GKE)
    assert gpu_catalog().origin("gke") == str(default.resolve())
    assert gpu_catalog().origin("aks") == BUNDLED
    named = write(tmp_path / "named.json", {**USER_GKE, "clouds": {"gke": {**USER_GKE["clouds"]["gke"],
                                                                           "date": "2027-02-01"}}})
    monkeypatch.setenv(CATALOG_ENV, str(named))
    assert gpu_catalog().cloud("gke").date.isoformat() == "2027-02-01"
    assert gpu_catalog(default).cloud("gke").date.isoformat() == "2027-01-05"


def test_a_named_catalog_file_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CATALOG_ENV, str(tmp_path / "missing.json"))
    with pytest.raises(CatalogFileError, match=r"missing.json: no such catalog file \(named by SPOTKUBE_CATALOG\)"):
        gpu_catalog()


def test_a_users_part_replaces_the_bundled_one_in_validation() -> None:
    assert parse_spec(gke_pool("a4-highgpu-8g"), "test").gpu_pools[0].gpu is not None
    write(CATALOG_FILE.default(), USER_GKE)
    spec = parse_spec(gke_pool("g4-standard-48"), "test")
    assert spec.gpu_pools[0].gpu is not None and spec.gpu_pools[0].gpu.type == "nvidia-rtx-pro-6000"
    assert spec.gpu_pools[0].zones == ("us-central1-b",)
    # The user's refresh doesn't list A4: the catalog of its date no longer knows it.
    with pytest.raises(SpecError, match="'a4-highgpu-8g' is not in spotkube's catalog of 2027-01-05"):
        parse_spec(gke_pool("a4-highgpu-8g"), "test")
    assert gpu_catalog().gpu("nvidia-b200") is not None  # GPU facts merge: the bundled ones stay


def test_a_changed_user_file_is_read_again() -> None:
    path = write(CATALOG_FILE.default(), USER_GKE)
    assert gpu_catalog().cloud("gke").date.isoformat() == "2027-01-05"
    later = {**USER_GKE, "clouds": {"gke": {**USER_GKE["clouds"]["gke"], "date": "2027-03-09", "source": "again"}}}
    write(path, later)
    assert gpu_catalog().cloud("gke").describe() == "2027-03-09, again"


@pytest.mark.parametrize(("text", "says"), [
    ("{not json", "catalog.json: not JSON (line 1, column 2"),
    (json.dumps({"clouds": {}}), "catalog.json: schemaVersion: Field required"),
    (json.dumps({**USER_GKE, "clouds": {"gke": {**USER_GKE["clouds"]["gke"], "date": "soon"}}}),
     "catalog.json: clouds.gke.date: Input should be a valid date"),
    (json.dumps({"schemaVersion": 1, "clouds": {"aks": {"date": "2027-01-01", "source": "me", "machines": {
        "Standard_X": {"gpu": {"type": "NVIDIA X", "count": 1}}}}}}),
     "catalog.json: clouds.aks.machines.Standard_X.gpu.type: String should match pattern"),
    (json.dumps({"schemaVersion": 1, "clouds": {"aks": {"date": "2027-01-01", "source": "me", "machines": {
        "Standard_X": {"gpu": {"type": "nvidia-x", "count": 1, "share": "3/2"}}}}}}),
     "clouds.aks.machines.Standard_X.gpu.share: '3/2' is not a part of one GPU"),
])
def test_a_bad_catalog_file_is_one_message_naming_the_key(text: str, says: str) -> None:
    write(CATALOG_FILE.default(), text)
    with pytest.raises(CatalogFileError) as refused:
        gpu_catalog()
    assert says in str(refused.value)
    assert "as `spotkube catalog refresh` writes it; see docs/catalog.md" in str(refused.value)
