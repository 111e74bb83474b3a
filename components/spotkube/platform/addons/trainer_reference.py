"""What Kubeflow Trainer v2.2.1's manifests hold, as far as the plan needs it: its two controllers and its kinds.

spotkube installs Kubeflow Trainer from kubeflow/trainer at tag v2.2.1, kustomization
`manifests/overlays/manager`: Trainer's CRDs, controller, RBAC and webhooks in `kubeflow-system`, and
`manifests/third-party/jobset`, JobSet v0.11.1's release `manifests.yaml` with its own Namespace removed,
so JobSet's controller runs in the same namespace. Trainer publishes no single release manifest, so the
install is the kustomization its install guide applies (`kubectl apply --server-side -k`), rendered by
the Kubernetes provider at deploy time, and the offline plan never sees its objects. This module records
the facts the plan judges, as the release ships them.

Why v2.2.1: it is the Trainer release Kueue v0.19.2 (the Kueue spotkube pins) is built against
(kubernetes-sigs/kueue v0.19.2 `go.mod`: `github.com/kubeflow/trainer/v2 v2.2.1`), so Kueue's
`trainer.kubeflow.org/trainjob` integration, on in that release's manager configuration, reads the
TrainJob fields this Trainer writes (`spec.suspend`, `spec.runtimePatches`, `spec.runtimeRef`).

Sources: https://github.com/kubeflow/trainer/tree/v2.2.1/manifests (overlays/manager, base/manager,
third-party/jobset) and https://github.com/kubernetes-sigs/jobset/tree/v0.11.1/config. A new version needs
this module re-read from its tag.

Pure module: no Pulumi.
"""

from __future__ import annotations

from typing import Any

#: The Trainer release this module describes (the git ref of the manifests), and the JobSet it bundles.
VERSION = "v2.2.1"
JOBSET_VERSION = "v0.11.1"
REPOSITORY = "https://github.com/kubeflow/trainer"
#: The kustomization Trainer's install guide applies: Trainer and JobSet, without the runtimes.
MANAGER_PATH = "manifests/overlays/manager"
NAMESPACE = "kubeflow-system"
API_GROUP = "trainer.kubeflow.org"
API_VERSION = f"{API_GROUP}/v1alpha1"
JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"

TRAINER_DEPLOYMENT = "kubeflow-trainer-controller-manager"
TRAINER_LABELS = {"app.kubernetes.io/name": "trainer", "app.kubernetes.io/component": "manager",
                  "app.kubernetes.io/part-of": "kubeflow"}
TRAINER_IMAGE = f"ghcr.io/kubeflow/trainer/trainer-controller-manager:{VERSION}"
#: JobSet's `config/default` prefixes every name with `jobset-` and selects the controller by `control-plane`.
JOBSET_DEPLOYMENT = "jobset-controller-manager"
JOBSET_SELECTOR = {"control-plane": "controller-manager"}
JOBSET_IMAGE = f"registry.k8s.io/jobset/jobset:{JOBSET_VERSION}"
CONTROLLER_CONTAINER = "manager"

#: The replicated job and container Trainer's torch plugin fills in (its `torch_distributed` runtime's
#: names): the ancestor label says which step of the TrainJob (`trainer`) the job runs.
TRAINER_JOB = "node"
TRAINER_CONTAINER = "node"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"

#: (apiVersion, kind) of every object the kustomization renders: Trainer's Namespace, its 3 CRDs and
#: JobSet's, RBAC, the two controllers' ServiceAccounts, ConfigMaps, Secrets (webhook certificates),
#: Services and Deployments, and both projects' webhook configurations.
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
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
)


def _deployment(name: str, labels: dict[str, str], selector: dict[str, str], image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(selector)},
            "template": {
                "metadata": {"labels": dict(selector)},
                "spec": {"containers": [{"name": CONTROLLER_CONTAINER, "image": image}], "serviceAccountName": name},
            },
        },
    }


def shipped_controller_deployments() -> list[dict[str, Any]]:
    """Both controllers' Deployments, scheduling- and image-relevant fields as shipped: neither sets a
    nodeSelector, node affinity or tolerations, so upstream lets them land on any untainted node."""
    return [
        _deployment(TRAINER_DEPLOYMENT, TRAINER_LABELS, TRAINER_LABELS, TRAINER_IMAGE),
        _deployment(JOBSET_DEPLOYMENT, JOBSET_SELECTOR, JOBSET_SELECTOR, JOBSET_IMAGE),
    ]


def image_registries() -> tuple[str, ...]:
    """The registries the two controllers pull from (ghcr.io, registry.k8s.io), sorted: with training on,
    the nodes' egress must reach them as well as Kubeflow's."""
    return tuple(sorted({image.partition("/")[0] for image in (TRAINER_IMAGE, JOBSET_IMAGE)}))

