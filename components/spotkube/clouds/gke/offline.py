"""What the mocks answer for GKE: the outputs Google Cloud would compute, with obviously fake values
shaped like the real ones, for the mocks (`spotkube.testing.SpotkubeMocks`), which ask the registry.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from spotkube.clouds.gke.checkpoints import PROJECT_INVOKE
from spotkube.clouds.gke.resources import CLUSTER_TYPE, SERVICE_ACCOUNT_TYPE

#: The cluster's CA certificate, base64 as GKE reports it.
CA_CERTIFICATE = base64.b64encode(b"offline-plan-placeholder-ca").decode()
#: The IP endpoint, and the DNS endpoint GKE names after the cluster (`gke-<id>-<project number>...`).
ENDPOINT = "offline-plan.invalid"
DNS_ENDPOINT = "gke-00000000000000000000000000000000-000000000000.offline-plan.gke.goog"
#: Resources a consumer typically creates and wires into the component (its own VPC, subnetwork and
#: egress address), whose computed outputs a consumer's program reads.
NETWORK_TYPE = "gcp:compute/network:Network"
SUBNETWORK_TYPE = "gcp:compute/subnetwork:Subnetwork"
ADDRESS_TYPE = "gcp:compute/address:Address"
#: The address a mocked external address gets: RFC 5737's documentation range.
ADDRESS = "198.51.100.7"
#: Identity types the bootstrap stack (infra/bootstrap) creates and reads back.
IDENTITY_POOL_TYPE = "gcp:iam/workloadIdentityPool:WorkloadIdentityPool"
IDENTITY_PROVIDER_TYPE = "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider"
CUSTOM_ROLE_TYPE = "gcp:projects/iAMCustomRole:IAMCustomRole"
#: A Google Cloud project number, obviously fake.
PROJECT_NUMBER = "000000000000"
_COMPUTE = "https://www.googleapis.com/compute/v1/projects"


def computed_outputs(type_token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The cluster's endpoints and CA, and the service account's email, which the component reads; the
    self links of a consumer's VPC and subnetwork and its address, which a consumer wires into it."""
    if type_token == CLUSTER_TYPE:
        master_auth = {**(inputs.get("masterAuth") or {}), "clusterCaCertificate": CA_CERTIFICATE}
        outputs: dict[str, Any] = {"endpoint": ENDPOINT, "masterAuth": master_auth}
        endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
        if endpoints.get("dnsEndpointConfig"):
            dns = {**endpoints["dnsEndpointConfig"], "endpoint": DNS_ENDPOINT}
            outputs["controlPlaneEndpointsConfig"] = {**endpoints, "dnsEndpointConfig": dns}
        return outputs
    if type_token == SERVICE_ACCOUNT_TYPE:
        email = f"{inputs.get('accountId')}@{inputs.get('project')}.iam.gserviceaccount.com"
        return {"email": email, "name": f"projects/{inputs.get('project')}/serviceAccounts/{email}"}
    # Google names identity pools and providers by project number, which the mocks can't know.
    pools = f"projects/{PROJECT_NUMBER}/locations/global/workloadIdentityPools"
    if type_token == IDENTITY_POOL_TYPE:
        return {"name": f"{pools}/{inputs.get('workloadIdentityPoolId')}"}
    if type_token == IDENTITY_PROVIDER_TYPE:
        return {"name": f"{pools}/{inputs.get('workloadIdentityPoolId')}/providers/"
                        f"{inputs.get('workloadIdentityPoolProviderId')}"}
    if type_token == CUSTOM_ROLE_TYPE:
        return {"name": f"projects/{inputs.get('project')}/roles/{inputs.get('roleId')}"}
    if type_token == NETWORK_TYPE:
        network = inputs.get("name") or name
        return {"name": network, "selfLink": f"{_COMPUTE}/{inputs.get('project')}/global/networks/{network}"}
    if type_token == SUBNETWORK_TYPE:
        subnetwork = inputs.get("name") or name
        return {"name": subnetwork, "selfLink": f"{_COMPUTE}/{inputs.get('project')}/regions/{inputs.get('region')}"
                                                f"/subnetworks/{subnetwork}"}
    if type_token == ADDRESS_TYPE:
        return {"address": ADDRESS}
    return {}


def call_answer(token: str) -> dict[str, Any] | None:
    """The project's number, which the component reads for a checkpoint store's grant; nothing else."""
    return {"number": PROJECT_NUMBER} if token == PROJECT_INVOKE else None


def resource_id(type_token: str, name: str, inputs: Mapping[str, Any]) -> str | None:
    """The id pulumi-gcp gives a cluster, `projects/<project>/locations/<location>/clusters/<name>`, which a
    program hands a pool component (`GkeGpuNodePool`'s `cluster_id`); None for any other resource."""
    if type_token != CLUSTER_TYPE:
        return None
    return f"projects/{inputs.get('project')}/locations/{inputs.get('location')}/clusters/{inputs.get('name') or name}"


#: The fake answers `spotkube.testing` hands a consumer's tests, by the name it exports each under.
FIXTURES = {"GKE_CA_CERTIFICATE": CA_CERTIFICATE, "GKE_DNS_ENDPOINT": DNS_ENDPOINT, "GKE_ENDPOINT": ENDPOINT}
