"""What the mocks answer for AKS: the outputs Azure would compute and the provider functions the component
calls, with obviously fake values shaped like the real ones, for the mocks (`spotkube.testing.SpotkubeMocks`),
which ask the registry. The real shapes, with sources: docs/platform-facts.md#aks-kubelogin.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from typing import Any

from spotkube.clouds.aks.checkpoints import BLOB_CONTAINER_TYPE
from spotkube.clouds.aks.resources import CLIENT_CONFIG_INVOKE, CLUSTER_TYPE, USER_CREDENTIALS_INVOKE
from spotkube.clouds.aks.supply import IDENTITY_TYPE, RESERVATION_GROUP_TYPE

#: What AKS's `listClusterUserCredential` returns for an Entra ID cluster (Kubernetes 1.24 and
#: later): an exec kubeconfig that runs kubelogin in device-code mode, which needs a person. The
#: offline plan answers with this very shape, with obviously fake addresses and ids, so the
#: program's rewrite of it is exercised and the preflight judges what `pulumi up` would use.
USER_KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: b2ZmbGluZS1wbGFuLXBsYWNlaG9sZGVyLWNh
    server: https://offline-plan.hcp.invalid:443
  name: offline-plan
contexts:
- context:
    cluster: offline-plan
    user: clusterUser_offline-plan_offline-plan
  name: offline-plan
current-context: offline-plan
kind: Config
preferences: {}
users:
- name: clusterUser_offline-plan_offline-plan
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - get-token
      - --environment
      - AzurePublicCloud
      - --server-id
      - 6dae42f8-4368-4678-94ff-3960e28e3630
      - --client-id
      - 80faf920-1908-4b52-b5ef-a8e7bedfc67a
      - --tenant-id
      - 00000000-0000-0000-0000-00000000000a
      - --login
      - devicecode
      command: kubelogin
      env: null
      installHint: |2

        kubelogin is not installed which is required to connect to AAD enabled cluster.

        To learn more, please go to https://aka.ms/aks/kubelogin
      provideClusterInfo: false
"""
#: The identity `getClientConfig` reports for the deployer, obviously fake.
CLIENT_CONFIG = {
    "clientId": "00000000-0000-0000-0000-00000000000c",
    "objectId": "00000000-0000-0000-0000-00000000000d",
    "subscriptionId": "00000000-0000-0000-0000-00000000000e",
    "tenantId": "00000000-0000-0000-0000-00000000000a",
}
#: Resources a consumer typically creates and wires into the component (its own resource group and
#: egress address), whose computed outputs a consumer's program reads.
RESOURCE_GROUP_TYPE = "azure-native:resources:ResourceGroup"
PUBLIC_IP_TYPE = "azure-native:network:PublicIPAddress"
#: The address a mocked public IP gets: RFC 5737's documentation range.
PUBLIC_IP_ADDRESS = "198.51.100.7"


#: Identity types the bootstrap stack (infra/bootstrap) creates and reads back.
ROLE_DEFINITION_TYPE = "azure-native:authorization:RoleDefinition"
VAULT_TYPE = "azure-native:keyvault:Vault"
KEY_TYPE = "azure-native:keyvault:Key"


def _guid(*parts: str) -> str:
    """A GUID that is the same on every run and obviously not Azure's (its node says `0ff1ce`)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "spotkube-offline-plan:" + "/".join(parts)))[:24] + "0ff1ce0ff1ce"


def resource_id(type_token: str, name: str, inputs: Mapping[str, Any]) -> str | None:
    """The ARM id Azure gives a resource, as Azure returns it, since programs scope role assignments
    to them and read their subscription from them; None for any other cloud's resource."""
    if not type_token.startswith("azure-native:"):
        return None
    subscription = CLIENT_CONFIG["subscriptionId"]
    group = f"/subscriptions/{subscription}/resourceGroups/{inputs.get('resourceGroupName')}"
    if type_token == CLUSTER_TYPE:
        return f"{group}/providers/Microsoft.ContainerService/managedClusters/{inputs.get('resourceName') or name}"
    if type_token == RESOURCE_GROUP_TYPE:
        return f"/subscriptions/{subscription}/resourceGroups/{inputs.get('resourceGroupName') or name}"
    if type_token == IDENTITY_TYPE:
        identity = inputs.get("resourceName") or name
        return f"{group}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{identity}"
    if type_token == ROLE_DEFINITION_TYPE:
        return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{_guid(name)}"
    if type_token == VAULT_TYPE:
        return f"{group}/providers/Microsoft.KeyVault/vaults/{inputs.get('vaultName') or name}"
    if type_token == RESERVATION_GROUP_TYPE:
        crg = inputs.get("capacityReservationGroupName") or name
        return f"{group}/providers/Microsoft.Compute/capacityReservationGroups/{crg}"
    if type_token == KEY_TYPE:
        return f"{group}/providers/Microsoft.KeyVault/vaults/{inputs.get('vaultName')}/keys/{inputs.get('keyName')}"
    if type_token == BLOB_CONTAINER_TYPE:
        return (f"{group}/providers/Microsoft.Storage/storageAccounts/{inputs.get('accountName')}/blobServices/default/"
                f"containers/{inputs.get('containerName') or name}")
    return None


def computed_outputs(type_token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """An Azure resource named by `resourceName` is known by that name, as Azure reports it; a
    consumer wiring its resource group or egress address into the component reads the group's name
    and the address; the bootstrap stack reads its identities' ids; the drill's grant, a cluster's node
    resource group."""
    outputs: dict[str, Any] = {}
    if type_token.startswith("azure-native:") and inputs.get("resourceName"):
        outputs["name"] = inputs["resourceName"]
    if type_token == RESOURCE_GROUP_TYPE:
        outputs["name"] = inputs.get("resourceGroupName") or name
    if type_token == PUBLIC_IP_TYPE:
        outputs["ipAddress"] = PUBLIC_IP_ADDRESS
    if type_token == CLUSTER_TYPE:
        # AKS's default name of the group it makes for the nodes (learn.microsoft.com/azure/aks/faq).
        outputs["nodeResourceGroup"] = inputs.get("nodeResourceGroup") or (
            f"MC_{inputs.get('resourceGroupName')}_{inputs.get('resourceName') or name}_{inputs.get('location')}")
        identity = inputs.get("identity")
        if isinstance(identity, Mapping) and isinstance(identity.get("userAssignedIdentities"), list):
            # Azure answers the control plane's identities as a map by id, whatever the input's list.
            outputs["identity"] = {**identity, "userAssignedIdentities": {
                str(i): {"principalId": _guid("principal", str(i)), "clientId": _guid("client", str(i))}
                for i in identity["userAssignedIdentities"]}}
        # The kubelet identity AKS creates in the node resource group, which the registry grants name.
        outputs["identityProfile"] = {"kubeletidentity": {
            "objectId": _guid("kubelet", name), "clientId": _guid("kubelet-client", name)}}
    if type_token == IDENTITY_TYPE:
        identity = str(inputs.get("resourceName"))
        outputs.update(clientId=_guid("client", identity), principalId=_guid("principal", identity),
                       tenantId=CLIENT_CONFIG["tenantId"])
    return outputs


def call_answer(token: str) -> dict[str, Any] | None:
    """The answer to an azure-native function the component calls; None for any other function."""
    if token == USER_CREDENTIALS_INVOKE:
        value = base64.b64encode(USER_KUBECONFIG.encode()).decode()
        return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
    if token == CLIENT_CONFIG_INVOKE:
        return dict(CLIENT_CONFIG)
    return None


#: The fake answers `spotkube.testing` hands a consumer's tests, by the name it exports each under.
FIXTURES = {
    "AZURE_CLIENT_CONFIG": CLIENT_CONFIG,
    "AKS_USER_KUBECONFIG": USER_KUBECONFIG,
    "AZURE_CLIENT_CONFIG_TOKEN": CLIENT_CONFIG_INVOKE,
    "AKS_CREDENTIALS_TOKEN": USER_CREDENTIALS_INVOKE,
}
