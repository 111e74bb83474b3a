"""Realistic Kubernetes objects for the Kubeflow Trainer tests, written after Trainer v2.2.1's manifests.

They are what `kustomize build manifests/overlays/manager` renders at the tag (namespace `kubeflow-system`,
Trainer's controller with its `app.kubernetes.io/*` labels, and JobSet v0.11.1's controller from its release
`manifests.yaml`, `jobset-` prefixed and selected by `control-plane: controller-manager`), trimmed to the
fields the transforms touch plus enough around them to prove the rest is kept.
"""

from __future__ import annotations

from typing import Any

NS = "kubeflow-system"
TRAINER_LABELS = {"app.kubernetes.io/name": "trainer", "app.kubernetes.io/component": "manager",
                  "app.kubernetes.io/part-of": "kubeflow"}
JOBSET_SELECTOR = {"control-plane": "controller-manager"}
JOBSET_LABELS = {**JOBSET_SELECTOR, "app.kubernetes.io/name": "jobset", "app.kubernetes.io/instance": "jobset",
                 "app.kubernetes.io/managed-by": "kustomize", "app.kubernetes.io/component": "manager",
                 "app.kubernetes.io/created-by": "jobset", "app.kubernetes.io/part-of": "jobset"}
SECURITY = {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False, "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}


def trainer_controller() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "kubeflow-trainer-controller-manager", "namespace": NS, "labels": dict(TRAINER_LABELS)},
        "spec": {
            "selector": {"matchLabels": dict(TRAINER_LABELS)},
            "template": {
                "metadata": {"labels": dict(TRAINER_LABELS)},
                "spec": {
                    "containers": [{
                        "name": "manager", "image": "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.2.1",
                        "securityContext": SECURITY,
                        "ports": [{"name": "health", "containerPort": 8081, "protocol": "TCP"},
                                  {"name": "webhook", "containerPort": 9443, "protocol": "TCP"}],
                        "volumeMounts": [{"mountPath": "/tmp/k8s-webhook-server/serving-certs", "name": "cert",
                                          "readOnly": True}],
                    }],
                    "serviceAccountName": "kubeflow-trainer-controller-manager",
                    "volumes": [{"name": "cert", "secret": {"defaultMode": 420,
                                                            "secretName": "kubeflow-trainer-webhook-cert"}}],
                },
            },
        },
    }


def jobset_controller() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "jobset-controller-manager", "namespace": NS, "labels": dict(JOBSET_LABELS)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(JOBSET_SELECTOR)},
            "template": {
                "metadata": {"annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                             "labels": dict(JOBSET_SELECTOR)},
                "spec": {
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [{"name": "manager", "image": "registry.k8s.io/jobset/jobset:v0.11.1",
                                    "command": ["/manager"], "args": ["--leader-elect"],
                                    "resources": {"requests": {"cpu": "500m", "memory": "128Mi"},
                                                  "limits": {"memory": "4Gi"}}}],
                    "serviceAccountName": "jobset-controller-manager",
                    "terminationGracePeriodSeconds": 10,
                },
            },
        },
    }


def untouched() -> list[dict[str, Any]]:
    """Objects spotkube applies as shipped: the CRDs, the webhooks, Services, the namespace."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": "clustertrainingruntimes.trainer.kubeflow.org"},
         "spec": {"group": "trainer.kubeflow.org", "scope": "Cluster",
                  "names": {"kind": "ClusterTrainingRuntime", "plural": "clustertrainingruntimes"}}},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": "jobsets.jobset.x-k8s.io"},
         "spec": {"group": "jobset.x-k8s.io", "scope": "Namespaced", "names": {"kind": "JobSet", "plural": "jobsets"}}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "validator.trainer.kubeflow.org"},
         "webhooks": [{"name": "validator.trainjob.trainer.kubeflow.org", "sideEffects": "None",
                       "admissionReviewVersions": ["v1"],
                       "clientConfig": {"service": {"name": "kubeflow-trainer-controller-manager", "namespace": NS,
                                                    "path": "/validate-trainer-kubeflow-org-v1alpha1-trainjob"}}}]},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "kubeflow-trainer-controller-manager", "namespace": NS},
         "spec": {"selector": dict(TRAINER_LABELS), "ports": [{"name": "webhook", "port": 443, "targetPort": 9443}]}},
    ]
