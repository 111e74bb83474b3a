"""What spotkube changes in Kubeflow Trainer's manifests: one thing. Both controllers (Trainer's and JobSet's)
are kept on the platform pool, because their webhooks admit every TrainJob and JobSet and JobSet restarts
a job after an eviction, so an evicted controller would stall exactly the restart spot training needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spotkube.platform import contract
from spotkube.platform.addons import kfp_transforms, trainer_reference

#: The Pulumi type token of the component; the plan recognises its registrations by it.
TRAINER_TYPE = "spotkube:index:KubeflowTrainer"


def manifest_url(version: str, repository: str = trainer_reference.REPOSITORY) -> str:
    """The remote kustomization in kustomize's git syntax (`//` before the path, `?ref=`)."""
    return f"{repository}//{trainer_reference.MANAGER_PATH}?ref={version}"


def is_manifest_url(url: str) -> bool:
    """Whether a kustomization URL is Trainer's manager overlay (any version)."""
    return url.startswith(f"{trainer_reference.REPOSITORY}//{trainer_reference.MANAGER_PATH}?ref=")


def version_of(url: str) -> str:
    return url.rpartition("?ref=")[2]


def transform(obj: Mapping[str, Any], platform_pool_labels: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The object as spotkube applies it, or None when spotkube leaves it as the release ships it: the
    controllers run on the platform pool, or on the pool `platform_pool_labels` pick on a cluster
    spotkube didn't make."""
    if obj.get("kind") in kfp_transforms.CONTROL_PLANE_KINDS:
        return contract.constrain_workload(obj, contract.on_platform_pool_of(platform_pool_labels or {}))
    return None
