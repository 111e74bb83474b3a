"""The Python API keeps its promises: every component refuses malformed args with its name, the key and
what is accepted, before anything is registered; the caller's `protect` survives; the device plugin
learns the cluster's cloud and taints from the cluster; names the clouds would refuse are refused;
and the plan's warnings are logged under `pulumi up`. Run under the recording mocks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pulumi
import pytest
import yaml

from recordings import only
from recordings import refusal as recorded_refusal
from spotkube import (
    AksGpuCluster,
    AksGpuClusterArgs,
    GkeGpuCluster,
    GkeGpuClusterArgs,
    KubeflowPipelines,
    NvidiaDevicePlugin,
)
from spotkube.clouds import parse_spec
from spotkube.components.offline import ProgramFailed, Recording, record_program, run_stack
from spotkube.platform.addons import device_plugin as workloads
from spotkube.platform.project import Project
from spotkube.platform.registration import Registration

REPO = Path(__file__).resolve().parents[2]

AKS_ARGS: AksGpuClusterArgs = {
    "environment": "dev", "region": "uksouth",
    "gpu_pools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "taints": ["team=vision:NoSchedule"]}],
    "cluster": {"deployer": {"object_id": "c0ffee00-0000-4000-8000-000000000001",
                             "principal_type": "ServicePrincipal"}},
}
GKE_ARGS: GkeGpuClusterArgs = {
    "environment": "dev", "region": "us-central1", "cluster": {"project": "spotkube-test"},
    "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8"}],
}
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_POOL = "azure-native:containerservice:AgentPool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"


def run(body: Callable[[], object]) -> Recording:
    return record_program(body, project="spotkube", stack="test", config={})


def refusal(body: Callable[[], object]) -> str:
    return recorded_refusal(body, project="spotkube", stack="test")



COMPONENTS: dict[str, Callable[[str, Any], object]] = {
    "AksGpuCluster": lambda name, args: AksGpuCluster(name, args=args),
    "GkeGpuCluster": lambda name, args: GkeGpuCluster(name, args=args),
    "NvidiaDevicePlugin": lambda name, args: NvidiaDevicePlugin(name, args=args),
    "KubeflowPipelines": lambda name, args: KubeflowPipelines(name, args=args),
}


# --- args that are not a mapping, keys that aren't args -------------------------------------------


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize(("args", "shown"), [(None, "None is null"), (["dev"], "['dev'] is a list"),
                                             ("dev", "'dev' is text"), (3, "3 is a number")])
def test_args_that_are_not_a_mapping_are_refused_with_the_component_s_name(
    component: str, args: object, shown: str,
) -> None:
    message = refusal(lambda: COMPONENTS[component]("x", args))
    assert f"{component} 'x' args: {shown}; give a mapping (dict) of its keys: " in message
    assert "Traceback" not in message and "TypeError" not in message


@pytest.mark.parametrize(("extra", "said"), [
    ({"system_pool": "x"}, "system_pool: 'x' is text; use a mapping of system pool settings"),
    ({"gpu_pools": {}}, "gpu_pools: {} is a mapping; use a list of GPU pools"),
    ({"gpu_pools": ["t4spot"]}, "gpu_pools[0]: 't4spot' is text; use a mapping of GPU pool settings"),
    ({"cluster": {"authorized_ip_ranges": "203.0.113.0/24"}},
     "cluster.authorized_ip_ranges: '203.0.113.0/24' is text; use a list of strings"),
])
def test_nested_values_of_the_wrong_shape_read_in_the_api_s_words(extra: dict[str, object], said: str) -> None:
    message = refusal(lambda: AksGpuCluster("ml", args=cast(AksGpuClusterArgs, {**AKS_ARGS, **extra})))
    assert f"AksGpuCluster 'ml' args: {said}" in message
    assert "valid tuple" not in message and "valid dictionary" not in message


@pytest.mark.parametrize(("build", "said"), [
    (lambda: NvidiaDevicePlugin("gpu", args=cast(Any, {"cloud": "aks", "versoin": "v0.20.0"})),
     "NvidiaDevicePlugin 'gpu' args: versoin: is not a known key; accepted keys: cloud, version, mig_strategy, image, "
     "extra_taints; did you mean version?"),
    (lambda: KubeflowPipelines("kfp", args=cast(Any, {"expose_iu": True})),
     "KubeflowPipelines 'kfp' args: expose_iu: is not a known key; accepted keys: version, repository"),
    (lambda: KubeflowPipelines("kfp", args=cast(Any, {"namespace": "ml"})),
     "KubeflowPipelines 'kfp' args: namespace: is not a known key; accepted keys: version"),
    (lambda: GkeGpuCluster("ml", args=cast(GkeGpuClusterArgs, {**GKE_ARGS, "cloud": "gke"})),
     "GkeGpuCluster 'ml' args: cloud: is fixed by the component, which builds gke; remove the key"),
])
def test_unknown_keys_are_refused_with_the_nearest_accepted_key(build: Callable[[], object], said: str) -> None:
    assert said in refusal(build)


# --- enabled --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("build", "said"), [
    (lambda: NvidiaDevicePlugin("gpu", args=cast(Any, {"cloud": "aks", "enabled": False})),
     "NvidiaDevicePlugin 'gpu' args: enabled: is not a key of these args: the component always deploys the plugin "
     "the cloud needs; to deploy none (you run the GPU Operator, say), don't create the component"),
    (lambda: KubeflowPipelines("kfp", args=cast(Any, {"enabled": False})),
     "KubeflowPipelines 'kfp' args: enabled: is not a key of these args: the component always installs Kubeflow "
     "Pipelines; to install none, don't create the component"),
    (lambda: KubeflowPipelines.from_spec("kfp", parse_spec(
        {"cloud": "aks", "environment": "dev", "region": "uksouth", "kubeflow": {"enabled": False}}, "test")),
     "KubeflowPipelines 'kfp': kubeflow.enabled: is false, so build no Kubeflow Pipelines"),
])
def test_enabled_false_is_refused_not_silently_ignored(build: Callable[[], object], said: str) -> None:
    assert said in refusal(build)


# --- protect --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("build", "cluster_type", "also_protected"), [
    (lambda opts: AksGpuCluster("ml", args=AKS_ARGS, opts=opts), AKS_CLUSTER, "azure-native:resources:ResourceGroup"),
    (lambda opts: GkeGpuCluster("ml", args=GKE_ARGS, opts=opts), GKE_CLUSTER, None),
])
def test_the_caller_s_protect_is_never_weakened_in_dev(
    build: Callable[[pulumi.ResourceOptions], object], cluster_type: str, also_protected: str | None,
) -> None:
    protected = run(lambda: build(pulumi.ResourceOptions(protect=True)))
    assert only(protected, cluster_type).protect is True
    if also_protected:
        assert only(protected, also_protected).protect is True, "what the prod default protects stays protected"
    unprotected = run(lambda: build(pulumi.ResourceOptions()))
    assert only(unprotected, cluster_type).protect is False, "dev's own default is still unprotected"


# --- the device plugin knows its cluster ----------------------------------------------------------


def after(recording: Recording, urn: str) -> set[str]:
    """Every resource the one at `urn` waits for, directly or through the resources it waits for."""
    dependencies = {r.urn: r.dependencies for r in recording.registrations}
    found: set[str] = set()
    pending = list(dependencies[urn])
    while pending:
        if (current := pending.pop()) not in found:
            found.add(current)
            pending.extend(dependencies.get(current, ()))
    return found


def tolerated(daemonset: Registration) -> set[tuple[str, str | None]]:
    return {(t["key"], t.get("value")) for t in daemonset.inputs["spec"]["template"]["spec"]["tolerations"]}


def test_for_cluster_tolerates_every_gpu_pool_s_own_taint_and_uses_the_cluster_s_provider() -> None:
    def body() -> None:
        cluster = AksGpuCluster("ml", args=AKS_ARGS)
        NvidiaDevicePlugin.for_cluster("gpus", cluster, {"version": "v0.20.0"})

    recording = run(body)
    daemonset = only(recording, DAEMONSET)
    assert ("team", "vision") in tolerated(daemonset), "the pool's own taint, never repeated by the caller"
    provider = only(recording, "pulumi:providers:kubernetes")
    assert daemonset.provider.startswith(provider.urn + "::")
    waits_for = after(recording, provider.urn)
    pools = [r.urn for r in recording.registrations if r.type == AKS_POOL]
    assert pools and set(pools) <= waits_for, "what deploys through the provider waits for every pool"
    assert only(recording, AKS_CLUSTER).urn in waits_for


def test_for_cluster_on_gke_deploys_nothing_whatever_the_caller_believes() -> None:
    def body() -> None:
        cluster = GkeGpuCluster("ml", args=GKE_ARGS)
        plugin = NvidiaDevicePlugin.for_cluster("gpus", cluster)
        pulumi.export("mode", plugin.mode)

    recording = run(body)
    assert recording.outputs["mode"].value == "cloud-managed"
    assert not [r for r in recording.registrations if r.type == DAEMONSET], "no second plugin beside GKE's"


def test_a_cloud_that_contradicts_the_provider_s_cluster_is_refused() -> None:
    def body() -> None:
        cluster = GkeGpuCluster("ml", args=GKE_ARGS)
        NvidiaDevicePlugin("gpus", args={"cloud": "aks"}, opts=pulumi.ResourceOptions(providers=[cluster.provider]))

    with pytest.raises(ProgramFailed) as failure:
        run(body)
    assert ("NvidiaDevicePlugin 'gpus' args: cloud: 'aks' contradicts the cluster it deploys to: GkeGpuCluster 'ml' "
            "is 'gke'") in str(failure.value)
    assert workloads.DEVICE_PLUGIN_TYPE not in {r.type for r in failure.value.registrations}


def test_the_cross_language_args_on_a_spotkube_provider_tolerate_the_pools_taints_too() -> None:
    def body() -> None:
        cluster = AksGpuCluster("ml", args=AKS_ARGS)
        NvidiaDevicePlugin("gpus", args={"cloud": "aks"}, opts=pulumi.ResourceOptions(providers=[cluster.provider]))

    assert ("team", "vision") in tolerated(only(run(body), DAEMONSET))


def test_for_cluster_refuses_what_is_not_a_cluster_and_another_cluster_s_provider() -> None:
    assert ("NvidiaDevicePlugin 'gpus': cluster: str is not accepted; give the AksGpuCluster or GkeGpuCluster"
            in refusal(lambda: NvidiaDevicePlugin.for_cluster("gpus", cast(Any, "ml"))))

    def body() -> None:
        one = AksGpuCluster("one", args=AKS_ARGS)
        two = AksGpuCluster("two", args=AKS_ARGS)
        NvidiaDevicePlugin.for_cluster("gpus", one, opts=pulumi.ResourceOptions(providers=[two.provider]))

    with pytest.raises(ProgramFailed, match=r"NvidiaDevicePlugin 'gpus': opts: deploys through AksGpuCluster 'two''s "
                                            r"provider, not the cluster it was built for"):
        run(body)


# --- names the clouds would refuse ----------------------------------------------------------------


@pytest.mark.parametrize(("build", "said"), [
    (lambda: AksGpuCluster("ml_gpu", args=AKS_ARGS),
     "AksGpuCluster 'ml_gpu': the name 'ml_gpu' is not accepted: it becomes the AKS DNS prefix ml_gpu-dev and the "
     "start of the resource group's and the managed cluster's names; use lower-case letters, digits and hyphens, "
     "starting with a letter and not ending with a hyphen, at most 50 characters (e.g. 'ml-gpu')"),
    (lambda: AksGpuCluster("MlGpu", args=AKS_ARGS), "AksGpuCluster 'MlGpu': the name 'MlGpu' is not accepted"),
    (lambda: GkeGpuCluster("vision-inference-platform-eu-1", args=GKE_ARGS),
     "GkeGpuCluster 'vision-inference-platform-eu-1': the name 'vision-inference-platform-eu-1' is not accepted: it "
     "becomes the start of the GKE cluster's name (vision-inference-platform-eu-1-gke-<random suffix>); use "
     "lower-case letters, digits and hyphens, starting with a letter and not ending with a hyphen, at most 28 "
     "characters"),
    (lambda: GkeGpuCluster("1ml", args=GKE_ARGS), "GkeGpuCluster '1ml': the name '1ml' is not accepted"),
])
def test_names_the_cloud_would_refuse_are_refused_before_anything_is_registered(
    build: Callable[[], object], said: str,
) -> None:
    assert said in refusal(build)


def test_the_longest_accepted_names_fit_the_cloud_s_limits() -> None:
    aks = run(lambda: AksGpuCluster("a" * 50, args=AKS_ARGS))
    assert len(only(aks, AKS_CLUSTER).inputs["dnsPrefix"]) == 54
    gke = run(lambda: GkeGpuCluster("g" * 28, args=GKE_ARGS))
    assert len(only(gke, GKE_CLUSTER).name) + len("-1a2b3c4") == 40, "with Pulumi's suffix, GKE's 40"
    assert "at most 28 characters" in refusal(lambda: GkeGpuCluster("g" * 29, args=GKE_ARGS))


# --- the plan's warnings under pulumi up ----------------------------------------------------------


def test_the_plan_s_cost_warnings_are_logged_once_each_with_the_component_s_name() -> None:
    args: AksGpuClusterArgs = {**AKS_ARGS, "region": "eastus", "gpu_pools": [
        {"name": "a100spot", "machine": "Standard_NC24ads_A100_v4", "min": 1, "max_price": 99.0},
    ]}
    log = run(lambda: AksGpuCluster("ml", args=args)).log
    warnings = [line for line in log if line.startswith("warning: AksGpuCluster 'ml': plan warning: [cost-")]
    assert any("a100spot: maxPrice $99/h is above the on-demand price" in w for w in warnings), log
    assert any("a100spot: GPU pool min is 1" in w for w in warnings), log
    assert len(warnings) == len(set(warnings))


def test_a_size_the_catalog_does_not_know_is_logged_with_its_warning_id() -> None:
    """The declared way past the catalog warns under `pulumi up` too, with the id a team acknowledges."""
    args: AksGpuClusterArgs = {**AKS_ARGS, "region": "eastus", "gpu_pools": [
        {"name": "gb300", "machine": "Standard_ND128isr_GB300_v6", "gpu": {"type": "nvidia-gb300", "count": 4}},
    ]}
    recorded = run(lambda: AksGpuCluster("ml", args=args))
    logged = [line for line in recorded.log if "plan warning: [catalog-unlisted-size:gb300] " in line]
    assert len(logged) == 1, recorded.log
    assert ("warning: AksGpuCluster 'ml': plan warning: [catalog-unlisted-size:gb300] gb300: "
            "Standard_ND128isr_GB300_v6 is not in spotkube's catalog of") in logged[0]
    assert "taken as declared: 4 × nvidia-gb300" in logged[0]
    assert [r.inputs["agentPoolName"] for r in recorded.registrations
            if r.type == "azure-native:containerservice:AgentPool"
            and r.inputs.get("vmSize") == "Standard_ND128isr_GB300_v6"] == ["gb300"]


def test_the_offline_plan_shows_each_cost_warning_once(
    project_with_stack: Callable[[str, dict[str, Any]], Project],
) -> None:
    """The stack's clusters log the plan's warnings for `pulumi up`, with their ids; the plan computes
    them itself (with the price file its user chose) and leaves the logged copies out."""
    from spotkube.review.program_review import stack_document

    body = yaml.safe_load((REPO / "stacks" / "Pulumi.aks-dev-uksouth.yaml").read_text())
    config = {key.removeprefix("spotkube:"): value for key, value in body["config"].items()}
    config["platformPool"]["machine"] = "Standard_D16s_v3"  # no UK South price, and it keeps a node
    run_ = run_stack(project_with_stack("aks-dev-uksouth", config), "aks-dev-uksouth")
    assert any("plan warning: [cost-unpriced:platform] platform: unpriced" in line for line in run_.log), run_.log
    warnings = stack_document(run_).warnings
    assert [w.id for w in warnings if w.id.startswith("cost-")] == ["cost-unpriced:platform"], warnings


def test_a_gpu_type_without_an_on_demand_fallback_is_logged_as_the_plan_words_it(repo_project: Project) -> None:
    from spotkube.review.program_review import stack_document

    run_ = run_stack(repo_project, "gke-dev-us-central1")
    logged = [line.partition("plan warning: ")[2] for line in run_.log if "plan warning: [fallback-" in line]
    planned = [str(w) for w in stack_document(run_).all_warnings if w.id.startswith("fallback-")]
    assert logged and logged == planned, (logged, planned)


@pytest.mark.parametrize(("stack", "concern"), [
    ("aks-prod-eastus", "[security-api-server] API server: reachable from the whole internet"),
    ("aks-dev-uksouth", "[security-deletion-protection] deletion protection: `pulumi destroy` or a replacement "
                        "deletes the cluster"),
])
def test_the_cluster_logs_the_plan_s_security_concerns_from_its_registered_inputs(
    repo_project: Project, monkeypatch: pytest.MonkeyPatch, stack: str, concern: str,
) -> None:
    """Under `pulumi up` a transform on the cluster resource reads what the engine registers (the
    offline mocks run no transforms, so it is fed the recorded registration) and logs each concern
    the plan shows for it."""
    from spotkube.clouds import profile
    from spotkube.review.program_review import stack_document
    from spotkube.shell.common import security_concerns

    run_ = run_stack(repo_project, stack)
    (cluster,) = [r for r in run_.registrations
                  if profile(run_.spec.cloud).read_posture(r.type, r.name, r.inputs, r.protect) is not None]
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, resource=None: logged.append(message))
    transform = security_concerns(cast(pulumi.Resource, None), "AksGpuCluster 'ml'", run_.spec.cloud)
    args = pulumi.ResourceTransformArgs(custom=True, type_=cluster.type, name=cluster.name, props=dict(cluster.inputs),
                                        opts=pulumi.ResourceOptions(protect=cluster.protect))
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: True)
    assert transform(args) is None and logged == [], "a preview may not know wired inputs yet: it logs nothing"
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    assert transform(args) is None, "the transform changes nothing"
    planned = [str(w) for w in stack_document(run_).all_warnings if w.id.startswith("security-")]
    assert [m.removeprefix("AksGpuCluster 'ml': plan warning: ") for m in logged] == [
        w for w in planned if not w.startswith("[security-kubeflow")]
    assert any(concern in m for m in logged), logged


def test_an_unreadable_price_file_skips_the_cost_warnings_and_says_why(
    repo_project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under `pulumi up` a warning must never stop a deployment: a price file that can't be read is one
    warning, with its id and the file's problem, and every resource is still registered."""
    broken = tmp_path / "prices.json"
    broken.write_text("{not json")
    monkeypatch.setenv("SPOTKUBE_PRICES", str(broken))
    run_ = run_stack(repo_project, "aks-dev-uksouth")
    (logged,) = [line for line in run_.log if "plan warning: [cost-" in line]
    assert "plan warning: [cost-unreadable-prices] no cost warnings: " in logged and "prices.json" in logged
    assert any(r.type == "azure-native:containerservice:ManagedCluster" for r in run_.registrations)
