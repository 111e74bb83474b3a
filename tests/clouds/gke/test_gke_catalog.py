"""The GKE catalog: machine/GPU pairing, N1 counts, the GPU zones and the node pool name rule.

Each rule is tested both ways, so a check that refuses everything (or nothing) fails here, and the
refusals are checked for the parts a user needs: what is wrong and what would be accepted.
"""

from __future__ import annotations

import re

import pytest

from spotkube.clouds.gke import catalog as gke

#: The multiplication sign the messages use between a count and a GPU type.
X = "\N{MULTIPLICATION SIGN}"

# --- accelerator vocabulary -----------------------------------------------------------------------


def test_vocabulary_covers_the_gke_accelerator_names() -> None:
    for name in (
        "nvidia-tesla-t4",
        "nvidia-tesla-v100",
        "nvidia-tesla-p100",
        "nvidia-tesla-p4",
        "nvidia-l4",
        "nvidia-tesla-a100",
        "nvidia-a100-80gb",
        "nvidia-h100-80gb",
    ):
        assert name in gke.accelerators()


def test_every_gpu_in_the_rules_and_machines_is_in_the_vocabulary() -> None:
    used = set(gke.N1_ACCELERATOR_COUNTS) | {g for g, _ in gke.fixed_gpu_machine_types().values()}
    assert used <= set(gke.accelerators())


def test_every_gpu_has_somewhere_to_go_and_zones() -> None:
    assert gke.accelerators(), "the catalog's GPUs"
    for gpu in gke.accelerators():
        assert gpu in gke.N1_ACCELERATOR_COUNTS or gke.machine_types_for(gpu)
        assert any(gke.zones_offering(region, gpu) for region in gke.REGIONS)


# --- fixed-GPU families: count fill-in ------------------------------------------------------------


@pytest.mark.parametrize(
    ("machine_type", "expected"),
    [
        ("a2-highgpu-1g", ("nvidia-tesla-a100", 1)),
        ("a2-highgpu-2g", ("nvidia-tesla-a100", 2)),
        ("a2-highgpu-4g", ("nvidia-tesla-a100", 4)),
        ("a2-highgpu-8g", ("nvidia-tesla-a100", 8)),
        ("a2-megagpu-16g", ("nvidia-tesla-a100", 16)),
        ("a2-ultragpu-1g", ("nvidia-a100-80gb", 1)),
        ("a2-ultragpu-8g", ("nvidia-a100-80gb", 8)),
        ("g2-standard-4", ("nvidia-l4", 1)),
        ("g2-standard-8", ("nvidia-l4", 1)),
        ("g2-standard-12", ("nvidia-l4", 1)),
        ("g2-standard-16", ("nvidia-l4", 1)),
        ("g2-standard-24", ("nvidia-l4", 2)),
        ("g2-standard-32", ("nvidia-l4", 1)),
        ("g2-standard-48", ("nvidia-l4", 4)),
        ("g2-standard-96", ("nvidia-l4", 8)),
        ("a3-highgpu-1g", ("nvidia-h100-80gb", 1)),
        ("a3-highgpu-2g", ("nvidia-h100-80gb", 2)),
        ("a3-highgpu-4g", ("nvidia-h100-80gb", 4)),
        ("a3-highgpu-8g", ("nvidia-h100-80gb", 8)),
        ("a3-megagpu-8g", ("nvidia-h100-mega-80gb", 8)),
    ],
)
def test_fixed_families_fill_in_type_and_count(
    machine_type: str, expected: tuple[str, int]
) -> None:
    assert gke.accelerator_for_machine(machine_type) == expected
    # Leaving the count out, or giving the right one, is accepted.
    assert gke.pairing_error(machine_type, expected[0]) is None
    assert gke.pairing_error(machine_type, expected[0], expected[1]) is None


@pytest.mark.parametrize("machine_type", ["n1-standard-8", "e2-standard-4", "g2-standard-6", ""])
def test_other_types_have_no_fixed_accelerator(machine_type: str) -> None:
    assert gke.accelerator_for_machine(machine_type) is None


def test_wrong_gpu_on_a_g2_says_what_it_carries() -> None:
    msg = gke.pairing_error("g2-standard-8", "nvidia-tesla-t4", 1)
    assert msg is not None
    assert f"g2-standard-8 carries 1 {X} nvidia-l4" in msg
    assert "'nvidia-tesla-t4' is not accepted" in msg
    assert "N1" in msg  # where a T4 would fit


def test_a100_40gb_machine_refuses_the_80gb_type_and_names_a2_ultra() -> None:
    msg = gke.pairing_error("a2-highgpu-1g", "nvidia-a100-80gb")
    assert msg is not None
    assert f"carries 1 {X} nvidia-tesla-a100" in msg
    assert "a2-ultragpu-1g" in msg


def test_a3_mega_uses_its_own_accelerator_type() -> None:
    assert gke.pairing_error("a3-megagpu-8g", "nvidia-h100-mega-80gb") is None
    msg = gke.pairing_error("a3-megagpu-8g", "nvidia-h100-80gb")
    assert msg is not None
    assert "nvidia-h100-mega-80gb" in msg


def test_wrong_count_on_a_fixed_type_is_refused() -> None:
    msg = gke.pairing_error("g2-standard-24", "nvidia-l4", 1)
    assert msg is not None
    assert f"carries 2 {X} nvidia-l4" in msg
    assert "1" in msg


def test_unknown_size_of_a_fixed_family_lists_the_known_ones() -> None:
    msg = gke.unlisted_machine_error("g2-standard-6")
    assert "'g2-standard-6' is not in spotkube's catalog of 2026-" in msg
    assert "g2-standard-4" in msg
    assert "g2-standard-96" in msg
    assert "gpu: {type:" in msg  # how to declare it
    assert "spotkube catalog refresh --cloud gke" in msg


def test_a_declared_gpu_on_an_unknown_size_is_taken() -> None:
    assert gke.pairing_error("g2-standard-6", "nvidia-l4", 1) is None
    assert gke.pairing_error("a5-highgpu-8g", "nvidia-b300", 8) is None


def test_a3_high_small_sizes_are_spot_or_flex_only() -> None:
    assert gke.requires_spot_or_flex("a3-highgpu-1g")
    assert gke.requires_spot_or_flex("a3-highgpu-4g")
    assert not gke.requires_spot_or_flex("a3-highgpu-8g")
    assert not gke.requires_spot_or_flex("g2-standard-8")


# --- N1 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "machine_type",
    ["n1-standard-1", "n1-standard-8", "n1-standard-96", "n1-highmem-16", "n1-highcpu-32"],
)
def test_is_n1_accepts_predefined_n1_types(machine_type: str) -> None:
    assert gke.is_n1(machine_type)


@pytest.mark.parametrize(
    "machine_type",
    [
        "n1-standard-3",  # no such size
        "n1-highmem-1",  # highmem starts at 2
        "n1-ultramem-40",
        "n2-standard-8",
        "g2-standard-8",
        "n1-standard-8\n",
        "f1-micro",
    ],
)
def test_is_n1_refuses_everything_else(machine_type: str) -> None:
    assert not gke.is_n1(machine_type)


def test_n1_counts_per_gpu() -> None:
    assert gke.N1_ACCELERATOR_COUNTS == {
        "nvidia-tesla-t4": (1, 2, 4),
        "nvidia-tesla-p4": (1, 2, 4),
        "nvidia-tesla-v100": (1, 2, 4, 8),
        "nvidia-tesla-p100": (1, 2, 4),
    }
    for gpu, counts in gke.N1_ACCELERATOR_COUNTS.items():
        assert set(gke.N1_MAX_VCPUS[gpu]) == set(counts)


@pytest.mark.parametrize(
    ("gpu", "count"),
    [
        ("nvidia-tesla-t4", 1),
        ("nvidia-tesla-t4", 2),
        ("nvidia-tesla-t4", 4),
        ("nvidia-tesla-v100", 1),
        ("nvidia-tesla-v100", 8),
        ("nvidia-tesla-p100", 4),
        ("nvidia-tesla-p4", 2),
    ],
)
def test_n1_accepts_valid_counts(gpu: str, count: int) -> None:
    assert gke.pairing_error("n1-standard-8", gpu, count) is None


@pytest.mark.parametrize(
    ("gpu", "count", "accepted"),
    [
        ("nvidia-tesla-t4", 3, "1, 2 or 4"),
        ("nvidia-tesla-t4", 8, "1, 2 or 4"),
        ("nvidia-tesla-p100", 8, "1, 2 or 4"),
        ("nvidia-tesla-v100", 16, "1, 2, 4 or 8"),
    ],
)
def test_n1_refuses_invalid_counts(gpu: str, count: int, accepted: str) -> None:
    msg = gke.pairing_error("n1-standard-8", gpu, count)
    assert msg is not None
    assert f"{count} {X} {gpu} is not accepted" in msg
    assert accepted in msg


def test_n1_needs_an_explicit_count() -> None:
    msg = gke.pairing_error("n1-standard-8", "nvidia-tesla-t4")
    assert msg is not None
    assert "count must be given" in msg
    assert "1, 2 or 4" in msg


@pytest.mark.parametrize("count", [0, -1])
def test_non_positive_count_is_refused(count: int) -> None:
    assert gke.pairing_error("n1-standard-8", "nvidia-tesla-t4", count) is not None
    assert gke.pairing_error("g2-standard-8", "nvidia-l4", count) is not None


def test_n1_refuses_a_fixed_family_gpu_and_names_its_machines() -> None:
    msg = gke.pairing_error("n1-standard-8", "nvidia-l4", 1)
    assert msg is not None
    assert msg.startswith("'nvidia-l4' needs a g2 machine type (g2-standard-4,")
    assert "n1-standard-8 takes only nvidia-tesla-t4" in msg


def test_n1_vcpu_ceiling_per_gpu_count() -> None:
    # One V100 allows 12 vCPUs; eight allow 96.
    assert gke.pairing_error("n1-standard-8", "nvidia-tesla-v100", 1) is None
    msg = gke.pairing_error("n1-standard-32", "nvidia-tesla-v100", 1)
    assert msg is not None
    assert "32 vCPUs" in msg
    assert "at most 12" in msg
    assert f"4 {X} nvidia-tesla-v100" in msg  # the smallest count that fits 32 vCPUs
    assert gke.pairing_error("n1-standard-96", "nvidia-tesla-v100", 8) is None
    # One or two T4s allow 48 vCPUs, four allow 96.
    assert gke.pairing_error("n1-highmem-32", "nvidia-tesla-t4", 1) is None
    assert gke.pairing_error("n1-standard-64", "nvidia-tesla-t4", 2) is not None
    assert gke.pairing_error("n1-standard-64", "nvidia-tesla-t4", 4) is None


def test_unknown_n1_size_is_refused_with_the_sizes() -> None:
    msg = gke.pairing_error("n1-standard-3", "nvidia-tesla-t4", 1)
    assert msg is not None
    assert "n1-standard-{1, 2, 4, 8, 16, 32, 64, 96}" in msg


# --- families without GPUs, unknown GPUs ----------------------------------------------------------


@pytest.mark.parametrize("machine_type", ["e2-standard-4", "n2-standard-8", "c3-standard-8"])
def test_non_gpu_family_is_refused(machine_type: str) -> None:
    msg = gke.pairing_error(machine_type, "nvidia-l4", 1)
    assert msg is not None
    assert f"'{machine_type}' carries no GPU: the {machine_type.split('-')[0]} family has none" in msg
    assert "N1" in msg
    assert "a2, a3, a4 and g2" in msg
    assert "g2-standard-4" in msg  # where an L4 would fit


def test_unknown_gpu_type_is_refused_with_the_vocabulary() -> None:
    msg = gke.pairing_error("n1-standard-8", "nvidia-tesla-k80", 1)
    assert msg is not None
    assert "nvidia-tesla-k80" in msg
    assert "nvidia-tesla-t4" in msg


# --- zones ----------------------------------------------------------------------------------------


def test_catalog_knows_the_required_regions() -> None:
    assert {"us-central1", "europe-west4"} <= set(gke.gpu_regions())
    assert gke.GPU_ZONES_SOURCE == "https://cloud.google.com/compute/docs/gpus/gpu-regions-zones"


def test_zone_names_belong_to_their_region() -> None:
    listed = [(region, zone) for region in gke.gpu_regions() for zone in gke.region_zones(region) or ()]
    offering = [(region, zone) for gpu in gke.accelerators() for region in gke.REGIONS
                for zone in gke.zones_offering(region, gpu) or ()]
    assert listed and offering, "the catalog's zones"
    for region, zone in listed + offering:
        assert re.fullmatch(rf"{re.escape(region)}-[a-z]", zone)


def test_zones_offering() -> None:
    assert gke.zones_offering("us-central1", "nvidia-l4") == (
        "us-central1-a",
        "us-central1-b",
        "us-central1-c",
    )
    assert gke.zones_offering("europe-west4", "nvidia-tesla-a100") == (
        "europe-west4-a",
        "europe-west4-b",
    )
    assert gke.zones_offering("us-east4", "nvidia-tesla-v100") == ()
    assert gke.zones_offering("asia-east1", "nvidia-l4") is None


def test_zone_check_accepts_zones_that_offer_the_gpu() -> None:
    assert gke.zone_check("us-central1", ["us-central1-a", "us-central1-c"], "nvidia-l4") is None
    assert gke.zone_check("europe-west4", ["europe-west4-c"], "nvidia-tesla-t4") is None


def test_zone_check_accepts_no_zones_when_the_region_has_the_gpu() -> None:
    assert gke.zone_check("us-central1", [], "nvidia-tesla-t4") is None


def test_zone_check_reports_an_unknown_region() -> None:
    msg = gke.zone_check("asia-east1", ["asia-east1-a"], "nvidia-l4")
    assert msg is not None
    assert "doesn't know the GPU zones of region asia-east1" in msg
    assert "GPU catalog (2026-" in msg  # its date
    assert "spotkube catalog refresh --cloud gke" in msg
    assert "regions where it knows nvidia-l4 is offered: asia-south1, asia-southeast1, europe-west1" in msg


def test_zone_check_reports_a_zone_outside_the_region() -> None:
    msg = gke.zone_check("us-central1", ["europe-west4-a"], "nvidia-l4")
    assert msg is not None
    assert "'europe-west4-a' is not a zone of us-central1" in msg
    assert "us-central1-a" in msg


def test_zone_check_reports_a_zone_without_the_gpu() -> None:
    msg = gke.zone_check("europe-west4", ["europe-west4-a", "europe-west4-c"], "nvidia-tesla-a100")
    assert msg is not None
    assert "'europe-west4-c' does not offer nvidia-tesla-a100" in msg
    assert "'europe-west4-a' does not offer" not in msg
    assert "europe-west4-a, europe-west4-b" in msg  # the zones that do


def test_zone_check_reports_a_region_without_the_gpu() -> None:
    msg = gke.zone_check("us-east4", ["us-east4-a"], "nvidia-tesla-v100")
    assert msg is not None
    assert "us-east4 offers nvidia-tesla-v100 in no zone" in msg
    assert "us-central1" in msg  # a region that does


def test_zone_check_reports_every_bad_zone() -> None:
    msg = gke.zone_check("us-central1", ["us-central1-f", "us-central1-z"], "nvidia-l4")
    assert msg is not None
    assert "'us-central1-f' does not offer nvidia-l4" in msg
    assert "'us-central1-z' is not a zone of us-central1" in msg


def test_zone_check_refuses_an_unknown_gpu() -> None:
    assert gke.zone_check("us-central1", ["us-central1-a"], "nvidia-tesla-k80") is not None


# --- node pool names ------------------------------------------------------------------------------


def test_node_pool_name_pattern_is_the_gke_rule() -> None:
    assert gke.NODE_POOL_NAME_PATTERN == r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$"


@pytest.mark.parametrize("name", ["a", "gpu", "spot-l4-pool", "p1", "a" * 40, "a-" * 19 + "ab"])
def test_valid_node_pool_names(name: str) -> None:
    assert gke.is_valid_node_pool_name(name)


@pytest.mark.parametrize(
    "name",
    ["", "1gpu", "-gpu", "gpu-", "GPU", "gpu_pool", "gpu.pool", "a" * 41, "gpu\n"],
)
def test_invalid_node_pool_names(name: str) -> None:
    assert not gke.is_valid_node_pool_name(name)
