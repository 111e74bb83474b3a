"""What spotkube changes in Kubeflow Pipelines' manifests, as pure functions over object dicts.

kustomize renders KFP's manifests inside the provider at deploy time, so spotkube adjusts them through
Pulumi transforms; every adjustment lives here, tested on realistic objects without Pulumi. Credentials are
opaque values, so the shell can hand over Pulumi secrets. What changes and why:
docs/architecture.md#what-spotkube-changes-in-kubeflow-pipelines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import yaml

from spotkube.platform import contract
from spotkube.platform.addons import argo_retries, kfp_reference
from spotkube.platform.addons.argo_retries import Phase, RetryRule
from spotkube.platform.records import record
from spotkube.platform.spec import KubeflowSettings

#: The Pulumi type token of the component; the plan recognises its registrations by it.
KUBEFLOW_TYPE = "spotkube:index:KubeflowPipelines"
NAMESPACE = kfp_reference.NAMESPACE
#: The two install steps, in order: the namespace and CRDs, then everything else.
CLUSTER_SCOPED_PATH = "manifests/kustomize/cluster-scoped-resources"
PLATFORM_AGNOSTIC_PATH = "manifests/kustomize/env/platform-agnostic"
#: The Deployments `env/platform-agnostic` creates, from the reference of what KFP ships.
DEPLOYMENTS: tuple[str, ...] = kfp_reference.deployment_names()
#: Workloads whose pods must never be evicted by spot reclaims. DaemonSets are node agents: they
#: belong wherever their nodes are, so they are left alone.
CONTROL_PLANE_KINDS = frozenset({"Deployment", "StatefulSet"})
OBJECT_STORE_SECRET = "mlpipeline-minio-artifact"
MYSQL_SECRET = "mysql-secret"
MYSQL_DEPLOYMENT = "mysql"
MYSQL_CONTAINER = "mysql"
ARGO_CONFIGMAP = "workflow-controller-configmap"
UI_SERVICE = "ml-pipeline-ui"
UI_DEPLOYMENT = "ml-pipeline-ui"
UI_CONTAINER = "ml-pipeline-ui"
UI_PORT_FORWARD = f"kubectl port-forward -n {NAMESPACE} svc/{UI_SERVICE} 8080:80"
#: Argo deletes each pod once it ends (after podDeleteDelay), whatever its phase: the pods of evicted
#: and failed attempts too (argo-workflows workflow_types.go, PodGCStrategy).
POD_GC_STRATEGY = "OnPodCompletion"
#: The node phases each Argo retryPolicy lets through (operator.go processNodeRetries; OnTransientError
#: only for errors Argo classes as transient, counted as none here). No policy means OnFailure.
RETRIED_PHASES: Mapping[str, tuple[Phase, ...]] = {
    "Always": ("Failed", "Error"), "OnError": ("Error",), "OnFailure": ("Failed",), "OnTransientError": (),
}
ARGO_DEFAULT_RETRY_POLICY = "OnFailure"
#: A retry count that stands for "no limit" in comparisons.
RETRY_FOREVER = 1000


def manifest_url(repository: str, path: str, version: str) -> str:
    """A remote kustomization in kustomize's own git syntax (`//` before the path, `?ref=`); the
    browser form with `/tree/<ref>/` does not work
    (https://github.com/kubernetes-sigs/kustomize/blob/master/examples/remoteBuild.md)."""
    return f"{repository}//{path}?ref={version}"


@record
class Credentials:
    """The generated values that replace KFP's defaults; opaque here (Pulumi secrets in the shell)."""

    object_store_access_key: Any
    object_store_secret_key: Any
    mysql_root_password: Any


#: For transforms of objects that carry no credentials (the Argo ConfigMap, Deployments).
NO_CREDENTIALS = Credentials(None, None, None)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def keep_on_platform_pool(workload: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A Deployment or StatefulSet whose pods may only land on the platform pool (on-demand, no GPU), or
    on the pool `labels` pick (`KubeflowSettings.platform_pool_labels`).

    The contract's requirements are ANDed into any node affinity the workload already has, so an
    upstream constraint (a zone, an architecture) still holds; its nodeSelector is kept as it is.
    """
    return contract.constrain_workload(workload, contract.on_platform_pool_of(labels or {}))


def _with_string_data(secret: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The Secret with exactly these values; any base64 `data` (which would win) is dropped."""
    replaced = {k: v for k, v in secret.items() if k != "data"}
    replaced["stringData"] = dict(values)
    return replaced


def replace_object_store_credentials(secret: Mapping[str, Any], credentials: Credentials) -> dict[str, Any]:
    """SeaweedFS creates its admin user from this Secret and Argo and the KFP services read it, so
    replacing the values here changes the credentials everywhere at once."""
    return _with_string_data(secret, {"accesskey": credentials.object_store_access_key,
                                      "secretkey": credentials.object_store_secret_key})


def replace_mysql_credentials(secret: Mapping[str, Any], credentials: Credentials) -> dict[str, Any]:
    """Every KFP service reads the database user and password from this Secret."""
    username = ((secret.get("stringData") or {}).get("username")) or "root"
    return _with_string_data(secret, {"username": username, "password": credentials.mysql_root_password})


def _with_env(deployment: Mapping[str, Any], container_name: str, drop: set[str] | Mapping[str, Any],
              add: list[dict[str, Any]]) -> dict[str, Any]:
    """The Deployment with `add` in the named container's environment, in place of the variables in `drop`."""
    spec = deployment.get("spec") or {}
    template = spec.get("template") or {}
    pod_spec = template.get("spec") or {}
    containers = []
    for container in pod_spec.get("containers") or ():
        if container.get("name") == container_name:
            env = [e for e in container.get("env") or () if e.get("name") not in drop]
            container = {**container, "env": [*env, *add]}
        containers.append(container)
    pod_spec = {**pod_spec, "containers": containers}
    return {**deployment, "spec": {**spec, "template": {**template, "spec": pod_spec}}}


def require_mysql_root_password(deployment: Mapping[str, Any]) -> dict[str, Any]:
    """MySQL initialises its root password from the Secret instead of allowing an empty one.

    Only a fresh data volume is initialised: an existing PVC keeps the password it was created with.
    """
    root_password = {"name": "MYSQL_ROOT_PASSWORD",
                     "valueFrom": {"secretKeyRef": {"name": MYSQL_SECRET, "key": "password"}}}
    return _with_env(deployment, MYSQL_CONTAINER, {"MYSQL_ALLOW_EMPTY_PASSWORD", "MYSQL_ROOT_PASSWORD"},
                     [root_password])


def retry_rule(settings: KubeflowSettings) -> RetryRule:
    """The stack's retry rule: its two limits, and the retries KFP ships for Argo errors (2 in 2.17.0),
    which no stack setting lowers."""
    shipped = argo_retries.limit_of(_template_retry_strategy(kfp_reference.shipped_workflow_controller_configmap()))
    return RetryRule(evictions=settings.eviction_retry_limit, failures=settings.failure_retry_limit,
                     errors=shipped or 0)


def _template_retry_strategy(configmap: Mapping[str, Any]) -> dict[str, Any] | None:
    """`spec.templateDefaults.retryStrategy` of the ConfigMap's `workflowDefaults`, None if absent."""
    strategy = ((workflow_defaults(configmap).get("spec") or {}).get("templateDefaults") or {}).get("retryStrategy")
    return None if strategy is None else dict(strategy)


def workflow_defaults(configmap: Mapping[str, Any]) -> dict[str, Any]:
    """The ConfigMap's `workflowDefaults`, parsed (empty when it has none)."""
    return yaml.safe_load((configmap.get("data") or {}).get("workflowDefaults") or "") or {}


def set_workflow_defaults(configmap: Mapping[str, Any], settings: KubeflowSettings) -> dict[str, Any]:
    """Argo's controller-wide workflow defaults as spotkube deploys them; everything else is kept.

    - `templateDefaults.retryStrategy`: `RetryRule.strategy()`. Argo merges it into every template
      field by field, the template's own fields winning (`argo_retries.merged_strategy`): a step that
      calls `set_retry(n)` keeps its limit n and backoff and takes the policy and expression; every other
      step takes the eviction limit too.
    - `podGC`: each pod is deleted `podDeleteDelay` after it ends (`OnPodCompletion`), so evicted and
      failed pods never pile up (Argo's pods otherwise live until their Workflow's TTL). Its logs are
      archived when it ends (KFP ships `archiveLogs: true`, and its launcher publishes executor-logs).
    - `ttlStrategy`: a finished Workflow is deleted `workflowTtlSeconds` after it ends.
    - `podSpecPatch`: every pipeline pod's `terminationGracePeriodSeconds` (when the stack resolved one).
    """
    data = dict(configmap.get("data") or {})
    defaults = workflow_defaults(configmap)
    spec = dict(defaults.get("spec") or {})
    template_defaults = dict(spec.get("templateDefaults") or {})
    template_defaults["retryStrategy"] = retry_rule(settings).strategy()
    spec["templateDefaults"] = template_defaults
    spec["podGC"] = {"strategy": POD_GC_STRATEGY, "deleteDelayDuration": settings.pod_delete_delay}
    ttl = settings.workflow_ttl_seconds
    spec["ttlStrategy"] = {"secondsAfterCompletion": ttl, "secondsAfterSuccess": ttl, "secondsAfterFailure": ttl}
    if settings.step_grace_period_seconds is not None:
        spec["podSpecPatch"] = json.dumps({"terminationGracePeriodSeconds": settings.step_grace_period_seconds})
    data["workflowDefaults"] = yaml.safe_dump({**defaults, "spec": spec}, sort_keys=False)
    return {**configmap, "data": data}


#: The cases the preflight compares, as (phase, message) of one failed attempt: an eviction of each
#: phase, a step's own failure, and an Argo error that is no eviction.
_CASES: tuple[tuple[str, Phase, str], ...] = (
    ("an evicted pod (Failed)", "Failed", "Pod was terminated in response to imminent node shutdown."),
    ("a pod deleted with its node (Error)", "Error", "pod deleted"),
    ("a step that failed on its own (Failed)", "Failed", "main: Error (exit code 1)"),
    ("a pod that never started (Error)", "Error", "Pod failed before main container starts due to ErrImagePull: "),
)


def _shipped_retries(strategy: Mapping[str, Any] | None, phase: Phase) -> int:
    """Retries KFP's shipped template default gives an attempt of this phase (it has no expression)."""
    if strategy is None:
        return 0
    policy = strategy.get("retryPolicy") or ARGO_DEFAULT_RETRY_POLICY
    if phase not in RETRIED_PHASES.get(policy, ()):
        return 0
    limit = argo_retries.limit_of(strategy)
    return RETRY_FOREVER if limit is None else limit


def _retries(rule: RetryRule, phase: Phase, message: str) -> int:
    """Retries `rule` gives a step whose every attempt ends so."""
    retries = 0
    while retries < RETRY_FOREVER and rule.retried(phase, message, retries):
        retries += 1
    return retries


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def weaker_retries(shipped: Mapping[str, Any], applied: Mapping[str, Any], rule: RetryRule) -> str | None:
    """Why the `applied` ConfigMap retries less than the `shipped` one, or None if it doesn't.

    The applied ConfigMap must carry exactly `rule`'s strategy (so the comparison judges what is
    deployed), and for each case `_CASES` names, `rule` must give a step without set_retry at least the
    retries KFP's shipped defaults give it.
    """
    before, after = _template_retry_strategy(shipped), _template_retry_strategy(applied)
    if after != rule.strategy():
        return (f"Argo's workflow defaults carry the retryStrategy {after!r}, not the one spotkube decided "
                f"({rule.strategy()!r})")
    problems = []
    for case, phase, message in _CASES:
        upstream, ours = _shipped_retries(before, phase), _retries(rule, phase, message)
        if ours < upstream:
            problems.append(f"{case} is retried {_times(ours)}, KFP's defaults retry it {_times(upstream)}")
    if not problems:
        return None
    return ("Argo's workflow defaults as spotkube sets them retry less than Kubeflow Pipelines "
            f"{kfp_reference.VERSION} ships: " + "; ".join(problems))


def retry_defaults_problem(settings: KubeflowSettings) -> str | None:
    """What is weaker in Argo's retry defaults once spotkube's transform has run on KFP's shipped
    ConfigMap, or None. The plan's preflight calls it, so a change to the transform or the settings
    that would lower KFP's own retries fails before anything is deployed."""
    shipped = kfp_reference.shipped_workflow_controller_configmap()
    applied = transform(shipped, settings, NO_CREDENTIALS) or shipped
    return weaker_retries(kfp_reference.shipped_workflow_controller_configmap(), applied, retry_rule(settings))


def keep_pipeline_pods_off_the_system_pool(configmap: Mapping[str, Any]) -> dict[str, Any]:
    """Argo's workflow defaults with `spec.affinity` that keeps every pipeline pod off the system pool.

    Argo gives a workflow's `affinity` to each pod whose template has none, and KFP's templates have
    none: a step's own placement reaches its pod through KFP's pod spec patch, whose required node
    affinity replaces this one (Kubernetes lists of node selector terms are replaced, not merged). So
    KFP's driver pods and steps placed nowhere stay off the system pool, and placed steps go where
    their placement says, which for spotkube's placements also excludes it. A required node
    affinity already in the defaults is ANDed with, as `constrain_pod_spec` does for a pod.
    """
    data = dict(configmap.get("data") or {})
    defaults = yaml.safe_load(data.get("workflowDefaults") or "") or {}
    spec = contract.constrain_pod_spec(dict(defaults.get("spec") or {}), contract.pipeline_pod_default())
    data["workflowDefaults"] = yaml.safe_dump({**defaults, "spec": spec}, sort_keys=False)
    return {**configmap, "data": data}


def argo_key_format(configmap: Mapping[str, Any]) -> str | None:
    """The `keyFormat` Argo archives logs under (`artifactRepository.s3.keyFormat`), None if unset."""
    repository = yaml.safe_load((configmap.get("data") or {}).get("artifactRepository") or "") or {}
    key_format = (repository.get("s3") or {}).get("keyFormat") if isinstance(repository, Mapping) else None
    return str(key_format) if key_format else None


#: The UI's settings for logs of pods that are gone (kubeflow/pipelines 2.17.0,
#: frontend/server/configs.ts and handlers/pod-logs.ts): when a step's pod no longer exists, the UI
#: reads the log Argo archived at `ARGO_KEYFORMAT` + `/main.log`. KFP ships the UI without
#: `ARGO_KEYFORMAT`, so it looks under `artifacts/...` while the controller archives under
#: `private-artifacts/<namespace>/...`, and the fallback never finds a log once the workflow is gone.
def ui_log_settings(cloud_logs_link: bool) -> dict[str, str]:
    """The environment of the UI container for finding the logs of a deleted step.

    `cloud_logs_link` turns on KFP's GKE metadata lookup (`DISABLE_GKE_METADATA=false`), with which
    the run page links a step to Cloud Logging; only GKE nodes answer it.
    """
    key_format = argo_key_format(kfp_reference.shipped_workflow_controller_configmap())
    env = {"ARGO_ARCHIVE_LOGS": "true", "DISABLE_GKE_METADATA": "false" if cloud_logs_link else "true"}
    if key_format:
        env["ARGO_KEYFORMAT"] = key_format
    return env


def set_ui_log_settings(deployment: Mapping[str, Any], cloud_logs_link: bool) -> dict[str, Any]:
    """The UI Deployment with `ui_log_settings` in its container's environment (each variable once)."""
    wanted = ui_log_settings(cloud_logs_link)
    return _with_env(deployment, UI_CONTAINER, wanted, [{"name": k, "value": v} for k, v in wanted.items()])


def expose_ui(service: Mapping[str, Any], source_ranges: tuple[str, ...]) -> dict[str, Any]:
    """The UI Service as a LoadBalancer, limited to `source_ranges` when given."""
    spec = {**(service.get("spec") or {}), "type": "LoadBalancer"}
    if source_ranges:
        spec["loadBalancerSourceRanges"] = list(source_ranges)
    return {**service, "spec": spec}


def set_storage_class(claim: Mapping[str, Any], storage_class: str) -> dict[str, Any]:
    return {**claim, "spec": {**(claim.get("spec") or {}), "storageClassName": storage_class}}


def transform(obj: Mapping[str, Any], settings: KubeflowSettings, credentials: Credentials, *,
              cloud_logs_link: bool = False) -> dict[str, Any] | None:
    """The object as spotkube applies it, or None when spotkube leaves it exactly as KFP ships it.
    `cloud_logs_link` says the cluster's nodes answer KFP's GKE metadata lookup (see
    `ui_log_settings`)."""
    kind, name = obj.get("kind"), _name(obj)
    changed: dict[str, Any] | None = None
    if kind in CONTROL_PLANE_KINDS:
        changed = keep_on_platform_pool(obj, settings.platform_pool_labels)
        if kind == "Deployment" and name == MYSQL_DEPLOYMENT:
            changed = require_mysql_root_password(changed)
        if kind == "Deployment" and name == UI_DEPLOYMENT:
            changed = set_ui_log_settings(changed, cloud_logs_link)
    elif kind == "Secret" and name == OBJECT_STORE_SECRET:
        changed = replace_object_store_credentials(obj, credentials)
    elif kind == "Secret" and name == MYSQL_SECRET:
        changed = replace_mysql_credentials(obj, credentials)
    elif kind == "ConfigMap" and name == ARGO_CONFIGMAP:
        changed = keep_pipeline_pods_off_the_system_pool(set_workflow_defaults(obj, settings))
    elif kind == "Service" and name == UI_SERVICE and settings.expose_ui:
        changed = expose_ui(obj, settings.ui_source_ranges)
    elif kind == "PersistentVolumeClaim" and settings.storage_class:
        changed = set_storage_class(obj, settings.storage_class)
    return changed
