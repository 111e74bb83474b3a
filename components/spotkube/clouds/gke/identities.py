"""GKE: the IAM permissions the preview and the deploy call, and the roles each CI identity gets.

Through the DNS endpoint every call to the API server needs `container.clusters.connect`
(cloud.google.com/kubernetes-engine/docs/concepts/network-isolation); inside, GKE authorises a verb by IAM
(cloud.google.com/kubernetes-engine/docs/reference/api-permissions) or Kubernetes RBAC. A preview's
forbidden dry run is answered from the provider's state (clouds/aks/identities.py gives the source).
Secrets are read by nobody but the deployer, as on AKS. IAM has no scope narrower than the project for
most of these (the cluster doesn't exist when the identities are made), so every binding is on the
stack's project. Pure module: no Pulumi. The calls and roles, as tables: docs/identities.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spotkube.clouds.gke.resources import NODE_SERVICE_ACCOUNT_ROLE
from spotkube.platform.identities import (
    QUOTA,
    REFRESH,
    UNMAPPED,
    Assignment,
    Call,
    IdentityFacts,
    Invoked,
    KubernetesKind,
    Registered,
    Role,
    kind_preview_call,
    kubernetes_kinds,
    plural,
    sorted_calls,
)

PROJECT = "project"
COVERS: dict[str, frozenset[str]] = {PROJECT: frozenset({PROJECT})}

#: pulumi-gcp type token -> (permission to read it, permissions to create, update, delete it).
RESOURCE_TYPES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "gcp:serviceaccount/account:Account": (
        "iam.serviceAccounts.get", ("iam.serviceAccounts.create",), ("iam.serviceAccounts.update",),
        ("iam.serviceAccounts.delete",)),
    "gcp:projects/iAMMember:IAMMember": (
        "resourcemanager.projects.getIamPolicy", ("resourcemanager.projects.setIamPolicy",),
        ("resourcemanager.projects.setIamPolicy",), ("resourcemanager.projects.setIamPolicy",)),
    # Creating a cluster or a pool that runs as a service account needs actAs on it.
    "gcp:container/cluster:Cluster": (
        "container.clusters.get", ("container.clusters.create", "iam.serviceAccounts.actAs"),
        ("container.clusters.update",), ("container.clusters.delete",)),
    "gcp:container/nodePool:NodePool": (
        "container.clusters.get", ("container.clusters.update", "iam.serviceAccounts.actAs"),
        ("container.clusters.update",), ("container.clusters.update",)),
    "gcp:compute/router:Router": (
        "compute.routers.get", ("compute.routers.create", "compute.networks.updatePolicy"),
        ("compute.routers.update",), ("compute.routers.delete",)),
    # The nodes' read access to a registry the stack names is a binding in the repository's own policy.
    "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember": (
        "artifactregistry.repositories.getIamPolicy", ("artifactregistry.repositories.setIamPolicy",),
        ("artifactregistry.repositories.setIamPolicy",), ("artifactregistry.repositories.setIamPolicy",)),
    "gcp:compute/routerNat:RouterNat": (
        "compute.routers.get", ("compute.routers.update",), ("compute.routers.update",), ("compute.routers.update",)),
    # The checkpoint store (clouds/gke/checkpoints.py): the bucket and the workers' binding in its policy.
    "gcp:storage/bucket:Bucket": (
        "storage.buckets.get", ("storage.buckets.create",), ("storage.buckets.update",), ("storage.buckets.delete",)),
    "gcp:storage/bucketIAMMember:BucketIAMMember": (
        "storage.buckets.getIamPolicy", ("storage.buckets.setIamPolicy",), ("storage.buckets.setIamPolicy",),
        ("storage.buckets.setIamPolicy",)),
}
#: pulumi-gcp function token -> the permission it needs: the project's number, for the checkpoint store's grant.
INVOKES: dict[str, str] = {"gcp:organizations/getProject:getProject": "resourcemanager.projects.get"}
NO_GOOGLE_CALL_PREFIXES = ("spotkube:", "pulumi:", "kubernetes:", "random:", "time:")
QUOTA_PERMISSIONS = ("compute.regions.get", "compute.projects.get")
CONNECT = "container.clusters.connect"


def permission(kind: KubernetesKind, verb: str) -> str:
    """GKE's IAM permission for a verb on a kind: `container.configMaps.get`, custom resources as
    `container.thirdPartyObjects.get`."""
    if kind.custom:
        return f"container.thirdPartyObjects.{verb}"
    # camelCase with a leading acronym lowered whole: APIService -> apiServices.
    camel = re.sub(r"^[A-Z]+?(?=[A-Z][a-z]|$)|^[A-Z]", lambda m: m.group(0).lower(), kind.kind)
    return f"container.{plural(camel)}.{verb}"


def _unmapped(type_token: str) -> str:
    return f"{UNMAPPED} for {type_token}; add it to clouds/gke/identities.py)"


def _resources(registrations: Sequence[Registered]) -> list[Registered]:
    return [r for r in registrations if not r.type.startswith(NO_GOOGLE_CALL_PREFIXES)]


def preview_calls(registrations: Sequence[Registered], invokes: Iterable[Invoked]) -> list[Call]:
    """What a pull request's preview (and its quota check) calls."""
    calls = [Call("preview", f"invoke {i.token}", INVOKES.get(i.token) or _unmapped(i.token), "permission", PROJECT,
                  "every preview") for i in invokes]
    for registration in _resources(registrations):
        read = RESOURCE_TYPES.get(registration.type, (_unmapped(registration.type),))[0]
        calls.append(Call("preview", f"read {registration.type.rsplit(':', 1)[-1]}", read, "permission", PROJECT,
                          REFRESH))
    kinds = kubernetes_kinds(registrations)
    if kinds:
        calls.append(Call("preview", "reach the API server's DNS endpoint", CONNECT, "permission", PROJECT,
                          "every Kubernetes call"))
    for kind in kinds:
        calls.append(kind_preview_call(kind, permission(kind, "get"), "permission", PROJECT))
    calls += [Call("preview", "read the region's and the project's quota", p, "permission", PROJECT, QUOTA)
              for p in QUOTA_PERMISSIONS]
    return list(sorted_calls(calls))


def deploy_calls(registrations: Sequence[Registered], invokes: Iterable[Invoked]) -> list[Call]:
    """What `pulumi up` (and the quota check before it) calls."""
    calls = [Call("deploy", f"invoke {i.token}", INVOKES.get(i.token) or _unmapped(i.token), "permission", PROJECT,
                  "pulumi up") for i in invokes]
    for registration in _resources(registrations):
        name = registration.type.rsplit(":", 1)[-1]
        if registration.type not in RESOURCE_TYPES:
            calls.append(Call("deploy", f"create {name}", _unmapped(registration.type), "permission", PROJECT,
                              "pulumi up"))
            continue
        read, create, update, delete = RESOURCE_TYPES[registration.type]
        calls.append(Call("deploy", f"read {name}", read, "permission", PROJECT, "pulumi up, refresh"))
        for verb, permissions in (("create", create), ("update", update), ("delete", delete)):
            calls += [Call("deploy", f"{verb} {name}", p, "permission", PROJECT, "pulumi up") for p in permissions]
    kinds = kubernetes_kinds(registrations)
    if kinds:
        calls.append(Call("deploy", "reach the API server's DNS endpoint", CONNECT, "permission", PROJECT,
                          "every Kubernetes call"))
    for kind in kinds:
        calls += [Call("deploy", f"{verb} {kind.kind}", permission(kind, verb), "permission", PROJECT, "pulumi up")
                  for verb in ("get", "create", "update", "delete")]
        if kind.group == "rbac.authorization.k8s.io" and kind.kind in ("Role", "ClusterRole"):
            calls += [Call("deploy", f"{verb} {kind.kind}", permission(kind, verb), "permission", PROJECT,
                           "pulumi up (Kubernetes checks a role's rules against the deployer's)")
                      for verb in ("bind", "escalate")]
    calls += [Call("deploy", "read the region's and the project's quota", p, "permission", PROJECT, QUOTA)
              for p in QUOTA_PERMISSIONS]
    return list(sorted_calls(calls))


# --- The roles: predefined ones as far as spotkube relies on them, and the one it defines -----------

CONTAINER_VIEWER = Role("roles/container.viewer", "roles/container.viewer",
                        permissions=frozenset({CONNECT, "container.clusters.get", "container.*.get",
                                               "resourcemanager.projects.get"}),
                        not_permissions=frozenset({"container.secrets.get"}))
CONTAINER_ADMIN = Role("roles/container.admin", "roles/container.admin", permissions=frozenset({"container.*"}))
SERVICE_ACCOUNT_ADMIN = Role("roles/iam.serviceAccountAdmin", "roles/iam.serviceAccountAdmin", permissions=frozenset({
    "iam.serviceAccounts.create", "iam.serviceAccounts.get", "iam.serviceAccounts.update",
    "iam.serviceAccounts.delete"}))
SERVICE_ACCOUNT_USER = Role("roles/iam.serviceAccountUser", "roles/iam.serviceAccountUser",
                            permissions=frozenset({"iam.serviceAccounts.actAs"}))
NETWORK_ADMIN = Role("roles/compute.networkAdmin", "roles/compute.networkAdmin", permissions=frozenset({
    "compute.routers.*", "compute.networks.updatePolicy", *QUOTA_PERMISSIONS}))
PROJECT_IAM_ADMIN = Role("roles/resourcemanager.projectIamAdmin", "roles/resourcemanager.projectIamAdmin",
                         permissions=frozenset({"resourcemanager.projects.getIamPolicy",
                                                "resourcemanager.projects.setIamPolicy"}))
#: The reads of Google resources a refresh makes and the quota check, which container.viewer lacks.
#: tests check it is exactly what the shipped stacks' previews need beyond container.viewer.
PREVIEW_READER = Role("spotkubePreviewReader", "spotkubePreviewReader", custom=True,
                      description="Reads what a spotkube preview refreshes beyond roles/container.viewer, and the "
                      "compute quota.",
                      permissions=frozenset({"artifactregistry.repositories.getIamPolicy", "compute.projects.get",
                                             "compute.regions.get", "compute.routers.get", "iam.serviceAccounts.get",
                                             "resourcemanager.projects.getIamPolicy", "storage.buckets.get",
                                             "storage.buckets.getIamPolicy"}))
#: Granting the nodes' account read access to the stack's Artifact Registry repositories: only the
#: repositories' IAM policies, not Artifact Registry Administrator, which could also push and delete images.
REGISTRY_GRANTS = Role("spotkubeRegistryGrants", "spotkubeRegistryGrants", custom=True,
                       description="Reads and sets Artifact Registry repositories' IAM policies, for the GKE nodes' "
                       "read access to the registries a spotkube stack names.",
                       permissions=frozenset({"artifactregistry.repositories.getIamPolicy",
                                              "artifactregistry.repositories.setIamPolicy"}))
#: The training checkpoint store (clouds/gke/checkpoints.py): its bucket, the workers' binding in the bucket's
#: policy, and the project's number the binding names. Not Storage Admin, which also reads and deletes objects.
CHECKPOINT_STORE = Role("spotkubeCheckpointStore", "spotkubeCheckpointStore", custom=True,
                        description="Creates a spotkube stack's checkpoint bucket and sets its IAM policy, for the "
                        "training workers' write access.",
                        permissions=frozenset({"storage.buckets.create", "storage.buckets.get",
                                               "storage.buckets.update", "storage.buckets.delete",
                                               "storage.buckets.getIamPolicy",
                                               "storage.buckets.setIamPolicy", "resourcemanager.projects.get"}))
#: An IAM condition on the deployer's Project IAM Admin: it may grant and revoke only the node service
#: account's role (cloud.google.com/iam/docs/setting-limits-on-granting-roles).
ONLY_NODE_ROLE = (f"api.getAttribute('iam.googleapis.com/modifiedGrantsByRole', [])"
                  f".hasOnly(['{NODE_SERVICE_ACCOUNT_ROLE}'])")

#: `gcloud compute instances simulate-maintenance-event` on a spot or preemptible node, for `spotkube drill
#: --run` (drill.yml): the call, and the zonal operation gcloud waits on (it does unless `--async`).
EVICTION_DRILL = Role("spotkubeEvictionDrill", "spotkubeEvictionDrill", custom=True,
                      description="Preempts a spot or preemptible VM as Compute Engine does, for spotkube's eviction "
                      "drill.",
                      permissions=frozenset({"compute.instances.simulateMaintenanceEvent",
                                             "compute.zoneOperations.get"}))

ASSIGNMENTS: tuple[Assignment, ...] = (
    Assignment("preview", CONTAINER_VIEWER, PROJECT, "connects to the DNS endpoint and reads the cluster and the "
               "Kubernetes objects the program applies (no Secrets)"),
    Assignment("preview", PREVIEW_READER, PROJECT, "reads the service account, the project's IAM policy and the "
               "Cloud Router on refresh (and a checkpoint bucket and its policy), and the quota"),
    Assignment("deploy", CONTAINER_ADMIN, PROJECT, "creates the cluster and its pools, and applies the Kubernetes "
               "objects"),
    Assignment("deploy", SERVICE_ACCOUNT_ADMIN, PROJECT, "creates the nodes' service account"),
    Assignment("deploy", SERVICE_ACCOUNT_USER, PROJECT, "lets the cluster and its pools run as that account"),
    Assignment("deploy", NETWORK_ADMIN, PROJECT, "creates the Cloud Router and NAT of private nodes, and reads the "
               "quota"),
    Assignment("deploy", PROJECT_IAM_ADMIN, PROJECT, "grants the nodes' account its one role, and no other",
               condition=ONLY_NODE_ROLE),
    Assignment("deploy", REGISTRY_GRANTS, PROJECT, "grants the nodes' account roles/artifactregistry.reader on the "
               "repositories in cluster.registries, in the projects of stacks that set it; a repository in another "
               "project needs this role there too, granted by that project's owner"),
    Assignment("deploy", CHECKPOINT_STORE, PROJECT, "creates the checkpoint bucket and grants the training workers "
               "roles/storage.objectUser on it, in the projects of stacks that set training.checkpointStore"),
    Assignment("deploy", EVICTION_DRILL, PROJECT, "preempts a spot node for spotkube drill (drill.yml), in the "
               "projects of stacks that set cluster.deployer.drills", drills_only=True),
)


FACTS = IdentityFacts(preview_calls, deploy_calls, ASSIGNMENTS, COVERS)


def read_role(definition: Mapping[str, Any]) -> Role:
    """A role from Google Cloud's JSON (`gcloud iam roles describe`, `roles.get`)."""
    return Role(name=definition["name"], id=definition["name"],
                permissions=frozenset(definition.get("includedPermissions") or ()),
                description=str(definition.get("title", "")))
