"""The kinds of Kubernetes object Kubeflow Pipelines' install applies, which the offline plan can't see.

kustomize renders KFP's manifests inside the provider at deploy time, yet whoever deploys them needs rights
on each kind. Read from kubeflow/pipelines at tag 2.17.0 (`manifests/kustomize/cluster-scoped-resources`
and `env/platform-agnostic`) with the remote bases they name (argoproj/argo-workflows v4.0.5:
`manifests/base/crds/minimal`, `manifests/base/workflow-controller`,
`manifests/namespace-install/workflow-controller-rbac`). A new KFP version needs this module re-read.
"""

from __future__ import annotations

#: The KFP release these kinds were read from; a test fails when the KFP spotkube installs moves on
#: without them being read again.
KINDS_VERSION = "2.17.0"
#: (apiVersion, kind) of every object the two steps apply: the namespace, 11 CRDs (Argo Workflows',
#: KFP's ScheduledWorkflow and Viewer, the Application CRD), RBAC, 14 Deployments, 8 Services, 7 plus 1
#: ConfigMaps, 2 PersistentVolumeClaims, 2 Secrets (MySQL's and the object store's), a NetworkPolicy
#: and Argo's PriorityClass. No custom resource of any of those CRDs is applied.
#: The kinds every add-on's manifests here apply (KFP's, Kueue's and Trainer's).
COMMON_KINDS: tuple[tuple[str, str], ...] = (
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
)
RENDERED_KINDS = (*COMMON_KINDS, ("v1", "PersistentVolumeClaim"), ("networking.k8s.io/v1", "NetworkPolicy"),
                  ("scheduling.k8s.io/v1", "PriorityClass"))
#: The PersistentVolumeClaims among them, each (what it holds, GiB requested): MySQL's and SeaweedFS's
#: 20Gi ReadWriteOnce claims, on the storage class `kubeflow.storageClass` names or the cluster's
#: default. They exist, and are billed, whether or not a pipeline runs.
DATA_VOLUMES: tuple[tuple[str, int], ...] = (("MySQL", 20), ("SeaweedFS", 20))
