"""GKE machine types, GPU accelerators and GPU zones that spotkube validates GKE pools against.

Why a bundled catalog: a wrong machine/GPU pairing, a GPU count the machine can't take, or a zone
without the GPU only fails when GKE creates the node pool, minutes into `pulumi up`, often with a
terse API error. Checking these offline lets `spotkube` refuse the spec with a sentence that says
what is wrong and what would be accepted, before anything is created.

The accelerator names are GKE's `guest_accelerator.type` strings. spotkube uses them as its
cloud-neutral GPU vocabulary (the AKS catalog maps Azure VM sizes onto the same names).

Sources, all read 2026-11-22 from stored copies:

- Google Cloud docs "GPU machine types" (https://docs.cloud.google.com/compute/docs/gpus, page
  "Last updated 2026-04-14"): the GPU of every a2/a3/g2 machine type and its count, the GPU models
  N1 takes, the GPU counts and vCPU ceilings per count for N1, and that a3-highgpu-1g/2g/4g can
  only be created as Spot or Flex-start VMs.
- Google Cloud docs "Run GPUs in GKE Standard node pools"
  (https://docs.cloud.google.com/kubernetes-engine/docs/how-to/gpus): which machine series take
  which GPUs in GKE.
- N1 predefined sizes (standard 1-96 vCPUs, highmem/highcpu 2-96):
  cuedos.io/gcp/compute/engine/vmtype, consistent with the N1 rows of the SkyPilot catalog used
  for the zone table below.
- The GPU zone table: see `GPU_ZONES` for what it was built from and what was cross-checked.

More: docs/platform-facts.md#gke-gpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from spotkube.platform.cost.prices import CloudPricing, PriceRow
from spotkube.platform.input_messages import shown

# --------------------------------------------------------------------------------------------------
# Accelerators
# --------------------------------------------------------------------------------------------------

#: GKE accelerator type -> GPU model. This is spotkube's whole GPU vocabulary on GKE. K80 is left
#: out on purpose: Google retired it, and the current "GPU machine types" page no longer lists it.
ACCELERATORS: dict[str, str] = {
    "nvidia-tesla-t4": "NVIDIA T4 16GB",
    "nvidia-tesla-p4": "NVIDIA P4 8GB",
    "nvidia-tesla-v100": "NVIDIA V100 16GB",
    "nvidia-tesla-p100": "NVIDIA P100 16GB",
    "nvidia-l4": "NVIDIA L4 24GB",
    # Google's overview list on the "GPU machine types" page writes "nvidia-a100-40gb" for A2
    # Standard, but its A2 section, GKE, and `gcloud compute accelerator-types list` all use
    # "nvidia-tesla-a100". That is the string the API accepts.
    "nvidia-tesla-a100": "NVIDIA A100 40GB",
    "nvidia-a100-80gb": "NVIDIA A100 80GB",
    "nvidia-h100-80gb": "NVIDIA H100 80GB",
    # A3 Mega carries H100s under a separate accelerator type. Passing nvidia-h100-80gb for
    # a3-megagpu-8g is a pairing error.
    "nvidia-h100-mega-80gb": "NVIDIA H100 80GB Mega",
    "nvidia-h200-141gb": "NVIDIA H200 141GB",
}

# --------------------------------------------------------------------------------------------------
# N1: the GPU is chosen separately from the machine type
# --------------------------------------------------------------------------------------------------

#: GPU types an N1 machine type can take, with the GPU counts Compute Engine accepts for each.
#: ("GPU machine types", sections N1+T4, N1+P4, N1+V100, N1+P100.)
N1_ACCELERATOR_COUNTS: dict[str, tuple[int, ...]] = {
    "nvidia-tesla-t4": (1, 2, 4),
    "nvidia-tesla-p4": (1, 2, 4),
    "nvidia-tesla-v100": (1, 2, 4, 8),
    "nvidia-tesla-p100": (1, 2, 4),
}

#: GPU type -> GPU count -> most vCPUs an N1 instance may have with that many GPUs. Fewer GPUs cap
#: the instance size, so `n1-standard-32` with a single V100 is refused by Compute Engine.
#: The memory ceilings on the same page are always 6.5 GB per allowed vCPU, which is the most any
#: predefined N1 type has (n1-highmem), so checking vCPUs is enough for predefined types.
#: One zonal exception is not modelled: four P100s in us-east1-c, europe-west1-b and europe-west1-d
#: allow only 64 vCPUs and 208 GB.
N1_MAX_VCPUS: dict[str, dict[int, int]] = {
    "nvidia-tesla-t4": {1: 48, 2: 48, 4: 96},
    "nvidia-tesla-p4": {1: 24, 2: 48, 4: 96},
    "nvidia-tesla-v100": {1: 12, 2: 24, 4: 48, 8: 96},
    "nvidia-tesla-p100": {1: 16, 2: 32, 4: 96},
}

#: Predefined N1 series -> the vCPU counts that exist. The shared-core f1-micro and g1-small
#: can't take GPUs, and neither can sizes that don't exist, such as n1-standard-3.
N1_SIZES: dict[str, tuple[int, ...]] = {
    "standard": (1, 2, 4, 8, 16, 32, 64, 96),
    "highmem": (2, 4, 8, 16, 32, 64, 96),
    "highcpu": (2, 4, 8, 16, 32, 64, 96),
}

_N1_RE = re.compile(r"^n1-(standard|highmem|highcpu)-(\d+)$")

# --------------------------------------------------------------------------------------------------
# a2 / a3 / g2: the machine type fixes the GPU type and count
# --------------------------------------------------------------------------------------------------

#: Machine type -> (GPU type, GPUs per VM) for the families whose GPUs come attached.
#: ("GPU machine types": A2 Standard, A2 Ultra, A3 High/Mega/Edge/Ultra, G2 tables.)
FIXED_GPU_MACHINE_TYPES: dict[str, tuple[str, int]] = {
    # A2 Standard: A100 40GB.
    "a2-highgpu-1g": ("nvidia-tesla-a100", 1),
    "a2-highgpu-2g": ("nvidia-tesla-a100", 2),
    "a2-highgpu-4g": ("nvidia-tesla-a100", 4),
    "a2-highgpu-8g": ("nvidia-tesla-a100", 8),
    "a2-megagpu-16g": ("nvidia-tesla-a100", 16),
    # A2 Ultra: A100 80GB.
    "a2-ultragpu-1g": ("nvidia-a100-80gb", 1),
    "a2-ultragpu-2g": ("nvidia-a100-80gb", 2),
    "a2-ultragpu-4g": ("nvidia-a100-80gb", 4),
    "a2-ultragpu-8g": ("nvidia-a100-80gb", 8),
    # A3 High: H100 80GB. 1g/2g/4g exist only as Spot or Flex-start VMs (see below).
    "a3-highgpu-1g": ("nvidia-h100-80gb", 1),
    "a3-highgpu-2g": ("nvidia-h100-80gb", 2),
    "a3-highgpu-4g": ("nvidia-h100-80gb", 4),
    "a3-highgpu-8g": ("nvidia-h100-80gb", 8),
    # A3 Edge: H100 80GB, serving-oriented, in a limited set of regions.
    "a3-edgegpu-8g": ("nvidia-h100-80gb", 8),
    # A3 Mega: H100 under its own accelerator type.
    "a3-megagpu-8g": ("nvidia-h100-mega-80gb", 8),
    # A3 Ultra: H200. Google asks for a reservation, Spot or Flex-start.
    "a3-ultragpu-8g": ("nvidia-h200-141gb", 8),
    # G2: L4. The GPU count doesn't grow with vCPUs: g2-standard-32 has one L4, g2-standard-24 two.
    "g2-standard-4": ("nvidia-l4", 1),
    "g2-standard-8": ("nvidia-l4", 1),
    "g2-standard-12": ("nvidia-l4", 1),
    "g2-standard-16": ("nvidia-l4", 1),
    "g2-standard-24": ("nvidia-l4", 2),
    "g2-standard-32": ("nvidia-l4", 1),
    "g2-standard-48": ("nvidia-l4", 4),
    "g2-standard-96": ("nvidia-l4", 8),
}

#: Machine types that Compute Engine creates only with the Spot or Flex-start provisioning model
#: ("GPU machine types", A3 High note). They suit a spot pool, but an on-demand fallback pool with
#: one of them would never come up.
SPOT_OR_FLEX_ONLY_MACHINE_TYPES: frozenset[str] = frozenset(
    {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}
)

#: The machine families spotkube builds GPU pools from, as named in user-facing messages.
GPU_FAMILIES_TEXT = "N1 (n1-standard-*, n1-highmem-*, n1-highcpu-*), a2, a3 and g2"

_FIXED_FAMILIES = frozenset({"a2", "a3", "g2"})

#: Messages write counts as "1 <multiplication sign> nvidia-l4", as the AKS catalog does; the sign
#: is spelled by name to keep the source ASCII.
_TIMES = "\N{MULTIPLICATION SIGN}"


def machine_family(machine_type: str) -> str:
    """The machine family, the part of the name before the first hyphen: `g2-standard-8` -> `g2`."""
    return machine_type.split("-", 1)[0]


def is_n1(machine_type: str) -> bool:
    """Whether `machine_type` is a predefined N1 type that can take a GPU.

    N1 is the only family where the GPU type and count are chosen separately from the machine type,
    so callers use this to decide whether a GPU count must be given rather than filled in.
    """
    match = _N1_RE.fullmatch(machine_type)
    return bool(match) and int(match.group(2)) in N1_SIZES[match.group(1)]


def n1_vcpus(machine_type: str) -> int | None:
    """vCPUs of a predefined N1 type (the number in its name), or None if it isn't one."""
    if not is_n1(machine_type):
        return None
    return int(machine_type.rsplit("-", 1)[1])


def accelerator_for_machine(machine_type: str) -> tuple[str, int] | None:
    """(GPU type, GPUs per VM) for an a2/a3/g2 machine type, or None for any other type.

    These families come with their GPUs attached, so the spec can fill the GPU type and count in
    from the machine type instead of asking for two fields that could disagree with it.
    """
    return FIXED_GPU_MACHINE_TYPES.get(machine_type)


def machine_types_for(gpu_type: str) -> tuple[str, ...]:
    """The a2/a3/g2 machine types that carry `gpu_type`, smallest first; empty for N1-only GPUs."""
    return tuple(m for m, (gpu, _) in FIXED_GPU_MACHINE_TYPES.items() if gpu == gpu_type)


def requires_spot_or_flex(machine_type: str) -> bool:
    """Whether Compute Engine creates this machine type only as a Spot or Flex-start VM."""
    return machine_type in SPOT_OR_FLEX_ONLY_MACHINE_TYPES


def _or_list(items: Iterable[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _counts_text(counts: Iterable[int]) -> str:
    return ", ".join(str(c) for c in counts)


def _where_gpu_fits(gpu_type: str) -> str:
    """Which machine types take `gpu_type`, as a predicate: "needs a g2 machine type (...)"."""
    fixed = machine_types_for(gpu_type)
    if fixed:
        family = machine_family(fixed[0])
        article = "an" if family[0] in "aeio" else "a"
        return f"needs {article} {family} machine type ({', '.join(fixed)})"
    counts = _or_list(str(c) for c in N1_ACCELERATOR_COUNTS[gpu_type])
    return (
        f"needs an N1 machine type (n1-standard-*, n1-highmem-* or n1-highcpu-*) with {counts} GPUs"
    )


def pairing_error(machine_type: str, gpu_type: str, gpu_count: int | None = None) -> str | None:
    """Check a GKE machine type, GPU type and GPU count against each other.

    Returns None when GKE will accept the combination, otherwise one sentence saying what is wrong
    and what would be accepted. `gpu_count=None` means "fill it in": allowed for a2/a3/g2, whose
    machine type fixes the count, and refused for N1, where the count is the user's choice.
    """
    if gpu_type not in ACCELERATORS:
        return f"unknown GPU type {shown(gpu_type)}; spotkube knows {', '.join(ACCELERATORS)}"
    if gpu_count is not None and gpu_count < 1:
        return f"GPU count must be at least 1, got {gpu_count}"

    fixed = accelerator_for_machine(machine_type)
    if fixed is not None:
        carried, count = fixed
        if gpu_type != carried:
            return (
                f"{machine_type} carries {count} {_TIMES} {carried}; {gpu_type} is not "
                f"accepted: it {_where_gpu_fits(gpu_type)}"
            )
        if gpu_count is not None and gpu_count != count:
            return (
                f"{machine_type} carries {count} {_TIMES} {carried}; a count of {gpu_count} is not "
                f"accepted (give {count} or leave the count out)"
            )
        return None

    if is_n1(machine_type):
        if gpu_type not in N1_ACCELERATOR_COUNTS:
            return (
                f"{gpu_type} {_where_gpu_fits(gpu_type)}; {machine_type} takes only "
                f"{_or_list(N1_ACCELERATOR_COUNTS)}"
            )
        allowed = N1_ACCELERATOR_COUNTS[gpu_type]
        if gpu_count is None:
            return (
                f"{machine_type} has no built-in GPUs, so the GPU count must be given; "
                f"{gpu_type} accepts {_or_list(str(c) for c in allowed)}"
            )
        if gpu_count not in allowed:
            return (
                f"{gpu_count} {_TIMES} {gpu_type} is not accepted on N1; "
                f"{gpu_type} accepts {_or_list(str(c) for c in allowed)}"
            )
        vcpus = n1_vcpus(machine_type)
        ceiling = N1_MAX_VCPUS[gpu_type][gpu_count]
        if vcpus is not None and vcpus > ceiling:
            enough = [c for c in allowed if N1_MAX_VCPUS[gpu_type][c] >= vcpus]
            more = f"use {enough[0]} {_TIMES} {gpu_type} or " if enough else "use "
            return (
                f"{machine_type} has {vcpus} vCPUs, but {gpu_count} {_TIMES} {gpu_type} allows "
                f"at most {ceiling}; {more}an N1 machine type with at most {ceiling} vCPUs"
            )
        return None

    family = machine_family(machine_type)
    if family in _FIXED_FAMILIES:
        known = [m for m in FIXED_GPU_MACHINE_TYPES if machine_family(m) == family]
        return (
            f"{machine_type} is not a {family} machine type spotkube knows; "
            f"known: {', '.join(known)}"
        )
    if family == "n1":
        return (
            f"{machine_type} is not a predefined N1 machine type that takes GPUs; use "
            f"n1-standard-{{{_counts_text(N1_SIZES['standard'])}}}, "
            f"n1-highmem-{{{_counts_text(N1_SIZES['highmem'])}}} or "
            f"n1-highcpu-{{{_counts_text(N1_SIZES['highcpu'])}}}"
        )
    return (
        f"{machine_type} cannot carry a GPU: spotkube attaches GPUs only to "
        f"{GPU_FAMILIES_TEXT} machine types; {gpu_type} {_where_gpu_fits(gpu_type)}"
    )


# --------------------------------------------------------------------------------------------------
# GPU zones
# --------------------------------------------------------------------------------------------------

#: Google's page for GPU availability by zone: where to check when the table below looks stale.
GPU_ZONES_SOURCE = "https://cloud.google.com/compute/docs/gpus/gpu-regions-zones"
#: The stored copies the table was read from carry no date, so this is the date it was looked up.
GPU_ZONES_DATE = "2026-11-22 (lookup date)"
#: What the table was actually transcribed from. Google's page itself was not in the stored corpus.
GPU_ZONES_DERIVED_FROM = (
    "skypilot-org/skypilot-catalog catalogs/v7/gcp/vms.csv at commit "
    "017e2502fb63c7a28757acd94002b2d6099d3e3d (built from the Compute Engine API)"
)

_T4, _P4 = "nvidia-tesla-t4", "nvidia-tesla-p4"
_V100, _P100 = "nvidia-tesla-v100", "nvidia-tesla-p100"
_L4, _A100, _A100_80 = "nvidia-l4", "nvidia-tesla-a100", "nvidia-a100-80gb"
_H100, _H100_MEGA, _H200 = "nvidia-h100-80gb", "nvidia-h100-mega-80gb", "nvidia-h200-141gb"

#: Region -> zone -> GPU types offered in that zone. Every zone of each region is listed, so a zone
#: missing here doesn't belong to the region.
#:
#: Transcribed from the per-zone accelerator rows of GPU_ZONES_DERIVED_FROM, whose A100, A100 80GB
#: and H100 rows agree with its a2-highgpu, a2-ultragpu and a3-highgpu machine rows.
#: Cross-checked: us-central1 matches zone for zone a published
#: `gcloud compute accelerator-types list` output (H200 is newer than that listing and appears only
#: in the catalog); us-east1-c/-d match a GitLab infra issue's table for T4/V100/P100/A100 (that
#: table predates L4 and still had the retired K80). europe-west4, europe-west1 and us-east4 rest
#: on the catalog alone.
#: Availability here means "Compute Engine offers the type in the zone", not that capacity or quota
#: is free; the table ages, so unknown regions are refused rather than guessed.
GPU_ZONES: dict[str, dict[str, frozenset[str]]] = {
    "us-central1": {
        "us-central1-a": frozenset({_T4, _P4, _V100, _L4, _A100, _A100_80, _H100, _H100_MEGA}),
        "us-central1-b": frozenset({_T4, _V100, _L4, _A100, _H100, _H100_MEGA, _H200}),
        "us-central1-c": frozenset(
            {_T4, _P4, _V100, _P100, _L4, _A100, _A100_80, _H100, _H100_MEGA}
        ),
        "us-central1-f": frozenset({_T4, _V100, _P100, _A100}),
    },
    "europe-west4": {
        "europe-west4-a": frozenset({_T4, _V100, _P100, _L4, _A100, _A100_80, _H200}),
        "europe-west4-b": frozenset({_T4, _P4, _V100, _L4, _A100, _H100, _H100_MEGA}),
        "europe-west4-c": frozenset({_T4, _P4, _V100, _L4, _H100, _H100_MEGA}),
    },
    "us-east1": {
        "us-east1-b": frozenset({_P100, _L4, _A100}),
        "us-east1-c": frozenset({_T4, _V100, _P100, _L4}),
        "us-east1-d": frozenset({_T4, _L4}),
    },
    "us-east4": {
        "us-east4-a": frozenset({_T4, _P4, _L4, _H100, _H100_MEGA}),
        "us-east4-b": frozenset({_T4, _P4, _H100, _H100_MEGA, _H200}),
        "us-east4-c": frozenset({_T4, _P4, _L4, _A100_80, _H100, _H100_MEGA}),
    },
    "europe-west1": {
        "europe-west1-b": frozenset({_T4, _P100, _L4, _H100, _H100_MEGA, _H200}),
        "europe-west1-c": frozenset({_T4, _L4, _H100, _H100_MEGA}),
        "europe-west1-d": frozenset({_T4, _P100}),
    },
}


def zones_offering(region: str, gpu_type: str) -> tuple[str, ...] | None:
    """The zones of `region` that offer `gpu_type`, in zone order.

    None means the region is not in the table, which callers must report rather than treat as
    "no zones": spotkube doesn't know, so it can't say. An empty tuple means the region is known
    and offers the GPU nowhere.
    """
    zones = GPU_ZONES.get(region)
    if zones is None:
        return None
    return tuple(zone for zone, offered in zones.items() if gpu_type in offered)


def _table_ref() -> str:
    return f"source {GPU_ZONES_SOURCE}, date {GPU_ZONES_DATE}"


def zone_check(region: str, zones: Iterable[str], gpu_type: str) -> str | None:
    """Check a GPU pool's `node_locations` against the bundled zone table.

    Returns None when every zone is in `region` and offers `gpu_type`, otherwise a user-facing
    message naming each problem and the zones that would work. An empty `zones` passes as long as
    the region offers the GPU somewhere: the caller is then expected to fill the zones in from
    `zones_offering`, because GKE would otherwise spread the pool over zones without the GPU.
    """
    if gpu_type not in ACCELERATORS:
        return f"unknown GPU type {shown(gpu_type)}; spotkube knows {', '.join(ACCELERATORS)}"
    offering = zones_offering(region, gpu_type)
    if offering is None:
        return (
            f"region {region} is not in spotkube's GPU zone table ({_table_ref()}); "
            f"known regions: {', '.join(GPU_ZONES)}. Pick a known region, or check the zones "
            f"with `gcloud compute accelerator-types list --filter=zone~{region}`"
        )
    if not offering:
        elsewhere = [r for r in GPU_ZONES if zones_offering(r, gpu_type)]
        return (
            f"region {region} offers {gpu_type} in no zone ({_table_ref()}); "
            f"regions in the table that do: {', '.join(elsewhere) or 'none'}"
        )

    region_zones = GPU_ZONES[region]
    problems: list[str] = []
    for zone in dict.fromkeys(zones):
        if zone not in region_zones:
            problems.append(
                f"{shown(zone)} is not a zone of {region} (its zones: {', '.join(region_zones)})"
            )
        elif gpu_type not in region_zones[zone]:
            problems.append(f"{shown(zone)} does not offer {gpu_type}")
    if not problems:
        return None
    return "; ".join(problems) + f"; zones of {region} that offer {gpu_type}: {', '.join(offering)}"


# --------------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------------

#: GKE node pool names: 1-40 characters, lower-case letters, digits and hyphens, starting with a
#: letter and not ending with a hyphen (the NodePool REST resource's `name`,
#: cloud.google.com/kubernetes-engine/docs/reference/rest). Pulumi autonaming appends a random
#: suffix to the resource name, so check the name GKE will actually receive.
NODE_POOL_NAME_PATTERN = r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$"

_NODE_POOL_NAME_RE = re.compile(NODE_POOL_NAME_PATTERN)


def is_valid_node_pool_name(name: str) -> bool:
    """Whether GKE accepts `name` as a node pool name (see NODE_POOL_NAME_PATTERN)."""
    return bool(_NODE_POOL_NAME_RE.fullmatch(name))


#: Compute Engine's Arm machine families (Tau T2A, Axion C4A and N4A, and the Grace-based A4X);
#: every other family is x86 (cloud.google.com/compute/docs/instances/arm-on-compute).
ARM_FAMILIES = frozenset({"t2a", "c4a", "n4a", "a4x"})


def machine_arch(machine_type: str) -> str:
    """The `kubernetes.io/arch` label of nodes of this machine type."""
    return "arm64" if machine_family(machine_type) in ARM_FAMILIES else "amd64"

#: Google Cloud regions (`gcloud compute regions list`), as of the lookup date in
#: docs/platform-facts.md#cloud-regions. The GPU zone table above covers only some of them; a region
#: newer than this list is accepted with `cluster.allowUnlistedRegion: true`.
REGIONS: frozenset[str] = frozenset({
    "africa-south1", "asia-east1", "asia-east2", "asia-northeast1", "asia-northeast2", "asia-northeast3",
    "asia-south1", "asia-south2", "asia-southeast1", "asia-southeast2", "australia-southeast1",
    "australia-southeast2", "europe-central2", "europe-north1", "europe-north2", "europe-southwest1",
    "europe-west1", "europe-west2", "europe-west3", "europe-west4", "europe-west6", "europe-west8",
    "europe-west9", "europe-west10", "europe-west12", "me-central1", "me-central2", "me-west1",
    "northamerica-northeast1", "northamerica-northeast2", "northamerica-south1", "southamerica-east1",
    "southamerica-west1", "us-central1", "us-east1", "us-east4", "us-east5", "us-south1", "us-west1",
    "us-west2", "us-west3", "us-west4",
})


# --- How Google Cloud appears in the price table --------------------------------------------------

#: Machine families that come with their GPUs and are priced with them included.
GPU_BUNDLED_PREFIXES = ("a2-", "a3-", "a4-", "g2-")
#: The only family that takes GPUs as separately billed accelerators.
GPU_ATTACHED_PREFIX = "n1-"


def price_row_problem(row: PriceRow) -> str | None:
    """GPUs Compute Engine bills apart from the machine are priced by their accelerator type."""
    if row.kind == "accelerator" and not row.sku.startswith("nvidia-"):
        return f"GCP accelerator must be a type like nvidia-tesla-t4: {row.sku}"
    return None


def gpus_billed_separately(machine: str) -> bool:
    """Whether GPUs on this machine are extra accelerator charges rather than part of its price."""
    if machine.startswith(GPU_ATTACHED_PREFIX):
        return True
    if machine.startswith(GPU_BUNDLED_PREFIXES):
        return False
    raise ValueError(
        f"GCP attaches GPUs only to N1 machine types; {machine} cannot take a GPU "
        "(use n1-*, or a GPU machine type such as g2-standard-8 or a2-highgpu-1g)"
    )


PRICING = CloudPricing(name="gcp", row_problem=price_row_problem, gpus_billed_separately=gpus_billed_separately)
