"""`spotkube doctor` against local servers on 127.0.0.1 shaped like the real APIs, as a user runs it.

Azure Resource Manager: `GET /subscriptions/{id}/providers` (`value[].namespace`, `registrationState`),
role assignments filtered by `assignedTo('{objectId}')` (`properties.scope`, `roleDefinitionId`), role
definitions (`properties.roleName`, `type`, `permissions[]`), the Resource SKUs list with its
`restrictions`, and the compute usages `spotkube quota` reads. Google Cloud: Service Usage's enabled
services (`services[].config.name`), Resource Manager's getIamPolicy (a POST, `bindings[]`), IAM's
roles.get (`includedPermissions`), Compute Engine's machine and accelerator types per zone (404 when a
zone lacks one), and regions.get / projects.get for the quota.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from fake_http import FakeServer, Reply, Request, serving
from in_process import run_spotkube, run_spotkube_process

REPO = Path(__file__).resolve().parents[2]
SPOTKUBE = str(Path(sys.executable).with_name("spotkube"))
SUBSCRIPTION = "5a6b7c8d-0000-4000-8000-00000000beef"
GROUP = "spotkube-aks-prod-eastus"
DEPLOYER = "11111111-2222-4333-8444-555555555555"
PREVIEW = "22222222-3333-4444-8555-666666666666"
PROJECT = "spotkube-prod-example"
GKE_DEPLOYER = f"spotkube-deploy@{PROJECT}.iam.gserviceaccount.com"
GKE_PREVIEW = f"spotkube-preview@{PROJECT}.iam.gserviceaccount.com"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`spotkube doctor ARGS` in this process (tests/in_process.py); the credential tests below start their
    own, whose environment is all they have."""
    return run_spotkube("doctor", *args, env=env)


# --- Azure, as ARM answers -----------------------------------------------------------------------

ROLES: dict[str, tuple[str, str, dict[str, list[str]]]] = {
    # name -> (GUID, type, permissions), as `GET .../roleDefinitions/{id}` lists them
    "Contributor": ("b24988ac-6180-42a0-ab88-20f7382dd24c", "BuiltInRole", {
        "actions": ["*"], "notActions": ["Microsoft.Authorization/*/Delete", "Microsoft.Authorization/*/Write",
                                         "Microsoft.Authorization/elevateAccess/Action",
                                         "Microsoft.Blueprint/blueprintAssignments/write",
                                         "Microsoft.Blueprint/blueprintAssignments/delete",
                                         "Microsoft.Compute/galleries/share/action"],
        "dataActions": [], "notDataActions": []}),
    "Role Based Access Control Administrator": ("f58310d9-a9f6-439a-9e8d-f62e7b41a168", "BuiltInRole", {
        "actions": ["Microsoft.Authorization/roleAssignments/write", "Microsoft.Authorization/roleAssignments/delete",
                    "*/read", "Microsoft.Support/*"], "notActions": [], "dataActions": [], "notDataActions": []}),
    "Reader": ("acdd72a7-3385-48ef-bd42-f606fba81ae7", "BuiltInRole", {
        "actions": ["*/read"], "notActions": [], "dataActions": [], "notDataActions": []}),
    "Storage Blob Data Contributor": ("ba92f5b4-2d11-453d-a403-e96b0029c9fe", "BuiltInRole", {
        "actions": ["Microsoft.Storage/storageAccounts/blobServices/containers/delete",
                    "Microsoft.Storage/storageAccounts/blobServices/containers/read",
                    "Microsoft.Storage/storageAccounts/blobServices/containers/write",
                    "Microsoft.Storage/storageAccounts/blobServices/generateUserDelegationKey/action"],
        "notActions": [], "notDataActions": [], "dataActions": [
            "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/delete",
            "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read",
            "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write",
            "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/move/action",
            "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/add/action"]}),
    "Storage Blob Data Reader": ("2a2b9908-6ea1-4ae2-8e65-a410df84e7d1", "BuiltInRole", {
        "actions": ["Microsoft.Storage/storageAccounts/blobServices/containers/read",
                    "Microsoft.Storage/storageAccounts/blobServices/generateUserDelegationKey/action"],
        "notActions": [], "notDataActions": [],
        "dataActions": ["Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read"]}),
    "spotkube quota reader": ("9d3c1a2b-0000-4000-8000-0000000000aa", "CustomRole", {
        "actions": ["Microsoft.Compute/locations/usages/read", "Microsoft.Compute/skus/read"], "notActions": [],
        "dataActions": [], "notDataActions": []}),
}


def definition_id(role: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Authorization/roleDefinitions/{ROLES[role][0]}"


def assignment(principal: str, role: str, scope: str) -> dict[str, Any]:
    return {"id": f"{scope}/providers/Microsoft.Authorization/roleAssignments/{abs(hash((principal, role))):x}",
            "type": "Microsoft.Authorization/roleAssignments", "name": f"{abs(hash((principal, role))):x}",
            "properties": {"roleDefinitionId": definition_id(role), "principalId": principal,
                           "principalType": "ServicePrincipal", "scope": scope, "condition": None,
                           "createdOn": "2026-11-20T10:00:00.0000000Z"}}


SUB_SCOPE = f"/subscriptions/{SUBSCRIPTION}"
GROUP_SCOPE = f"{SUB_SCOPE}/resourceGroups/{GROUP}"
#: The registry aks-prod-eastus names (cluster.registries), whose owner grants the CI identities there.
STATE_ACCOUNT = f"{SUB_SCOPE}/resourceGroups/spotkube-ci/providers/Microsoft.Storage/storageAccounts/spotkubestate"
STATE_CONTAINER = f"{STATE_ACCOUNT}/blobServices/default/containers/spotkube-state-aks-prod-eastus"
REGISTRY_SCOPE = ("/subscriptions/11111111-2222-4333-8444-555555555555/resourceGroups/spotkube-images/providers/"
                  "Microsoft.ContainerRegistry/registries/spotkubeimages")


def sku(name: str, region: str, restrictions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"resourceType": "virtualMachines", "name": name, "tier": "Standard", "size": name[9:],
            "family": "standardDSv3Family", "locations": [region],
            "locationInfo": [{"location": region, "zones": ["1", "2", "3"], "zoneDetails": []}],
            "capabilities": [{"name": "vCPUs", "value": "4"}], "restrictions": restrictions or []}


def usage(name: str, limit: int) -> dict[str, Any]:
    return {"unit": "Count", "currentValue": 0, "limit": limit, "name": {"value": name, "localizedValue": name}}


class Arm:
    """What the fake ARM serves; a test edits it before running doctor."""

    def __init__(self) -> None:
        self.providers = {"Microsoft.ContainerService": "Registered", "Microsoft.Compute": "Registered",
                          "Microsoft.OperationalInsights": "Registered", "Microsoft.Insights": "NotRegistered",
                          "Microsoft.Network": "Registered", "Microsoft.Resources": "Registered",
                          "Microsoft.ManagedIdentity": "Registered", "Microsoft.Storage": "Registered"}
        self.assignments = {
            DEPLOYER: [assignment(DEPLOYER, "Contributor", GROUP_SCOPE),
                       assignment(DEPLOYER, "Role Based Access Control Administrator", GROUP_SCOPE),
                       assignment(DEPLOYER, "spotkube quota reader", SUB_SCOPE),
                       assignment(DEPLOYER, "Role Based Access Control Administrator", REGISTRY_SCOPE),
                       # an assignment on another group is no use to this stack
                       assignment(DEPLOYER, "Contributor", f"{SUB_SCOPE}/resourceGroups/someone-elses")],
            PREVIEW: [assignment(PREVIEW, "Reader", GROUP_SCOPE), assignment(PREVIEW, "Reader", REGISTRY_SCOPE)],
        }
        self.forbidden: set[str] = set()
        #: The role assignments reaching the state container (`atScope()`: at it and above).
        self.container_assignments = [
            assignment(DEPLOYER, "Storage Blob Data Contributor", STATE_CONTAINER),
            assignment(PREVIEW, "Storage Blob Data Reader", STATE_CONTAINER),
            assignment(DEPLOYER, "Contributor", f"{SUB_SCOPE}/resourceGroups/spotkube-ci")]
        self.skus = [sku("Standard_D4s_v3", "eastus"), sku("Standard_D8s_v3", "eastus"),
                     sku("Standard_NC24ads_A100_v4", "eastus", [{
                         "type": "Location", "values": ["eastus"], "restrictionInfo": {"locations": ["eastus"]},
                         "reasonCode": "NotAvailableForSubscription"}])]

    def respond(self, request: Request) -> Reply:
        path = urlsplit(request.path).path
        query = request.query
        if path == f"{SUB_SCOPE}/providers":
            assert query["api-version"] == ["2021-04-01"]
            return Reply(body={"value": [{"id": f"{SUB_SCOPE}/providers/{n}", "namespace": n, "registrationState": s,
                                          "registrationPolicy": "RegistrationRequired", "resourceTypes": []}
                                         for n, s in self.providers.items()]})
        if path == f"{SUB_SCOPE}/providers/Microsoft.Authorization/roleAssignments":
            principal = query["$filter"][0].removeprefix("assignedTo('").removesuffix("')")
            if principal in self.forbidden:
                return Reply(403, {"error": {"code": "AuthorizationFailed", "message": (
                    f"The client '{DEPLOYER}' does not have authorization to perform action "
                    f"'Microsoft.Authorization/roleAssignments/read' over scope '{SUB_SCOPE}'.")}})
            return Reply(body={"value": self.assignments.get(principal, [])})
        if path == f"{SUB_SCOPE}/providers/Microsoft.Storage/storageAccounts":
            assert query["api-version"] == ["2023-05-01"]
            return Reply(body={"value": [{"id": STATE_ACCOUNT, "name": "spotkubestate", "type":
                                          "Microsoft.Storage/storageAccounts", "location": "uksouth",
                                          "kind": "StorageV2", "sku": {"name": "Standard_ZRS", "tier": "Standard"},
                                          "properties": {"allowSharedKeyAccess": False,
                                                         "minimumTlsVersion": "TLS1_2"}}]})
        if path == f"{STATE_CONTAINER}/providers/Microsoft.Authorization/roleAssignments":
            assert query["$filter"] == ["atScope()"]
            return Reply(body={"value": self.container_assignments})
        for role, (guid, kind, permissions) in ROLES.items():
            if path == definition_id(role):
                return Reply(body={"id": path, "type": "Microsoft.Authorization/roleDefinitions", "name": guid,
                                   "properties": {"roleName": role, "type": kind, "description": role,
                                                  "assignableScopes": ["/"], "permissions": [permissions]}})
        if path == f"{SUB_SCOPE}/providers/Microsoft.Compute/skus":
            return Reply(body={"value": self.skus})
        if path == f"{SUB_SCOPE}/providers/Microsoft.Compute/locations/eastus/usages":
            return Reply(body={"value": [usage("cores", 1000), usage("standardDSv3Family", 1000),
                                         usage("standardNCADSA100v4Family", 1000), usage("lowPriorityCores", 1000)]})
        return Reply(404, {"error": {"code": "NotFound", "message": f"no route for {path}"}})


@pytest.fixture
def arm() -> Iterator[tuple[FakeServer, Arm]]:
    state = Arm()
    with serving() as server:
        server.respond = state.respond
        yield server, state


def aks(server: FakeServer, *extra: str) -> subprocess.CompletedProcess[str]:
    return run("--stack", "aks-prod-eastus", "--endpoint", server.url(), "--subscription", SUBSCRIPTION, *extra)


def test_aks_names_each_missing_item_with_the_command_that_fixes_it(arm: tuple[FakeServer, Arm]) -> None:
    server, _ = arm
    result = aks(server, "--preview", PREVIEW)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"stack aks-prod-eastus (subscription {SUBSCRIPTION}, region eastus)"
    assert ("  FAIL apis: Microsoft.Insights is not registered; fix: az provider register --namespace "
            f"Microsoft.Insights --subscription {SUBSCRIPTION} --wait") in lines
    assert "  ok   apis: Microsoft.ContainerService registered" in lines
    assert any(line.startswith(f"  ok   roles: deploy identity {DEPLOYER} can make every call") for line in lines)
    preview = [line for line in lines if line.startswith("  FAIL roles: preview")]
    # Reader on the group reads the resources, but not the cluster's kubeconfig nor its Kubernetes objects
    assert any("lacks Azure Kubernetes Service Cluster User Role on the resource group" in line
               and "listClusterUserCredential/action" in line and f"--assignee-object-id {PREVIEW}" in line
               and f"--scope {GROUP_SCOPE}" in line for line in preview), preview
    assert any("lacks spotkube quota reader on the subscription" in line and "run the bootstrap stack" in line
               for line in preview), preview
    assert not any("lacks Reader" in line for line in preview)
    assert ("  FAIL sizes: pool a100spot: Standard_NC24ads_A100_v4 in eastus is restricted for this subscription "
            "(NotAvailableForSubscription)") in "\n".join(lines)
    assert "  ok   sizes: pool system: Standard_D4s_v3 in eastus is offered in zone(s) 1, 2, 3" in lines
    assert any(line.startswith("  ok   quota: lowPriorityCores: needs 192 vCPUs") for line in lines)
    assert lines[-1].endswith("item(s) to fix before the first pulumi up")
    assert result.stderr == ""
    # one line per item, no credential over plain HTTP
    assert not any("authorization" in r.headers for r in server.requests)


def test_aks_ready_when_everything_is_in_place(arm: tuple[FakeServer, Arm]) -> None:
    server, state = arm
    state.providers["Microsoft.Insights"] = "Registered"
    state.skus[2]["restrictions"] = []
    result = aks(server, "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and {f["level"] for f in report["findings"]} == {"ok", "warn"}
    (warned,) = [f for f in report["findings"] if f["level"] == "warn"]
    assert warned["check"] == "roles" and "--preview" in warned["message"]


def test_a_registry_whose_owner_granted_nothing_is_named_with_the_owner_s_command(arm: tuple[FakeServer, Arm]) -> None:
    """The deploy identity grants the kubelet identity AcrPull on the stack's registry only where the
    registry's owner let it: doctor sees the missing right there, and says who runs what."""
    server, state = arm
    state.assignments[DEPLOYER] = [a for a in state.assignments[DEPLOYER]
                                   if a["properties"]["scope"] != REGISTRY_SCOPE]
    result = aks(server)
    assert result.returncode == 1
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("  FAIL roles: deploy")]
    assert "lacks Role Based Access Control Administrator on the registry" in line
    assert "Microsoft.Authorization/roleAssignments/write" in line
    assert "fix: the registry's owner (stacks with cluster.registries): az role assignment create" in line
    assert f"--scope {REGISTRY_SCOPE}" in line and "GuidEquals {7f951dda-4ed3-4680-a7ca-43fe172d538d}" in line


def test_roles_the_deployer_may_not_read_are_reported_not_a_crash(arm: tuple[FakeServer, Arm]) -> None:
    server, state = arm
    state.forbidden.add(PREVIEW)
    result = aks(server, "--preview", PREVIEW)
    assert result.returncode == 1
    assert ("warn roles: the preview identity's roles could not be read: Azure Resource Manager at 127.0.0.1"
            in result.stdout)
    assert "answered HTTP 403: The client" in result.stdout and "Traceback" not in result.stderr


def test_the_subscription_must_be_named(arm: tuple[FakeServer, Arm]) -> None:
    server, _ = arm
    env = {k: "" for k in ("ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID")}
    result = run("--stack", "aks-prod-eastus", "--endpoint", server.url(), env=env)
    assert result.returncode == 2 and "--subscription" in result.stderr and "Traceback" not in result.stderr


# --- Google Cloud ----------------------------------------------------------------------------------

#: container.admin's published list is every `container.*` permission (hundreds); these are the ones of
#: the kinds and verbs spotkube's program uses, plus some it doesn't.
CONTAINER_ADMIN = sorted({f"container.{what}.{verb}" for what in (
    "clusters", "configMaps", "daemonSets", "deployments", "namespaces", "secrets", "services", "serviceAccounts",
    "clusterRoles", "clusterRoleBindings", "roles", "roleBindings", "customResourceDefinitions", "priorityClasses",
    "thirdPartyObjects", "statefulSets", "persistentVolumeClaims", "networkPolicies", "podDisruptionBudgets",
    "mutatingWebhookConfigurations", "validatingWebhookConfigurations", "horizontalPodAutoscalers", "jobs",
    "cronJobs", "pods", "leases", "resourceQuotas", "limitRanges", "ingresses", "endpoints", "apiServices")
    for verb in ("get", "list", "create", "update", "delete", "bind", "escalate")} | {
    "container.clusters.connect", "container.operations.get", "container.nodes.list"})
GCP_ROLES: dict[str, list[str]] = {
    "roles/container.admin": CONTAINER_ADMIN,
    "roles/container.viewer": ["container.clusters.connect", "container.clusters.get", "container.configMaps.get",
                               "container.daemonSets.get", "container.deployments.get"],
}


def machine_type(name: str, zone: str) -> dict[str, Any]:
    return {"kind": "compute#machineType", "id": "1000", "name": name, "description": name, "guestCpus": 12,
            "memoryMb": 87040, "zone": zone, "isSharedCpu": False,
            "selfLink": f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/zones/{zone}/machineTypes/{name}"}


class Google:
    def __init__(self) -> None:
        self.enabled = ["container.googleapis.com", "compute.googleapis.com", "iam.googleapis.com",
                        "cloudresourcemanager.googleapis.com", "logging.googleapis.com",
                        "serviceusage.googleapis.com", "monitoring.googleapis.com"]
        self.bindings = [{"role": "roles/container.viewer", "members": [f"serviceAccount:{GKE_PREVIEW}"]},
                         {"role": "roles/container.admin", "members": [f"serviceAccount:{GKE_DEPLOYER}",
                                                                       "user:admin@example.com"]}]
        #: (zone, machine or accelerator) the project can't get
        self.missing = {("europe-west4-b", "a2-highgpu-1g")}
        #: The state bucket's IAM policy (uniform bucket-level access: the project's convenience members
        #: GCS puts on every new bucket, and the bootstrap's grants); None: no such bucket.
        self.bucket_bindings: list[dict[str, Any]] | None = [
            {"role": "roles/storage.legacyBucketOwner", "members": [f"projectEditor:{PROJECT}",
                                                                    f"projectOwner:{PROJECT}"]},
            {"role": "roles/storage.legacyBucketReader", "members": [f"projectViewer:{PROJECT}"]},
            {"role": "roles/storage.objectUser", "members": [f"serviceAccount:{GKE_DEPLOYER}"]}]

    def respond(self, request: Request) -> Reply:
        path = urlsplit(request.path).path
        if path == f"/v1/projects/{PROJECT}/services":
            assert request.query["filter"] == ["state:ENABLED"]
            half = len(self.enabled) // 2
            page, rest = (self.enabled[:half], "2") if "pageToken" not in request.query else (self.enabled[half:], None)
            body: dict[str, Any] = {"services": [{"name": f"projects/123456789/services/{s}", "parent":
                                                  "projects/123456789", "config": {"name": s, "title": s},
                                                  "state": "ENABLED"} for s in page]}
            if rest:
                body["nextPageToken"] = rest
            return Reply(body=body)
        if path == f"/v1/projects/{PROJECT}:getIamPolicy":
            assert request.method == "POST" and json.loads(request.body) == {"options": {"requestedPolicyVersion": 3}}
            return Reply(body={"version": 1, "etag": "BwYr9ErKhYw=", "bindings": self.bindings})
        if path.startswith("/v1/roles/"):
            name = path.removeprefix("/v1/")
            if name in GCP_ROLES:
                return Reply(body={"name": name, "title": name, "includedPermissions": GCP_ROLES[name],
                                   "stage": "GA", "etag": "AA=="})
        zone_prefix = f"/compute/v1/projects/{PROJECT}/zones/"
        if path.startswith(zone_prefix):
            zone, kind, name = path.removeprefix(zone_prefix).split("/")
            if (zone, name) in self.missing:
                return Reply(404, {"error": {"code": 404, "message": f"The resource 'projects/{PROJECT}/zones/{zone}/"
                                             f"{kind}/{name}' was not found", "errors": [{"reason": "notFound"}]}})
            return Reply(body=machine_type(name, zone))
        if path == f"/compute/v1/projects/{PROJECT}/regions/europe-west4":
            return Reply(body={"kind": "compute#region", "name": "europe-west4", "quotas": [
                {"metric": "CPUS", "limit": 1000, "usage": 0}, {"metric": "E2_CPUS", "limit": 1000, "usage": 0},
                {"metric": "NVIDIA_A100_GPUS", "limit": 16, "usage": 0}, {"metric": "NVIDIA_T4_GPUS", "limit": 8,
                                                                           "usage": 0}]})
        if path.startswith("/storage/v1/b/") and path.endswith("/iam") and self.bucket_bindings is not None:
            assert request.query["optionsRequestedPolicyVersion"] == ["3"]
            return Reply(body={"kind": "storage#policy", "resourceId": f"projects/_/buckets/{path.split('/')[4]}",
                               "version": 1, "etag": "CAE=", "bindings": self.bucket_bindings})
        if path == f"/compute/v1/projects/{PROJECT}":
            return Reply(body={"kind": "compute#project", "name": PROJECT, "quotas": [
                {"metric": "CPUS_ALL_REGIONS", "limit": 1000, "usage": 0},
                {"metric": "GPUS_ALL_REGIONS", "limit": 0, "usage": 0}]})
        return Reply(404, {"error": {"code": 404, "message": f"no route for {path}"}})


@pytest.fixture
def google() -> Iterator[tuple[FakeServer, Google]]:
    state = Google()
    with serving() as server:
        server.respond = state.respond
        yield server, state


def test_gke_names_the_service_the_workflows_need_the_roles_and_the_zones(google: tuple[FakeServer, Google]) -> None:
    server, _ = google
    # Google's client libraries in a process of their own (tests/in_process.py says why).
    result = run_spotkube_process("doctor", "--stack", "gke-prod-europe-west4", "--endpoint", server.url(),
                                  "--deploy", GKE_DEPLOYER, "--preview", GKE_PREVIEW)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert ("FAIL apis: iamcredentials.googleapis.com is not enabled; fix: gcloud services enable "
            f"iamcredentials.googleapis.com --project {PROJECT}") in out
    assert "ok   apis: container.googleapis.com enabled" in out  # from the second page
    assert (f"FAIL roles: deploy identity {GKE_DEPLOYER} lacks roles/iam.serviceAccountAdmin on the project "
            "(needed to create Account") in out
    assert (f"fix: gcloud projects add-iam-policy-binding {PROJECT} --member serviceAccount:{GKE_DEPLOYER} "
            "--role roles/iam.serviceAccountAdmin") in out
    assert f"FAIL roles: preview identity {GKE_PREVIEW} lacks spotkubePreviewReader" in out
    assert ("FAIL sizes: pool a100-spot: a2-highgpu-1g with nvidia-tesla-a100 is not offered in zone(s) "
            "europe-west4-b") in out
    assert ("ok   sizes: pool t4-preemptible: n1-standard-8 with nvidia-tesla-t4 is offered in zone(s) "
            "europe-west4-a, europe-west4-b, europe-west4-c") in out
    assert "FAIL quota: GPUS_ALL_REGIONS: needs" in out and "the limit is short by 21; ask for an increase" in out
    assert "lacks roles/container.admin" not in out
    posts = [r for r in server.requests if r.method == "POST"]
    assert [urlsplit(r.path).path for r in posts] == [f"/v1/projects/{PROJECT}:getIamPolicy"]


def test_no_google_credentials_is_one_line_saying_how_to_sign_in(tmp_path: Path) -> None:
    env = {"GOOGLE_APPLICATION_CREDENTIALS": "", "CLOUDSDK_CONFIG": str(tmp_path), "HOME": str(tmp_path),
           "GCE_METADATA_HOST": "127.0.0.1:9", "GCE_METADATA_IP": "127.0.0.1:9", "NO_GCE_CHECK": "True"}
    env = {k: v for k, v in env.items() if v}
    clean = {k: v for k, v in os.environ.items() if k != "GOOGLE_APPLICATION_CREDENTIALS"}
    result = subprocess.run([SPOTKUBE, "doctor", "--stack", "gke-dev-us-central1", "--endpoint",
                             "https://127.0.0.1:9"], cwd=REPO, capture_output=True, text=True, timeout=120,
                            check=False, env={**clean, **env})
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: no Google Cloud credentials")
    assert line.endswith("run `gcloud auth application-default login` (CI: google-github-actions/auth)")



def test_no_azure_credentials_is_one_line_saying_how_to_sign_in(tmp_path: Path) -> None:
    """Every credential DefaultAzureCredential tries fails (no ARM_*/AZURE_* variables, no az on PATH, the
    managed identity endpoint refusing): one line, not azure-identity's list of what it tried."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "ARM_", "MSI_", "IDENTITY_"))}
    env = {**clean, "HOME": str(tmp_path), "PATH": str(Path(sys.executable).parent),
           "IDENTITY_ENDPOINT": "http://127.0.0.1:9/msi/token", "IDENTITY_HEADER": "x"}
    result = subprocess.run([SPOTKUBE, "doctor", "--stack", "aks-dev-uksouth", "--subscription", SUBSCRIPTION,
                             "--endpoint", "https://127.0.0.1:9"], cwd=REPO, capture_output=True, text=True,
                            timeout=120, check=False, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: no Azure credentials") and "sign in with `az login`" in line


def test_a_person_s_credentials_send_a_quota_project_and_a_service_account_s_do_not() -> None:
    """Google refuses most APIs to user credentials without a quota project: the one the person's ADC
    names (`gcloud auth application-default set-quota-project`), else the stack's. Service accounts are
    billed to their own project, and the header would need serviceusage.services.use."""
    from google.auth import compute_engine
    from google.oauth2 import credentials as user

    from spotkube.clouds.gke.access_api import request_headers

    person = user.Credentials(token="ya29.person")
    assert request_headers(person, PROJECT) == {"Authorization": "Bearer ya29.person",
                                               "x-goog-user-project": PROJECT}
    billed = user.Credentials(token="ya29.person", quota_project_id="team-billing")
    assert request_headers(billed, PROJECT)["x-goog-user-project"] == "team-billing"
    machine = compute_engine.Credentials()
    machine.token = "ya29.machine"
    assert request_headers(machine, PROJECT) == {"Authorization": "Bearer ya29.machine"}


def test_a_missing_grant_in_the_stack_s_own_group_points_at_the_bootstrap_not_a_second_assignment(
        arm: tuple[FakeServer, Arm]) -> None:
    """prod's reservation group lives in the stack's own group, where Azure takes one RBAC Administrator
    assignment per principal: the bootstrap's, whose condition allows Contributor too. doctor never tells
    anyone to add a second (RoleAssignmentExists)."""
    server, state = arm
    state.assignments[DEPLOYER] = [a for a in state.assignments[DEPLOYER] if a["properties"]["scope"] != GROUP_SCOPE]
    result = aks(server)
    assert result.returncode == 1
    reservation = [line for line in result.stdout.splitlines() if line.startswith("  FAIL roles: deploy")
                   and "capacity reservation group's resource group" in line]
    assert reservation, result.stdout
    for line in reservation:
        assert "fix: rerun the bootstrap stack (infra/bootstrap): its one Role Based Access Control" in line
        assert f"--scope {GROUP_SCOPE}" not in line


# --- the stack's GitHub environment, read live ------------------------------------------------------

GITHUB_REPOSITORY = "octo-org/ml-platform"
REVIEWED = [{"id": 3755, "node_id": "MDQ6R2F0ZTM3NTU=", "type": "required_reviewers", "prevent_self_review": True,
             "reviewers": [{"type": "Team", "reviewer": {"id": 1234567, "slug": "platform-leads"}}]},
            {"id": 3756, "node_id": "MDQ6R2F0ZTM3NTY=", "type": "branch_policy"}]


def github_environment(name: str, **rules: Any) -> dict[str, Any]:
    """"Get an environment" as GitHub answers it for one the bootstrap made; `rules` override its fields."""
    return {"id": 161088068, "node_id": "EN_kwDOAAABCDEFG0", "name": name,
            "url": f"https://api.github.com/repos/{GITHUB_REPOSITORY}/environments/{name}",
            "html_url": f"https://github.com/{GITHUB_REPOSITORY}/deployments/activity_log?environments_filter={name}",
            "created_at": "2026-12-01T09:12:44Z", "updated_at": "2026-12-01T09:12:44Z", "can_admins_bypass": False,
            "protection_rules": REVIEWED,
            "deployment_branch_policy": {"protected_branches": True, "custom_branch_policies": False}, **rules}


def variables(**values: str) -> dict[str, Any]:
    return {"total_count": len(values), "variables": [
        {"name": name, "value": value, "created_at": "2026-12-01T09:12:45Z", "updated_at": "2026-12-01T09:12:45Z"}
        for name, value in values.items()]}


BOOTSTRAPPED = {"ARM_CLIENT_ID": "46c3b3dd-1d00-5aa9-80e9-0ff1ce0ff1ce", "PULUMI_ORGANIZATION": "octo-org",
                "PULUMI_TEAM": "spotkube-aks-prod-eastus", "SPOTKUBE_STACK": "aks-prod-eastus"}


def with_github(arm: tuple[FakeServer, Arm], environment: dict[str, Any] | None,
                found: dict[str, Any], *extra: str) -> tuple[subprocess.CompletedProcess[str], list[Request]]:
    server, state = arm
    state.providers["Microsoft.Insights"] = "Registered"
    state.skus[2]["restrictions"] = []
    path = f"/repos/{GITHUB_REPOSITORY}/environments/aks-prod-eastus"

    def respond(request: Request) -> Reply:
        route = urlsplit(request.path).path
        if route == path and environment is not None:
            return Reply(body=environment)
        if route == f"{path}/variables" and environment is not None:
            return Reply(body=found)
        return Reply(404, {"message": "Not Found", "status": "404"})

    with serving() as github:
        github.respond = respond
        result = aks(server, "--github-repository", GITHUB_REPOSITORY, "--github-api", github.url(), *extra)
        return result, list(github.requests)


def test_the_environment_the_bootstrap_made_is_ready(arm: tuple[FakeServer, Arm]) -> None:
    result, asked = with_github(arm, github_environment("aks-prod-eastus"), variables(**BOOTSTRAPPED))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "ok   environment: GitHub environment aks-prod-eastus admits protected branches only" in out
    assert "ok   environment: GitHub environment aks-prod-eastus requires a reviewer" in out
    assert ("ok   environment: GitHub environment aks-prod-eastus exchanges its OIDC token for Pulumi Cloud team "
            "spotkube-aks-prod-eastus's token in octo-org") in out
    assert [urlsplit(r.path).path for r in asked][-1].endswith("/environments/aks-prod-eastus/variables")
    assert not any("authorization" in r.headers for r in asked), "no token over plain HTTP"


def test_a_missing_or_loosened_environment_is_named_with_the_bootstrap_as_the_fix(arm: tuple[FakeServer, Arm]) -> None:
    missing, _ = with_github(arm, None, variables())
    assert missing.returncode == 1
    assert ("FAIL environment: GitHub environment aks-prod-eastus doesn't exist: a job naming it would create it with "
            "no rules") in missing.stdout
    loose = github_environment("aks-prod-eastus", protection_rules=[], deployment_branch_policy=None)
    result, _ = with_github(arm, loose, variables(PULUMI_BACKEND_URL="s3://elsewhere", SPOTKUBE_STACK="x"))
    assert result.returncode == 1
    out = result.stdout
    assert "FAIL environment: GitHub environment aks-prod-eastus admits any branch (no protected-branches rule)" in out
    assert "FAIL environment: GitHub environment aks-prod-eastus is prod and requires no reviewer" in out
    assert "has no SPOTKUBE_STACK=aks-prod-eastus, so deploy.yml refuses to run there" in out
    assert "PULUMI_BACKEND_URL 's3://elsewhere' is no self-managed backend" in out
    assert "fix: rerun the bootstrap stack (infra/bootstrap) with the stack in spotkube:stacks" in out


def test_a_self_managed_backend_s_setting_is_checked(arm: tuple[FakeServer, Arm]) -> None:
    """A prod stack's self-managed backend is its own (`<backendUrl>-<stack>`), never the one the preview reads."""
    result, _ = with_github(arm, github_environment("aks-prod-eastus"), variables(
        PULUMI_BACKEND_URL="azblob://spotkube-state-aks-prod-eastus", SPOTKUBE_STACK="aks-prod-eastus"))
    assert result.returncode == 0, result.stdout
    assert ("ok   environment: GitHub environment aks-prod-eastus signs in to the self-managed backend "
            "azblob://spotkube-state-aks-prod-eastus with its cloud identity") in result.stdout
    # The bootstrap's own (createBackend) names its storage account: the container's grants are read live.
    account, _ = with_github(arm, github_environment("aks-prod-eastus"), variables(
        PULUMI_BACKEND_URL="azblob://spotkube-state-aks-prod-eastus?storage_account=spotkubestate",
        SPOTKUBE_STACK="aks-prod-eastus"), "--preview", PREVIEW)
    assert account.returncode == 1, account.stdout
    where = "container spotkube-state-aks-prod-eastus of storage account spotkubestate"
    assert f"ok   backend: deploy identity {DEPLOYER} may write aks-prod-eastus's state in {where}" in account.stdout
    assert (f"FAIL backend: preview identity {PREVIEW} may read prod stack aks-prod-eastus's state in {where}: every "
            "pull request's code runs as it") in account.stdout
    missing, _ = with_github(arm, github_environment("aks-prod-eastus"), variables(
        PULUMI_BACKEND_URL="azblob://spotkube-state-aks-prod-eastus?storage_account=nosuch",
        SPOTKUBE_STACK="aks-prod-eastus"))
    assert (f"FAIL backend: storage account nosuch of azblob://spotkube-state-aks-prod-eastus?storage_account=nosuch "
            f"is not in subscription {SUBSCRIPTION}") in missing.stdout
    # Without the account in the URL (the job's AZURE_STORAGE_ACCOUNT would name it) there is nothing to read.
    assert ("warn backend: spotkube doctor doesn't read who holds roles on azblob://spotkube-state-aks-prod-eastus "
            "on AKS") in result.stdout
    shared, _ = with_github(arm, github_environment("aks-prod-eastus"), variables(
        PULUMI_BACKEND_URL="azblob://spotkube-state", SPOTKUBE_STACK="aks-prod-eastus"))
    assert shared.returncode == 1
    assert ("FAIL environment: GitHub environment aks-prod-eastus is prod and its backend azblob://spotkube-state is "
            "not its own (a prod stack's ends with -aks-prod-eastus)") in shared.stdout


PROD_BUCKET = "spotkube-example-state-gke-prod-europe-west4"


def gke_with_github(google: tuple[FakeServer, Google], *who: str) -> subprocess.CompletedProcess[str]:
    """doctor on the GKE prod stack whose GitHub environment names its own state bucket."""
    server, _ = google
    path = f"/repos/{GITHUB_REPOSITORY}/environments/gke-prod-europe-west4"
    found = variables(PULUMI_BACKEND_URL=f"gs://{PROD_BUCKET}", SPOTKUBE_STACK="gke-prod-europe-west4")

    def respond(request: Request) -> Reply:
        route = urlsplit(request.path).path
        if route == path:
            return Reply(body=github_environment("gke-prod-europe-west4"))
        if route == f"{path}/variables":
            return Reply(body=found)
        return Reply(404, {"message": "Not Found", "status": "404"})

    with serving() as github:
        github.respond = respond
        return run_spotkube_process("doctor", "--stack", "gke-prod-europe-west4", "--endpoint", server.url(),
                                    "--github-repository", GITHUB_REPOSITORY, "--github-api", github.url(), *who)


def test_gke_reads_the_prod_state_bucket_s_grants_live(google: tuple[FakeServer, Google]) -> None:
    """The deploy account writes prod's bucket; the preview's may not read it; the project's convenience
    members are named for a person to check."""
    server, state = google
    result = gke_with_github(google, "--deploy", GKE_DEPLOYER, "--preview", GKE_PREVIEW)
    out = result.stdout
    assert (f"ok   backend: deploy identity {GKE_DEPLOYER} may write gke-prod-europe-west4's state in bucket "
            f"gs://{PROD_BUCKET}") in out, out + result.stderr
    assert (f"ok   backend: preview identity {GKE_PREVIEW} may not read gke-prod-europe-west4's state in bucket "
            f"gs://{PROD_BUCKET}") in out
    assert (f"warn backend: bucket gs://{PROD_BUCKET} also lets projectEditor:{PROJECT}, projectOwner:{PROJECT}, "
            f"projectViewer:{PROJECT} at prod stack gke-prod-europe-west4's state") in out
    assert any(urlsplit(r.path).path == f"/storage/v1/b/{PROD_BUCKET}/iam" for r in server.requests)

    assert state.bucket_bindings is not None
    state.bucket_bindings[2] = {"role": "roles/storage.objectViewer", "members": [
        f"serviceAccount:{GKE_PREVIEW}", "allUsers"]}
    leaked = gke_with_github(google, "--deploy", GKE_DEPLOYER, "--preview", GKE_PREVIEW).stdout
    assert (f"FAIL backend: bucket gs://{PROD_BUCKET} grants allUsers: anyone may read gke-prod-europe-west4's "
            "state") in leaked
    assert (f"FAIL backend: deploy identity {GKE_DEPLOYER} may not write gke-prod-europe-west4's state in bucket "
            f"gs://{PROD_BUCKET}: pulumi up fails at its first checkpoint; fix: gcloud storage buckets "
            f"add-iam-policy-binding gs://{PROD_BUCKET} --member=serviceAccount:{GKE_DEPLOYER} "
            "--role=roles/storage.objectUser") in leaked
    assert (f"FAIL backend: preview identity {GKE_PREVIEW} may read prod stack gke-prod-europe-west4's state in "
            f"bucket gs://{PROD_BUCKET}: every pull request's code runs as it") in leaked
