"""What Kueue v0.19.2's release manifests hold, as far as the plan needs it: its controller and its kinds.

spotkube installs the release asset `manifests.yaml` of kubernetes-sigs/kueue, which the provider reads at
deploy time, so the offline plan never sees its objects yet must judge where the controller lands and which
kinds the deploy identity applies. Source: https://github.com/kubernetes-sigs/kueue/tree/v0.19.2/config
(config/default, config/components/manager). A new Kueue version needs this module re-read from its tag.
"""

from __future__ import annotations

from typing import Any

from spotkube.platform.addons.kfp_kinds import COMMON_KINDS

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
RENDERED_KINDS = (
    *COMMON_KINDS,
    ("apiregistration.k8s.io/v1", "APIService"),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
)


def image(version: str = VERSION) -> str:
    """The controller's image at a release."""
    return f"{IMAGE_REPOSITORY}:{version}"


def deployment(name: str, namespace: str, labels: dict[str, str], selector: dict[str, str],
               pod_labels: dict[str, str], image: str, **spec: Any) -> dict[str, Any]:
    """A controller Deployment's scheduling- and image-relevant fields as a release ships it."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            **spec,
            "selector": {"matchLabels": dict(selector)},
            "template": {
                "metadata": {"labels": dict(pod_labels)},
                "spec": {"containers": [{"name": CONTROLLER_CONTAINER, "image": image}], "serviceAccountName": name},
            },
        },
    }


def shipped_controller_deployment() -> dict[str, Any]:
    """The controller Deployment as the release ships it: no nodeSelector, node affinity or tolerations,
    so upstream lets it land on any untainted node."""
    return deployment(CONTROLLER_DEPLOYMENT, NAMESPACE, LABELS, SELECTOR, LABELS, image(), replicas=1)
