"""What Kueue v0.19.2's release manifests hold, as far as the plan needs it: its controller and its kinds.

spotkube installs Kueue from the release asset `manifests.yaml` of kubernetes-sigs/kueue (what
`kustomize build config/default` renders at the tag, with the image `registry.k8s.io/kueue/kueue:<tag>`).
The Kubernetes provider reads that file at deploy time, so the offline plan never sees its objects. It
still has to judge them: where the controller can land, and which kinds the deploy identity applies.
This module records exactly those facts, as the release ships them.

Source: https://github.com/kubernetes-sigs/kueue/tree/v0.19.2/config (config/default,
config/components/manager). A new Kueue version needs this module re-read from its tag.

Pure module: no Pulumi.
"""

from __future__ import annotations

from typing import Any

#: The Kueue release this module describes (the release's tag).
VERSION = "v0.19.2"
NAMESPACE = "kueue-system"
#: The controller (the manager, its webhooks and the visibility server in one pod) and its config.
CONTROLLER_DEPLOYMENT = "kueue-controller-manager"
CONTROLLER_CONTAINER = "manager"
CONFIGMAP = "kueue-manager-config"
#: The ConfigMap key the manager reads its `Configuration` from (`--config=/controller_manager_config.yaml`).
CONFIG_KEY = "controller_manager_config.yaml"
#: The labels config/default puts on every object (`app.kubernetes.io/name`) and on the controller's
#: selector (`control-plane`).
LABELS = {"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}
SELECTOR = {"control-plane": "controller-manager"}
IMAGE_REPOSITORY = "registry.k8s.io/kueue/kueue"

#: (apiVersion, kind) of every object in `manifests.yaml`: the namespace, Kueue's 11 CRDs, RBAC, the
#: controller's ServiceAccount, ConfigMap and webhook certificate Secret, its three Services (webhook,
#: visibility, metrics), the Deployment, the visibility APIServices and the two webhook configurations.
RENDERED_KINDS: tuple[tuple[str, str], ...] = (
    ("v1", "Namespace"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
)


def image(version: str = VERSION) -> str:
    """The controller's image at a release."""
    return f"{IMAGE_REPOSITORY}:{version}"


def shipped_controller_deployment() -> dict[str, Any]:
    """The controller Deployment's scheduling- and image-relevant fields as the release ships them: no
    nodeSelector, node affinity or tolerations, so upstream lets it land on any untainted node."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": CONTROLLER_DEPLOYMENT, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {"labels": dict(LABELS)},
                "spec": {
                    "containers": [{"name": CONTROLLER_CONTAINER, "image": image()}],
                    "serviceAccountName": CONTROLLER_DEPLOYMENT,
                },
            },
        },
    }
