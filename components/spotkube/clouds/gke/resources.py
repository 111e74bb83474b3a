"""GKE's resources, both ways: what the component registers, and how the plan reads it back.

The type tokens the GKE component uses, named once for the component, its readers, its preflight
rules and its offline answers.
"""

from __future__ import annotations

CLUSTER_TYPE = "gcp:container/cluster:Cluster"
NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
#: A GKE ComputeClass, registered through the Kubernetes provider as a custom resource.
COMPUTE_CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"
SERVICE_ACCOUNT_TYPE = "gcp:serviceaccount/account:Account"
ROUTER_NAT_TYPE = "gcp:compute/routerNat:RouterNat"
