"""`spotkube quota` against local servers on 127.0.0.1 that answer exactly as Azure's usage API and
Compute Engine's regions.get and projects.get do, through the clouds' own SDKs.

The answers are shaped like the real ones: Azure's `{"value": [{"unit", "currentValue", "limit",
"name": {"value", "localizedValue"}}], "nextLink"}` (azure-mgmt-compute 39's `Usage` model), ARM's
`{"error": {"code", "message"}}` on a refusal; Compute Engine's `compute#region` and
`compute#project` with `quotas: [{"metric", "limit", "usage"}]`, where a quota the project was never
given is simply absent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from in_process import run_spotkube_process

SpotkubeRun = Any  # tests/conftest.py's `spotkube` fixture: the command run as a subprocess


SUBSCRIPTION = "5a6b7c8d-0000-4000-8000-00000000beef"


class _Server(ThreadingHTTPServer):
    """Answers each path (without its query) from `answers`; records path, query and headers."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers: dict[str, tuple[int, Any]] = {}
        self.requests: list[tuple[str, dict[str, list[str]], dict[str, str]]] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        self.server.requests.append((parts.path, parse_qs(parts.query), dict(self.headers)))
        status, body = self.server.answers.get(parts.path, (404, {"error": {"code": "NotFound", "message": "no"}}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def usage(name: str, localized: str, limit: int, used: int) -> dict[str, Any]:
    return {"unit": "Count", "currentValue": used, "limit": limit, "name": {"value": name, "localizedValue": localized}}


def azure_usages(server: _Server, region: str, *items: dict[str, Any]) -> str:
    """Serves the region's usages over two pages, the second by an absolute nextLink, as ARM pages."""
    path = f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/locations/{region}/usages"
    second = f"{path}-page2"
    half = len(items) // 2
    server.answers[path] = (200, {"value": list(items[:half]),
                                  "nextLink": f"{server.endpoint}{second}?api-version=2026-04-01&$skiptoken=2"})
    server.answers[second] = (200, {"value": list(items[half:]), "nextLink": None})
    return path


#: aks-dev-uksouth at full scale: system and platform D4s_v3 at 3 nodes each plus one surge node each
#: (10 % rounded up) = 32 regular vCPUs; t4spot (4 x 4) and cpuspot (10 x 4) Spot vCPUs = 56.
DEV_REGULAR, DEV_SPOT = 32, 56


def test_a_short_spot_quota_fails_before_anything_is_created(server: _Server, spotkube: SpotkubeRun) -> None:
    path = azure_usages(server, "uksouth",
                        usage("cores", "Total Regional vCPUs", 100, 4),
                        usage("standardDSv3Family", "Standard DSv3 Family vCPUs", 100, 4),
                        usage("lowPriorityCores", "Total Regional Low-priority vCPUs", 20, 0),
                        usage("standardNCASv3_T4Family", "Standard NCASv3_T4 Family vCPUs", 0, 0))
    result = spotkube("quota", "--stack", "aks-dev-uksouth", "--endpoint", server.endpoint,
                      "--subscription", SUBSCRIPTION)
    assert result.returncode == 1, result.stdout + result.stderr
    need = "lowPriorityCores: needs 56 vCPUs (56 at full scale + 0 upgrade surge; pools cpuspot, t4spot)"
    assert need in result.stderr
    assert "limit 20, 0 in use: the limit is short by 36" in result.stderr
    assert "Traceback" not in result.stderr
    # the usage API exactly as azure-mgmt-compute 39 calls it, both pages, and no token over plain HTTP
    (first, query, _), (second, _, _) = server.requests[:2]
    assert first == path and query["api-version"] == ["2026-04-01"]
    assert second.endswith("-page2")
    assert not any(h.lower() == "authorization" for _, _, request_headers in server.requests for h in request_headers)
    # the family quota of the Spot T4s is not counted: Spot VMs count only against lowPriorityCores
    assert "standardNCASv3_T4Family" not in result.stdout


def test_enough_quota_passes_and_names_every_quota(server: _Server, spotkube: SpotkubeRun) -> None:
    azure_usages(server, "uksouth",
                 usage("cores", "Total Regional vCPUs", 100, 4),
                 usage("standardDSv3Family", "Standard DSv3 Family vCPUs", 40, 4),
                 usage("lowPriorityCores", "Total Regional Low-priority vCPUs", 100, 0))
    result = spotkube("quota", "-s", "aks-dev-uksouth", "--endpoint", server.endpoint, "--subscription",
                      SUBSCRIPTION, "--format", "json")
    assert result.returncode == 0, result.stderr
    (stack,) = json.loads(result.stdout)["stacks"]
    checks = {c["quota"]: c for c in stack["checks"]}
    assert {q: (c["need"], c["limit"], c["used"], c["verdict"]) for q, c in checks.items()} == {
        "cores": (DEV_REGULAR, 100, 4, "ok"),
        "standardDSv3Family": (DEV_REGULAR, 40, 4, "ok"),
        "lowPriorityCores": (DEV_SPOT, 100, 0, "ok"),
    }
    assert checks["cores"]["surge"] == 8 and stack["ok"]
    assert stack["where"] == f"subscription {SUBSCRIPTION}, region uksouth"


def test_a_need_that_fits_the_limit_but_not_today_is_reported_not_failed(server: _Server,
                                                                           spotkube: SpotkubeRun) -> None:
    azure_usages(server, "uksouth",
                 usage("cores", "Total Regional vCPUs", 40, 20),
                 usage("standardDSv3Family", "Standard DSv3 Family vCPUs", 40, 20),
                 usage("lowPriorityCores", "Total Regional Low-priority vCPUs", 100, 0))
    result = spotkube("quota", "-s", "aks-dev-uksouth", "--endpoint", server.endpoint, "--subscription",
                      SUBSCRIPTION, "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert "| cores | 32 vCPUs (8 surge) | 40 | 20 | tight now |" in result.stdout
    assert "only 20 free now" in result.stdout


def test_an_identity_without_the_right_gets_the_permission_it_lacks(server: _Server, spotkube: SpotkubeRun) -> None:
    path = f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/locations/uksouth/usages"
    server.answers[path] = (403, {"error": {"code": "AuthorizationFailed", "message": (
        "The client 'c0ffee00-0000-4000-8000-000000000001' with object id 'c0ffee00-0000-4000-8000-000000000001' "
        "does not have authorization to perform action 'Microsoft.Compute/locations/usages/read' over scope "
        f"'/subscriptions/{SUBSCRIPTION}' or the scope is invalid.")}})
    result = spotkube("quota", "-s", "aks-dev-uksouth", "--endpoint", server.endpoint, "--subscription", SUBSCRIPTION)
    assert result.returncode == 2
    assert "Azure answered 403" in result.stderr and "Microsoft.Compute/locations/usages/read" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_subscription_must_be_named(spotkube: SpotkubeRun, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID"):
        monkeypatch.delenv(name, raising=False)
    result = spotkube("quota", "-s", "aks-dev-uksouth", "--endpoint", "http://127.0.0.1:9")
    assert result.returncode == 2 and "--subscription" in result.stderr and "ARM_SUBSCRIPTION_ID" in result.stderr


def test_a_size_outside_the_table_gets_its_family_from_the_sku_api(
    server: _Server, spotkube: SpotkubeRun, tmp_path: Path, project_with_stack: Any
) -> None:
    project_with_stack("aks-dev-westeurope", {
        "cloud": "aks", "environment": "dev", "region": "westeurope",
        "systemPool": {"machine": "Standard_E8s_v5", "min": 1, "max": 2},
        "platformPool": {"machine": "Standard_E8s_v5", "min": 1, "max": 2},
        "kubeflow": {"enabled": False},
        "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001",
                                 "principalType": "ServicePrincipal"}},
    })
    azure_usages(server, "westeurope",
                 usage("cores", "Total Regional vCPUs", 100, 0),
                 usage("standardESv5Family", "Standard ESv5 Family vCPUs", 16, 0),
                 usage("lowPriorityCores", "Total Regional Low-priority vCPUs", 100, 0))
    skus = f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/skus"
    server.answers[skus] = (200, {"value": [
        {"resourceType": "virtualMachines", "name": "Standard_E8s_v5", "tier": "Standard", "size": "E8s_v5",
         "family": "standardESv5Family", "locations": ["westeurope"],
         "locationInfo": [{"location": "westeurope", "zones": ["1", "2", "3"], "zoneDetails": []}],
         "capabilities": [{"name": "vCPUs", "value": "8"}, {"name": "MemoryGB", "value": "64"}], "restrictions": []},
        {"resourceType": "disks", "name": "Premium_LRS", "tier": "Premium", "locations": ["westeurope"],
         "capabilities": [], "restrictions": []},
    ]})
    result = spotkube("quota", "-s", "aks-dev-westeurope", "--endpoint", server.endpoint, "--subscription",
                      SUBSCRIPTION, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    # 2 pools x 2 nodes x 8 vCPUs + 1 surge node each: 48, against a family limit of 16
    assert "standardESv5Family: needs 48 vCPUs" in result.stderr and "limit 16" in result.stderr
    sku_requests = [q for p, q, _ in server.requests if p == skus]
    assert sku_requests == [{"api-version": ["2021-07-01"], "$filter": ["location eq 'westeurope'"]}]


def gcp_quota(metric: str, limit: float, used: float) -> dict[str, Any]:
    return {"metric": metric, "limit": limit, "usage": used}


def test_gke_quotas_fall_back_as_compute_engine_counts_them(server: _Server, spotkube: SpotkubeRun) -> None:
    """gke-prod-europe-west4: no A2_CPUS quota listed, so A2 vCPUs count against CPUS; PREEMPTIBLE_CPUS
    at 0 means unset, so Spot and preemptible vCPUs count there too; a project with no GPU quota at all
    (GPUS_ALL_REGIONS 0, as a new project has) fails."""
    project, region = "spotkube-prod-example", "europe-west4"
    base = f"https://www.googleapis.com/compute/v1/projects/{project}"
    server.answers[f"/compute/v1/projects/{project}/regions/{region}"] = (200, {
        "kind": "compute#region", "id": "1100", "name": region, "status": "UP", "selfLink": f"{base}/regions/{region}",
        "quotas": [gcp_quota("CPUS", 500, 10), gcp_quota("E2_CPUS", 100, 0), gcp_quota("PREEMPTIBLE_CPUS", 0, 0),
                   gcp_quota("NVIDIA_A100_GPUS", 16, 0), gcp_quota("PREEMPTIBLE_NVIDIA_A100_GPUS", 16, 0),
                   gcp_quota("NVIDIA_T4_GPUS", 8, 0)]})
    server.answers[f"/compute/v1/projects/{project}"] = (200, {
        "kind": "compute#project", "id": "4242", "name": project, "selfLink": base,
        "quotas": [gcp_quota("CPUS_ALL_REGIONS", 1000, 10), gcp_quota("GPUS_ALL_REGIONS", 0, 0)]})
    # Google's client libraries in a process of their own (tests/in_process.py says why).
    result = run_spotkube_process("quota", "-s", "gke-prod-europe-west4", "--endpoint", server.endpoint,
                                  "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    (stack,) = json.loads(result.stdout)["stacks"]
    checks = {c["quota"]: (c["need"], c["verdict"]) for c in stack["checks"]}
    # a100-ondemand 3 x 12 = 36 (12 surge), a100-spot 9 x 12 = 108 (12 surge), t4-preemptible 5 x 8 = 40 (8 surge),
    # a100-flex 4 x 12 = 48: flex-start counts against the preemptible quotas, and its short-lived upgrades add no surge
    assert checks == {
        "E2_CPUS": (52, "ok"), "CPUS": (232, "ok"), "CPUS_ALL_REGIONS": (284, "ok"),
        "NVIDIA_A100_GPUS": (3, "ok"), "PREEMPTIBLE_NVIDIA_A100_GPUS": (13, "ok"),
        "NVIDIA_T4_GPUS": (5, "ok"), "GPUS_ALL_REGIONS": (21, "short"),
    }
    assert "GPUS_ALL_REGIONS: needs 21 GPUs (18 at full scale + 3 upgrade surge" in result.stderr
    assert "limit 0, 0 in use: the limit is short by 21" in result.stderr
    assert {p for p, _, _ in server.requests} == {f"/compute/v1/projects/{project}/regions/{region}",
                                                  f"/compute/v1/projects/{project}"}
    assert not any(h.lower() == "authorization" for _, _, headers in server.requests for h in headers)


def test_every_shipped_stack_plans_its_quota_need(spotkube: SpotkubeRun) -> None:
    """The plan states the need with no cloud at all; aks-prod-eastus counted by hand: system 5 x D4s_v3
    (+1 surge), platform 6 x D8s_v3 (+1), a100ondemand 2 x NC24ads (+1) regular; a100spot 8 x 24 Spot."""
    result = spotkube("plan", "--all", "--format", "json")
    assert result.returncode == 0, result.stderr
    stacks = {s["stack"]: s for s in json.loads(result.stdout)["stacks"]}
    for name, stack in stacks.items():
        assert stack["quota"]["needs"], f"{name} states no quota"
        assert "surge" in stack["quota"]["surge"]
    needs = {n["quota"]: (n["fullScale"], n["surge"]) for n in stacks["aks-prod-eastus"]["quota"]["needs"]}
    assert needs == {"cores": (116, 36), "standardDSv3Family": (68, 12), "standardNCADSA100v4Family": (48, 24),
                     "lowPriorityCores": (192, 0)}
    l4 = {n["quota"]: n for n in stacks["gke-dev-us-central1"]["quota"]["needs"]}
    assert (l4["PREEMPTIBLE_NVIDIA_L4_GPUS"]["need"], l4["PREEMPTIBLE_NVIDIA_L4_GPUS"]["fallbacks"]) == (
        5, ["NVIDIA_L4_GPUS"])


def test_without_credentials_azure_s_sign_in_failure_is_one_line(
    spotkube: SpotkubeRun, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No credential anywhere: azure-identity logs the whole chain it tried (a dozen lines) as a
    warning; the user, and the pull request comment preview.yml writes, get spotkube's one line."""
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE",
                 "MSI_ENDPOINT", "MSI_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no az CLI or VS Code sign-in of the developer's
    # Managed identity asks this machine's closed port instead of the cloud's metadata address.
    monkeypatch.setenv("IDENTITY_ENDPOINT", "http://127.0.0.1:9/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", "unused")
    result = spotkube("quota", "-s", "aks-dev-uksouth", "--subscription", SUBSCRIPTION,
                      "--endpoint", "https://127.0.0.1:9")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: could not sign in to Azure to read the quota of subscription "
                               f"{SUBSCRIPTION}, region uksouth: DefaultAzureCredential failed"), lines[0]
    assert "az login" in lines[0]
    assert "Attempted credentials" not in result.stderr + result.stdout


def test_the_plan_takes_each_gpu_size_s_quota_family_from_the_catalog(
    spotkube: SpotkubeRun, tmp_path: Path, project_with_stack: Any
) -> None:
    """The catalog's `family` (as the Resource SKUs API writes it) is the size's quota, named as the usage
    API names it; no second table of families to fall behind the catalog."""
    sizes = {"a100m": "Standard_ND96amsr_A100_v4", "a100": "Standard_ND96asr_v4", "h200": "Standard_ND96isr_H200_v5"}
    project_with_stack("aks-dev-westus2", {
        "cloud": "aks", "environment": "dev", "region": "westus2",
        "gpuPools": [{"name": name, "machine": machine, "capacity": "on-demand", "min": 0, "max": 1}
                     for name, machine in sizes.items()],
        "kubeflow": {"enabled": False},
        "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001",
                                 "principalType": "ServicePrincipal"}},
    })
    result = spotkube("plan", "-s", "aks-dev-westus2", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (stack,) = json.loads(result.stdout)["stacks"]
    families = {n["quota"]: n["pools"] for n in stack["quota"]["needs"] if n["quota"].endswith("Family")}
    assert families == {"standardDSv3Family": ["system", "platform"], "standardNDAMSv4_A100Family": ["a100m"],
                        "standardNDASv4_A100Family": ["a100"], "standardNDISRH200V5Family": ["h200"]}
    assert not any("quota family" in note for note in stack["quota"]["notes"])
