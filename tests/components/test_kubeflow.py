"""KubeflowPipelines: the pure transforms on realistic objects, then the component under mocks.

Transforms are recorded, not run, under Pulumi mocks, so the functions are tested directly on
objects written after KFP 2.17's manifests (tests/kfp_manifests.py), and the mock tests check that
the component attaches them and installs in the right order through the right provider.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml
from pulumi.runtime.sync_await import _sync_await

import kfp_manifests as m
from recordings import only
from spotkube import KubeflowPipelines, KubeflowPipelinesArgs
from spotkube.clouds import parse_spec, plan_platform
from spotkube.components.kubeflow import _kfp_transform
from spotkube.components.offline import ProgramFailed, Recording, record_program
from spotkube.platform import contract
from spotkube.platform.addons import kfp_reference, kfp_transforms
from spotkube.platform.addons.argo_retries import RetryRule
from spotkube.platform.addons.kfp_transforms import (
    Credentials,
    keep_on_platform_pool,
    retry_defaults_problem,
    transform,
    weaker_retries,
)
from spotkube.platform.contract import Placement, PoolContract, landing_pools
from spotkube.platform.spec import KubeflowSettings

CREDENTIALS = Credentials("generated-access-key", "generated-secret-key", "generated-root-password")
DEFAULTS = KubeflowSettings()
DIRECTORY = "kubernetes:kustomize/v2:Directory"
PASSWORD = "random:index/randomPassword:RandomPassword"
REPO = "https://github.com/kubeflow/pipelines"


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def required_terms(workload: dict[str, Any]) -> list[dict[str, Any]]:
    node_affinity = pod_spec(workload)["affinity"]["nodeAffinity"]
    return node_affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]


ON_PLATFORM_POOL = [r.to_k8s() for r in contract.on_platform_pool().required[0]]


@pytest.fixture(scope="module")
def untainted_pools() -> list[PoolContract]:
    """Every kind of pool, with the taints removed: only the affinity can keep a pod off them."""
    spec = parse_spec({
        "cloud": "aks", "environment": "dev", "region": "uksouth",
        "gpuPools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3"},
                     {"name": "t4demand", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand"}],
        "spotPools": [{"name": "cpuspot", "machine": "Standard_D4s_v3"}],
    }, "test")
    return [dataclasses.replace(p, taints=()) for p in plan_platform(spec).contracts()]


# --- control-plane placement ----------------------------------------------------------------------


def test_a_deployment_without_affinity_is_kept_on_the_platform_pool(untainted_pools: list[PoolContract]) -> None:
    changed = transform(m.ml_pipeline_deployment(), DEFAULTS, CREDENTIALS)
    assert changed is not None
    assert required_terms(changed) == [{"matchExpressions": ON_PLATFORM_POOL}]
    placement = Placement.from_pod_spec(pod_spec(changed))
    assert landing_pools(placement, untainted_pools) == ["platform"], "not the system pool, spot or GPU pools"
    assert landing_pools(Placement.from_pod_spec(pod_spec(m.ml_pipeline_deployment())), untainted_pools) == [
        p.name for p in untainted_pools
    ], "without the transform the same Deployment could land on every pool"


def test_existing_affinity_is_kept_and_the_requirement_is_anded_into_every_term() -> None:
    original = m.zoned_deployment_with_affinity()
    changed = transform(original, DEFAULTS, CREDENTIALS)
    assert changed is not None
    zone_term, arch_term = required_terms(changed)
    original_zone, original_arch = required_terms(original)
    assert zone_term["matchExpressions"] == original_zone["matchExpressions"] + ON_PLATFORM_POOL
    assert arch_term["matchExpressions"] == original_arch["matchExpressions"] + ON_PLATFORM_POOL
    assert arch_term["matchFields"] == original_arch["matchFields"]
    affinity, before = pod_spec(changed)["affinity"], pod_spec(original)["affinity"]
    assert affinity["podAntiAffinity"] == before["podAntiAffinity"]
    assert (affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
            == before["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"])
    assert pod_spec(changed)["tolerations"] == pod_spec(original)["tolerations"]
    assert pod_spec(changed)["containers"] == pod_spec(original)["containers"]
    assert pod_spec(original).get("affinity") == m.zoned_deployment_with_affinity()["spec"]["template"]["spec"][
        "affinity"], "the input object is not mutated"


def test_the_requirement_is_added_once_even_when_applied_twice() -> None:
    once = keep_on_platform_pool(m.ml_pipeline_deployment())
    assert keep_on_platform_pool(once) == once


def test_upstream_node_selector_and_priority_class_are_kept() -> None:
    original = m.workflow_controller_deployment()
    changed = transform(original, DEFAULTS, CREDENTIALS)
    assert changed is not None
    assert pod_spec(changed)["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod_spec(changed)["priorityClassName"] == "workflow-controller"
    assert required_terms(changed) == [{"matchExpressions": ON_PLATFORM_POOL}]
    assert {k: v for k, v in pod_spec(changed).items() if k != "affinity"} == pod_spec(original)


def test_statefulsets_are_kept_on_the_platform_pool_too(untainted_pools: list[PoolContract]) -> None:
    changed = transform(m.metadata_statefulset(), DEFAULTS, CREDENTIALS)
    assert changed is not None
    assert required_terms(changed) == [{"matchExpressions": ON_PLATFORM_POOL}]
    assert changed["spec"]["volumeClaimTemplates"] == m.metadata_statefulset()["spec"]["volumeClaimTemplates"]
    assert landing_pools(Placement.from_pod_spec(pod_spec(changed)), untainted_pools) == ["platform"]


def test_daemonsets_are_left_untouched() -> None:
    assert transform(m.node_agent_daemonset(), DEFAULTS, CREDENTIALS) is None


# --- credentials ----------------------------------------------------------------------------------


def test_the_object_store_defaults_are_replaced() -> None:
    changed = transform(m.object_store_secret(), DEFAULTS, CREDENTIALS)
    assert changed is not None
    assert changed["stringData"] == {"accesskey": "generated-access-key", "secretkey": "generated-secret-key"}
    assert changed["metadata"] == m.object_store_secret()["metadata"]


def test_base64_data_cannot_override_the_generated_values() -> None:
    secret = {**m.object_store_secret(), "data": {"accesskey": "bWluaW8="}}
    changed = transform(secret, DEFAULTS, CREDENTIALS)
    assert changed is not None and "data" not in changed


def test_the_mysql_secret_gets_a_root_password() -> None:
    changed = transform(m.mysql_secret(), DEFAULTS, CREDENTIALS)
    assert changed is not None
    assert changed["stringData"] == {"username": "root", "password": "generated-root-password"}


def test_mysql_initialises_root_with_the_secret_instead_of_an_empty_password() -> None:
    changed = transform(m.mysql_deployment(), DEFAULTS, CREDENTIALS)
    assert changed is not None
    (container,) = pod_spec(changed)["containers"]
    assert container["env"] == [{"name": "MYSQL_ROOT_PASSWORD",
                                 "valueFrom": {"secretKeyRef": {"name": "mysql-secret", "key": "password"}}}]
    assert required_terms(changed) == [{"matchExpressions": ON_PLATFORM_POOL}], "still on the platform pool"
    assert container["volumeMounts"] == pod_spec(m.mysql_deployment())["containers"][0]["volumeMounts"]


# --- Argo retries ---------------------------------------------------------------------------------


def workflow_defaults(configmap: dict[str, Any]) -> dict[str, Any]:
    return yaml.safe_load(configmap["data"]["workflowDefaults"])


def retry_strategy(configmap: dict[str, Any]) -> dict[str, Any]:
    return workflow_defaults(configmap)["spec"]["templateDefaults"]["retryStrategy"]


def with_retry_strategy(configmap: dict[str, Any], strategy: dict[str, Any]) -> dict[str, Any]:
    """The ConfigMap with its template-default retryStrategy replaced (a doctored result)."""
    defaults = workflow_defaults(configmap)
    defaults["spec"]["templateDefaults"]["retryStrategy"] = strategy
    return {**configmap, "data": {**configmap["data"], "workflowDefaults": yaml.safe_dump(defaults)}}


def test_by_default_evictions_get_ten_retries_failures_one_and_pods_are_collected() -> None:
    shipped = m.argo_configmap()
    changed = transform(shipped, DEFAULTS, CREDENTIALS)
    assert changed is not None
    assert retry_strategy(changed) == RetryRule(evictions=10, failures=1, errors=2).strategy()
    assert retry_strategy(changed)["retryPolicy"] == "Always", "explicit: KFP's OnError would otherwise win"
    spec = workflow_defaults(changed)["spec"]
    assert spec["podGC"] == {"strategy": "OnPodCompletion", "deleteDelayDuration": "1h"}
    assert spec["ttlStrategy"] == {"secondsAfterCompletion": 3600, "secondsAfterSuccess": 3600,
                                   "secondsAfterFailure": 3600}
    assert "podSpecPatch" not in spec, "the Python API without a grace period keeps Kubernetes' own"
    for key in ("artifactRepository", "executor"):
        assert changed["data"][key] == shipped["data"][key]
    assert changed["metadata"] == shipped["metadata"]
    assert shipped == m.argo_configmap(), "the input object is not mutated"


def test_the_limits_pod_gc_ttl_and_grace_period_are_the_stack_s() -> None:
    settings = KubeflowSettings(eviction_retry_limit=20, failure_retry_limit=0, pod_delete_delay="30m",
                                workflow_ttl_seconds=86400, step_grace_period_seconds=15)
    spec = workflow_defaults(transform(m.argo_configmap(), settings, CREDENTIALS) or {})["spec"]
    assert spec["templateDefaults"]["retryStrategy"] == RetryRule(evictions=20, failures=0, errors=2).strategy()
    assert spec["podGC"]["deleteDelayDuration"] == "30m"
    assert set(spec["ttlStrategy"].values()) == {86400}
    assert json.loads(spec["podSpecPatch"]) == {"terminationGracePeriodSeconds": 15}


def test_a_stack_resolves_the_grace_period_from_its_cloud_s_notice() -> None:
    aks = parse_spec({"cloud": "aks", "environment": "dev", "region": "uksouth"}, "aks")
    gke = parse_spec({"cloud": "gke", "environment": "dev", "region": "us-central1",
                      "cluster": {"project": "proj-123"}}, "gke")
    mine = parse_spec({"cloud": "gke", "environment": "dev", "region": "us-central1",
                       "cluster": {"project": "proj-123"}, "kubeflow": {"stepGracePeriodSeconds": 25}}, "gke")
    assert (aks.kubeflow.step_grace_period_seconds, gke.kubeflow.step_grace_period_seconds) == (30, 15)
    assert mine.kubeflow.step_grace_period_seconds == 25


def test_other_template_defaults_and_settings_are_kept() -> None:
    existing = "spec:\n  parallelism: 5\n  templateDefaults:\n    timeout: 2h\n"
    changed = transform(m.argo_configmap(existing), DEFAULTS, CREDENTIALS)
    spec = workflow_defaults(changed or {})["spec"]
    assert spec["parallelism"] == 5
    assert spec["templateDefaults"]["timeout"] == "2h"
    assert spec["templateDefaults"]["retryStrategy"]["limit"] == "10"


@pytest.mark.parametrize("evictions", [2, 3, 10, 100])
@pytest.mark.parametrize("failures", [0, 1, 2])
def test_no_accepted_setting_retries_less_than_kfp_ships(evictions: int, failures: int) -> None:
    settings = KubeflowSettings(eviction_retry_limit=evictions, failure_retry_limit=failures)
    assert retry_defaults_problem(settings) is None


def test_an_eviction_limit_below_kfp_s_error_retries_is_reported() -> None:
    problem = retry_defaults_problem(KubeflowSettings(eviction_retry_limit=1, failure_retry_limit=0))
    assert problem == ("Argo's workflow defaults as spotkube sets them retry less than Kubeflow Pipelines 2.17.0 "
                       "ships: a pod deleted with its node (Error) is retried once, KFP's defaults retry it 2 times; "
                       "a pod that never started (Error) is retried once, KFP's defaults retry it 2 times")


def test_the_preflight_checks_kfp_s_shipped_configmap() -> None:
    assert kfp_reference.shipped_workflow_controller_configmap() == m.argo_configmap(), (
        "the reference and the test fixture, both written from KFP 2.17.0, agree")


def test_a_transform_that_writes_another_strategy_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def other(configmap: dict[str, Any], settings: KubeflowSettings) -> dict[str, Any]:
        return with_retry_strategy(configmap, {"limit": "10", "retryPolicy": "Always"})

    monkeypatch.setattr(kfp_transforms, "set_workflow_defaults", other)
    problem = retry_defaults_problem(DEFAULTS)
    assert problem is not None
    assert problem.startswith("Argo's workflow defaults carry the retryStrategy {'limit': '10', 'retryPolicy': "
                              "'Always'}, not the one spotkube decided")


@pytest.mark.parametrize(("shipped", "reasons"), [
    ({"limit": "2", "retryPolicy": "OnError"}, [
        "a pod that never started (Error) is retried 0 times, KFP's defaults retry it 2 times"]),
    ({"limit": "3", "retryPolicy": "Always"}, [
        "a step that failed on its own (Failed) is retried 0 times, KFP's defaults retry it 3 times"]),
])
def test_weaker_rules_are_named_against_what_a_kfp_ships(shipped: dict[str, Any], reasons: list[str]) -> None:
    rule = RetryRule(evictions=10, failures=0, errors=0)
    problem = weaker_retries(with_retry_strategy(m.argo_configmap(), shipped),
                             with_retry_strategy(m.argo_configmap(), rule.strategy()), rule)
    assert problem is not None
    for reason in reasons:
        assert reason in problem


# --- what KFP 2.17.0 ships ------------------------------------------------------------------------


def test_the_reference_lists_the_14_shipped_deployments_in_the_kubeflow_namespace() -> None:
    deployments = kfp_reference.shipped_deployments()
    assert len(deployments) == 14
    assert tuple(d["metadata"]["name"] for d in deployments) == kfp_transforms.DEPLOYMENTS
    for deployment in deployments:
        assert deployment["metadata"]["namespace"] == "kubeflow"
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items(), (
            "a Deployment whose selector misses its pods is refused by the API server")
        assert not {"affinity", "tolerations"} & set(pod_spec(deployment)), "none ships any"
        assert Placement.from_pod_spec(pod_spec(deployment)).gpus == 0


def test_only_argo_s_controller_ships_a_node_selector() -> None:
    by_name = {d["metadata"]["name"]: pod_spec(d) for d in kfp_reference.shipped_deployments()}
    assert by_name.pop("workflow-controller") == {
        "containers": [{"name": "workflow-controller", "image": "quay.io/argoproj/workflow-controller:v4.0.5"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "priorityClassName": "workflow-controller",
    }
    assert not [name for name, spec in by_name.items() if "nodeSelector" in spec or "priorityClassName" in spec]


def test_the_reference_names_every_registry_the_nodes_pull_from() -> None:
    assert kfp_reference.image_registries() == ("docker.io", "gcr.io", "ghcr.io", "quay.io")
    assert kfp_reference.registry_of("mysql:8.4") == "docker.io", "no host means Docker Hub"
    assert kfp_reference.registry_of("docker.io/alpine:3.23") == "docker.io"
    assert kfp_reference.registry_of("chrislusf/seaweedfs:4.34") == "docker.io"
    assert kfp_reference.registry_of("localhost:5000/mirror/mysql:8.4") == "localhost:5000"
    assert kfp_reference.registry_of("ghcr.io/kubeflow/kfp-api-server:2.17.0") == "ghcr.io"


def test_the_reference_s_objects_are_fresh_copies() -> None:
    first = kfp_reference.shipped_deployments()
    first[0]["spec"]["template"]["spec"]["nodeSelector"] = {"changed": "yes"}
    kfp_reference.shipped_workflow_controller_configmap()["data"].clear()
    assert "nodeSelector" not in pod_spec(kfp_reference.shipped_deployments()[0])
    assert kfp_reference.shipped_workflow_controller_configmap()["data"]


# --- exposure and storage -------------------------------------------------------------------------


def test_the_ui_stays_cluster_internal_by_default() -> None:
    assert transform(m.ui_service(), DEFAULTS, CREDENTIALS) is None


def test_exposing_the_ui_is_an_explicit_switch_with_source_ranges() -> None:
    settings = KubeflowSettings(expose_ui=True, ui_source_ranges=("203.0.113.0/24",))
    changed = transform(m.ui_service(), settings, CREDENTIALS)
    assert changed is not None
    assert changed["spec"]["type"] == "LoadBalancer"
    assert changed["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]
    assert changed["spec"]["ports"] == m.ui_service()["spec"]["ports"]


def test_volumes_use_the_cluster_default_class_unless_configured() -> None:
    assert transform(m.mysql_pvc(), DEFAULTS, CREDENTIALS) is None
    changed = transform(m.mysql_pvc(), KubeflowSettings(storage_class="managed-csi-premium"), CREDENTIALS)
    assert changed is not None and changed["spec"]["storageClassName"] == "managed-csi-premium"


def test_other_objects_pass_through() -> None:
    other_secret = {**m.mysql_secret(), "metadata": {"name": "something-else", "namespace": m.NS}}
    assert transform(other_secret, DEFAULTS, CREDENTIALS) is None
    assert transform({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "ml-pipeline"}},
                     DEFAULTS, CREDENTIALS) is None


def test_the_pulumi_adapter_is_a_thin_wrapper() -> None:
    adapter = _kfp_transform(DEFAULTS, CREDENTIALS)
    opts = pulumi.ResourceOptions()
    secret = pulumi.ResourceTransformArgs(True, "kubernetes:core/v1:Secret", "kfp:mysql-secret",
                                          m.mysql_secret(), opts)
    result = adapter(secret)
    assert isinstance(result, pulumi.ResourceTransformResult)
    assert result.props == transform(m.mysql_secret(), DEFAULTS, CREDENTIALS)
    assert result.opts is opts
    directory = pulumi.ResourceTransformArgs(False, DIRECTORY, "kfp", {"directory": "x"}, opts)
    assert adapter(directory) is None


def test_the_public_args_mirror_the_settings() -> None:
    keys = set(typing.get_type_hints(KubeflowPipelinesArgs))
    assert keys == set(KubeflowSettings.model_fields) - {"enabled"}


# --- the component under mocks --------------------------------------------------------------------


def build(args: KubeflowPipelinesArgs) -> Recording:
    def program() -> None:
        provider = k8s.Provider("cluster-k8s", kubeconfig="offline")
        kfp = KubeflowPipelines("kfp", args=args, opts=pulumi.ResourceOptions(providers=[provider]))
        pulumi.export("accessKey", kfp.object_store_access_key)
        pulumi.export("secretKey", kfp.object_store_secret_key)
        pulumi.export("namespace", kfp.namespace)

    return record_program(program, project="spotkube", stack="test", config={})



@pytest.fixture(scope="module")
def default_install() -> Recording:
    return build({})


def test_install_is_two_kustomize_steps_with_git_urls_at_the_default_version(default_install: Recording) -> None:
    directories = [r for r in default_install.registrations if r.type == DIRECTORY]
    assert [(r.name, r.inputs["directory"]) for r in directories] == [
        ("kfp-cluster-scoped", f"{REPO}//manifests/kustomize/cluster-scoped-resources?ref=2.17.0"),
        ("kfp-platform-agnostic", f"{REPO}//manifests/kustomize/env/platform-agnostic?ref=2.17.0"),
    ]


def test_platform_agnostic_waits_for_the_cluster_scoped_resources(default_install: Recording) -> None:
    cluster_scoped = only(default_install, DIRECTORY, "kfp-cluster-scoped")
    platform = only(default_install, DIRECTORY, "kfp-platform-agnostic")
    assert cluster_scoped.urn in platform.dependencies
    assert platform.urn not in cluster_scoped.dependencies


def test_both_steps_deploy_through_the_given_provider_as_children(default_install: Recording) -> None:
    provider = only(default_install, "pulumi:providers:kubernetes", "cluster-k8s")
    component = only(default_install, "spotkube:index:KubeflowPipelines", "kfp")
    directories = [r for r in default_install.registrations if r.type == DIRECTORY]
    assert [d.name for d in directories] == ["kfp-cluster-scoped", "kfp-platform-agnostic"]
    for directory in directories:
        assert directory.provider.startswith(provider.urn + "::"), directory.provider
        assert directory.parent == component.urn


def test_the_version_and_repository_come_from_config() -> None:
    recording = build({"version": "2.16.1", "repository": "https://git.example.com/mirrors/pipelines"})
    urls = [r.inputs["directory"] for r in recording.registrations if r.type == DIRECTORY]
    assert urls == [
        "https://git.example.com/mirrors/pipelines//manifests/kustomize/cluster-scoped-resources?ref=2.16.1",
        "https://git.example.com/mirrors/pipelines//manifests/kustomize/env/platform-agnostic?ref=2.16.1",
    ]


def test_credentials_are_random_passwords_with_fixed_names_and_no_keepers(default_install: Recording) -> None:
    passwords = {r.name: r.inputs for r in default_install.registrations if r.type == PASSWORD}
    assert set(passwords) == {"kfp-object-store-access-key", "kfp-object-store-secret-key", "kfp-mysql-root-password"}
    for inputs in passwords.values():
        assert inputs["special"] is False, "the values end up in shell commands and MySQL DSNs"
        assert inputs["length"] >= 20
        assert "keepers" not in inputs, "changing keepers would regenerate the credentials"
    platform = only(default_install, DIRECTORY, "kfp-platform-agnostic")
    for name in passwords:
        assert only(default_install, PASSWORD, name).urn in platform.dependencies


def test_generated_credentials_stay_secrets(default_install: Recording) -> None:
    assert default_install.outputs["accessKey"].secret is True
    assert default_install.outputs["secretKey"].secret is True
    assert default_install.outputs["namespace"].value == "kubeflow"


def test_both_steps_carry_the_kfp_transform_with_secret_credentials(
    transforms_seen: dict[str, list[Callable[..., Any]]],
) -> None:
    build({})
    for name in ("kfp-cluster-scoped", "kfp-platform-agnostic"):
        assert len(transforms_seen[name]) == 1, name
    (adapter,) = transforms_seen["kfp-platform-agnostic"]
    args = pulumi.ResourceTransformArgs(True, "kubernetes:core/v1:Secret", "kfp-platform-agnostic:mysql-secret",
                                        m.mysql_secret(), pulumi.ResourceOptions())
    result = adapter(args)
    password = result.props["stringData"]["password"]
    assert isinstance(password, pulumi.Output)
    assert _sync_await(password.is_secret()) is True


def test_exposing_the_ui_warns(default_install: Recording) -> None:
    assert not [line for line in default_install.log if line.startswith("warning")]
    recording = build({"expose_ui": True})
    (warning,) = [line for line in recording.log if line.startswith("warning")]
    assert "public LoadBalancer" in warning and "whole internet" in warning and "port-forward" in warning


def test_bad_args_fail_before_anything_is_registered() -> None:
    with pytest.raises(ProgramFailed) as failure:
        build({"failure_retry_limit": 11, "ui_source_ranges": ["not-a-cidr"]})
    message = str(failure.value)
    assert ("KubeflowPipelines 'kfp' args: failure_retry_limit: 11 is not accepted; use a whole number from 0 "
            "to 10") in message
    assert "'not-a-cidr' is not a CIDR" in message
    assert not [r for r in failure.value.registrations if r.type in (DIRECTORY, PASSWORD)]


def _env(deployment: dict[str, Any]) -> dict[str, Any]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    names = [e["name"] for e in container["env"]]
    assert len(names) == len(set(names)), f"a variable set twice: {names}"
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_the_ui_finds_archived_logs_where_the_controller_writes_them(untainted_pools: list[PoolContract]) -> None:
    """KFP's UI falls back to `ARGO_KEYFORMAT/main.log` in the artifact store once a step's pod is gone;
    the shipped UI has no ARGO_KEYFORMAT, so it looks under `artifacts/...` while Argo writes under the
    controller's `private-artifacts/<namespace>/...`."""
    changed = transform(m.ui_deployment(), DEFAULTS, CREDENTIALS)
    assert changed is not None
    env = _env(changed)
    controller_key = yaml.safe_load(m.argo_configmap()["data"]["artifactRepository"])["s3"]["keyFormat"]
    assert env["ARGO_KEYFORMAT"] == controller_key
    assert controller_key.startswith("private-artifacts/{{workflow.namespace}}/")
    assert env["ARGO_ARCHIVE_LOGS"] == "true"
    assert env["DISABLE_GKE_METADATA"] == "true", "no Cloud Logging link unless the cluster is GKE"
    assert env["MINIO_ACCESS_KEY"] == {"secretKeyRef": {"name": "mlpipeline-minio-artifact", "key": "accesskey"}}
    on_gke = transform(m.ui_deployment(), DEFAULTS, CREDENTIALS, cloud_logs_link=True)
    assert on_gke is not None and _env(on_gke)["DISABLE_GKE_METADATA"] == "false"
    assert landing_pools(Placement.from_pod_spec(changed["spec"]["template"]["spec"]), untainted_pools) == ["platform"]


def test_argo_keeps_every_pipeline_pod_off_the_system_pool_unless_its_step_says_otherwise(
    untainted_pools: list[PoolContract],
) -> None:
    changed = transform(m.argo_configmap(), DEFAULTS, CREDENTIALS)
    assert changed is not None
    defaults = yaml.safe_load(changed["data"]["workflowDefaults"])["spec"]
    assert defaults["affinity"] == contract.pipeline_pod_default().affinity_k8s()
    (term,) = defaults["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert term == {"matchExpressions": [{"key": "spotkube.io/role", "operator": "NotIn", "values": ["system"]}]}
    assert defaults["templateDefaults"]["retryStrategy"]["retryPolicy"] == "Always", "the retry defaults stay"
    assert defaults["ttlStrategy"]["secondsAfterCompletion"] == 3600
    unplaced = Placement.from_pod_spec({"affinity": defaults["affinity"], "containers": [{"name": "main"}]})
    assert "system" not in landing_pools(unplaced, untainted_pools)
    assert "system" in landing_pools(Placement(), untainted_pools), "without the default an untainted system pool"
