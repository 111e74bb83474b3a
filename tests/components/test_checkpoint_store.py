"""The training checkpoint store: what each prod stack registers for it (the store with its hardening and
the workers' write grant), the refusals of bad settings before anything is registered, the helper that
writes its location into a TrainJob, and where the review shows it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from in_process import run_spotkube
from recordings import only, refusal
from spotkube import AksGpuCluster, AksGpuClusterArgs, GkeGpuCluster, GkeGpuClusterArgs
from spotkube.clouds import parse_spec
from spotkube.clouds.aks.offline import computed_outputs
from spotkube.components.offline import Recording, record_program, record_stack
from spotkube.platform.addons import training_runtime
from spotkube.platform.errors import SpecError, SpotkubeError
from spotkube.platform.project import find_project
from spotkube.review.placements import registered_runtimes
from spotkube.training import CHECKPOINT_DIR_ENV, stack_checkpoint_store, store_location, to_yaml, train_job

REPO = Path(__file__).resolve().parents[2]
AKS, GKE = "aks-prod-eastus", "gke-prod-europe-west4"


@pytest.fixture(scope="module")
def recorded() -> dict[str, Recording]:
    return {stack: record_stack(find_project(REPO), stack) for stack in (AKS, GKE)}



def stack_values(stack: str) -> dict[str, Any]:
    config = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {key.removeprefix("spotkube:"): value for key, value in config.items()}


def test_aks_prod_registers_a_keyless_private_account_and_the_kubelet_identity_s_grant_on_its_container(
        recorded: dict[str, Recording]) -> None:
    account = only(recorded[AKS], "azure-native:storage:StorageAccount")
    assert {k: account.inputs[k] for k in ("accountName", "allowSharedKeyAccess", "minimumTlsVersion",
                                           "allowBlobPublicAccess", "enableHttpsTrafficOnly", "kind")} == {
        "accountName": "spotkubeckptaksprod", "allowSharedKeyAccess": False, "minimumTlsVersion": "TLS1_2",
        "allowBlobPublicAccess": False, "enableHttpsTrafficOnly": True, "kind": "StorageV2"}
    assert account.protect, "prod's checkpoints are protected like its other data"
    container = only(recorded[AKS], "azure-native:storage:BlobContainer")
    assert container.inputs["containerName"] == "checkpoints" and container.inputs["publicAccess"] == "None"
    grants = [r for r in recorded[AKS].registrations if r.type == "azure-native:authorization:RoleAssignment"
              and r.inputs["roleDefinitionId"].endswith("/ba92f5b4-2d11-453d-a403-e96b0029c9fe")]
    assert len(grants) == 1, "Storage Blob Data Contributor, once"
    (grant,) = grants
    assert grant.inputs["scope"].endswith(
        "/resourceGroups/spotkube-aks-prod-eastus/providers/Microsoft.Storage/storageAccounts/spotkubeckptaksprod/"
        "blobServices/default/containers/checkpoints"), "the one container, nothing wider"
    acr = [r for r in recorded[AKS].registrations if r.type == grant.type and r.name.endswith("-acrpull-0")]
    assert acr and grant.inputs["principalId"] == acr[0].inputs["principalId"], "the kubelet identity, as AcrPull"


def test_gke_prod_registers_a_private_bucket_and_the_workers_workload_identity_grant(
        recorded: dict[str, Recording]) -> None:
    bucket = only(recorded[GKE], "gcp:storage/bucket:Bucket")
    assert {k: bucket.inputs[k] for k in ("name", "location", "uniformBucketLevelAccess",
                                          "publicAccessPrevention")} == {
        "name": "spotkube-checkpoints-gke-prod-europe-west4", "location": "EUROPE-WEST4",
        "uniformBucketLevelAccess": True, "publicAccessPrevention": "enforced"}
    member = only(recorded[GKE], "gcp:storage/bucketIAMMember:BucketIAMMember")
    assert member.inputs["role"] == "roles/storage.objectUser"
    assert member.inputs["bucket"] == "spotkube-checkpoints-gke-prod-europe-west4"
    assert member.inputs["member"] == (
        "principal://iam.googleapis.com/projects/000000000000/locations/global/workloadIdentityPools/"
        "spotkube-prod-example.svc.id.goog/subject/ns/kubeflow/sa/default")


def worker_env(recording: Recording) -> list[dict[str, Any]]:
    """The env of every runtime's worker container, one list a runtime."""
    runtimes = registered_runtimes(recording.registrations)
    assert runtimes, "the stack registers training runtimes"
    return [container.get("env", []) for runtime in runtimes
            for container in training_runtime.worker_pod_spec(runtime)["containers"]]


def test_aks_workers_are_told_the_kubelet_identity_that_may_write_the_store(recorded: dict[str, Recording]) -> None:
    cluster = only(recorded[AKS], "azure-native:containerservice:ManagedCluster")
    kubelet = computed_outputs(cluster.type, cluster.name, cluster.inputs)["identityProfile"]["kubeletidentity"]
    assert kubelet["clientId"] != kubelet["objectId"]
    assert all(env == [{"name": "AZURE_CLIENT_ID", "value": kubelet["clientId"]}] for env in worker_env(recorded[AKS]))


def test_gke_workers_need_no_identity_variable(recorded: dict[str, Recording]) -> None:
    assert worker_env(recorded[GKE]) and all(env == [] for env in worker_env(recorded[GKE]))


@pytest.mark.parametrize("stack,change,key,message", [
    (AKS, {"checkpointStore": {"name": "Not-An-Account"}}, "training.checkpointStore.name",
     "'Not-An-Account' is no storage account name: Azure accepts 3-24 lower-case letters and digits"),
    (GKE, {"checkpointStore": {"name": "my.checkpoints"}}, "training.checkpointStore.name",
     "'my.checkpoints' is no bucket name"),
    (GKE, {"checkpointStore": {"name": "google-ckpt"}}, "training.checkpointStore.name", "not starting with goog"),
    (GKE, {"checkpointStore": {"name": "okname"}, "checkpointLocation": "gs://other"},
     "training.checkpointLocation", "is set with training.checkpointStore"),
    (AKS, {"checkpointStore": {}}, "training.checkpointStore.name", "required"),
])
def test_a_bad_store_is_refused_naming_the_key(stack: str, change: dict[str, Any], key: str, message: str) -> None:
    values = stack_values(stack)
    values["training"] = {**values["training"], **change}
    with pytest.raises(SpecError) as refused:
        parse_spec(values, f"stacks/Pulumi.{stack}.yaml")
    assert key in str(refused.value) and message in str(refused.value)


def test_a_store_stays_when_training_is_turned_off() -> None:
    values = stack_values(AKS)
    values["training"] = {**values["training"], "enabled": False}
    spec = parse_spec(values, f"stacks/Pulumi.{AKS}.yaml")
    assert not spec.training.enabled and spec.training.checkpoint_store is not None


# --- the Python API: a cluster's args ask for the store ---------------------------------------------------

AKS_ARGS: AksGpuClusterArgs = {
    "environment": "dev", "region": "eastus", "checkpoint_store": "teamckpt",
    "gpu_pools": [{"name": "a100spot", "machine": "Standard_NC24ads_A100_v4"}],
    "cluster": {"deployer": {"object_id": "c0ffee00-0000-4000-8000-000000000001",
                             "principal_type": "ServicePrincipal"}},
}
GKE_ARGS: GkeGpuClusterArgs = {
    "environment": "dev", "region": "us-central1", "checkpoint_store": "team-checkpoints",
    "cluster": {"project": "spotkube-test"}, "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8"}],
}


def run(body: Callable[[], object]) -> Recording:
    return record_program(body, project="team", stack="dev", config={})


def test_an_aks_cluster_s_args_make_the_store_its_workers_may_write() -> None:
    recording = run(lambda: AksGpuCluster("ml", args=AKS_ARGS))
    assert only(recording, "azure-native:storage:StorageAccount").inputs["accountName"] == "teamckpt"
    assert only(recording, "azure-native:storage:BlobContainer").inputs["containerName"] == "checkpoints"
    assert only(recording, "azure-native:authorization:RoleAssignment", "ml-checkpoints-writer").inputs[
        "scope"].endswith("/storageAccounts/teamckpt/blobServices/default/containers/checkpoints")
    assert store_location("aks", "teamckpt") == "az://teamckpt/checkpoints"


def test_a_gke_cluster_s_args_make_the_bucket_its_workers_may_write() -> None:
    recording = run(lambda: GkeGpuCluster("ml", args=GKE_ARGS))
    assert only(recording, "gcp:storage/bucket:Bucket").inputs["name"] == "team-checkpoints"
    assert only(recording, "gcp:storage/bucketIAMMember:BucketIAMMember").inputs["role"] == "roles/storage.objectUser"
    assert store_location("gke", "team-checkpoints") == "gs://team-checkpoints"


def test_a_bad_store_name_in_args_is_refused_naming_the_arg_before_anything_is_registered() -> None:
    message = refusal(lambda: AksGpuCluster("ml", args={**AKS_ARGS, "checkpoint_store": "Team-Ckpt"}),
                      project="team", stack="dev")
    assert message.startswith("AksGpuCluster 'ml' args: checkpoint_store: 'Team-Ckpt' is no storage account name")
    with pytest.raises(ValueError, match="cloud: 'eks' is not a cloud spotkube knows"):
        store_location("eks", "x")


@pytest.mark.parametrize("stack,location", [(AKS, "az://spotkubeckptaksprod/checkpoints"),
                                            (GKE, "gs://spotkube-checkpoints-gke-prod-europe-west4")])
def test_the_helper_saves_each_job_under_the_stack_s_store(stack: str, location: str) -> None:
    assert stack_checkpoint_store(stack, REPO) == location
    job = train_job("resnet-ddp", gpu_type="nvidia-l4", image="i", command=["python"],
                    checkpoint_store=stack_checkpoint_store(stack, REPO))
    env = {e["name"]: e["value"] for e in job["spec"]["trainer"]["env"]}
    assert env[CHECKPOINT_DIR_ENV] == f"{location}/resnet-ddp"
    with pytest.raises(ValueError, match="checkpoint_dir and checkpoint_store: give one"):
        train_job("x", gpu_type="nvidia-l4", image="i", command=["python"], checkpoint_dir="/c",
                  checkpoint_store=location)


def test_a_stack_without_a_store_says_which_key_to_set() -> None:
    with pytest.raises(SpotkubeError, match="stack aks-dev-uksouth has no checkpoint store: set "
                                            r"spotkube:training.checkpointStore"):
        stack_checkpoint_store("aks-dev-uksouth", REPO)


def test_pipeline_check_shows_the_store_and_warns_about_a_job_saving_elsewhere(tmp_path: Path) -> None:
    store = stack_checkpoint_store(AKS, REPO)
    inside = tmp_path / "in.yaml"
    inside.write_text(to_yaml(train_job("resnet-ddp", gpu_type="nvidia-a100-80gb", image="i", command=["python"],
                                        checkpoint_store=store)))
    done = run_spotkube("pipeline-check", str(inside), "--stack", AKS, "--format", "json")
    assert done.returncode == 0, done.stderr
    (check,) = json.loads(done.stdout)["checks"]
    assert check["checkpointLocation"] == store and check["checkpointDir"] == f"{store}/resnet-ddp"
    assert not [w for w in check["warnings"] if "outside stack" in w]
    outside = tmp_path / "out.yaml"
    outside.write_text(to_yaml(train_job("resnet-ddp", gpu_type="nvidia-a100-80gb", image="i", command=["python"],
                                         checkpoint_dir="az://elsewhere/c/resnet-ddp")))
    done = run_spotkube("pipeline-check", str(outside), "--stack", AKS, "--format", "json")
    (check,) = json.loads(done.stdout)["checks"]
    assert any(f"outside stack {AKS}'s checkpoint location {store}" in w for w in check["warnings"])
