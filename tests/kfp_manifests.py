"""Realistic Kubernetes objects for the KFP transform tests, written after KFP 2.17's manifests.

They are what `kustomize build env/platform-agnostic` renders (namespace and labels applied), trimmed
to the fields the transforms touch plus enough around them to prove the rest is kept. Shared by the
transform tests and the schema validation tests, so both check the very same objects.
"""

from __future__ import annotations

from typing import Any

NS = "kubeflow"
KFP_LABELS = {"application-crd-id": "kubeflow-pipelines"}


def ml_pipeline_deployment() -> dict[str, Any]:
    """The API server: no affinity, no tolerations, as upstream ships it."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "ml-pipeline", "namespace": NS, "labels": {"app": "ml-pipeline", **KFP_LABELS}},
        "spec": {
            "selector": {"matchLabels": {"app": "ml-pipeline", **KFP_LABELS}},
            "template": {
                "metadata": {"labels": {"app": "ml-pipeline", **KFP_LABELS}},
                "spec": {
                    "serviceAccountName": "ml-pipeline",
                    "containers": [{
                        "name": "ml-pipeline-api-server",
                        "image": "ghcr.io/kubeflow/kfp-api-server:2.17.0",
                        "env": [
                            {"name": "DBCONFIG_USER",
                             "valueFrom": {"secretKeyRef": {"name": "mysql-secret", "key": "username"}}},
                            {"name": "DBCONFIG_PASSWORD",
                             "valueFrom": {"secretKeyRef": {"name": "mysql-secret", "key": "password"}}},
                        ],
                        "ports": [{"name": "http", "containerPort": 8888}, {"name": "grpc", "containerPort": 8887}],
                        "resources": {"requests": {"cpu": "250m", "memory": "500Mi"}},
                    }],
                },
            },
        },
    }


def workflow_controller_deployment() -> dict[str, Any]:
    """Argo's controller from KFP's Argo v4.0.5 base: the one Deployment with a nodeSelector and a
    priority class, and without the `app` label on its own metadata."""
    labels = {"app": "workflow-controller", **KFP_LABELS}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "workflow-controller", "namespace": NS, "labels": dict(KFP_LABELS)},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": "argo",
                    "priorityClassName": "workflow-controller",
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [{
                        "name": "workflow-controller",
                        "image": "quay.io/argoproj/workflow-controller:v4.0.5",
                        "command": ["workflow-controller"],
                        "args": ["--configmap", "workflow-controller-configmap",
                                 "--executor-image", "quay.io/argoproj/argoexec:v4.0.5", "--namespaced"],
                        "ports": [{"name": "metrics", "containerPort": 9090}, {"containerPort": 6060}],
                        "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                    }],
                },
            },
        },
    }


def zoned_deployment_with_affinity() -> dict[str, Any]:
    """A Deployment that already has node affinity (two ORed terms, one by node name), a preferred
    term, pod anti-affinity and a toleration: everything spotkube must keep."""
    deployment = ml_pipeline_deployment()
    pod_spec = deployment["spec"]["template"]["spec"]
    pod_spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                       "values": ["uksouth-1", "uksouth-2"]}]},
                {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
                 "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]},
            ]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}},
            ],
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100,
                "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                    "labelSelector": {"matchLabels": {"app": "ml-pipeline"}}},
            }],
        },
    }
    pod_spec["tolerations"] = [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}]
    return deployment


def mysql_deployment() -> dict[str, Any]:
    """KFP's MySQL: empty root password allowed, data on a PVC."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "mysql", "namespace": NS, "labels": {"app": "mysql", **KFP_LABELS}},
        "spec": {
            "selector": {"matchLabels": {"app": "mysql", **KFP_LABELS}},
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"labels": {"app": "mysql", **KFP_LABELS}},
                "spec": {
                    "serviceAccountName": "mysql",
                    "containers": [{
                        "name": "mysql",
                        "image": "mysql:8.4",
                        "args": ["--datadir", "/var/lib/mysql", "--disable-log-bin"],
                        "env": [{"name": "MYSQL_ALLOW_EMPTY_PASSWORD", "value": "true"}],
                        "ports": [{"name": "mysql", "containerPort": 3306}],
                        "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True,
                                            "runAsUser": 999, "capabilities": {"drop": ["ALL"]}},
                        "volumeMounts": [{"name": "mysql-persistent-storage", "mountPath": "/var/lib/mysql"}],
                        "resources": {"requests": {"cpu": "100m", "memory": "800Mi"}},
                    }],
                    "volumes": [{"name": "mysql-persistent-storage",
                                 "persistentVolumeClaim": {"claimName": "mysql-pv-claim"}}],
                },
            },
        },
    }


def metadata_statefulset() -> dict[str, Any]:
    """A StatefulSet (KFP's HA SeaweedFS overlay uses them), with a volume claim template."""
    labels = {"app": "seaweedfs-master", **KFP_LABELS}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "seaweedfs-master", "namespace": NS, "labels": labels},
        "spec": {
            "serviceName": "seaweedfs-master",
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "master", "image": "chrislusf/seaweedfs:3.92",
                                         "args": ["master", "-mdir=/data"],
                                         "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]},
            },
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}],
        },
    }


def node_agent_daemonset() -> dict[str, Any]:
    """A DaemonSet in the KFP namespace: a node agent that must stay wherever its nodes are."""
    labels = {"app": "log-shipper", **KFP_LABELS}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "log-shipper", "namespace": NS, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"tolerations": [{"operator": "Exists"}],
                         "containers": [{"name": "shipper", "image": "fluent/fluent-bit:3.2"}]},
            },
        },
    }


def object_store_secret() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "mlpipeline-minio-artifact", "namespace": NS, "labels": dict(KFP_LABELS)},
            "stringData": {"accesskey": "minio", "secretkey": "minio123"}}


def mysql_secret() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "mysql-secret", "namespace": NS, "labels": dict(KFP_LABELS)},
            "stringData": {"username": "root", "password": ""}}


ARTIFACT_REPOSITORY = """archiveLogs: true
s3:
  endpoint: "seaweedfs.kubeflow.svc:9000"
  bucket: "mlpipeline"
  keyFormat: "private-artifacts/{{workflow.namespace}}/{{workflow.name}}/{{workflow.creationTimestamp.Y}}/{{workflow.creationTimestamp.m}}/{{workflow.creationTimestamp.d}}/{{pod.name}}"
  insecure: true
  accessKeySecret:
    name: mlpipeline-minio-artifact
    key: accesskey
  secretKeySecret:
    name: mlpipeline-minio-artifact
    key: secretkey
"""  # noqa: E501 (one YAML line, as shipped)
EXECUTOR = """imagePullPolicy: IfNotPresent
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  allowPrivilegeEscalation: false
  capabilities:
    drop:
      - ALL
  seccompProfile:
    type: RuntimeDefault
"""
#: KFP 2.17.0's Argo defaults, text for text: workflows kept an hour, every template retried twice on
#: errors, the limit written as a string (Argo's IntOrString).
WORKFLOW_DEFAULTS = """spec:
  ttlStrategy:
    secondsAfterCompletion: 3600
    secondsAfterSuccess: 3600
    secondsAfterFailure: 3600
  templateDefaults:
    retryStrategy:
      limit: '2'
      retryPolicy: OnError
"""


def argo_configmap(workflow_defaults: str | None = WORKFLOW_DEFAULTS) -> dict[str, Any]:
    """Argo's controller config exactly as KFP 2.17.0 ships it (artifact repository on SeaweedFS,
    executor, workflow defaults); `workflow_defaults=None` drops the defaults, as older KFPs had none."""
    data = {"artifactRepository": ARTIFACT_REPOSITORY, "executor": EXECUTOR}
    if workflow_defaults is not None:
        data["workflowDefaults"] = workflow_defaults
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "workflow-controller-configmap", "namespace": NS, "labels": dict(KFP_LABELS)},
            "data": data}


def ui_service() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "ml-pipeline-ui", "namespace": NS, "labels": {"app": "ml-pipeline-ui"}},
            "spec": {"ports": [{"port": 80, "targetPort": 3000}], "selector": {"app": "ml-pipeline-ui"}}}


def mysql_pvc() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "mysql-pv-claim", "namespace": NS},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}}}


def ui_deployment() -> dict[str, Any]:
    """The UI as KFP 2.17.0 ships it: archived logs on, GKE metadata off, and no ARGO_KEYFORMAT, so the
    frontend looks for archived logs under its own default `artifacts/...` key."""
    labels = {"app": "ml-pipeline-ui", **KFP_LABELS}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "ml-pipeline-ui", "namespace": NS, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": "ml-pipeline-ui",
                    "containers": [{
                        "name": "ml-pipeline-ui",
                        "image": "ghcr.io/kubeflow/kfp-frontend:2.17.0",
                        "env": [
                            {"name": "VIEWER_TENSORBOARD_POD_TEMPLATE_SPEC_PATH",
                             "value": "/etc/config/viewer-pod-template.json"},
                            {"name": "DEPLOYMENT", "value": "KUBEFLOW"},
                            {"name": "ARGO_ARCHIVE_LOGS", "value": "true"},
                            {"name": "DISABLE_GKE_METADATA", "value": "true"},
                            {"name": "MINIO_NAMESPACE",
                             "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                            {"name": "MINIO_ACCESS_KEY",
                             "valueFrom": {"secretKeyRef": {"name": "mlpipeline-minio-artifact", "key": "accesskey"}}},
                        ],
                        "ports": [{"containerPort": 3000}],
                    }],
                },
            },
        },
    }
