"""What Kubeflow Trainer v2.2.1's manifests hold, as far as the plan needs it: its two controllers and its kinds.

spotkube applies kubeflow/trainer's kustomization `manifests/overlays/manager` at v2.2.1 (Trainer publishes no
single release manifest): Trainer's CRDs, controller, RBAC and webhooks in `kubeflow-system`, and
`manifests/third-party/jobset`, JobSet v0.11.1's `manifests.yaml` without its Namespace, so JobSet's controller
runs in the same namespace. The provider renders it at deploy time, so the offline plan never sees it.

Why v2.2.1: Kueue v0.19.2 (the Kueue spotkube pins) is built against it (its `go.mod`:
`github.com/kubeflow/trainer/v2 v2.2.1`), so Kueue's `trainer.kubeflow.org/trainjob` integration reads the
TrainJob fields this Trainer writes (`spec.suspend`, `spec.runtimePatches`, `spec.runtimeRef`).

Sources: https://github.com/kubeflow/trainer/tree/v2.2.1/manifests (overlays/manager, base/manager,
third-party/jobset) and https://github.com/kubernetes-sigs/jobset/tree/v0.11.1/config. A new version needs
this module re-read from its tag.
"""

from __future__ import annotations

from typing import Any

from spotkube.platform.addons.kfp_kinds import COMMON_KINDS
from spotkube.platform.addons.kueue_reference import deployment

#: The Trainer release this module describes (the git ref of the manifests), and the JobSet it bundles.
VERSION = "v2.2.1"
JOBSET_VERSION = "v0.11.1"
REPOSITORY = "https://github.com/kubeflow/trainer"
#: The kustomization Trainer's install guide applies: Trainer and JobSet, without the runtimes.
MANAGER_PATH = "manifests/overlays/manager"
NAMESPACE = "kubeflow-system"
API_GROUP = "trainer.kubeflow.org"
API_VERSION = f"{API_GROUP}/v1alpha1"

TRAINER_DEPLOYMENT = "kubeflow-trainer-controller-manager"
TRAINER_LABELS = {"app.kubernetes.io/name": "trainer", "app.kubernetes.io/component": "manager",
                  "app.kubernetes.io/part-of": "kubeflow"}
TRAINER_IMAGE = f"ghcr.io/kubeflow/trainer/trainer-controller-manager:{VERSION}"
#: JobSet's `config/default` prefixes every name with `jobset-` and selects the controller by `control-plane`.
JOBSET_DEPLOYMENT = "jobset-controller-manager"
JOBSET_SELECTOR = {"control-plane": "controller-manager"}
JOBSET_IMAGE = f"registry.k8s.io/jobset/jobset:{JOBSET_VERSION}"

#: The replicated job and container Trainer's torch plugin fills in (its `torch_distributed` runtime's
#: names): the ancestor label says which step of the TrainJob (`trainer`) the job runs.
TRAINER_JOB = "node"
TRAINER_CONTAINER = "node"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"

#: (apiVersion, kind) of every object the kustomization renders: Trainer's and JobSet's CRDs, RBAC,
#: controllers and webhook configurations.
RENDERED_KINDS = (
    *COMMON_KINDS,
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
)


def shipped_controller_deployments() -> list[dict[str, Any]]:
    """Both controllers' Deployments as shipped: neither sets a nodeSelector, node affinity or tolerations,
    so upstream lets them land on any untainted node."""
    return [
        deployment(TRAINER_DEPLOYMENT, NAMESPACE, TRAINER_LABELS, TRAINER_LABELS, TRAINER_LABELS, TRAINER_IMAGE),
        deployment(JOBSET_DEPLOYMENT, NAMESPACE, JOBSET_SELECTOR, JOBSET_SELECTOR, JOBSET_SELECTOR, JOBSET_IMAGE),
    ]


def image_registries() -> tuple[str, ...]:
    """The registries the two controllers pull from (ghcr.io, registry.k8s.io), sorted: with training on,
    the nodes' egress must reach them as well as Kubeflow's."""
    return tuple(sorted({image.partition("/")[0] for image in (TRAINER_IMAGE, JOBSET_IMAGE)}))

