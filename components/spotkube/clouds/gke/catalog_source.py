"""Compute Engine's GPU machine types and accelerator types, for `spotkube catalog refresh --cloud gke`.

A family with no accelerators is GPU-less, but for N1, whose GPUs are attached apart from the machine
type. The `-vws` accelerator types are left out: the same GPUs with an NVIDIA RTX Virtual Workstation
licence, for Compute Engine VMs, not GKE node pools. It uses google-cloud-compute with Application Default
Credentials (the `refresh` extra), so the core install stays small; nothing else in spotkube imports it.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

from google.api_core import exceptions as api_exceptions
from google.api_core.client_options import ClientOptions
from google.auth import exceptions as auth_exceptions
from google.auth.credentials import Credentials
from google.cloud import compute_v1

from spotkube.clouds.gke import catalog
from spotkube.clouds.gke.options import GkeCatalogRefresh
from spotkube.platform.catalog import (
    Accelerator,
    CatalogSourceError,
    CloudCatalog,
    GpuFacts,
    Machine,
    MachineGpu,
)
from spotkube.platform.catalog_source import RefreshRequest, SourceResult

#: What the catalog says it was read from.
SOURCE = "Compute Engine API (machine types and accelerator types)"
#: Accelerator types for NVIDIA RTX Virtual Workstations: not for GKE node pools.
_WORKSTATION_SUFFIX = "-vws"


def _pages(call: Any, project: str) -> list[tuple[str, Any]]:
    """Every (scope, scoped list) of an aggregated list, every page of it, as one sentence on failure."""
    try:
        return list(call(request={"project": project}))
    except auth_exceptions.GoogleAuthError as err:
        raise CatalogSourceError(f"Google refused or found no credentials ({err}); run `gcloud auth "
                                 "application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS") from None
    except api_exceptions.GoogleAPICallError as err:
        raise CatalogSourceError(f"the Compute Engine API answered {err.code}: {err.message}") from None
    except api_exceptions.GoogleAPIError as err:
        raise CatalogSourceError(f"could not read the Compute Engine API: {err}") from None


def read_types(project: str, *, credentials: Credentials | None = None,
               endpoint: str | None = None) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """Compute Engine's aggregated machine types and accelerator types for `project`.

    Without `credentials` the clients use Application Default Credentials; `endpoint` replaces
    compute.googleapis.com (a full URL, e.g. a local server's `http://127.0.0.1:8080`).
    """
    options = ClientOptions(api_endpoint=endpoint) if endpoint else None
    try:
        machine_types = compute_v1.MachineTypesClient(credentials=credentials, client_options=options)
        accelerator_types = compute_v1.AcceleratorTypesClient(credentials=credentials, client_options=options)
    except auth_exceptions.DefaultCredentialsError as err:
        raise CatalogSourceError(f"no Google credentials ({err}); run `gcloud auth application-default login`, "
                                 "or set GOOGLE_APPLICATION_CREDENTIALS") from None
    return _pages(machine_types.aggregated_list, project), _pages(accelerator_types.aggregated_list, project)


def _zone(scope: str, zone: str) -> str:
    """A zone's name from the item's own field (a name or a URL), else from its scope."""
    return (zone or scope.removeprefix("zones/")).rsplit("/", 1)[-1]


def _region(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def _deprecated(item: Any) -> bool:
    return bool(item.deprecated and item.deprecated.state)


@dataclass
class GkeCatalog:
    """The GKE part of the catalog read from the API, and GPU facts for GPU types new to spotkube."""

    section: CloudCatalog
    #: GPU types spotkube had no facts for, with the API's description of them.
    new_gpus: dict[str, GpuFacts] = field(default_factory=dict)


def build_section(machine_pages: Iterable[tuple[str, Any]], accelerator_pages: Iterable[tuple[str, Any]],
                  known_gpus: Iterable[str], today: datetime.date) -> GkeCatalog:
    """The GKE catalog part from the two aggregated lists' (scope, scoped list) pairs."""
    zones: dict[str, set[str]] = {}
    machines: dict[str, dict[str, Any]] = {}
    gpu_families: set[str] = set()
    cpu_families: set[str] = set()
    for scope, scoped in machine_pages:
        if not scope.startswith("zones/"):
            continue
        for machine in scoped.machine_types:
            if _deprecated(machine):
                continue
            zone = _zone(scope, machine.zone)
            zones.setdefault(_region(zone), set()).add(zone)
            family = catalog.machine_family(machine.name)
            accelerators = [a for a in machine.accelerators if a.guest_accelerator_count > 0]
            if not accelerators:
                cpu_families.add(family)
                continue
            gpu_families.add(family)
            entry = machines.setdefault(machine.name, {"machine": machine, "regions": {}})
            entry["regions"].setdefault(_region(zone), set()).add(zone)
    accelerators: dict[str, dict[str, Any]] = {}
    for scope, scoped in accelerator_pages:
        if not scope.startswith("zones/"):
            continue
        for accelerator in scoped.accelerator_types:
            if _deprecated(accelerator) or accelerator.name.endswith(_WORKSTATION_SUFFIX):
                continue
            zone = _zone(scope, accelerator.zone)
            entry = accelerators.setdefault(accelerator.name, {"item": accelerator, "regions": {}})
            entry["regions"].setdefault(_region(zone), set()).add(zone)
    built = {}
    for name, entry in sorted(machines.items()):
        machine = entry["machine"]
        accelerator = machine.accelerators[0]
        built[name] = Machine(
            gpu=MachineGpu(type=accelerator.guest_accelerator_type, count=accelerator.guest_accelerator_count),
            vcpus=machine.guest_cpus or None,
            memoryGb=Decimal(machine.memory_mb) / 1024 if machine.memory_mb else None,
            regions={region: tuple(sorted(z)) for region, z in sorted(entry["regions"].items())},
        )
    section = CloudCatalog(
        date=today,
        source=SOURCE,
        regions={region: tuple(sorted(z)) for region, z in sorted(zones.items())},
        machines=built,
        accelerators={name: Accelerator(
            maxPerMachine=entry["item"].maximum_cards_per_instance or None,
            description=entry["item"].description or None,
            regions={region: tuple(sorted(z)) for region, z in sorted(entry["regions"].items())},
        ) for name, entry in sorted(accelerators.items())},
        cpuFamilies=tuple(sorted(cpu_families - gpu_families - catalog.ATTACH_FAMILIES)),
    )
    known = set(known_gpus)
    new_gpus = {name: GpuFacts(model=entry["item"].description or name) for name, entry in sorted(accelerators.items())
                if name not in known}
    return GkeCatalog(section, new_gpus)


def fetch(project: str, known_gpus: Iterable[str], *, credentials: Credentials | None = None,
          endpoint: str | None = None, today: datetime.date | None = None) -> GkeCatalog:
    """Read the API for `project` and build the GKE catalog part from it."""
    machine_pages, accelerator_pages = read_types(project, credentials=credentials, endpoint=endpoint)
    if not any(scoped.machine_types for _, scoped in machine_pages):
        raise CatalogSourceError(f"the Compute Engine API listed no machine types for project {project}; is the "
                                 "Compute Engine API enabled there?")
    return build_section(machine_pages, accelerator_pages, known_gpus,
                         today or datetime.datetime.now(datetime.UTC).date())


def refresh(request: RefreshRequest, known_gpus: Collection[str]) -> SourceResult:
    """The GKE part of the catalog for `spotkube catalog refresh`, with what to tell the user."""
    flags = cast(GkeCatalogRefresh, request.options)
    if not flags.project:
        raise CatalogSourceError("--cloud gke needs the Google Cloud project to read the machine types with: give "
                                 "--gcp-project ID or set GOOGLE_CLOUD_PROJECT")
    found = fetch(flags.project, known_gpus, endpoint=flags.endpoint, today=request.today)
    notes = (f"new GPU types, without memory or MIG facts yet: {', '.join(found.new_gpus)}",) if found.new_gpus else ()
    return SourceResult(found.section, found.new_gpus, notes)
