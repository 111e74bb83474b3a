"""Unit-test spotkube's components with Pulumi's own mocks: `SpotkubeMocks` answers what they ask the clouds.

Pulumi's unit tests (`pulumi.runtime.set_mocks` and `@pulumi.runtime.test`) replace the engine and every
provider with a `pulumi.runtime.Mocks`. The clusters read a few values that only a cloud can give: AKS's
user kubeconfig (`listManagedClusterUserCredentials`), the deployer's identity (`getClientConfig`), a
GKE cluster's endpoints and CA certificate, the nodes' service account e-mail. `SpotkubeMocks` answers
each of them with a value shaped exactly like the cloud's own answer and obviously fake (`.invalid`
hosts, nil-like GUIDs), and echoes every resource's inputs back as its state, as Pulumi's documented
mocks do. The same answers drive `spotkube plan`, which runs the stack program under these mocks.

    import pulumi
    from spotkube.testing import SpotkubeMocks

    pulumi.runtime.set_mocks(SpotkubeMocks(), preview=False)

A consumer's own mocks subclass it and fall back to it (`return super().call(args)`), or wrap it
through `computed_outputs` and `call_result`. Under a plain `Mocks` that answers nothing, the
components still register every resource, leave what they could not be told (the kubeconfig, the
deployer's role assignments) unknown, and log a warning that names this module.

Pure data and one `Mocks` subclass: it imports Pulumi, and nothing of spotkube.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import pulumi

__all__ = [
    "AKS_CREDENTIALS_TOKEN",
    "AKS_USER_KUBECONFIG",
    "AZURE_CLIENT_CONFIG",
    "AZURE_CLIENT_CONFIG_TOKEN",
    "SpotkubeMocks",
    "call_result",
    "computed_outputs",
]

#: The invoke behind `AksGpuCluster.kubeconfig` (azure-native's `listManagedClusterUserCredentials`).
AKS_CREDENTIALS_TOKEN = "azure-native:containerservice:listManagedClusterUserCredentials"
#: The invoke that tells the deployer's identity, which `AksGpuCluster` grants Kubernetes rights.
AZURE_CLIENT_CONFIG_TOKEN = "azure-native:authorization:getClientConfig"

#: What AKS's `listClusterUserCredential` returns for an Entra ID cluster (Kubernetes 1.24 and
#: later): an exec kubeconfig that runs kubelogin in device-code mode, which needs a person. The
#: mocks answer with this very shape, with obviously fake addresses and ids, so the component's
#: rewrite of it is exercised and the preflight judges what `pulumi up` would use.
AKS_USER_KUBECONFIG = """apiVersion: v1
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
AZURE_CLIENT_CONFIG: Mapping[str, str] = {
    "clientId": "00000000-0000-0000-0000-00000000000c",
    "objectId": "00000000-0000-0000-0000-00000000000d",
    "subscriptionId": "00000000-0000-0000-0000-00000000000e",
    "tenantId": "00000000-0000-0000-0000-00000000000a",
}
#: The GKE control plane's DNS-based endpoint, in the shape GKE gives it (`gke-<hash>-<project number>`).
GKE_DNS_ENDPOINT = "gke-00000000000000000000000000000000-000000000000.offline-plan.gke.goog"
#: A GKE cluster's IP endpoint and CA certificate (base64, as `masterAuth.clusterCaCertificate` holds it).
GKE_ENDPOINT = "offline-plan.invalid"
GKE_CA_CERTIFICATE = base64.b64encode(b"offline-plan-placeholder-ca").decode()
#: The public address a mocked Azure public IP or Google address gets: RFC 5737's documentation range.
MOCK_IP_ADDRESS = "198.51.100.7"

_COMPUTE = "https://www.googleapis.com/compute/v1/projects"


def computed_outputs(type_token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The outputs a cloud computes for a new resource and that spotkube's components, or the
    resources a consumer typically wires into them, read: a GKE cluster's endpoints and CA, a
    service account's e-mail, a resource group's name, a VPC's and subnetwork's self links, a
    public address. Everything else is left to the inputs, which the mocks echo as state."""
    if type_token == "gcp:container/cluster:Cluster":
        master_auth = {**(inputs.get("masterAuth") or {}), "clusterCaCertificate": GKE_CA_CERTIFICATE}
        outputs: dict[str, Any] = {"endpoint": GKE_ENDPOINT, "masterAuth": master_auth}
        endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
        if endpoints.get("dnsEndpointConfig"):
            dns = {**endpoints["dnsEndpointConfig"], "endpoint": GKE_DNS_ENDPOINT}
            outputs["controlPlaneEndpointsConfig"] = {**endpoints, "dnsEndpointConfig": dns}
        return outputs
    if type_token == "gcp:serviceaccount/account:Account":
        return {"email": f"{inputs.get('accountId')}@{inputs.get('project')}.iam.gserviceaccount.com"}
    if type_token == "azure-native:resources:ResourceGroup":
        return {"name": inputs.get("resourceGroupName") or name}
    if type_token == "gcp:compute/network:Network":
        network = inputs.get("name") or name
        return {"name": network, "selfLink": f"{_COMPUTE}/{inputs.get('project')}/global/networks/{network}"}
    if type_token == "gcp:compute/subnetwork:Subnetwork":
        subnetwork = inputs.get("name") or name
        return {"name": subnetwork, "selfLink": f"{_COMPUTE}/{inputs.get('project')}/regions/{inputs.get('region')}"
                                                f"/subnetworks/{subnetwork}"}
    if type_token == "azure-native:network:PublicIPAddress":
        return {"ipAddress": MOCK_IP_ADDRESS}
    if type_token == "gcp:compute/address:Address":
        return {"address": MOCK_IP_ADDRESS}
    return {}


def call_result(token: str, args: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The answer to a provider function (invoke) that spotkube's components call, shaped like the
    cloud's, or None for a function spotkube does not call (a wrapping `Mocks` answers those)."""
    if token == AKS_CREDENTIALS_TOKEN:
        value = base64.b64encode(AKS_USER_KUBECONFIG.encode()).decode()
        return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
    if token == AZURE_CLIENT_CONFIG_TOKEN:
        return dict(AZURE_CLIENT_CONFIG)
    return None


class SpotkubeMocks(pulumi.runtime.Mocks):
    """A `pulumi.runtime.Mocks` for programs that use spotkube: every resource's state is its inputs
    plus what the cloud would compute (`computed_outputs`), and the components' invokes get the
    clouds' answers (`call_result`); any other invoke gets `{}`, as a plain `Mocks` would answer.

    Subclass it to answer more, and hand the rest back with `super()`."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        state = {"name": args.name, **args.inputs, **computed_outputs(args.typ, args.name, args.inputs)}
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:  # type: ignore[override]
        result = call_result(args.token, args.args)
        return {} if result is None else result
