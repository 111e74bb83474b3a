"""Every Kubernetes object spotkube builds in code is valid for the Kubernetes versions we target.

kubernetes-validate checks objects against the real OpenAPI schemas of each release, offline. Strict
mode also refuses unknown fields, the typo that kubectl would drop silently and Pulumi would send.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
import yaml

import kfp_manifests as m
from spotkube.clouds import load_stack_spec
from spotkube.clouds.gke.resources import COMPUTE_CLASS_TYPE
from spotkube.components.offline import run_stack
from spotkube.platform.addons import device_plugin as workloads
from spotkube.platform.addons import kfp_kinds, kfp_reference
from spotkube.platform.addons.kfp_transforms import Credentials, transform
from spotkube.platform.contract import Taint
from spotkube.platform.project import Project
from spotkube.platform.spec import DevicePluginSettings, KubeflowSettings
from spotkube.review.placements import registered_runtimes

#: Minor versions AKS and GKE support as of November 2026 (AKS 1.32 LTS through 1.35; GKE's
#: channels span the same range). Stacks that pin a version add theirs below.
TARGET_VERSIONS = ("1.32", "1.33", "1.34", "1.35")
#: The Pulumi type tokens of Kueue's custom resources (ResourceFlavor, ClusterQueue, LocalQueue...).
KUEUE_TYPE_PREFIX = "kubernetes:kueue.x-k8s.io/"


def target_versions(project: Project) -> list[str]:
    pinned = {".".join(v.split(".")[:2]) for name in project.stacks()
              if (v := load_stack_spec(project, name).cluster.kubernetes_version)}
    return sorted(set(TARGET_VERSIONS) | pinned, key=lambda v: tuple(int(x) for x in v.split(".")))


def assert_valid(obj: dict[str, Any], versions: list[str] | tuple[str, ...]) -> None:
    for version in versions:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as err:
            where = "/".join(str(p) for p in err.path)
            pytest.fail(f"{obj['kind']} {obj['metadata'].get('name')} is invalid for Kubernetes {version} "
                        f"at {where}: {err.message}")


def test_the_kinds_kfps_install_applies_were_read_from_the_kfp_spotkube_installs() -> None:
    """The identities' rights cover the kinds KFP's kustomization renders, recorded by hand from one tag."""
    assert kfp_kinds.KINDS_VERSION == kfp_reference.VERSION, "re-read platform/addons/kfp_kinds.py from the new tag"


def test_the_targets_are_versions_kubernetes_validate_ships() -> None:
    shipped = {".".join(v.split(".")[:2]) for v in kubernetes_validate.utils.all_versions()}
    assert set(TARGET_VERSIONS) <= shipped


def test_every_kubernetes_object_a_shipped_stack_registers_is_valid(repo_project: Project) -> None:
    """The program's own objects (the device plugin DaemonSet, the autoscaler ConfigMap), with the
    inputs exactly as registered. GKE's ComputeClass is no Kubernetes API kind: its CRD's schema
    checks it (tests/clouds/gke/test_compute_class_schema.py). Kueue's queue objects are custom resources
    too, and no pinned package ships their schema: tests/components/test_kueue.py checks their shape. A
    training runtime's workers are a Job template: it is checked as the Job JobSet makes of it."""
    versions = target_versions(repo_project)
    kinds = set()
    for name in repo_project.stacks():
        for resource in run_stack(repo_project, name).registrations:
            if resource.type == COMPUTE_CLASS_TYPE or resource.type.startswith(KUEUE_TYPE_PREFIX):
                continue
            # Kubeflow Trainer's ClusterTrainingRuntimes (a ConfigGroup's objects): their embedded Job is checked
            # here, the rest against Trainer's schema in tests/components/test_trainer.py.
            for runtime in registered_runtimes([resource]):  # loop may be empty: most resources are no runtimes
                for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
                    kinds.add("Job")
                    assert_valid({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": job["name"]},
                                  "spec": job["template"]["spec"]}, versions)
            if resource.custom and resource.type.startswith("kubernetes:") and "kind" in resource.inputs:
                obj = dict(resource.inputs)
                kinds.add(obj["kind"])
                assert_valid(obj, versions)
    assert {"DaemonSet", "ConfigMap", "Job"} <= kinds


def test_the_device_plugin_daemonset_with_extra_tolerations_is_valid() -> None:
    manifest = workloads.device_plugin_daemonset(DevicePluginSettings(), [Taint("team", "vision", "NoExecute")])
    assert_valid(manifest, TARGET_VERSIONS)


CREDENTIALS = Credentials("generated-access-key", "generated-secret-key", "generated-root-password")
EVERYTHING_ON = KubeflowSettings(expose_ui=True, ui_source_ranges=("203.0.113.0/24",),
                                 storage_class="managed-csi", eviction_retry_limit=3, failure_retry_limit=0,
                                 step_grace_period_seconds=15, pod_delete_delay="10m", workflow_ttl_seconds=86400)
OBJECTS: list[Callable[[], dict[str, Any]]] = [
    m.ml_pipeline_deployment, m.zoned_deployment_with_affinity, m.mysql_deployment, m.workflow_controller_deployment,
    m.metadata_statefulset, m.object_store_secret, m.mysql_secret, m.argo_configmap, m.ui_service, m.mysql_pvc,
]


@pytest.mark.parametrize("make", OBJECTS, ids=lambda f: f.__name__)
def test_every_transformed_kfp_object_is_valid(make: Callable[[], dict[str, Any]]) -> None:
    changed = transform(make(), EVERYTHING_ON, CREDENTIALS)
    assert changed is not None, "each of these objects is one spotkube changes"
    assert_valid(changed, TARGET_VERSIONS)


@pytest.mark.parametrize("settings", [KubeflowSettings(), EVERYTHING_ON, KubeflowSettings(eviction_retry_limit=50)],
                         ids=["defaults", "everything-on", "higher-limit"])
def test_the_transformed_argo_configmap_is_valid_and_its_defaults_parse(settings: KubeflowSettings) -> None:
    changed = transform(m.argo_configmap(), settings, CREDENTIALS)
    assert changed is not None
    assert_valid(changed, TARGET_VERSIONS)
    strategy = yaml.safe_load(changed["data"]["workflowDefaults"])["spec"]["templateDefaults"]["retryStrategy"]
    assert isinstance(strategy["limit"], str), "Argo's IntOrString, written in KFP's own form"


@pytest.mark.parametrize("name", kfp_reference.deployment_names())
def test_every_shipped_kfp_deployment_as_the_plan_judges_it_is_valid(name: str) -> None:
    """The reference Deployments, after spotkube's transform, are real Deployments (the plan's
    placements are computed from exactly these objects)."""
    (deployment,) = [d for d in kfp_reference.shipped_deployments() if d["metadata"]["name"] == name]
    changed = transform(deployment, KubeflowSettings(), CREDENTIALS)
    assert changed is not None
    assert_valid(changed, TARGET_VERSIONS)


def test_validation_catches_a_broken_object() -> None:
    """The check itself can fail: a misspelt field in a transformed object is refused."""
    broken = transform(m.ml_pipeline_deployment(), KubeflowSettings(), CREDENTIALS)
    assert broken is not None
    broken["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringScheduling"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, TARGET_VERSIONS[0], strict=True)
