"""Kueue: the pure transforms on objects shaped like its release manifests, the queue preset, the
component under mocks, the stack's refusals and what the plan says about it.

Transforms are recorded, not run, under Pulumi mocks, so the functions are tested directly on
objects written after Kueue v0.19.2's `manifests.yaml` (tests/kueue_manifests.py), and the mock tests
check that the component attaches them, applies the pinned release and builds the queue after it.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

import kueue_manifests as m
from recordings import only
from spotkube import GkeGpuCluster, GkeGpuClusterArgs, Kueue, KueueArgs
from spotkube.clouds import parse_spec, plan_platform
from spotkube.components.kueue import KueueRequest
from spotkube.components.offline import ProgramFailed, Recording, record_program, run_stack
from spotkube.platform.addons import kueue_preset, kueue_reference, kueue_transforms
from spotkube.platform.contract import Placement, PoolContract, landing_pools
from spotkube.platform.errors import SpecError
from spotkube.platform.identities import KubernetesKind, kubernetes_kinds
from spotkube.platform.project import find_project
from spotkube.platform.spec import KueueSettings
from spotkube.review.placements import stack_placements

REPO = Path(__file__).resolve().parents[2]
CONFIGFILE = "kubernetes:yaml/v2:ConfigFile"
RELEASE = "https://github.com/kubernetes-sigs/kueue/releases/download/v0.19.2/manifests.yaml"
PIPELINES = ["kubeflow"]
GKE_ARGS: GkeGpuClusterArgs = {
    "environment": "dev", "region": "us-central1", "cluster": {"project": "spotkube-test"},
    "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8", "max": 4},
                  {"name": "l4-ondemand", "machine": "g2-standard-8", "capacity": "on-demand", "max": 2}],
}


def gke_spec(**kueue: Any) -> dict[str, Any]:
    return {
        "cloud": "gke", "environment": "dev", "region": "europe-west4", "cluster": {"project": "spotkube-test"},
        "gpuPools": [
            {"name": "a100-spot", "machine": "a2-highgpu-2g", "capacity": "spot", "max": 8},
            {"name": "a100-ondemand", "machine": "a2-highgpu-2g", "capacity": "on-demand", "max": 2},
            {"name": "t4-pre", "machine": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
             "capacity": "preemptible", "max": 4},
            {"name": "t4-spot", "machine": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
             "capacity": "spot", "max": 3},
        ],
        "kueue": {"enabled": True, **kueue},
    }


@pytest.fixture(scope="module")
def untainted_pools() -> list[PoolContract]:
    """Every kind of pool, with the taints removed: only the affinity can keep a pod off them."""
    spec = parse_spec(gke_spec(), "test")
    return [dataclasses.replace(p, taints=()) for p in plan_platform(spec).contracts()]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


# --- the transforms on the release's objects ------------------------------------------------------


def test_the_controller_lands_on_the_platform_pool_only(untainted_pools: list[PoolContract]) -> None:
    shipped = m.controller_deployment()
    assert len(landing_pools(Placement.from_pod_spec(pod_spec(shipped)), untainted_pools)) > 1, "upstream: anywhere"
    changed = kueue_transforms.transform(shipped, PIPELINES)
    assert changed is not None
    assert landing_pools(Placement.from_pod_spec(pod_spec(changed)), untainted_pools) == ["platform"]
    spec = pod_spec(changed)
    for key in ("containers", "volumes", "securityContext", "serviceAccountName", "terminationGracePeriodSeconds"):
        assert spec[key] == pod_spec(m.controller_deployment())[key], f"{key} is kept"
    assert changed["metadata"] == shipped["metadata"] and changed["spec"]["selector"] == shipped["spec"]["selector"]


def test_the_manager_queues_labelled_pods_of_the_pipelines_namespace_and_counts_only_gpus() -> None:
    changed = kueue_transforms.transform(m.manager_configmap(), PIPELINES)
    assert changed is not None
    config = yaml.safe_load(changed["data"]["controller_manager_config.yaml"])
    assert "pod" in config["integrations"]["frameworks"]
    assert config["managedJobsNamespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["kubeflow"]}]}
    assert config["resources"] == {"quotaCheckStrategy": "IgnoreUndeclared"}
    assert "manageJobsWithoutQueueName" not in config, "pods that name no queue are never gated"
    assert config["waitForPodsReady"] == {
        "timeout": "30m", "recoveryTimeout": "30m", "blockAdmission": False,
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600}}
    assert "enable" not in config["waitForPodsReady"], "Kueue v0.19.2's v1beta2 Configuration has no such field"
    changed_keys = ("managedJobsNamespaceSelector", "resources", "waitForPodsReady")
    kept = {k: v for k, v in config.items() if k not in changed_keys}
    assert kept == m.SHIPPED_CONFIG, "every shipped setting, the framework list included, is kept"
    assert changed["metadata"] == m.manager_configmap()["metadata"]


def test_a_configuration_without_the_pod_integration_gets_it() -> None:
    config = {**m.SHIPPED_CONFIG, "integrations": {"frameworks": ["batch/job"]},
              "resources": {"excludeResourcePrefixes": ["example.com/"]}}
    changed = kueue_transforms.transform(m.manager_configmap(config), PIPELINES)
    assert changed is not None
    parsed = yaml.safe_load(changed["data"]["controller_manager_config.yaml"])
    assert parsed["integrations"]["frameworks"] == ["batch/job", "pod"]
    assert parsed["resources"] == {"quotaCheckStrategy": "IgnoreUndeclared"}, "Kueue refuses both together"


@pytest.mark.parametrize("obj", m.untouched(), ids=lambda o: o["kind"])
def test_crds_webhooks_services_and_secrets_are_applied_as_shipped(obj: dict[str, Any]) -> None:
    assert kueue_transforms.transform(obj, PIPELINES) is None


def test_the_plan_describes_the_controller_as_the_fixture_has_it() -> None:
    """The reference the plan judges placement from agrees with the release's controller."""
    shipped, described = m.controller_deployment(), kueue_reference.shipped_controller_deployment()
    assert described["metadata"] == shipped["metadata"]
    assert described["spec"]["selector"] == shipped["spec"]["selector"]
    images = [[c["image"] for c in pod_spec(d)["containers"]] for d in (described, shipped)]
    assert images[0] == images[1]
    for key in ("nodeSelector", "affinity", "tolerations"):
        assert key not in pod_spec(described) and key not in pod_spec(shipped)


def test_the_pinned_release_is_the_one_described() -> None:
    assert KueueSettings().version == kueue_reference.VERSION
    assert kueue_transforms.manifest_url(KueueSettings().version) == RELEASE


# --- the queue preset -----------------------------------------------------------------------------


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_each_gpu_tier_gets_a_flavor_and_its_full_scale_quota_in_fallback_order() -> None:
    plan = plan_platform(parse_spec(gke_spec(), "test"))
    objects = kueue_preset.preset(plan.gpu_pools, "kubeflow", "spot-gpus")
    flavors = {f["metadata"]["name"]: f["spec"]["nodeLabels"] for f in by_kind(objects, "ResourceFlavor")}
    assert flavors["nvidia-tesla-a100-spot"] == {"spotkube.io/accelerator": "nvidia-tesla-a100",
                                                 "spotkube.io/capacity": "spot"}
    (queue,) = by_kind(objects, "ClusterQueue")
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/gpu"]
    quotas = [(f["name"], f["resources"][0]["nominalQuota"]) for f in group["flavors"]]
    # a2-highgpu-2g has 2 A100s: 8 nodes x 2 on spot, 2 x 2 on demand; one T4 a node.
    assert quotas == [("nvidia-tesla-a100-spot", "16"), ("nvidia-tesla-t4-spot", "3"),
                      ("nvidia-tesla-t4-preemptible", "4"), ("nvidia-tesla-a100-on-demand", "4")]
    assert set(flavors) == {name for name, _ in quotas}
    assert queue["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "kubeflow"}}
    assert "admissionChecksStrategy" not in queue["spec"]
    (local,) = by_kind(objects, "LocalQueue")
    assert local == {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                     "metadata": {"name": "spot-gpus", "namespace": "kubeflow"},
                     "spec": {"clusterQueue": "spotkube-gpus"}}
    assert not by_kind(objects, "AdmissionCheck") and not by_kind(objects, "ProvisioningRequestConfig")


def test_a_queued_provisioning_pool_gets_its_flavor_and_the_provisioning_request_check() -> None:
    plan = plan_platform(parse_spec(gke_spec(), "test"))
    objects = kueue_preset.preset(plan.gpu_pools, "kubeflow", "spot-gpus", ["a100-ondemand"],
                                  "queued-provisioning.gke.io")
    assert [o["kind"] for o in objects[:2]] == ["ProvisioningRequestConfig", "AdmissionCheck"], "applied first"
    (config,) = by_kind(objects, "ProvisioningRequestConfig")
    assert config["spec"] == {"provisioningClassName": "queued-provisioning.gke.io",
                              "managedResources": ["nvidia.com/gpu"]}
    (check,) = by_kind(objects, "AdmissionCheck")
    assert check["spec"] == {"controllerName": "kueue.x-k8s.io/provisioning-request",
                             "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig",
                                            "name": config["metadata"]["name"]}}
    (queue,) = by_kind(objects, "ClusterQueue")
    names = [f["name"] for f in queue["spec"]["resourceGroups"][0]["flavors"]]
    assert names == ["nvidia-tesla-a100-spot", "nvidia-tesla-t4-spot", "nvidia-tesla-t4-preemptible",
                     "queued-a100-ondemand"], "spot, preemptible, then the queued tier; no other on-demand A100"
    assert queue["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": check["metadata"]["name"], "onFlavors": ["queued-a100-ondemand"]}]}
    queued = next(f for f in by_kind(objects, "ResourceFlavor") if f["metadata"]["name"] == "queued-a100-ondemand")
    assert queued["spec"]["nodeLabels"] == {"spotkube.io/pool": "a100-ondemand"}
    without_class = kueue_preset.preset(plan.gpu_pools, "kubeflow", "spot-gpus", ["a100-ondemand"], None)
    assert not by_kind(without_class, "AdmissionCheck"), "a cloud without queued provisioning gets no check"


def test_a_stacks_flex_start_tiers_get_their_flavors_and_only_its_queued_pool_the_check() -> None:
    """Through the cloud's plan, as the component builds it: the flex-start tier sits between spot and
    on-demand, and the check covers the pool the stack asked queued provisioning for, and no other."""
    spec = gke_spec()
    spec["gpuPools"] = [
        {"name": "a100-spot", "machine": "a2-highgpu-2g", "capacity": "spot", "max": 8},
        {"name": "a100-flex", "machine": "a2-highgpu-2g", "capacity": "flex-start", "max": 4},
        {"name": "a100-queued", "machine": "a2-highgpu-2g", "capacity": "flex-start", "max": 2,
         "queuedProvisioning": True},
        {"name": "a100-ondemand", "machine": "a2-highgpu-2g", "capacity": "on-demand", "max": 2},
    ]
    plan = plan_platform(parse_spec(spec, "test"))
    request = KueueRequest.for_pools(plan.gpu_pools, plan.cloud, KueueSettings())
    (queue,) = by_kind(list(request.preset), "ClusterQueue")
    flavors = [(f["name"], f["resources"][0]["nominalQuota"]) for f in queue["spec"]["resourceGroups"][0]["flavors"]]
    assert flavors == [("nvidia-tesla-a100-spot", "16"), ("nvidia-tesla-a100-flex-start", "8"),
                       ("queued-a100-queued", "4"), ("nvidia-tesla-a100-on-demand", "4")]
    assert queue["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] == ["queued-a100-queued"]
    (config,) = by_kind(list(request.preset), "ProvisioningRequestConfig")
    assert config["spec"]["provisioningClassName"] == "queued-provisioning.gke.io"


def test_every_flavor_names_every_covered_resource() -> None:
    """Kueue refuses a resource group whose flavors list different resources: a MIG tier and a whole-GPU
    tier each get the other's resource with quota 0."""
    spec = parse_spec({"cloud": "aks", "environment": "dev", "region": "eastus",
                       "devicePlugin": {"migStrategy": "mixed"},
                       "gpuPools": [{"name": "a100mig", "machine": "Standard_NC24ads_A100_v4", "min": 1, "max": 2,
                                     "sharing": {"mig": "1g.10gb"}},
                                    {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "max": 4}]}, "test")
    (queue,) = by_kind(kueue_preset.preset(plan_platform(spec).gpu_pools, "kubeflow", "q"), "ClusterQueue")
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]
    quotas = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}
    # 7 instances of 1g.10gb per A100, 2 nodes.
    assert quotas == {"nvidia-a100-80gb-spot": {"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "14"},
                      "nvidia-tesla-t4-spot": {"nvidia.com/gpu": "4", "nvidia.com/mig-1g.10gb": "0"}}


# --- the component under mocks --------------------------------------------------------------------


def build(args: KueueArgs, cluster_args: GkeGpuClusterArgs = GKE_ARGS) -> Recording:
    def program() -> None:
        cluster = GkeGpuCluster("ml", args=cluster_args)
        kueue = Kueue("kueue", args=args, opts=pulumi.ResourceOptions(providers=[cluster.provider]))
        pulumi.export("localQueue", kueue.local_queue)
        pulumi.export("clusterQueue", kueue.cluster_queue)

    return record_program(program, project="spotkube", stack="test", config={})


@pytest.fixture(scope="module")
def default_install() -> Recording:
    return build({})



def test_the_pinned_release_is_applied_through_the_cluster_s_provider(default_install: Recording) -> None:
    manifests = only(default_install, CONFIGFILE, "kueue-manifests")
    assert manifests.inputs["file"] == RELEASE
    provider = only(default_install, "pulumi:providers:kubernetes", "ml-k8s")
    component = only(default_install, kueue_transforms.KUEUE_TYPE, "kueue")
    assert manifests.provider.startswith(provider.urn + "::") and manifests.parent == component.urn


def test_the_queue_is_built_after_the_manifests_from_the_cluster_s_pools(default_install: Recording) -> None:
    manifests = only(default_install, CONFIGFILE, "kueue-manifests")
    preset = [r for r in default_install.registrations if r.type.startswith("kubernetes:kueue.x-k8s.io/v1beta2:")]
    assert sorted(r.name for r in preset) == ["kueue-clusterqueue-spotkube-gpus", "kueue-localqueue-spot-gpus",
                                              "kueue-resourceflavor-nvidia-l4-on-demand",
                                              "kueue-resourceflavor-nvidia-l4-spot"]
    for registration in preset:
        assert manifests.urn in registration.dependencies, "the CRDs and webhooks come first"
    queue = only(default_install, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "kueue-clusterqueue-spotkube-gpus")
    flavors = queue.inputs["spec"]["resourceGroups"][0]["flavors"]
    assert [(f["name"], f["resources"][0]["nominalQuota"]) for f in flavors] == [
        ("nvidia-l4-spot", "4"), ("nvidia-l4-on-demand", "2")]
    assert default_install.outputs["localQueue"].value == "spot-gpus"
    assert default_install.outputs["clusterQueue"].value == "spotkube-gpus"


def test_the_manifests_carry_the_kueue_transform(transforms_seen: dict[str, list[Callable[..., Any]]]) -> None:
    build({"local_queue": "research"})
    (adapter,) = transforms_seen["kueue-manifests"]
    args = pulumi.ResourceTransformArgs(True, "kubernetes:core/v1:ConfigMap", "kueue-manifests:kueue-manager-config",
                                        m.manager_configmap(), pulumi.ResourceOptions())
    config = yaml.safe_load(adapter(args).props["data"]["controller_manager_config.yaml"])
    assert config["managedJobsNamespaceSelector"]["matchExpressions"][0]["values"] == ["kubeflow"]
    secret = pulumi.ResourceTransformArgs(True, "kubernetes:core/v1:Secret", "kueue-manifests:cert",
                                          m.webhook_cert_secret(), pulumi.ResourceOptions())
    assert adapter(secret) is None


def test_the_public_args_mirror_the_settings() -> None:
    assert set(typing.get_type_hints(KueueArgs)) == set(KueueSettings.model_fields) - {"enabled"}


def test_bad_args_fail_before_anything_is_registered() -> None:
    with pytest.raises(ProgramFailed) as failure:
        build({"version": "v0.14.0", "local_queue": "Spot GPUs"})
    message = str(failure.value)
    assert ("Kueue 'kueue' args: version: 'v0.14.0' is older than the Kueue releases spotkube configures; use "
            "v0.19.0 or later") in message
    assert "Kueue 'kueue' args: local_queue: 'Spot GPUs'" in message
    assert not [r for r in failure.value.registrations if r.type in (CONFIGFILE, kueue_transforms.KUEUE_TYPE)]
    with pytest.raises(ProgramFailed, match=r"Kueue 'kueue' args: enabled: is not a key of these args: the component "
                                            r"always installs Kueue; to install none, don't create the component"):
        build(typing.cast(KueueArgs, {"enabled": False}))


def test_kueue_without_a_spotkube_cluster_or_its_gpu_pools_is_refused() -> None:
    def elsewhere() -> None:
        provider = k8s.Provider("other", kubeconfig="offline")
        Kueue("kueue", args={}, opts=pulumi.ResourceOptions(providers=[provider]))

    with pytest.raises(ProgramFailed, match=r"Kueue 'kueue': opts: deploys through no spotkube cluster's provider"):
        record_program(elsewhere, project="spotkube", stack="test", config={})
    with pytest.raises(ProgramFailed, match=r"GkeGpuCluster 'ml' has no GPU pools, so the queue would have no quota"):
        build({}, {**GKE_ARGS, "gpu_pools": []})


# --- the stack ------------------------------------------------------------------------------------


def test_a_stack_refuses_kueue_without_kubeflow_or_gpu_pools() -> None:
    with pytest.raises(SpecError) as failure:
        parse_spec({**gke_spec(), "gpuPools": [], "kubeflow": {"enabled": False}}, "stacks/Pulumi.x.yaml")
    message = str(failure.value)
    assert "spotkube:kueue.enabled: true needs Kubeflow Pipelines" in message
    assert "spotkube:kueue.enabled: true with no GPU pools gives the ClusterQueue no quota" in message
    with pytest.raises(SpecError, match=r"spotkube:kueue.version: 'v0.18.6' is older than the Kueue releases"):
        parse_spec(gke_spec(version="v0.18.6"), "stacks/Pulumi.x.yaml")
    assert parse_spec({**gke_spec(), "kueue": {}}, "test").kueue.enabled is False, "off unless a stack asks"


def test_the_shipped_gke_prod_stack_runs_kueue_on_the_platform_pool_and_plans_its_queue() -> None:
    run = run_stack(find_project(REPO), "gke-prod-europe-west4")
    (manifests,) = [r for r in run.registrations if r.type == CONFIGFILE]
    assert manifests.inputs["file"] == RELEASE
    (kueue_component,) = [r for r in run.registrations if r.type == kueue_transforms.KUEUE_TYPE]
    kubeflow = next(r for r in run.registrations if r.name == "kubeflow-pipelines-cluster-scoped")
    assert kubeflow.urn in kueue_component.dependencies, "the LocalQueue's namespace comes first"
    (cluster,) = run.clusters
    assert cluster.contracts is not None
    placements = stack_placements("gke", run.registrations, cluster.contracts)
    (controller,) = [p for p in placements.placements if p.workload == "kueue-controller-manager"]
    assert (controller.namespace, controller.pools) == ("kueue-system", ("platform",))
    assert "described, not read" in (controller.note or "")
    kinds = kubernetes_kinds(run.registrations)
    assert {KubernetesKind("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
            KubernetesKind("kueue.x-k8s.io", "ClusterQueue"),
            KubernetesKind("apiregistration.k8s.io", "APIService")} <= kinds
    assert KubernetesKind("yaml", "ConfigFile") not in kinds
