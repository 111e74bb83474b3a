"""Realistic Kubernetes objects for the Kueue transform tests, written after Kueue v0.19.2's `manifests.yaml`.

They are what `kustomize build config/default` renders at the tag (namespace `kueue-system`, the
`kueue-` name prefix, the `app.kubernetes.io/name: kueue` and `control-plane: controller-manager`
labels, the release image), trimmed to the fields the transforms touch plus enough around them to
prove the rest is kept.
"""

from __future__ import annotations

from typing import Any

import yaml

NS = "kueue-system"
LABELS = {"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}

#: The manager's Configuration as the release ships it (config/components/manager), comments left out.
SHIPPED_CONFIG: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {"groupKindConcurrency": {
        "Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10, "LocalQueue.kueue.x-k8s.io": 5,
        "Cohort.kueue.x-k8s.io": 1, "ClusterQueue.kueue.x-k8s.io": 5, "ResourceFlavor.kueue.x-k8s.io": 1}},
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {"frameworks": [
        "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice",
        "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob", "pod",
        "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset"]},
}


def namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": NS, "labels": dict(LABELS)}}


def manager_configmap(config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": NS, "labels": dict(LABELS)},
        "data": {"controller_manager_config.yaml": yaml.safe_dump(SHIPPED_CONFIG if config is None else config,
                                                                   sort_keys=False)},
    }


def controller_deployment() -> dict[str, Any]:
    """The controller as the release ships it: no nodeSelector, affinity or tolerations."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kueue-controller-manager", "namespace": NS, "labels": dict(LABELS)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"control-plane": "controller-manager"}},
            "template": {
                "metadata": {"annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                             "labels": dict(LABELS)},
                "spec": {
                    "containers": [{
                        "name": "manager",
                        "image": "registry.k8s.io/kueue/kueue:v0.19.2",
                        "imagePullPolicy": "Always",
                        "command": ["/manager"],
                        "args": ["--config=/controller_manager_config.yaml", "--zap-log-level=2"],
                        "ports": [
                            {"containerPort": 8082, "name": "visibility", "protocol": "TCP"},
                            {"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"},
                            {"containerPort": 8443, "name": "metrics", "protocol": "TCP"},
                        ],
                        "resources": {"limits": {"cpu": "2", "memory": "512Mi"},
                                      "requests": {"cpu": "500m", "memory": "512Mi"}},
                        "volumeMounts": [
                            {"mountPath": "/visibility", "name": "visibility"},
                            {"mountPath": "/tmp/k8s-webhook-server/serving-certs", "name": "cert", "readOnly": True},
                            {"mountPath": "/controller_manager_config.yaml", "name": "manager-config",
                             "subPath": "controller_manager_config.yaml"},
                        ],
                    }],
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "serviceAccountName": "kueue-controller-manager",
                    "terminationGracePeriodSeconds": 10,
                    "volumes": [
                        {"name": "visibility", "emptyDir": {}},
                        {"name": "cert", "secret": {"defaultMode": 420, "secretName": "kueue-webhook-server-cert"}},
                        {"name": "manager-config", "configMap": {"name": "kueue-manager-config"}},
                    ],
                },
            },
        },
    }


def cluster_queue_crd() -> dict[str, Any]:
    """One of the 11 CRDs, its schema left out: v1beta1 still served, v1beta2 stored."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusterqueues.kueue.x-k8s.io", "labels": dict(LABELS)},
        "spec": {
            "group": "kueue.x-k8s.io",
            "names": {"kind": "ClusterQueue", "listKind": "ClusterQueueList", "plural": "clusterqueues",
                      "shortNames": ["cq"], "singular": "clusterqueue"},
            "scope": "Cluster",
            "versions": [{"name": "v1beta1", "served": True, "storage": False},
                         {"name": "v1beta2", "served": True, "storage": True}],
        },
    }


def mutating_webhooks() -> dict[str, Any]:
    """The pod webhook among Kueue's mutating webhooks (the others are alike)."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "kueue-mutating-webhook-configuration", "labels": dict(LABELS)},
        "webhooks": [{
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "kueue-webhook-service", "namespace": NS,
                                         "path": "/mutate--v1-pod"}},
            "failurePolicy": "Fail",
            "name": "mpod.kb.io",
            "namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", NS]}]},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
            "sideEffects": "None",
        }],
    }


def webhook_service() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kueue-webhook-service", "namespace": NS, "labels": dict(LABELS)},
        "spec": {"ports": [{"port": 443, "protocol": "TCP", "targetPort": 9443}],
                 "selector": {"control-plane": "controller-manager"}},
    }


def webhook_cert_secret() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "kueue-webhook-server-cert", "namespace": NS,
                         "labels": dict(LABELS)}}


def untouched() -> list[dict[str, Any]]:
    """Objects spotkube applies exactly as the release ships them."""
    return [namespace(), cluster_queue_crd(), mutating_webhooks(), webhook_service(), webhook_cert_secret()]
