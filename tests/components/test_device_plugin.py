"""NvidiaDevicePlugin: the DaemonSet lands on exactly the GPU pools, and no node gets two plugins.

The shipped stacks are run through the real program offline, and the DaemonSet's pod spec as the
program registered it is judged by the contract matcher against the pools the stack exports.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spotkube import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from spotkube.clouds import CLOUDS, parse_spec, plan_platform, profile
from spotkube.clouds.gke.device_plugin import MANAGED_PLUGIN as GKE_PLUGIN
from spotkube.clouds.gke.labels import GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL
from spotkube.clouds.gke.spec import GkeSpec
from spotkube.components.offline import ProgramFailed, Recording, StackRun, record_program
from spotkube.platform import contract
from spotkube.platform.addons import device_plugin as workloads
from spotkube.platform.contract import Placement, PoolContract, Taint, landing_pools
from spotkube.platform.project import Project
from spotkube.platform.spec import DevicePluginSettings

DAEMONSET = "kubernetes:apps/v1:DaemonSet"
COMPONENT = "spotkube:index:NvidiaDevicePlugin"


def pool_contracts(run: StackRun) -> list[PoolContract]:
    return [PoolContract.from_json(p) for p in run.outputs["poolContracts"].value]


def gpu_pools(pools: list[PoolContract]) -> list[str]:
    return [p.name for p in pools if p.accelerator]


def daemonsets(run: StackRun) -> list[dict[str, Any]]:
    return [dict(r.inputs) for r in run.registrations if r.type == DAEMONSET]


def pod_spec(manifest: dict[str, Any]) -> dict[str, Any]:
    return manifest["spec"]["template"]["spec"]


@pytest.fixture(scope="module")
def stack_runs(repo_project: Project, shipped_run: Callable[[str], StackRun]) -> dict[str, StackRun]:
    return {name: shipped_run(name) for name in repo_project.stacks()}


# --- the manifest ---------------------------------------------------------------------------------


def test_the_daemonset_follows_nvidia_and_hardens_it() -> None:
    manifest = workloads.device_plugin_daemonset(DevicePluginSettings(version="v0.20.0"))
    spec = pod_spec(manifest)
    (container,) = spec["containers"]
    assert manifest["metadata"]["namespace"] == "kube-system"
    assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["volumes"] == [{"name": "device-plugin",
                                "hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": "Directory"}}]
    assert container["volumeMounts"] == [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}]
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert set(container["resources"]["requests"]) == {"cpu", "memory"}
    assert spec["automountServiceAccountToken"] is False


def test_the_plugin_keeps_nvidia_s_fail_on_init_error_default(stack_runs: dict[str, StackRun]) -> None:
    """With FAIL_ON_INIT_ERROR=false a plugin that starts before the driver waits forever and the
    node's GPUs are never advertised; NVIDIA's default (true) restarts it until the driver is ready."""
    registered = [d for run in stack_runs.values() for d in daemonsets(run)]
    assert registered, "the shipped AKS stacks register the DaemonSet"
    for manifest in [workloads.device_plugin_daemonset(DevicePluginSettings()), *registered]:
        assert "FAIL_ON_INIT_ERROR" not in json.dumps(manifest)
        (container,) = pod_spec(manifest)["containers"]
        # Only the MIG strategy is set (docs/gpu-sharing.md): `single` unless the stack says `mixed`.
        assert container.get("env") == [{"name": "MIG_STRATEGY", "value": "single"}]


def test_the_mig_strategy_comes_from_config() -> None:
    (container,) = pod_spec(workloads.device_plugin_daemonset(DevicePluginSettings(mig_strategy="mixed")))["containers"]
    assert container["env"] == [{"name": "MIG_STRATEGY", "value": "mixed"}]


def test_the_version_and_image_come_from_config() -> None:
    settings = DevicePluginSettings(version="v0.21.1", image="registry.example.com:5000/mirror/k8s-device-plugin")
    (container,) = pod_spec(workloads.device_plugin_daemonset(settings))["containers"]
    assert container["image"] == "registry.example.com:5000/mirror/k8s-device-plugin:v0.21.1"


def test_placement_comes_from_the_contract() -> None:
    spec = pod_spec(workloads.device_plugin_daemonset(DevicePluginSettings()))
    placement = contract.on_any_gpu_pool()
    assert spec["affinity"] == placement.affinity_k8s()
    assert spec["tolerations"] == placement.tolerations_k8s()
    tolerated = {(t["key"], t.get("value")) for t in spec["tolerations"]}
    for taint in (contract.GPU_TAINT, *contract.interruptible_taints()):
        assert (taint.key, taint.value) in tolerated


# --- every shipped stack --------------------------------------------------------------------------


def test_on_aks_the_daemonset_lands_on_exactly_the_gpu_pools(stack_runs: dict[str, StackRun]) -> None:
    aks = {name: run for name, run in stack_runs.items() if run.spec.cloud == "aks"}
    assert aks, "the repository ships AKS stacks"
    for name, run in aks.items():
        pools = pool_contracts(run)
        (manifest,) = daemonsets(run)
        landed = landing_pools(Placement.from_pod_spec(pod_spec(manifest)), pools)
        assert sorted(landed) == sorted(gpu_pools(pools)), name
        capacities = {p.capacity for p in pools if p.name in landed}
        assert capacities & {"spot"}, f"{name}: the plugin must reach spot GPU pools"


def test_on_gke_nothing_is_deployed_and_the_plan_says_why(stack_runs: dict[str, StackRun]) -> None:
    gke = {name: run for name, run in stack_runs.items() if run.spec.cloud == "gke"}
    assert gke, "a shipped gke stack"
    for name, run in gke.items():
        assert [r for r in run.registrations if r.type == COMPONENT], f"{name}: the component is still declared"
        assert not daemonsets(run), name
    from spotkube.review.program_review import stack_document  # the plan's document, as `spotkube plan` prints it

    for run in gke.values():
        assert GKE_PLUGIN.note in stack_document(run).placements.notes


def test_no_pool_of_any_shipped_stack_gets_two_plugins(stack_runs: dict[str, StackRun]) -> None:
    assert stack_runs, "the shipped stacks"
    for name, run in stack_runs.items():
        pools = pool_contracts(run)
        plugins = workloads.plugins_per_pool(pools, [pod_spec(d) for d in daemonsets(run)],
                                             profile(run.spec.cloud).managed_device_plugin)
        for pool in pools:
            expected = 1 if pool.accelerator else 0
            assert len(plugins[pool.name]) == expected, (name, pool.name, plugins[pool.name])
        assert workloads.plugin_problems(pools, plugins, plugin_wanted=True) == []


# --- GKE, modelled on a spec built here -----------------------------------------------------------


def gke_pools(**gpu_pool: Any) -> list[PoolContract]:
    """A GKE platform's pool contracts, planned without the GKE catalog rules."""
    spec = GkeSpec.model_validate({
        "cloud": "gke", "environment": "dev", "region": "us-central1",
        "systemPool": {"machine": "e2-standard-4"}, "platformPool": {"machine": "e2-standard-4"},
        "gpuPools": [
            {"name": "l4-spot", "machine": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}, **gpu_pool},
            {"name": "l4-ondemand", "machine": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1},
             "capacity": "on-demand"},
        ],
    })
    return plan_platform(spec).contracts()


def test_on_gke_the_managed_plugin_serves_each_gpu_pool_once() -> None:
    pools = gke_pools()
    plugins = workloads.plugins_per_pool(pools, [], GKE_PLUGIN)
    assert plugins == {"system": [], "platform": [], "l4-spot": [GKE_PLUGIN.name],
                       "l4-ondemand": [GKE_PLUGIN.name]}
    assert workloads.plugin_problems(pools, plugins, plugin_wanted=True) == []


def test_nvidias_daemonset_beside_gkes_plugin_would_double_count_gpus() -> None:
    """Why the component deploys nothing on GKE: the model catches the double plugin."""
    pools = gke_pools()
    upstream = pod_spec(workloads.device_plugin_daemonset(DevicePluginSettings()))
    plugins = workloads.plugins_per_pool(pools, [upstream], GKE_PLUGIN)
    assert plugins["l4-spot"] == [GKE_PLUGIN.name, workloads.DAEMONSET_NAME]
    problems = workloads.plugin_problems(pools, plugins, plugin_wanted=True)
    assert len(problems) == 2 and all("advertise its GPUs twice" in p for p in problems)


def test_a_pool_that_opts_out_of_gkes_plugin_is_flagged_without_another_plugin() -> None:
    key, value = GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL
    pools = gke_pools(labels={key: value}, gpuDriver="INSTALLATION_DISABLED")
    plugins = workloads.plugins_per_pool(pools, [], GKE_PLUGIN)
    assert plugins["l4-spot"] == [] and plugins["l4-ondemand"] == [GKE_PLUGIN.name]
    (problem,) = workloads.plugin_problems(pools, plugins, plugin_wanted=True)
    assert "'l4-spot' would run no device plugin" in problem
    assert workloads.plugin_problems(pools, plugins, plugin_wanted=False) == []


def test_the_component_deploys_nothing_on_gke_and_a_daemonset_on_aks() -> None:
    def program(cloud: str) -> Recording:
        def body() -> None:
            provider = k8s.Provider("cluster-k8s", kubeconfig="offline")
            plugin = NvidiaDevicePlugin("gpu", args={"cloud": cloud},
                                        opts=pulumi.ResourceOptions(providers=[provider]))
            pulumi.export("mode", plugin.mode)

        return record_program(body, project="spotkube", stack="test", config={})

    gke = program("gke")
    assert gke.outputs["mode"].value == "cloud-managed"
    assert [r.type for r in gke.registrations] == ["pulumi:providers:kubernetes", COMPONENT]
    aks = program("aks")
    assert aks.outputs["mode"].value == "daemonset"
    (daemonset,) = [r for r in aks.registrations if r.type == DAEMONSET]
    (provider,) = [r for r in aks.registrations if r.type == "pulumi:providers:kubernetes"]
    (component,) = [r for r in aks.registrations if r.type == COMPONENT]
    assert daemonset.parent == component.urn
    assert daemonset.provider.startswith(provider.urn + "::")
    assert daemonset.inputs["metadata"]["name"] == workloads.DAEMONSET_NAME


def test_the_public_args_mirror_the_settings_plus_cloud_and_taints() -> None:
    keys = set(typing.get_type_hints(NvidiaDevicePluginArgs))
    assert keys == (set(DevicePluginSettings.model_fields) - {"enabled"}) | {"cloud", "extra_taints"}


# --- extra taints, and the property for any pools -------------------------------------------------


def test_gpu_pools_with_their_own_taints_still_get_the_plugin() -> None:
    spec = parse_spec({
        "cloud": "aks", "environment": "dev", "region": "uksouth",
        "gpuPools": [{"name": "teamgpu", "machine": "Standard_NC4as_T4_v3", "taints": ["team=vision:NoSchedule"]},
                     {"name": "t4spot", "machine": "Standard_NC4as_T4_v3"}],
    }, "test")
    request = workloads.DevicePluginRequest.for_spec(spec)
    assert request.extra_taints == (Taint.parse("team=vision:NoSchedule"),)
    settings = request.settings
    manifest = workloads.device_plugin_daemonset(settings, request.extra_taints)
    pools = plan_platform(spec).contracts()
    assert landing_pools(Placement.from_pod_spec(pod_spec(manifest)), pools) == ["teamgpu", "t4spot"]
    without = pod_spec(workloads.device_plugin_daemonset(settings))
    assert landing_pools(Placement.from_pod_spec(without), pools) == ["t4spot"], "the extra toleration matters"


@st.composite
def platform_pools(draw: st.DrawFn) -> tuple[list[PoolContract], list[Taint]]:
    """Pools of the shapes spotkube builds: on-demand system and platform pools, spot or preemptible
    batch pools, GPU pools of any capacity, some with a user's own taint."""
    cloud = draw(st.sampled_from(sorted(CLOUDS)))
    pools, extra = [], []
    for i in range(draw(st.integers(1, 8))):
        role = draw(st.sampled_from(["system", "platform", "batch", "gpu"]))
        capacity = {"system": "on-demand", "platform": "on-demand"}.get(role) or draw(
            st.sampled_from(["spot", "preemptible"] if role == "batch" else ["spot", "preemptible", "on-demand"]))
        accelerator = draw(st.sampled_from(["nvidia-tesla-t4", "nvidia-l4"])) if role == "gpu" else None
        own = [Taint(f"team{i}", draw(st.sampled_from(["a", "b"])))] if role == "gpu" and draw(st.booleans()) else []
        extra += own
        taints = contract.pool_taints(cloud, role, capacity, has_gpu=accelerator is not None,
                                      system_critical_only=role == "system", extra=own)
        labels = {**contract.declared_labels(cloud, f"p{i}", role, capacity, accelerator),
                  **contract.cloud_added_labels(cloud, f"p{i}", capacity, accelerator)}
        pools.append(PoolContract(f"p{i}", role, capacity, accelerator, 1 if accelerator else 0, labels, taints))
    return pools, extra


@given(platform_pools())
def test_for_any_pools_the_daemonset_lands_exactly_where_there_are_gpus(
    platform: tuple[list[PoolContract], list[Taint]],
) -> None:
    pools, extra_taints = platform
    manifest = workloads.device_plugin_daemonset(DevicePluginSettings(), extra_taints)
    assert landing_pools(Placement.from_pod_spec(pod_spec(manifest)), pools) == [p.name for p in pools if p.accelerator]


def test_bad_args_fail_with_one_clear_message() -> None:
    args: NvidiaDevicePluginArgs = {"cloud": "azure", "version": "0.20", "extra_taints": ["no-effect"]}

    def body() -> None:
        NvidiaDevicePlugin("gpu", args=args)

    with pytest.raises(ProgramFailed) as failure:
        record_program(body, project="spotkube", stack="test", config={})
    message = str(failure.value)
    assert "NvidiaDevicePlugin 'gpu' args: cloud: 'azure' is not accepted; use 'aks' or 'gke'" in message
    assert "extra_taints[0]: 'no-effect' is not a taint" in message
    assert "version: '0.20' is not accepted" in message
    assert failure.value.registrations == []
