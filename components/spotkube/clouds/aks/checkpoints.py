"""AKS's checkpoint store: the storage account and blob container a stack's training jobs save to, and
the grant that lets the workers write it (`training.checkpointStore`).

Why these settings: a checkpoint must outlive the node that wrote it, and the workers sign in with
Entra ID, never with a key: shared-key access is off (so no account key can be leaked or used), TLS 1.2
is the minimum, and neither the account nor the container allows anonymous reads. The workers are pods
on the GPU nodes, which reach the node's instance metadata endpoint and get tokens for the kubelet
identity (the identity every node runs as), so that identity gets Storage Blob Data Contributor
(read, write and delete blobs) on the one container, nothing wider
(learn.microsoft.com/azure/role-based-access-control/built-in-roles, read 2026-12-02).

Pure module: no Pulumi.
"""

from __future__ import annotations

import re
from typing import Any

from spotkube.clouds.aks.spec import AksSpec
from spotkube.platform.cloud import RuleOutput
from spotkube.platform.errors import Problem
from spotkube.platform.input_messages import shown
from spotkube.platform.spec import config_key

STORAGE_ACCOUNT_TYPE = "azure-native:storage:StorageAccount"
BLOB_CONTAINER_TYPE = "azure-native:storage:BlobContainer"
#: Storage Blob Data Contributor, a built-in role: read, write and delete a container's blobs.
BLOB_DATA_CONTRIBUTOR_ROLE_ID = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
#: The one container of the account the jobs save under, each job in `<container>/<job name>`.
CONTAINER = "checkpoints"
#: Azure's rule for a storage account name, which is part of its global DNS name.
ACCOUNT_NAME = re.compile(r"^[a-z0-9]{3,24}$")

#: Why the plan's fixed costs leave the store unpriced.
UNPRICED = ("an account and a container cost nothing of their own: Azure bills the GB "
            "stored and the operations, which depend on the jobs (their checkpoint size and interval); not priced here")


def rules(spec: AksSpec) -> RuleOutput:
    """The store's name must be one Azure accepts for a storage account."""
    store = spec.training.checkpoint_store
    if store is not None and not ACCOUNT_NAME.fullmatch(store.name):
        yield Problem(config_key("training.checkpointStore.name"), f"{shown(store.name)} is no storage account "
                      "name: Azure accepts 3-24 lower-case letters and digits, unique across Azure")


def location(name: str) -> str:
    """Where the stack's jobs save, as a URI (adlfs / fsspec's `az://<account>/<container>` form, which
    names the account, since the container alone is no address)."""
    return f"az://{name}/{CONTAINER}"


def account_inputs(spec: AksSpec, resource_group_name: Any) -> dict[str, Any]:
    """A general-purpose v2 account, locally redundant (a checkpoint is rewritten every interval and lost
    only with the zone), reachable with Entra ID and HTTPS only."""
    store = spec.training.checkpoint_store
    assert store is not None, "only with training.checkpointStore"
    return {"account_name": store.name, "resource_group_name": resource_group_name, "location": spec.region,
            "kind": "StorageV2", "sku": {"name": "Standard_LRS"}, "allow_shared_key_access": False,
            "minimum_tls_version": "TLS1_2", "allow_blob_public_access": False,
            "enable_https_traffic_only": True}


def container_inputs(spec: AksSpec, resource_group_name: Any) -> dict[str, Any]:
    """The container the jobs save under, never public."""
    store = spec.training.checkpoint_store
    assert store is not None, "only with training.checkpointStore"
    return {"account_name": store.name, "resource_group_name": resource_group_name, "container_name": CONTAINER,
            "public_access": "None"}
