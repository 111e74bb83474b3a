"""Local stand-ins, on 127.0.0.1, for the cloud APIs `spotkube catalog refresh` reads, answering as the
real ones do, and for the credential endpoints the clouds' SDKs sign in with.

- Azure Resource Manager's Resource SKUs list (`GET /subscriptions/{id}/providers/Microsoft.Compute/
  skus?api-version=2021-07-01`): one entry per size and region, capabilities as `{name, value}`
  strings, `locationInfo` zones, `restrictions` (`Location` / `Zone`, reasonCode
  NotAvailableForSubscription), pages chained by an absolute `nextLink` with a `$skiptoken`, ARM's
  `{"error": {"code", "message"}}` body on failure. Shapes: azure-mgmt-compute's ResourceSku model
  and the SKUs Azure/karpenter-provider-azure generated from the real API (pkg/fake/zz_generated.sku.*).
- Compute Engine's aggregated machine types and accelerator types (`GET /compute/v1/projects/{p}/
  aggregated/{machineTypes,acceleratorTypes}`): `items` keyed by `zones/<zone>`, every scope on every
  page, the ones without items on that page carrying a `NO_RESULTS_ON_PAGE` warning, pages chained by
  `nextPageToken`, int64 fields as strings. Shapes: google-cloud-compute's MachineType and
  AcceleratorType messages.
- App Service's managed identity endpoint (`IDENTITY_ENDPOINT` + `IDENTITY_HEADER`), which
  azure-identity's DefaultAzureCredential uses, and the GCE metadata server (`GCE_METADATA_HOST`),
  which google-auth's Application Default Credentials use: so the CLI signs in as it would on a
  runner, without a stub.

The catalog data they serve is built from spotkube's shipped catalog (`azure_skus`, `gcp_types`), so a
refresh against them must give back today's accepted sizes.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from spotkube.platform.catalog import CloudCatalog

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
PROJECT = "acme-ml-catalog"
AZURE_TOKEN = "azure-token-from-managed-identity"
GCP_TOKEN = "gcp-token-from-metadata-server"
IDENTITY_HEADER = "identity-header-secret"
_GOOGLE = "https://www.googleapis.com/compute/v1"

#: Azure regions the fake Resource SKUs API offers every size in, with their zones.
AZURE_REGIONS: dict[str, tuple[str, ...]] = {
    "eastus": ("1", "2", "3"),
    "westeurope": ("1", "2", "3"),
    "uksouth": ("1", "2", "3"),
    "swedencentral": ("1", "2", "3"),
    "westcentralus": (),
}


@dataclass(frozen=True)
class Request:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class CloudApis:
    """What the server serves, what it was asked, and how to fail on purpose."""

    azure_skus: list[dict[str, Any]] = field(default_factory=list)
    gcp_machine_types: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    gcp_accelerator_types: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Items per page (Azure entries, Compute Engine items).
    page_size: int = 25
    #: Path prefix -> (status, body) to answer instead, e.g. an expired token.
    failures: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    port: int = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def asked(self, prefix: str) -> list[Request]:
        return [r for r in self.requests if r.path.startswith(prefix)]

    def sign_in_environment(self) -> dict[str, str]:
        """The variables that point Azure's managed identity and Google's metadata server here."""
        host = f"127.0.0.1:{self.port}"
        return {"IDENTITY_ENDPOINT": f"{self.endpoint}/msi/token", "IDENTITY_HEADER": IDENTITY_HEADER,
                "GCE_METADATA_HOST": host, "GCE_METADATA_IP": host}


def _page(items: Sequence[Any], token: str | None, size: int) -> tuple[Sequence[Any], str | None]:
    start = int(token or 0)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output clean."""

    def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(body, bytes) else "application/text")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        apis = self.server.apis
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        apis.requests.append(Request(url.path, query, {k.lower(): v for k, v in self.headers.items()}))
        for prefix, (status, body) in apis.failures.items():
            if url.path.startswith(prefix):
                return self._send(status, body)
        if url.path == "/msi/token":
            return self._azure_token(query)
        if url.path == "/" or url.path.startswith("/computeMetadata/"):
            return self._metadata(url.path)
        if url.path == f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/skus":
            return self._skus(query)
        if url.path == f"/compute/v1/projects/{PROJECT}/aggregated/machineTypes":
            return self._aggregated(query, "machineTypes", apis.gcp_machine_types)
        if url.path == f"/compute/v1/projects/{PROJECT}/aggregated/acceleratorTypes":
            return self._aggregated(query, "acceleratorTypes", apis.gcp_accelerator_types)
        return self._send(404, {"error": {"code": "NotFound", "message": f"no route for {url.path}"}})

    def _azure_token(self, query: dict[str, list[str]]) -> None:
        if self.headers.get("X-IDENTITY-HEADER") != IDENTITY_HEADER:
            return self._send(401, {"error": "unauthorized"})
        return self._send(200, {"access_token": AZURE_TOKEN, "expires_on": str(int(time.time()) + 3600),
                                "resource": query.get("resource", [""])[0], "token_type": "Bearer"})

    def _metadata(self, path: str) -> None:
        flavor = {"Metadata-Flavor": "Google"}
        if path == "/":
            return self._send(200, b"", flavor)
        if path == "/computeMetadata/v1/project/project-id":
            return self._send(200, PROJECT.encode(), flavor)
        if path == "/computeMetadata/v1/instance/service-accounts/default/token":
            return self._send(200, {"access_token": GCP_TOKEN, "expires_in": 3599, "token_type": "Bearer"}, flavor)
        if path == "/computeMetadata/v1/instance/service-accounts/default/":
            return self._send(200, {"aliases": ["default"], "email": f"runner@{PROJECT}.iam.gserviceaccount.com",
                                    "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}, flavor)
        return self._send(404, b"not found", flavor)

    def _skus(self, query: dict[str, list[str]]) -> None:
        apis = self.server.apis
        if not self.headers.get("Authorization", "").startswith("Bearer "):
            missing = "Authentication failed. The 'Authorization' header is missing."
            return self._send(401, {"error": {"code": "AuthenticationFailed", "message": missing}})
        items, following = _page(apis.azure_skus, query.get("$skiptoken", [None])[0], apis.page_size)
        body: dict[str, Any] = {"value": list(items)}
        if following is not None:
            body["nextLink"] = (f"{apis.endpoint}/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/skus"
                                f"?api-version=2021-07-01&$skiptoken={following}")
        return self._send(200, body)

    def _aggregated(self, query: dict[str, list[str]], key: str, by_zone: Mapping[str, list[dict[str, Any]]]) -> None:
        apis = self.server.apis
        flat = [(zone, item) for zone, zone_items in by_zone.items() for item in zone_items]
        items, following = _page(flat, query.get("pageToken", [None])[0], apis.page_size)
        scopes: dict[str, Any] = {}
        for zone in by_zone:
            here = [item for z, item in items if z == zone]
            scopes[f"zones/{zone}"] = {key: here} if here else {"warning": {
                "code": "NO_RESULTS_ON_PAGE",
                "message": f"There are no results for scope 'zones/{zone}' on this page.",
                "data": [{"key": "scope", "value": f"zones/{zone}"}]}}
        kind = "machineType" if key == "machineTypes" else "acceleratorType"
        body: dict[str, Any] = {"kind": f"compute#{kind}AggregatedList", "id": f"projects/{PROJECT}/aggregated/{key}",
                                "items": scopes, "selfLink": f"{_GOOGLE}/projects/{PROJECT}/aggregated/{key}"}
        if following is not None:
            body["nextPageToken"] = following
        return self._send(200, body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, apis: CloudApis) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.apis = apis


@contextmanager
def serving(apis: CloudApis) -> Iterator[CloudApis]:
    """Serve `apis` on 127.0.0.1 for the duration of the block."""
    server = _Server(apis)
    apis.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield apis
    finally:
        server.shutdown()
        server.server_close()


# --- The data, from the shipped catalog --------------------------------------------------------------


def azure_sku(name: str, family: str, region: str, zones: Sequence[str], capabilities: Mapping[str, str],
              restrictions: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """One Resource SKUs entry: a VM size in one region, as the unfiltered list gives it."""
    return {
        "resourceType": "virtualMachines",
        "name": name,
        "tier": "Standard",
        "size": name.removeprefix("Standard_"),
        "family": family,
        "locations": [region],
        "locationInfo": [{"location": region, "zones": list(zones), "zoneDetails": []}],
        "capabilities": [{"name": key, "value": value} for key, value in capabilities.items()],
        "restrictions": list(restrictions),
    }


def location_restriction(region: str) -> dict[str, Any]:
    return {"type": "Location", "values": [region], "restrictionInfo": {"locations": [region]},
            "reasonCode": "NotAvailableForSubscription"}


def zone_restriction(region: str, zones: Sequence[str]) -> dict[str, Any]:
    return {"type": "Zone", "values": [region], "restrictionInfo": {"locations": [region], "zones": list(zones)},
            "reasonCode": "NotAvailableForSubscription"}


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def azure_skus(section: CloudCatalog, regions: Mapping[str, Sequence[str]] = AZURE_REGIONS) -> list[dict[str, Any]]:
    """Every GPU size of the AKS catalog part in every region of `regions`, as the API lists them (the
    partitioned A10 sizes report GPUs "1"), plus CPU sizes and a disk SKU the refresh must skip."""
    skus = []
    for region, zones in regions.items():
        for name, machine in section.machines.items():
            skus.append(azure_sku(name, machine.family or "", region, zones, {
                "MaxResourceVolumeMB": "0", "vCPUs": _number(machine.vcpus), "MemoryGB": _number(machine.memory_gb),
                "GPUs": str(machine.gpu.count), "LowPriorityCapable": "True", "HyperVGenerations": "V2",
                "CpuArchitectureType": "x64", "vCPUsAvailable": _number(machine.vcpus), "RdmaEnabled": "False"}))
        for name, family, vcpus, memory in (("Standard_D4s_v3", "standardDSv3Family", "4", "16"),
                                            ("Standard_E8ds_v5", "standardEDSv5Family", "8", "64"),
                                            ("Standard_NP10s", "standardNPSFamily", "10", "168")):
            skus.append(azure_sku(name, family, region, zones, {
                "vCPUs": vcpus, "MemoryGB": memory, "LowPriorityCapable": "True", "HyperVGenerations": "V1,V2"}))
        skus.append({"resourceType": "disks", "name": "Premium_LRS", "tier": "Premium", "size": "P1", "kind": "Disks",
                     "locations": [region], "locationInfo": [{"location": region, "zones": list(zones)}],
                     "capabilities": [{"name": "MaxSizeGiB", "value": "4"}], "restrictions": []})
    return skus


def gcp_machine_type(name: str, zone: str, vcpus: int, memory_mb: int, accelerator: tuple[str, int] | None = None,
                     deprecated: str | None = None) -> dict[str, Any]:
    """One Compute Engine machine type in one zone."""
    item: dict[str, Any] = {
        "kind": "compute#machineType", "id": str(abs(hash(name)) % 10**12), "creationTimestamp":
        "1969-12-31T16:00:00.000-08:00", "name": name, "description": f"{vcpus} vCPUs, {memory_mb // 1024} GB RAM",
        "guestCpus": vcpus, "memoryMb": memory_mb, "imageSpaceGb": 0, "maximumPersistentDisks": 128,
        "maximumPersistentDisksSizeGb": "263168", "zone": zone, "isSharedCpu": False,
        "selfLink": f"{_GOOGLE}/projects/{PROJECT}/zones/{zone}/machineTypes/{name}",
    }
    if accelerator is not None:
        item["accelerators"] = [{"guestAcceleratorType": accelerator[0], "guestAcceleratorCount": accelerator[1]}]
    if deprecated is not None:
        item["deprecated"] = {"state": deprecated, "replacement": f"{_GOOGLE}/projects/{PROJECT}/zones/{zone}/"
                              "machineTypes/a2-highgpu-1g"}
    return item


def gcp_accelerator_type(name: str, zone: str, description: str, most: int) -> dict[str, Any]:
    """One Compute Engine accelerator type in one zone (its `zone` a URL, as the API writes it)."""
    return {"kind": "compute#acceleratorType", "id": str(abs(hash(name)) % 10**6), "creationTimestamp":
            "1969-12-31T16:00:00.000-08:00", "name": name, "description": description,
            "zone": f"{_GOOGLE}/projects/{PROJECT}/zones/{zone}", "maximumCardsPerInstance": most,
            "selfLink": f"{_GOOGLE}/projects/{PROJECT}/zones/{zone}/acceleratorTypes/{name}"}


def gcp_types(section: CloudCatalog, descriptions: Mapping[str, str]) -> tuple[
        dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Compute Engine's machine types and accelerator types per zone from the GKE catalog part: every GPU
    machine and GPU type in its zones, and CPU types (e2, N1) in every zone, so each region is whole."""
    zones: set[str] = {z for region_zones in section.regions.values() for z in region_zones}
    for machine in section.machines.values():
        zones |= {z for region_zones in machine.regions.values() for z in region_zones or ()}
    for accelerator in section.accelerators.values():
        zones |= {z for region_zones in accelerator.regions.values() for z in region_zones}
    machine_types: dict[str, list[dict[str, Any]]] = {}
    accelerator_types: dict[str, list[dict[str, Any]]] = {}
    for zone in sorted(zones):
        region = zone.rsplit("-", 1)[0]
        items = [gcp_machine_type("e2-standard-4", zone, 4, 16384), gcp_machine_type("n1-standard-8", zone, 8, 30720)]
        for name, machine in section.machines.items():
            if zone in (machine.regions.get(region) or ()):
                items.append(gcp_machine_type(name, zone, machine.vcpus or 1, int((machine.memory_gb or 1) * 1024),
                                              (machine.gpu.type, machine.gpu.count)))
        machine_types[zone] = items
        accelerator_types[zone] = [
            gcp_accelerator_type(name, zone, descriptions.get(name, name), accelerator.max_per_machine or 8)
            for name, accelerator in section.accelerators.items() if zone in accelerator.regions.get(region, ())]
    return machine_types, accelerator_types
