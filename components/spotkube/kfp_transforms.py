"""What spotkube changes in Kubeflow Pipelines' manifests, as pure functions over object dicts.

KFP standalone is installed from its own kustomize manifests, which kustomize renders inside the
Kubernetes provider at deploy time. spotkube adjusts the rendered objects through Pulumi transforms,
and every adjustment lives here, over plain Kubernetes object dicts, so that each one is tested on
realistic objects without Pulumi:

- control-plane workloads (Deployments, StatefulSets) are kept on on-demand nodes without GPUs,
  because an eviction of the API server, MySQL or Argo's controller fails every running pipeline;
- the well-known default credentials (object store `minio`/`minio123`, MySQL root without a
  password) are replaced with generated ones;
- Argo's workflow defaults make a step whose pod was evicted or deleted count as retryable, which
  `set_retry` alone does not do (kubeflow/pipelines #4333, #9950);
- the UI is exposed and the volumes get a storage class only when configured.

Pure module: no Pulumi. Credentials are passed in as opaque values, so the shell can hand over
Pulumi secrets without this module knowing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from spotkube import contract
from spotkube.spec import KubeflowSettings

#: The Pulumi type token of the component; the plan recognises its registrations by it.
KUBEFLOW_TYPE = "spotkube:index:KubeflowPipelines"
NAMESPACE = "kubeflow"
#: The two install steps, in order: the namespace and CRDs, then everything else.
CLUSTER_SCOPED_PATH = "manifests/kustomize/cluster-scoped-resources"
PLATFORM_AGNOSTIC_PATH = "manifests/kustomize/env/platform-agnostic"
#: The Deployments `env/platform-agnostic` creates in KFP 2.17.0 (FACTS.md); none sets affinity or
#: tolerations. The plan describes their placement from these names, since it can't render them.
DEPLOYMENTS: tuple[str, ...] = (
    "ml-pipeline", "ml-pipeline-ui", "ml-pipeline-persistenceagent", "ml-pipeline-scheduledworkflow",
    "ml-pipeline-viewer-crd", "ml-pipeline-visualizationserver", "metadata-grpc-deployment",
    "metadata-envoy-deployment", "metadata-writer", "cache-server", "cache-deployer-deployment",
    "workflow-controller", "mysql", "seaweedfs",
)
#: Workloads whose pods must never be evicted by spot reclaims. DaemonSets are node agents: they
#: belong wherever their nodes are, so they are left alone.
CONTROL_PLANE_KINDS = frozenset({"Deployment", "StatefulSet"})
OBJECT_STORE_SECRET = "mlpipeline-minio-artifact"
MYSQL_SECRET = "mysql-secret"
MYSQL_DEPLOYMENT = "mysql"
MYSQL_CONTAINER = "mysql"
ARGO_CONFIGMAP = "workflow-controller-configmap"
UI_SERVICE = "ml-pipeline-ui"
UI_PORT_FORWARD = f"kubectl port-forward -n {NAMESPACE} svc/{UI_SERVICE} 8080:80"


def manifest_url(repository: str, path: str, version: str) -> str:
    """A remote kustomization in kustomize's own git syntax (`//` before the path, `?ref=`); the
    browser form with `/tree/<ref>/` does not work (FACTS.md)."""
    return f"{repository}//{path}?ref={version}"


@dataclass(frozen=True)
class Credentials:
    """The generated values that replace KFP's defaults; opaque here (Pulumi secrets in the shell)."""

    object_store_access_key: Any
    object_store_secret_key: Any
    mysql_root_password: Any


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def keep_on_demand(workload: Mapping[str, Any]) -> dict[str, Any]:
    """A Deployment or StatefulSet whose pods may only land on on-demand nodes without GPUs.

    The contract's requirements are ANDed into any node affinity the workload already has, so an
    upstream constraint (a zone, an architecture) still holds.
    """
    spec = workload.get("spec") or {}
    template = spec.get("template") or {}
    pod_spec = contract.constrain_pod_spec(template.get("spec") or {}, contract.on_demand_only())
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


def set_retry_defaults(configmap: Mapping[str, Any], policy: str, limit: int) -> dict[str, Any]:
    """Argo's controller-wide template defaults: a retry policy that covers errors (a pod evicted or
    deleted is an Error to Argo, not a Failure, and the default `OnFailure` skips it).

    Argo merges template defaults into each template field by field, so a step compiled with
    `set_retry(n)` keeps its own limit and backoff and gains the policy; every other template gets
    `limit`. Anything else already in `workflowDefaults` is kept.
    """
    data = dict(configmap.get("data") or {})
    defaults = yaml.safe_load(data.get("workflowDefaults") or "") or {}
    spec = dict(defaults.get("spec") or {})
    template_defaults = dict(spec.get("templateDefaults") or {})
    template_defaults["retryStrategy"] = {**(template_defaults.get("retryStrategy") or {}),
                                          "limit": limit, "retryPolicy": policy}
    spec["templateDefaults"] = template_defaults
    data["workflowDefaults"] = yaml.safe_dump({**defaults, "spec": spec}, sort_keys=False)
    return {**configmap, "data": data}


def expose_ui(service: Mapping[str, Any], source_ranges: tuple[str, ...]) -> dict[str, Any]:
    """The UI Service as a LoadBalancer, limited to `source_ranges` when given."""
    spec = {**(service.get("spec") or {}), "type": "LoadBalancer"}
    if source_ranges:
        spec["loadBalancerSourceRanges"] = list(source_ranges)
    return {**service, "spec": spec}


def set_storage_class(claim: Mapping[str, Any], storage_class: str) -> dict[str, Any]:
    return {**claim, "spec": {**(claim.get("spec") or {}), "storageClassName": storage_class}}


def transform(obj: Mapping[str, Any], settings: KubeflowSettings, credentials: Credentials) -> dict[str, Any] | None:
    """The object as spotkube applies it, or None when spotkube leaves it exactly as KFP ships it."""
    kind, name = obj.get("kind"), _name(obj)
    changed: dict[str, Any] | None = None
    if kind in CONTROL_PLANE_KINDS:
        changed = keep_on_demand(obj)
        if kind == "Deployment" and name == MYSQL_DEPLOYMENT:
            changed = require_mysql_root_password(changed)
    elif kind == "Secret" and name == OBJECT_STORE_SECRET:
        changed = replace_object_store_credentials(obj, credentials)
    elif kind == "Secret" and name == MYSQL_SECRET:
        changed = replace_mysql_credentials(obj, credentials)
    elif kind == "ConfigMap" and name == ARGO_CONFIGMAP:
        changed = set_retry_defaults(obj, settings.retry_policy, settings.retry_limit)
    elif kind == "Service" and name == UI_SERVICE and settings.expose_ui:
        changed = expose_ui(obj, settings.ui_source_ranges)
    elif kind == "PersistentVolumeClaim" and settings.storage_class:
        changed = set_storage_class(obj, settings.storage_class)
    return changed
