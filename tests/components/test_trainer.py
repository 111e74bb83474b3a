"""Kubeflow Trainer: the transforms on objects shaped like its manifests, the training runtimes, the component
under mocks, the stack's refusals, and what the plan of the shipped prod stacks says about it.

Transforms are recorded, not run, under Pulumi mocks, so the functions are tested directly on objects written
after Trainer v2.2.1's manager kustomization (tests/trainer_manifests.py). The runtimes' own fields are
checked against a schema derived from Trainer's CRDs (tests/crds/trainer-v2.2.1.schema.json, through
tests/crds/validate.js as the ComputeClass schema is), their Job template against Kubernetes' schema
(tests/platform/test_manifests_valid.py).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

import pulumi
import pytest

import trainer_manifests as m
from crd_schemas import schema_errors
from recordings import only
from spotkube import GkeGpuCluster, GkeGpuClusterArgs, KubeflowTrainer, KubeflowTrainerArgs
from spotkube.clouds import parse_spec, plan_platform
from spotkube.components.offline import ProgramFailed, Recording, StackRun, record_program
from spotkube.platform.addons import trainer_reference, trainer_transforms, training_runtime
from spotkube.platform.contract import Placement, PoolContract, landing_pools
from spotkube.platform.errors import SpecError
from spotkube.platform.identities import KubernetesKind, kubernetes_kinds
from spotkube.platform.spec import TrainingSettings
from spotkube.review.placements import CONFIGGROUP_TYPE, registered_runtimes

DIRECTORY = "kubernetes:kustomize/v2:Directory"
MANIFESTS = "https://github.com/kubeflow/trainer//manifests/overlays/manager?ref=v2.2.1"
GKE_ARGS: GkeGpuClusterArgs = {
    "environment": "dev", "region": "us-central1", "cluster": {"project": "spotkube-test"},
    "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8", "max": 4},
                  {"name": "l4-ondemand", "machine": "g2-standard-8", "capacity": "on-demand", "max": 2}],
}


def gke_spec(**training: Any) -> dict[str, Any]:
    return {
        "cloud": "gke", "environment": "dev", "region": "europe-west4", "cluster": {"project": "spotkube-test"},
        "gpuPools": [
            {"name": "a100-spot", "machine": "a2-highgpu-2g", "capacity": "spot", "max": 8},
            {"name": "a100-ondemand", "machine": "a2-highgpu-2g", "capacity": "on-demand", "max": 2},
            {"name": "t4-pre", "machine": "n1-standard-8", "gpu": {"type": "nvidia-tesla-t4", "count": 1},
             "capacity": "preemptible", "max": 4},
        ],
        "kueue": {"enabled": True}, "training": {"enabled": True, **training},
    }


@pytest.fixture(scope="module")
def untainted_pools() -> list[PoolContract]:
    """Every kind of pool, with the taints removed: only the affinity can keep a pod off them."""
    return [dataclasses.replace(p, taints=()) for p in plan_platform(parse_spec(gke_spec(), "test")).contracts()]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


# --- the transforms on the release's objects ------------------------------------------------------


@pytest.mark.parametrize("shipped", [m.trainer_controller(), m.jobset_controller()],
                         ids=lambda d: d["metadata"]["name"])
def test_both_controllers_land_on_the_platform_pool_only(shipped: dict[str, Any],
                                                         untainted_pools: list[PoolContract]) -> None:
    assert len(landing_pools(Placement.from_pod_spec(pod_spec(shipped)), untainted_pools)) > 1, "upstream: anywhere"
    changed = trainer_transforms.transform(shipped)
    assert changed is not None
    assert landing_pools(Placement.from_pod_spec(pod_spec(changed)), untainted_pools) == ["platform"]
    kept = {k: v for k, v in pod_spec(changed).items() if k != "affinity"}
    assert kept == pod_spec(shipped), "containers, volumes, security context and grace are kept"
    assert changed["metadata"] == shipped["metadata"] and changed["spec"]["selector"] == shipped["spec"]["selector"]


def test_a_team_cluster_s_controllers_go_where_its_labels_say(untainted_pools: list[PoolContract]) -> None:
    changed = trainer_transforms.transform(m.jobset_controller(), {"spotkube.io/pool": "platform"})
    assert changed is not None
    assert landing_pools(Placement.from_pod_spec(pod_spec(changed)), untainted_pools) == ["platform"]


@pytest.mark.parametrize("obj", m.untouched(), ids=lambda o: f"{o['kind']}-{o['metadata']['name']}")
def test_crds_webhooks_services_and_the_namespace_are_applied_as_shipped(obj: dict[str, Any]) -> None:
    assert trainer_transforms.transform(obj) is None


def test_the_plan_describes_the_controllers_as_the_fixture_has_them() -> None:
    described = trainer_reference.shipped_controller_deployments()
    assert len(described) == 2, "Trainer's and JobSet's"
    for shipped, mine in zip([m.trainer_controller(), m.jobset_controller()], described, strict=True):
        assert mine["metadata"]["name"] == shipped["metadata"]["name"]
        assert mine["metadata"]["namespace"] == shipped["metadata"]["namespace"] == trainer_reference.NAMESPACE
        assert mine["spec"]["selector"] == shipped["spec"]["selector"]
        images = [[c["image"] for c in pod_spec(d)["containers"]] for d in (mine, shipped)]
        assert images[0] == images[1]
        for key in ("nodeSelector", "affinity", "tolerations"):
            assert key not in pod_spec(mine) and key not in pod_spec(shipped)


def test_the_pinned_release_is_the_one_described() -> None:
    assert TrainingSettings().version == trainer_reference.VERSION
    assert trainer_transforms.manifest_url(TrainingSettings().version) == MANIFESTS
    assert trainer_transforms.is_manifest_url(MANIFESTS)


# --- the training runtimes ------------------------------------------------------------------------


def runtimes(spec: dict[str, Any], grace: int = 15, restarts: int = 1) -> dict[str, dict[str, Any]]:
    pools = plan_platform(parse_spec(spec, "test")).gpu_pools
    return {r["metadata"]["name"]: r for r in training_runtime.runtimes(pools, grace_seconds=grace,
                                                                         failure_restarts=restarts)}


def test_each_gpu_type_gets_a_runtime_whose_workers_land_on_its_spot_pools_and_fallback(
        untainted_pools: list[PoolContract]) -> None:
    found = runtimes(gke_spec())
    assert sorted(found) == ["spotkube-nvidia-tesla-a100", "spotkube-nvidia-tesla-t4"]
    pools = plan_platform(parse_spec(gke_spec(), "test")).contracts()
    a100 = Placement.from_pod_spec(training_runtime.worker_pod_spec(found["spotkube-nvidia-tesla-a100"]))
    assert landing_pools(a100, pools) == ["a100-spot", "a100-ondemand"], "spot preferred, then the fallback"
    t4 = Placement.from_pod_spec(training_runtime.worker_pod_spec(found["spotkube-nvidia-tesla-t4"]))
    assert landing_pools(t4, pools) == ["t4-pre"], "no on-demand T4: interruptible only"
    assert landing_pools(t4, untainted_pools) == ["t4-pre"], "the affinity alone keeps it off the others"
    spot_taints = next(p for p in pools if p.name == "a100-spot").taints
    assert spot_taints, "a spot GPU pool is tainted"
    for taint in spot_taints:
        assert any(t.tolerates(taint) for t in a100.tolerations), taint


def test_a_disruption_restarts_for_free_and_a_failure_spends_the_budget() -> None:
    runtime = runtimes(gke_spec(), restarts=3)["spotkube-nvidia-tesla-t4"]
    policy = runtime["spec"]["template"]["spec"]["failurePolicy"]
    assert policy["maxRestarts"] == 3
    assert policy["rules"] == [
        {"name": "disruption", "action": "RestartJobSetAndIgnoreMaxRestarts",
         "onJobFailureReasons": ["PodFailurePolicy"]},
        {"name": "failure", "action": "RestartJobSet"}]
    (job,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert job["name"] == "node" and job["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}, "the job and label Trainer's torch plugin fills in"
    assert job["template"]["spec"]["backoffLimit"] == 0, "a worker's own failure fails the Job at once"
    assert job["template"]["spec"]["podFailurePolicy"] == {"rules": [
        {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]}
    worker = training_runtime.worker_pod_spec(runtime)
    assert worker["restartPolicy"] == "Never" and worker["terminationGracePeriodSeconds"] == 15
    assert training_runtime.evictions_restart_for_free(runtime) and training_runtime.failure_restarts(runtime) == 3


def test_a_runtime_whose_first_matching_rule_counts_evictions_is_not_free() -> None:
    runtime = runtimes(gke_spec())["spotkube-nvidia-tesla-t4"]
    policy = runtime["spec"]["template"]["spec"]["failurePolicy"]
    policy["rules"] = [{"name": "all", "action": "RestartJobSet"}, *policy["rules"]]
    assert not training_runtime.evictions_restart_for_free(runtime)


def test_every_runtime_meets_trainer_s_crd_schema_and_a_broken_one_does_not() -> None:
    found = list(runtimes(gke_spec()).values())
    assert schema_errors(found) == [[], []]
    broken = runtimes(gke_spec())["spotkube-nvidia-tesla-t4"]
    broken["spec"]["template"]["spec"]["failurePolicy"]["rules"][0]["action"] = "RestartForFree"
    broken["spec"]["template"]["spec"]["failurePolicy"]["maxRetries"] = 1
    (errors,) = schema_errors([broken])
    assert any("/spec/template/spec/failurePolicy/rules/0/action" in e for e in errors), errors
    assert any("additional properties" in e for e in errors), errors


def test_a_shared_gpu_pool_gets_no_runtime() -> None:
    spec = {"cloud": "aks", "environment": "dev", "region": "eastus", "kubeflow": {"enabled": True},
            "kueue": {"enabled": True}, "training": {"enabled": True},
            "gpuPools": [{"name": "a100mig", "machine": "Standard_NC24ads_A100_v4", "max": 2,
                          "sharing": {"mig": "1g.10gb"}},
                         {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "max": 4}]}
    assert sorted(runtimes(spec)) == ["spotkube-nvidia-tesla-t4"]
    with pytest.raises(SpecError, match=r"spotkube:training.enabled: true with no GPU pool that gives whole GPUs"):
        parse_spec({**spec, "gpuPools": spec["gpuPools"][:1]}, "stacks/Pulumi.x.yaml")


# --- the component under mocks --------------------------------------------------------------------


def build(args: KubeflowTrainerArgs, cluster_args: GkeGpuClusterArgs = GKE_ARGS) -> Recording:
    def program() -> None:
        cluster = GkeGpuCluster("ml", args=cluster_args)
        trainer = KubeflowTrainer("trainer", args=args, opts=pulumi.ResourceOptions(providers=[cluster.provider]))
        pulumi.export("runtimes", trainer.runtimes)
        pulumi.export("namespace", trainer.namespace)

    return record_program(program, project="spotkube", stack="test", config={})



def test_the_pinned_manifests_and_the_runtimes_are_applied_through_the_cluster_s_provider() -> None:
    recording = build({"failure_restart_limit": 2, "grace_period_seconds": 25})
    manifests = only(recording, DIRECTORY, "trainer-manifests")
    assert manifests.inputs["directory"] == MANIFESTS
    provider = only(recording, "pulumi:providers:kubernetes", "ml-k8s")
    component = only(recording, trainer_transforms.TRAINER_TYPE, "trainer")
    assert manifests.provider.startswith(provider.urn + "::") and manifests.parent == component.urn
    group = only(recording, CONFIGGROUP_TYPE, "trainer-runtimes")
    assert manifests.urn in group.dependencies, "Trainer's CRD and webhook come first"
    (runtime,) = registered_runtimes([group])
    assert runtime["metadata"]["name"] == "spotkube-nvidia-l4"
    assert training_runtime.failure_restarts(runtime) == 2
    assert training_runtime.worker_pod_spec(runtime)["terminationGracePeriodSeconds"] == 25
    assert recording.outputs["runtimes"].value == ["spotkube-nvidia-l4"]
    assert recording.outputs["namespace"].value == "kubeflow-system"
    kinds = kubernetes_kinds(recording.registrations)
    assert {KubernetesKind("trainer.kubeflow.org", "ClusterTrainingRuntime"),
            KubernetesKind("admissionregistration.k8s.io", "ValidatingWebhookConfiguration")} <= kinds


def test_the_manifests_carry_the_trainer_transform(transforms_seen: dict[str, list[Callable[..., Any]]]) -> None:
    build({})
    (adapter,) = transforms_seen["trainer-manifests"]
    args = pulumi.ResourceTransformArgs(True, "kubernetes:apps/v1:Deployment", "trainer-manifests:jobset",
                                        m.jobset_controller(), pulumi.ResourceOptions())
    assert "affinity" in pod_spec(adapter(args).props)
    service = m.untouched()[-1]
    assert adapter(pulumi.ResourceTransformArgs(True, "kubernetes:core/v1:Service", "trainer-manifests:svc", service,
                                                pulumi.ResourceOptions())) is None


def test_the_public_args_mirror_the_settings() -> None:
    """All but `enabled` and the checkpoint store, which the cluster component creates from the stack file."""
    assert set(typing.get_type_hints(KubeflowTrainerArgs)) == set(TrainingSettings.model_fields) - {
        "enabled", "checkpoint_store"}


def test_bad_args_fail_before_anything_is_registered() -> None:
    with pytest.raises(ProgramFailed) as failure:
        build({"version": "v2.1.0", "failure_restart_limit": 11})
    message = str(failure.value)
    assert "KubeflowTrainer 'trainer' args: version: 'v2.1.0' is older than the Trainer releases Kueue v0.19 admits" \
        in message
    assert "KubeflowTrainer 'trainer' args: failure_restart_limit: 11" in message
    assert not [r for r in failure.value.registrations if r.type in (DIRECTORY, trainer_transforms.TRAINER_TYPE)]
    with pytest.raises(ProgramFailed, match=r"enabled: is not a key of these args: the component always installs"):
        build(typing.cast(KubeflowTrainerArgs, {"enabled": False}))


# --- the stack and the shipped prod stacks --------------------------------------------------------


def test_a_stack_refuses_training_without_kueue() -> None:
    with pytest.raises(SpecError, match=r"spotkube:training.enabled: true needs Kueue: a TrainJob names Kueue's"):
        parse_spec({**gke_spec(), "kueue": {"enabled": False}}, "stacks/Pulumi.x.yaml")
    assert parse_spec({**gke_spec(), "training": {}}, "test").training.enabled is False, "off unless a stack asks"


@pytest.mark.parametrize("stack,grace,runtime", [("aks-prod-eastus", 30, "spotkube-nvidia-a100-80gb"),
                                                 ("gke-prod-europe-west4", 15, "spotkube-nvidia-tesla-a100")])
def test_each_prod_stack_deploys_trainer_with_a_runtime_that_tolerates_spot_and_restarts_for_free(
        shipped_run: Callable[[str], StackRun], stack: str, grace: int, runtime: str) -> None:
    run = shipped_run(stack)
    (manifests,) = [r for r in run.registrations if r.type == DIRECTORY and "kubeflow/trainer" in r.inputs["directory"]]
    assert manifests.inputs["directory"] == MANIFESTS
    found = {r["metadata"]["name"]: r for r in registered_runtimes(run.registrations)}
    assert runtime in found
    worker = Placement.from_pod_spec(training_runtime.worker_pod_spec(found[runtime]))
    (cluster,) = run.clusters
    spot = [p for p in cluster.contracts or () if p.capacity == "spot" and p.accelerator]
    assert spot, "the stack has spot GPU pools"
    assert all(pool.taints for pool in spot), "spot GPU pools are tainted"
    for pool in spot:
        assert all(any(t.tolerates(taint) for t in worker.tolerations) for taint in pool.taints), pool.name
    assert training_runtime.evictions_restart_for_free(found[runtime])
    assert training_runtime.worker_pod_spec(found[runtime])["terminationGracePeriodSeconds"] == grace
