"""GKE machine types, GPU accelerators and GPU zones that spotkube validates GKE pools against.

Why offline: a wrong machine/GPU pairing, a GPU count the machine can't take, or a zone without the GPU
fails only when GKE creates the node pool, minutes into `pulumi up`, with a terse API error. The catalog
(docs/catalog.md) has what Compute Engine's API states; this module holds what it doesn't: N1's GPU
counts and vCPU ceilings, and the machine types that exist only as Spot. GKE's accelerator names are
spotkube's cloud-neutral GPU vocabulary.

Sources, read 2026-11-22 from stored copies:
- Google Cloud docs "GPU machine types" (https://docs.cloud.google.com/compute/docs/gpus, page
  "Last updated 2026-04-14"): the GPU models N1 takes, the GPU counts and vCPU ceilings per count
  for N1, and that a3-highgpu-1g/2g/4g can only be created as Spot or Flex-start VMs.
- Google Cloud docs "Run GPUs in GKE Standard node pools"
  (https://docs.cloud.google.com/kubernetes-engine/docs/how-to/gpus): which machine series take
  which GPUs in GKE.
- N1 predefined sizes (standard 1-96 vCPUs, highmem/highcpu 2-96):
  cuedos.io/gcp/compute/engine/vmtype, consistent with the N1 rows of the SkyPilot catalog.
More: docs/platform-facts.md#gke-gpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib import resources

from spotkube.platform.catalog import CloudCatalog, cloud_part, refresh_command
from spotkube.platform.cost.prices import CloudPricing, PriceRow
from spotkube.platform.input_messages import shown

#: This cloud's part of the GPU catalog.
CLOUD = "gke"
#: This cloud's shipped part of the GPU catalog, and its shipped price rows (docs/catalog.md, docs/cost.md).
CATALOG_FILE = resources.files(__package__).joinpath("catalog.json")
PRICES_FILE = resources.files(__package__).joinpath("prices.json")


def section() -> CloudCatalog:
    """The GKE part of the catalog in use: the bundled one, or the user's refreshed copy."""
    return cloud_part(CLOUD, CATALOG_FILE)


def accelerators() -> tuple[str, ...]:
    """Every GPU type the catalog knows on GKE, sorted: spotkube's whole GPU vocabulary on GKE."""
    return tuple(sorted(section().gpu_types()))


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
# a2 / a3 / a4 / g2: the machine type fixes the GPU type and count (from the catalog)
# --------------------------------------------------------------------------------------------------

#: Machine types that Compute Engine creates only with the Spot or Flex-start provisioning model
#: ("GPU machine types", A3 High note). They suit a spot pool, but an on-demand fallback pool with
#: one of them would never come up.
SPOT_OR_FLEX_ONLY_MACHINE_TYPES: frozenset[str] = frozenset(
    {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}
)

#: Families whose machine types take a GPU chosen apart from the machine type (N1); the catalog's
#: machines come with theirs.
ATTACH_FAMILIES = frozenset({"n1"})

#: Messages write counts as "1 <multiplication sign> nvidia-l4", as the AKS catalog does; the sign
#: is spelled by name to keep the source ASCII.
_TIMES = "\N{MULTIPLICATION SIGN}"


def fixed_gpu_machine_types() -> dict[str, tuple[str, int]]:
    """Machine type -> (GPU type, GPUs per VM) for every machine type the catalog says comes with
    GPUs, smallest first (by vCPUs, then name)."""
    machines = section().machines
    ordered = sorted(machines.items(), key=lambda item: (item[1].vcpus or 0, item[1].gpu.count, item[0]))
    return {name: (m.gpu.type, m.gpu.count) for name, m in ordered}


def gpu_families() -> tuple[str, ...]:
    """The families of the catalog's GPU machine types (a2, a3, a4, g2, ...), sorted."""
    return tuple(sorted({machine_family(m) for m in section().machines}))


def gpu_families_text() -> str:
    """The machine families spotkube builds GPU pools from, as named in user-facing messages."""
    return f"N1 (n1-standard-*, n1-highmem-*, n1-highcpu-*), {_or_list(gpu_families()).replace(' or ', ' and ')}"


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
    """(GPU type, GPUs per VM) for a machine type the catalog says comes with GPUs, or None.

    These come with their GPUs attached, so the spec can fill the GPU type and count in from the
    machine type instead of asking for two fields that could disagree with it.
    """
    machine = section().machine(machine_type)
    return (machine.gpu.type, machine.gpu.count) if machine else None


def machine_types_for(gpu_type: str) -> tuple[str, ...]:
    """The catalog's machine types that carry `gpu_type`, smallest first; empty for N1-only GPUs."""
    return tuple(m for m, (gpu, _) in fixed_gpu_machine_types().items() if gpu == gpu_type)


def requires_spot_or_flex(machine_type: str) -> bool:
    """Whether Compute Engine creates this machine type only as a Spot or Flex-start VM."""
    return machine_type in SPOT_OR_FLEX_ONLY_MACHINE_TYPES


def carries_no_gpu(machine_type: str) -> bool:
    """Whether the catalog knows the machine type's family to have no GPUs at all."""
    return machine_family(machine_type) in section().cpu_families


def knows_machine(machine_type: str) -> bool:
    """Whether the rules or the catalog know which GPUs the machine type takes (N1, or a catalog
    machine); a GPU pool on any other machine type got its GPU from the pool's declaration."""
    return is_n1(machine_type) or accelerator_for_machine(machine_type) is not None


def _catalog_date() -> str:
    return section().date.isoformat()


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
    if gpu_type in N1_ACCELERATOR_COUNTS:
        counts = _or_list(str(c) for c in N1_ACCELERATOR_COUNTS[gpu_type])
        return f"needs an N1 machine type (n1-standard-*, n1-highmem-* or n1-highcpu-*) with {counts} GPUs"
    return f"is not a GPU type in spotkube's catalog of {_catalog_date()}"


def pairing_error(machine_type: str, gpu_type: str, gpu_count: int | None = None) -> str | None:
    """Check a GKE machine type, GPU type and GPU count against each other.

    Returns None when GKE will accept the combination, or when the catalog doesn't know the machine
    type (its GPUs are then taken as declared, and the plan warns), otherwise one sentence saying
    what is wrong and what would be accepted. `gpu_count=None` means "fill it in": allowed for
    machine types that come with GPUs, refused for N1, where the count is the user's choice.
    """
    if gpu_count is not None and gpu_count < 1:
        return f"GPU count must be at least 1, got {gpu_count}"

    fixed = accelerator_for_machine(machine_type)
    if fixed is not None:
        carried, count = fixed
        if gpu_type != carried:
            return (
                f"{machine_type} carries {count} {_TIMES} {carried}; {shown(gpu_type)} is not "
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
                f"{shown(gpu_type)} {_where_gpu_fits(gpu_type)}; {machine_type} takes only "
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
    if family in ATTACH_FAMILIES:
        return (
            f"{machine_type} is not a predefined N1 machine type that takes GPUs; use "
            f"n1-standard-{{{_counts_text(N1_SIZES['standard'])}}}, "
            f"n1-highmem-{{{_counts_text(N1_SIZES['highmem'])}}} or "
            f"n1-highcpu-{{{_counts_text(N1_SIZES['highcpu'])}}}"
        )
    if carries_no_gpu(machine_type):
        return (
            f"{shown(machine_type)} carries no GPU: the {family} family has none (catalog of {_catalog_date()}); "
            f"spotkube builds GPU pools from {gpu_families_text()} machine types; {shown(gpu_type)} "
            f"{_where_gpu_fits(gpu_type)}"
        )
    return None


def unlisted_machine_error(machine_type: str) -> str:
    """Why a GPU pool on a machine type the catalog doesn't know, without a declared GPU, is refused:
    never "it has no GPU" (the catalog can't say), but how to declare its GPU or refresh."""
    family = machine_family(machine_type)
    same_family = [m for m in fixed_gpu_machine_types() if machine_family(m) == family]
    known = f"; {family} machine types in it: {', '.join(same_family)}" if same_family else ""
    return (
        f"{shown(machine_type)} is not in spotkube's catalog of {_catalog_date()}{known}; if it carries GPUs, "
        "declare them with gpu: {type: <GPU type, e.g. nvidia-b200>, count: <GPUs per VM>}, or run "
        f"`{refresh_command(CLOUD)}`"
    )


# --------------------------------------------------------------------------------------------------
# GPU zones (from the catalog)
# --------------------------------------------------------------------------------------------------

#: Google's page for GPU availability by zone: where to check when the catalog looks stale.
GPU_ZONES_SOURCE = "https://cloud.google.com/compute/docs/gpus/gpu-regions-zones"


def gpu_regions() -> tuple[str, ...]:
    """The regions whose GPU zones the catalog knows completely, sorted."""
    return tuple(sorted(section().regions))


def regions_with_zones(gpu_type: str) -> tuple[str, ...]:
    """The regions where the catalog names a zone offering `gpu_type`, sorted."""
    accelerator = section().accelerators.get(gpu_type)
    return tuple(sorted(r for r, zones in accelerator.regions.items() if zones)) if accelerator else ()


def region_zones(region: str) -> tuple[str, ...] | None:
    """Every zone of `region`, when the catalog knows the region completely."""
    return section().regions.get(region)


def zones_offering(region: str, gpu_type: str) -> tuple[str, ...] | None:
    """The zones of `region` that offer `gpu_type`, in zone order.

    None means the catalog can't say (a region it doesn't know completely, or a GPU type it doesn't
    know), which callers must report rather than treat as "no zones". An empty tuple means the
    region is known and offers the GPU nowhere.
    """
    if gpu_type not in section().accelerators:
        return None
    return section().accelerator_zones(gpu_type, region)


def _table_ref() -> str:
    """The catalog and where it came from, as a noun phrase a sentence can go on from."""
    return f"GPU catalog ({section().describe()})"


def zone_check(region: str, zones: Iterable[str], gpu_type: str) -> str | None:
    """Check a GPU pool's `node_locations` against the catalog's GPU zones.

    Returns None when every zone is in `region` and offers `gpu_type`, otherwise a user-facing
    message naming each problem and the zones that would work. An empty `zones` passes as long as
    the region offers the GPU somewhere: the caller is then expected to fill the zones in from
    `zones_offering`, because GKE would otherwise spread the pool over zones without the GPU.
    """
    if gpu_type not in section().accelerators:
        return (f"spotkube's {_table_ref()} doesn't know which zones offer {shown(gpu_type)}; list them in "
                f"zones, or run `{refresh_command(CLOUD)}`")
    offering = zones_offering(region, gpu_type)
    if offering is None:
        known = sorted(r for r in section().accelerators[gpu_type].regions if zones_offering(r, gpu_type))
        return (
            f"spotkube's {_table_ref()} doesn't know the GPU zones of region {region}; regions where it knows "
            f"{gpu_type} is offered: {', '.join(known)}. Pick one, run `{refresh_command(CLOUD)}`, or check the "
            f"zones with `gcloud compute accelerator-types list --filter=zone~{region}`"
        )
    if not offering:
        elsewhere = [r for r in sorted({*gpu_regions(), *section().accelerators[gpu_type].regions})
                     if zones_offering(r, gpu_type)]
        return (
            f"region {region} offers {gpu_type} in no zone ({_table_ref()}); "
            f"regions that do: {', '.join(elsewhere) or 'none'}"
        )

    all_zones = region_zones(region)
    problems: list[str] = []
    for zone in dict.fromkeys(zones):
        if all_zones is not None and zone not in all_zones:
            problems.append(f"{shown(zone)} is not a zone of {region} (its zones: {', '.join(all_zones)})")
        elif all_zones is None and not re.fullmatch(rf"{re.escape(region)}-[a-z]", zone):
            problems.append(f"{shown(zone)} is not a zone of {region}; its zones are named {region}-a, {region}-b, ...")
        elif zone not in offering:
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
#: docs/platform-facts.md#cloud-regions. The catalog's GPU zones may cover only some of them; a region
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


PRICING = CloudPricing(name="gcp", row_problem=price_row_problem, gpus_billed_separately=gpus_billed_separately,
                       table=PRICES_FILE)
