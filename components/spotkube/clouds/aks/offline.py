"""What the mocks answer for AKS: the outputs Azure would compute and the provider functions the
component calls, with obviously fake values shaped like the real ones.

Pure data and functions; the mocks (`spotkube.testing.SpotkubeMocks`, which the offline plan in
`spotkube.components.offline` runs on) ask the registry, which asks each cloud here. The real
shapes, with sources: docs/platform-facts.md#aks-kubelogin.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from spotkube.clouds.aks.resources import CLIENT_CONFIG_INVOKE, USER_CREDENTIALS_INVOKE

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


def computed_outputs(type_token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Azure computes nothing the AKS component reads back from its own resources; a consumer wiring
    its resource group or egress address into it reads the group's name and the address."""
    if type_token == RESOURCE_GROUP_TYPE:
        return {"name": inputs.get("resourceGroupName") or name}
    if type_token == PUBLIC_IP_TYPE:
        return {"ipAddress": PUBLIC_IP_ADDRESS}
    return {}


def call_answer(token: str) -> dict[str, Any] | None:
    """The answer to an azure-native function the component calls; None for any other function."""
    if token == USER_CREDENTIALS_INVOKE:
        value = base64.b64encode(USER_KUBECONFIG.encode()).decode()
        return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
    if token == CLIENT_CONFIG_INVOKE:
        return dict(CLIENT_CONFIG)
    return None
