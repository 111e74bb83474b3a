"""What spotkube changes in Kubeflow Pipelines' manifests, as pure functions over object dicts.

KFP standalone is installed from its own kustomize manifests, which kustomize renders inside the
Kubernetes provider at deploy time. spotkube adjusts the rendered objects through Pulumi transforms,
and every adjustment lives here, over plain Kubernetes object dicts, so that each one is tested on
realistic objects without Pulumi:

- control-plane workloads (Deployments, StatefulSets) are kept on the platform pool (on-demand, no
  GPU), because an eviction of the API server, MySQL or Argo's controller fails every running
  pipeline, and the system pool is kept for the cluster's own add-ons;
- the well-known default credentials (object store `minio`/`minio123`, MySQL root without a
  password) are replaced with generated ones;
- Argo's workflow defaults retry a step however a spot node takes its pod away (retryPolicy
  `Always`), never with a lower limit than KFP ships (kubeflow/pipelines #4333, #9950), and keep
  every pipeline pod that says nothing else off the system pool;
- the UI finds the archived logs of a step whose pod is gone (its `ARGO_KEYFORMAT` is the Argo
  controller's `keyFormat`), and on GKE links a run's steps to Cloud Logging;
- the UI is exposed and the volumes get a storage class only when configured.

Pure module: no Pulumi. Credentials are passed in as opaque values, so the shell can hand over
Pulumi secrets without this module knowing.

What changes and why: docs/architecture.md#what-spotkube-changes-in-kubeflow-pipelines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from spotkube.platform import contract
from spotkube.platform.addons import kfp_reference
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


def manifest_url(repository: str, path: str, version: str) -> str:
    """A remote kustomization in kustomize's own git syntax (`//` before the path, `?ref=`); the
    browser form with `/tree/<ref>/` does not work
    (https://github.com/kubernetes-sigs/kustomize/blob/master/examples/remoteBuild.md)."""
    return f"{repository}//{path}?ref={version}"


@dataclass(frozen=True)
class Credentials:
    """The generated values that replace KFP's defaults; opaque here (Pulumi secrets in the shell)."""

    object_store_access_key: Any
    object_store_secret_key: Any
    mysql_root_password: Any


#: For transforms of objects that carry no credentials (the Argo ConfigMap, Deployments).
NO_CREDENTIALS = Credentials(None, None, None)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def keep_on_platform_pool(workload: Mapping[str, Any]) -> dict[str, Any]:
    """A Deployment or StatefulSet whose pods may only land on the platform pool (on-demand, no GPU).

    The contract's requirements are ANDed into any node affinity the workload already has, so an
    upstream constraint (a zone, an architecture) still holds; its nodeSelector is kept as it is.
    """
    spec = workload.get("spec") or {}
    template = spec.get("template") or {}
    pod_spec = contract.constrain_pod_spec(template.get("spec") or {}, contract.on_platform_pool())
    return {**workload, "spec": {**spec, "template": {**template, "spec": pod_spec}}}


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


def require_mysql_root_password(deployment: Mapping[str, Any]) -> dict[str, Any]:
    """MySQL initialises its root password from the Secret instead of allowing an empty one.

    Only a fresh data volume is initialised: an existing PVC keeps the password it was created with.
    """
    spec = deployment.get("spec") or {}
    template = spec.get("template") or {}
    pod_spec = template.get("spec") or {}
    root_password = {"name": "MYSQL_ROOT_PASSWORD",
                     "valueFrom": {"secretKeyRef": {"name": MYSQL_SECRET, "key": "password"}}}
    containers = []
    for container in pod_spec.get("containers") or ():
        if container.get("name") == MYSQL_CONTAINER:
            env = [e for e in container.get("env") or ()
                   if e.get("name") not in ("MYSQL_ALLOW_EMPTY_PASSWORD", "MYSQL_ROOT_PASSWORD")]
            container = {**container, "env": [*env, root_password]}
        containers.append(container)
    pod_spec = {**pod_spec, "containers": containers}
    return {**deployment, "spec": {**spec, "template": {**template, "spec": pod_spec}}}


#: The failed pods each Argo retryPolicy retries, as (node phase, transient?) cases. On spot nodes
#: both phases happen: a pod deleted with its node ends as Error, and a pod evicted, or failed by a
#: graceful node shutdown, ends as Failed (argo-workflows' `inferFailedReason`). OnTransientError
#: retries either phase, but only errors Argo classes as transient. No policy at all means OnFailure.
RETRIED_CASES: Mapping[str, frozenset[tuple[str, bool]]] = {
    "Always": frozenset({("Error", True), ("Error", False), ("Failed", True), ("Failed", False)}),
    "OnError": frozenset({("Error", True), ("Error", False)}),
    "OnFailure": frozenset({("Failed", True), ("Failed", False)}),
    "OnTransientError": frozenset({("Error", True), ("Failed", True)}),
}
ARGO_DEFAULT_RETRY_POLICY = "OnFailure"


def _retries(strategy: Mapping[str, Any] | None) -> float | None:
    """How many retries a template default gives: 0 without a retryStrategy, infinitely many with one
    that has no limit (Argo then never stops), None for a limit that is not a whole number. `limit`
    is an IntOrString, so '2' and 2 are the same."""
    if strategy is None:
        return 0
    if "limit" not in strategy:
        return math.inf
    value = strategy["limit"]
    try:
        return None if isinstance(value, bool) else int(str(value))
    except ValueError:
        return None


def _raised_limit(shipped: Mapping[str, Any] | None, configured: int | None) -> Any:
    """The limit to write: the higher of the shipped and the configured one, in the shipped form (KFP
    writes '2'), or None to write none because the shipped strategy is already unbounded.

    Without a shipped retryStrategy the configured limit (or 0) is written: one without a limit
    would retry forever. A shipped limit that is not a number is kept, since it can't be compared.
    """
    current = _retries(shipped)
    if shipped is None:
        return configured or 0
    if current == math.inf:
        return None
    if current is None or configured is None or configured <= current:
        return shipped["limit"]
    return str(configured) if isinstance(shipped["limit"], str) else configured


def _template_retry_strategy(configmap: Mapping[str, Any]) -> dict[str, Any] | None:
    """`spec.templateDefaults.retryStrategy` of the ConfigMap's `workflowDefaults`, None if absent."""
    defaults = yaml.safe_load((configmap.get("data") or {}).get("workflowDefaults") or "") or {}
    strategy = ((defaults.get("spec") or {}).get("templateDefaults") or {}).get("retryStrategy")
    return None if strategy is None else dict(strategy)


def set_retry_defaults(configmap: Mapping[str, Any], policy: str, limit: int | None) -> dict[str, Any]:
    """Argo's controller-wide template defaults with retries never weaker than KFP ships.

    KFP's `set_retry` compiles to a retryStrategy with a limit and backoff but no retryPolicy, and
    Argo merges the template defaults into each template field by field (the template's own fields
    win): such a step keeps its limit and backoff and takes the default's policy, and every other
    template takes the default's limit too (a limit of 0 means no retries). The policy becomes
    `policy`: KFP ships OnError, which skips pods evicted from a spot node (Failed), and Argo's own
    OnFailure skips pods deleted with their node (Error); Always retries both. The limit becomes the
    higher of KFP's and `limit` (None keeps KFP's). Everything else in the ConfigMap is kept.
    """
    data = dict(configmap.get("data") or {})
    defaults = yaml.safe_load(data.get("workflowDefaults") or "") or {}
    spec = dict(defaults.get("spec") or {})
    template_defaults = dict(spec.get("templateDefaults") or {})
    shipped = template_defaults.get("retryStrategy")
    strategy = dict(shipped or {})
    raised = _raised_limit(shipped, limit)
    if raised is not None:
        strategy["limit"] = raised
    strategy["retryPolicy"] = policy
    template_defaults["retryStrategy"] = strategy
    spec["templateDefaults"] = template_defaults
    data["workflowDefaults"] = yaml.safe_dump({**defaults, "spec": spec}, sort_keys=False)
    return {**configmap, "data": data}


_PHASE_CAUSES = {"Error": "pods deleted with their node (Error)",
                 "Failed": "pods evicted or stopped by a node shutdown (Failed)"}


def _skipped_cases(shipped: str, applied: str) -> str:
    """What the applied policy leaves unretried that the shipped one retries ('' if nothing)."""
    if shipped == applied:
        return ""
    if shipped not in RETRIED_CASES or applied not in RETRIED_CASES:
        return "failures it cannot be compared on"
    missing = RETRIED_CASES[shipped] - RETRIED_CASES[applied]
    parts = []
    for phase in sorted({phase for phase, _ in missing}):
        kinds = {transient for p, transient in missing if p == phase}
        qualifier = "" if len(kinds) == 2 else ("transient " if True in kinds else "non-transient ")
        parts.append(qualifier + _PHASE_CAUSES[phase])
    return " and ".join(parts)


def _limit_text(strategy: Mapping[str, Any] | None) -> str:
    if strategy is None:
        return "no retries"
    return f"limit {strategy['limit']!r}" if "limit" in strategy else "no limit"


def weaker_retries(shipped: Mapping[str, Any], applied: Mapping[str, Any]) -> str | None:
    """Why the `applied` Argo ConfigMap retries less than the `shipped` one, or None if it doesn't:
    a lower template-default limit, or a policy that skips failures the shipped policy retries (the
    policy counts even without a default limit, since `set_retry` steps take it)."""
    before, after = _template_retry_strategy(shipped), _template_retry_strategy(applied)
    problems = []
    shipped_limit, applied_limit = _retries(before), _retries(after)
    if shipped_limit is None or applied_limit is None:
        if _limit_text(before) != _limit_text(after):
            problems.append(f"{_limit_text(after)} can't be compared with KFP's {_limit_text(before)}")
    elif applied_limit < shipped_limit:
        problems.append(f"{_limit_text(after)} is below KFP's {_limit_text(before)}")
    shipped_policy = (before or {}).get("retryPolicy") or ARGO_DEFAULT_RETRY_POLICY
    applied_policy = (after or {}).get("retryPolicy") or ARGO_DEFAULT_RETRY_POLICY
    skipped = _skipped_cases(shipped_policy, applied_policy)
    if skipped:
        problems.append(f"retryPolicy {applied_policy} skips {skipped}, which KFP's {shipped_policy} retries")
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
    return weaker_retries(kfp_reference.shipped_workflow_controller_configmap(), applied)


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
    spec = deployment.get("spec") or {}
    template = spec.get("template") or {}
    pod_spec = template.get("spec") or {}
    wanted = ui_log_settings(cloud_logs_link)
    containers = []
    for container in pod_spec.get("containers") or ():
        if container.get("name") == UI_CONTAINER:
            env = [e for e in container.get("env") or () if e.get("name") not in wanted]
            container = {**container, "env": [*env, *({"name": k, "value": v} for k, v in wanted.items())]}
        containers.append(container)
    pod_spec = {**pod_spec, "containers": containers}
    return {**deployment, "spec": {**spec, "template": {**template, "spec": pod_spec}}}


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
        changed = keep_on_platform_pool(obj)
        if kind == "Deployment" and name == MYSQL_DEPLOYMENT:
            changed = require_mysql_root_password(changed)
        if kind == "Deployment" and name == UI_DEPLOYMENT:
            changed = set_ui_log_settings(changed, cloud_logs_link)
    elif kind == "Secret" and name == OBJECT_STORE_SECRET:
        changed = replace_object_store_credentials(obj, credentials)
    elif kind == "Secret" and name == MYSQL_SECRET:
        changed = replace_mysql_credentials(obj, credentials)
    elif kind == "ConfigMap" and name == ARGO_CONFIGMAP:
        changed = keep_pipeline_pods_off_the_system_pool(
            set_retry_defaults(obj, settings.retry_policy, settings.retry_limit))
    elif kind == "Service" and name == UI_SERVICE and settings.expose_ui:
        changed = expose_ui(obj, settings.ui_source_ranges)
    elif kind == "PersistentVolumeClaim" and settings.storage_class:
        changed = set_storage_class(obj, settings.storage_class)
    return changed
