"""GKE GPU pools that start steps sooner (image streaming, a secondary boot disk of preloaded images) and
nodes that may pull the stack's private images (Artifact Registry read grants): what GkeGpuCluster
registers, how it refuses mistakes, and the APIs and permissions it needs (the plan's part:
tests/cli/test_plan_images.py)."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from spotkube import GkeGpuCluster, GkeGpuClusterArgs
from spotkube.clouds.gke import identities
from spotkube.clouds.gke.services import needed_services, required_services
from spotkube.components.offline import ProgramFailed, Recording, record_program, run_stack
from spotkube.platform.project import Project

NODE_POOL = "gcp:container/nodePool:NodePool"
GRANT = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
TRAINING = "projects/spotkube-images/locations/europe-west4/repositories/training"
IMAGE = "projects/spotkube-images/global/images/cuda-12-trainer"

ARGS: GkeGpuClusterArgs = {
    "environment": "dev",
    "region": "us-central1",
    "cluster": {"project": "spotkube-test", "registries": [TRAINING, "projects/spotkube-test/locations/us/"
                                                                     "repositories/shared"]},
    "gpu_pools": [
        {"name": "l4-spot", "machine": "g2-standard-8", "image_streaming": True,
         "secondary_boot_disk": {"disk_image": IMAGE}},
        {"name": "l4-streamed", "machine": "g2-standard-8", "capacity": "on-demand", "image_streaming": True},
        {"name": "l4-pulled", "machine": "g2-standard-8", "capacity": "preemptible"},
    ],
}


def build(args: GkeGpuClusterArgs) -> Recording:
    def program() -> None:
        cluster = GkeGpuCluster("ml", args=args)
        pulumi.export("nodeServiceAccountEmail", cluster.node_service_account_email)

    return record_program(program, project="spotkube", stack="test", config={})


@pytest.fixture(scope="module")
def recording() -> Recording:
    return build(ARGS)


def node_configs(recording: Recording) -> dict[str, dict[str, Any]]:
    return {r.inputs["name"]: r.inputs["nodeConfig"] for r in recording.registrations if r.type == NODE_POOL}


def test_a_streaming_pool_registers_gcfs_on_container_optimized_os(recording: Recording) -> None:
    configs = node_configs(recording)
    for name in ("l4-spot", "l4-streamed"):
        assert configs[name]["gcfsConfig"] == {"enabled": True}
        assert configs[name]["imageType"] == "COS_CONTAINERD"
    assert "secondaryBootDisks" not in configs["l4-streamed"]


def test_a_preloaded_pool_registers_its_secondary_boot_disk(recording: Recording) -> None:
    assert node_configs(recording)["l4-spot"]["secondaryBootDisks"] == [
        {"diskImage": IMAGE, "mode": "CONTAINER_IMAGE_CACHE"}]


def test_pools_without_either_keep_gke_s_own_image_settings(recording: Recording) -> None:
    """No image type, no GCFS: the pool's node config, and so the pool, stays as it was."""
    configs = node_configs(recording)
    for name in ("l4-pulled", "system", "platform"):
        assert not {"gcfsConfig", "imageType", "secondaryBootDisks"} & set(configs[next(
            n for n in configs if n.startswith(name))])


def test_each_registry_gives_the_nodes_account_the_reader_role_on_that_repository(recording: Recording) -> None:
    grants = sorted((r.inputs for r in recording.registrations if r.type == GRANT), key=lambda i: i["repository"])
    email = recording.outputs["nodeServiceAccountEmail"].value
    assert grants == [
        {"project": "spotkube-test", "location": "us", "repository": "shared",
         "role": "roles/artifactregistry.reader", "member": f"serviceAccount:{email}"},
        {"project": "spotkube-images", "location": "europe-west4", "repository": "training",
         "role": "roles/artifactregistry.reader", "member": f"serviceAccount:{email}"},
    ]


def test_a_stack_without_registries_grants_nothing() -> None:
    args: GkeGpuClusterArgs = {**ARGS, "cluster": {"project": "spotkube-test"}}
    assert not [r for r in build(args).registrations if r.type == GRANT]


@pytest.mark.parametrize(("change", "message"), [
    ({"gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8",
                     "secondary_boot_disk": {"disk_image": IMAGE}}]},
     "GkeGpuCluster 'ml' args: gpu_pools[0].secondary_boot_disk: needs image streaming"),
    ({"cluster": {"project": "spotkube-test", "registries": ["us-docker.pkg.dev/spotkube-test/training"]}},
     "GkeGpuCluster 'ml' args: cluster.registries[0]: 'us-docker.pkg.dev/spotkube-test/training' is not an "
     "Artifact Registry repository; use projects/PROJECT/locations/LOCATION/repositories/REPOSITORY"),
])
def test_the_python_api_refuses_them_before_anything_is_registered(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ProgramFailed) as failure:
        build({**ARGS, **change})  # type: ignore[typeddict-item]
    assert failure.value.registrations == []
    assert message in str(failure.value)


def test_the_bootstrap_enables_the_apis_streaming_and_the_grants_need() -> None:
    assert {"containerfilesystem.googleapis.com", "artifactregistry.googleapis.com"} <= set(required_services())
    needed = needed_services(["gcp:container/nodePool:NodePool", GRANT])
    assert needed.unknown_types == ()
    assert {"containerfilesystem.googleapis.com", "artifactregistry.googleapis.com"} <= set(needed.needed)


def test_the_deployer_may_set_repository_policies_and_the_preview_read_them(repo_project: Project) -> None:
    run = run_stack(repo_project, "gke-prod-europe-west4")
    calls = identities.FACTS.calls(run.registrations, run.invokes)
    permissions = {(c.identity, c.permission) for c in calls}
    assert ("deploy", "artifactregistry.repositories.setIamPolicy") in permissions
    assert ("preview", "artifactregistry.repositories.getIamPolicy") in permissions
    deployer = [a.role for a in identities.ASSIGNMENTS if a.identity == "deploy"]
    assert any(r.allows("artifactregistry.repositories.setIamPolicy", "permission") for r in deployer)
    # Only the policies: not Artifact Registry Administrator, which could push and delete images.
    assert not any(r.allows("artifactregistry.repositories.uploadArtifacts", "permission") for r in deployer)
