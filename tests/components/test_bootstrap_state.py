"""With `createBackend` the bootstrap makes the self-managed backend's storage, planned offline on both
clouds: a bucket or container for the non-prod stacks and one per prod stack, each writable by the deploy
identity of its environments alone, the non-prod one readable by the preview identity, and every
environment's PULUMI_BACKEND_URL naming the one it may write. Bad backend settings stop the program
before anything is registered."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from spotkube.components.offline import ProgramFailed, Recording, Registration, record_stack
from spotkube.platform.bootstrap import BACKEND_VARIABLE, backend_location
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[2]
AZURE_URL = "azblob://spotkube-state?storage_account=spotkubestate"
CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"  # Storage Blob Data Contributor
READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"  # Storage Blob Data Reader


def _copy(root: Path, stack: str, change: dict[str, object]) -> Path:
    for name in ("Pulumi.yaml", "stacks", "infra"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    path = root / "infra" / "bootstrap" / f"Pulumi.{stack}.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"] = {key: value for key, value in {**document["config"], **change}.items() if value is not None}
    path.write_text(yaml.safe_dump(document))
    return root / "infra" / "bootstrap"


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recording]:
    aks = _copy(tmp_path_factory.mktemp("aks"), "aks", {"spotkube:pulumiOrganization": None,
                                                         "spotkube:backendUrl": AZURE_URL,
                                                         "spotkube:createBackend": True})
    return {"aks": record_stack(find_project(aks), "aks"),
            "gke": record_stack(find_project(REPO / "infra" / "bootstrap"), "gke")}


def _of(recording: Recording, token: str) -> list[Registration]:
    return [r for r in recording.registrations if r.type == token]


def _backend_urls(recording: Recording) -> dict[str, str]:
    return {r.inputs["environment"]: r.inputs["value"] for r in _of(
        recording, "github:index/actionsEnvironmentVariable:ActionsEnvironmentVariable")
        if r.inputs["variableName"] == BACKEND_VARIABLE}


def _access(recording: Recording, identity_token: str, trust_token: str, store_token: str, name_key: str,
            grant_token: str, roles: dict[str, str]) -> dict[str, dict[str, set[str]]]:
    """Each GitHub environment's rights on the state stores ("write"/"read" -> store names), through the
    identity that trusts its tokens: the registrations' own dependencies say who and where."""
    identities = {r.urn for r in _of(recording, identity_token)}
    stores = {r.urn: r.inputs[name_key] for r in _of(recording, store_token)}
    trusted = {}
    for credential in _of(recording, trust_token):
        subject = credential.inputs.get("subject") or credential.inputs.get("member", "")
        if ":environment:" not in subject:
            continue
        (identity,) = [urn for urn in credential.dependencies if urn in identities]
        trusted[subject.rsplit(":environment:", 1)[1]] = identity
    rights: dict[str, dict[str, set[str]]] = {}
    for grant in _of(recording, grant_token):
        on = [stores[urn] for urn in grant.dependencies if urn in stores]
        if not on:
            continue  # a grant on something else: tests/components/test_bootstrap.py
        (store,) = on
        (identity,) = [urn for urn in grant.dependencies if urn in identities]
        granted = grant.inputs.get("role") or grant.inputs["roleDefinitionId"]
        right = next(right for role, right in roles.items() if granted.endswith(role))
        for environment in (e for e, i in trusted.items() if i == identity):
            rights.setdefault(environment, {"write": set(), "read": set()})[right].add(store)
    assert trusted, "the bootstrap trusts some environments"
    return {environment: rights.get(environment, {"write": set(), "read": set()}) for environment in trusted}


def _check(rights: dict[str, dict[str, set[str]]], urls: dict[str, str], preview: str) -> None:
    """Each stack's environment writes exactly the store its backend URL names, and reads nothing more; the
    preview writes none and reads only the non-prod stacks' store."""
    shared = backend_location(urls[preview])[1]
    assert set(rights) == set(urls), "every environment the bootstrap trusts has a backend URL"
    for environment, held in rights.items():
        own = backend_location(urls[environment])[1]
        if environment == preview:
            assert held == {"write": set(), "read": {shared}}, environment
        else:
            assert held["write"] == {own} and held["read"] <= {own}, environment
        if "-prod-" in environment:
            assert own != shared and own.endswith(environment), environment
            assert not any(own in other["read"] | other["write"] for e, other in rights.items() if e != environment)


def test_aks_makes_a_locked_down_account_and_a_container_per_scope(plans: dict[str, Recording]) -> None:
    recording = plans["aks"]
    (account,) = _of(recording, "azure-native:storage:StorageAccount")
    assert account.inputs["accountName"] == "spotkubestate" and account.protect
    assert account.inputs["allowSharedKeyAccess"] is False and account.inputs["allowBlobPublicAccess"] is False
    assert account.inputs["minimumTlsVersion"] == "TLS1_2" and account.inputs["defaultToOAuthAuthentication"] is True
    containers = {r.inputs["containerName"]: r for r in _of(recording, "azure-native:storage:BlobContainer")}
    assert set(containers) == {"spotkube-state", "spotkube-state-aks-prod-eastus"}
    assert all(c.inputs["publicAccess"] == "None" for c in containers.values())
    assert containers["spotkube-state-aks-prod-eastus"].protect
    urls = _backend_urls(recording)
    assert urls["aks-prod-eastus"] == "azblob://spotkube-state-aks-prod-eastus?storage_account=spotkubestate"
    assert urls["aks-dev-uksouth"] == urls["preview-aks"] == AZURE_URL


def test_aks_each_deploy_identity_writes_its_own_container_only(plans: dict[str, Recording]) -> None:
    recording = plans["aks"]
    rights = _access(recording, "azure-native:managedidentity:UserAssignedIdentity",
                     "azure-native:managedidentity:FederatedIdentityCredential", "azure-native:storage:BlobContainer",
                     "containerName", "azure-native:authorization:RoleAssignment",
                     {CONTRIBUTOR: "write", READER: "read"})
    _check(rights, _backend_urls(recording), "preview-aks")


def test_gke_makes_a_locked_down_versioned_bucket_per_scope(plans: dict[str, Recording]) -> None:
    recording = plans["gke"]
    buckets = {r.inputs["name"]: r for r in _of(recording, "gcp:storage/bucket:Bucket")}
    assert set(buckets) == {"spotkube-example-state", "spotkube-example-state-gke-prod-europe-west4"}
    for bucket in buckets.values():
        assert bucket.inputs["uniformBucketLevelAccess"] is True
        assert bucket.inputs["publicAccessPrevention"] == "enforced"
        assert bucket.inputs["versioning"] == {"enabled": True}
    prod = buckets["spotkube-example-state-gke-prod-europe-west4"]
    assert prod.protect and prod.inputs["project"] == "spotkube-prod-example"
    assert prod.inputs["location"] == "EUROPE-WEST4"


def test_gke_each_deploy_account_writes_its_own_bucket_only(plans: dict[str, Recording]) -> None:
    recording = plans["gke"]
    rights = _access(recording, "gcp:serviceaccount/account:Account", "gcp:serviceaccount/iAMMember:IAMMember",
                     "gcp:storage/bucket:Bucket", "name", "gcp:storage/bucketIAMMember:BucketIAMMember",
                     {"roles/storage.objectUser": "write", "roles/storage.objectViewer": "read"})
    _check(rights, _backend_urls(recording), "preview-gke")


@pytest.mark.parametrize(("change", "fragments"), [
    ({"spotkube:createBackend": True}, ("spotkube:createBackend", "set backendUrl too", AZURE_URL)),
    ({"spotkube:pulumiOrganization": None, "spotkube:backendUrl": "gs://state", "spotkube:createBackend": True},
     ("spotkube:backendUrl", "gs:// backend", "the aks bootstrap can't make")),
    ({"spotkube:pulumiOrganization": None, "spotkube:backendUrl": "azblob://state", "spotkube:createBackend": True},
     ("spotkube:backendUrl", "names no storage account", "?storage_account=")),
    ({"spotkube:pulumiOrganization": None, "spotkube:backendUrl": "azblob://state/aks?storage_account=abc",
      "spotkube:createBackend": True}, ("spotkube:backendUrl", "names a path")),
    ({"spotkube:pulumiOrganization": None, "spotkube:createBackend": True,
      "spotkube:backendUrl": f"azblob://{'s' * 50}?storage_account=abc"},
     ("spotkube:backendUrl", "aks-prod-eastus's state", "shorter")),
    ({"spotkube:createBackend": "yes"}, ("spotkube:createBackend", "true or false")),
])
def test_bad_backend_settings_are_refused_before_anything_is_registered(
        tmp_path: Path, change: dict[str, object], fragments: tuple[str, ...]) -> None:
    folder = _copy(tmp_path, "aks", change)
    with pytest.raises(ProgramFailed) as failure:
        record_stack(find_project(folder), "aks")
    message = str(failure.value)
    assert message.startswith("Pulumi.aks.yaml: "), message
    for fragment in fragments:
        assert fragment in message, message
    assert failure.value.registrations == []
