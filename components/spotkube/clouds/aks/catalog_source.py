"""Azure's GPU VM sizes, read from the Resource SKUs API for `spotkube catalog refresh --cloud aks`.

The subscription's restrictions take regions and zones away from a size, so the catalog says what the
subscription it was read with can deploy. It uses azure-mgmt-compute with azure-identity's
DefaultAzureCredential (the `refresh` extra), so the core install stays small; nothing else imports them.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, cast
from urllib.parse import urlsplit

from azure.core.credentials import TokenCredential
from azure.core.exceptions import AzureError, ClientAuthenticationError, HttpResponseError
from azure.mgmt.compute import ComputeManagementClient

from spotkube.clouds.aks import catalog
from spotkube.clouds.aks.options import AksCatalogRefresh
from spotkube.clouds.aks.usage_api import DEFAULT_ENDPOINT, SUBSCRIPTION_VARIABLES, environment_subscription
from spotkube.platform.catalog import (
    CatalogSourceError,
    CloudCatalog,
    Machine,
    MachineGpu,
)
from spotkube.platform.catalog_source import RefreshRequest, SourceResult
from spotkube.platform.errors import first_line

#: What the catalog says it was read from.
SOURCE = "Azure Resource SKUs API, as offered to the subscription it was read with"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def default_credential() -> TokenCredential:
    """Azure's usual chain: environment variables, workload identity, managed identity, the az CLI's
    sign-in, ... (azure-identity's DefaultAzureCredential)."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def read_skus(credential: TokenCredential, subscription: str, endpoint: str = DEFAULT_ENDPOINT,
              **client_options: Any) -> list[Any]:
    """Every SKU the Resource SKUs API lists for `subscription`, every page of it.

    Plain http is accepted only for a server on this machine (a test's or a proxy's): the SDK
    refuses to send a bearer token without TLS anywhere else, and so does spotkube.
    """
    parts = urlsplit(endpoint)
    if parts.scheme not in ("https", "http") or (parts.scheme == "http" and parts.hostname not in _LOOPBACK):
        raise CatalogSourceError(f"--azure-endpoint {endpoint}: use an https:// URL (http:// only for this machine)")
    client = ComputeManagementClient(credential, subscription, base_url=endpoint, **client_options)
    call: dict[str, Any] = {} if parts.scheme == "https" else {"enforce_https": False}
    try:
        return list(client.resource_skus.list(**call))
    except ClientAuthenticationError as err:
        raise CatalogSourceError(f"Azure refused the credentials ({first_line(err)}); sign in with `az login`, or set "
                                 "the AZURE_* variables of a service principal or workload identity") from None
    except HttpResponseError as err:
        raise CatalogSourceError(f"the Resource SKUs API at {endpoint} answered {err.status_code}: "
                                 f"{first_line(err)}") from None
    except AzureError as err:
        raise CatalogSourceError(f"could not read the Resource SKUs API at {endpoint}: {first_line(err)}") from None



def _text(value: Any) -> str:
    """A model field as text: the SDK gives enum members for known values, plain strings otherwise."""
    return str(getattr(value, "value", value))


def _capabilities(sku: Any) -> dict[str, str]:
    return {str(c.name): str(c.value) for c in sku.capabilities or () if c.name is not None}


def _number(text: str | None) -> Decimal | None:
    try:
        return Decimal(text) if text is not None else None
    except InvalidOperation:
        return None


def _offered_zones(sku: Any) -> dict[str, set[str]]:
    """Region -> zones the SKU entry offers, less the subscription's restrictions."""
    offered = {str(info.location).lower(): {str(z) for z in info.zones or ()} for info in sku.location_info or ()
               if info.location}
    for restriction in sku.restrictions or ():
        info = restriction.restriction_info
        regions = [str(r).lower() for r in (info.locations if info and info.locations else
                                            restriction.values_property or ())]
        for region in regions:
            if _text(restriction.type) == "Location":
                offered.pop(region, None)
            elif _text(restriction.type) == "Zone" and region in offered:
                offered[region] -= {str(z) for z in (info.zones if info else None) or ()}
    return offered


@dataclass
class AzureCatalog:
    """The AKS part of the catalog read from the API, and what the refresh should tell the user."""

    section: CloudCatalog
    #: Families without a neutral GPU name, kept under Azure's own name: family -> its sizes.
    unnamed: dict[str, list[str]] = field(default_factory=dict)
    #: GPU sizes left out because their GPUs are not NVIDIA's.
    not_nvidia: list[str] = field(default_factory=list)


def build_section(skus: Iterable[Any], today: datetime.date) -> AzureCatalog:
    """The AKS catalog part from the API's SKUs (ResourceSku models, one per size and region)."""
    machines: dict[str, dict[str, Any]] = {}
    regions: dict[str, set[str]] = {}
    cpu_series: set[str] = set()
    gpu_series: set[str] = set()
    unnamed: dict[str, list[str]] = {}
    not_nvidia: set[str] = set()
    for sku in skus:
        if _text(sku.resource_type) != "virtualMachines" or not sku.name:
            continue
        name = str(sku.name)
        for info in sku.location_info or ():
            if info.location:
                regions.setdefault(str(info.location).lower(), set()).update(str(z) for z in info.zones or ())
        capabilities = _capabilities(sku)
        gpus = _number(capabilities.get("GPUs"))
        size_series = catalog.series(name)
        if not gpus or gpus < 1:
            if size_series:
                cpu_series.add(size_series)
            continue
        if size_series:
            gpu_series.add(size_series)
        if not catalog.is_nvidia_size(name):
            not_nvidia.add(name)
            continue
        family = str(sku.family or name)
        entry = machines.setdefault(name, {"family": family, "capabilities": capabilities, "regions": {}})
        for region, zones in _offered_zones(sku).items():
            entry["regions"].setdefault(region, set()).update(zones)
        gpu_type = catalog.gpu_type_of_family(family)
        if gpu_type is None and name not in unnamed.setdefault(family, []):
            unnamed[family].append(name)
    built: dict[str, Machine] = {}
    for name, entry in sorted(machines.items()):
        capabilities, family = entry["capabilities"], entry["family"]
        vcpus, memory = _number(capabilities.get("vCPUs")), _number(capabilities.get("MemoryGB"))
        spot = capabilities.get("LowPriorityCapable")
        built[name] = Machine(
            gpu=MachineGpu(type=catalog.gpu_type_of_family(family) or catalog.own_gpu_name(family),
                           count=int(_number(capabilities["GPUs"]) or 0), share=catalog.GPU_SHARES.get(name)),
            vcpus=int(vcpus) if vcpus else None,
            memoryGb=memory if memory else None,
            spot=None if spot is None else spot.lower() == "true",
            family=family,
            regions={region: tuple(sorted(zones)) for region, zones in sorted(entry["regions"].items())},
        )
    section = CloudCatalog(
        date=today,
        source=SOURCE,
        regions={region: tuple(sorted(zones)) for region, zones in sorted(regions.items())},
        machines=built,
        cpuFamilies=tuple(sorted(cpu_series - gpu_series)),
    )
    return AzureCatalog(section, {f: sorted(s) for f, s in sorted(unnamed.items()) if s}, sorted(not_nvidia))


def fetch(subscription: str, *, credential: TokenCredential | None = None, endpoint: str = DEFAULT_ENDPOINT,
          today: datetime.date | None = None, **client_options: Any) -> AzureCatalog:
    """Read the API for `subscription` and build the AKS catalog part from it."""
    skus = read_skus(credential or default_credential(), subscription, endpoint, **client_options)
    if not any(_text(sku.resource_type) == "virtualMachines" for sku in skus):
        raise CatalogSourceError(f"the Resource SKUs API at {endpoint} listed no VM sizes for subscription "
                                 f"{subscription}; is it the right subscription?")
    return build_section(skus, today or datetime.datetime.now(datetime.UTC).date())


def refresh(request: RefreshRequest, known_gpus: Collection[str]) -> SourceResult:
    """The AKS part of the catalog for `spotkube catalog refresh`, with what to tell the user."""
    flags = cast(AksCatalogRefresh, request.options)
    subscription = flags.subscription or environment_subscription()
    if not subscription:
        raise CatalogSourceError("--cloud aks needs the Azure subscription to read the VM sizes with: give "
                                 f"--subscription ID, or set {' or '.join(SUBSCRIPTION_VARIABLES)} (as the workflows "
                                 "set it)")
    found = fetch(subscription, endpoint=flags.endpoint or DEFAULT_ENDPOINT, today=request.today)
    notes = [f"kept under Azure's own family name, since spotkube has no GPU name for it yet: "
             f"{catalog.own_gpu_name(family)} ({', '.join(sizes)})" for family, sizes in found.unnamed.items()]
    if found.not_nvidia:
        notes.append(f"left out, their GPUs are not NVIDIA's: {', '.join(found.not_nvidia)}")
    return SourceResult(found.section, {}, tuple(notes))
