"""AKS's resources, both ways: what the component registers, and how the plan reads it back.

The type tokens and provider functions the AKS component uses, named once for the component, its
readers, its preflight rules and its offline answers.
"""

from __future__ import annotations

CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"
ROLE_ASSIGNMENT_TYPE = "azure-native:authorization:RoleAssignment"
#: The kubeconfigs of a cluster's users, and the deployer's own identity.
USER_CREDENTIALS_INVOKE = "azure-native:containerservice:listManagedClusterUserCredentials"
CLIENT_CONFIG_INVOKE = "azure-native:authorization:getClientConfig"
