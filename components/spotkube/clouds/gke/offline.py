"""What the offline plan answers for GKE: the outputs Google Cloud would compute for a cluster and a
service account, with obviously fake values shaped like the real ones.

Pure data and functions; the engine's mocks (`spotkube.components.offline`) ask the registry, which
asks each cloud here.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from spotkube.clouds.gke.resources import CLUSTER_TYPE, SERVICE_ACCOUNT_TYPE

#: The cluster's CA certificate, base64 as GKE reports it.
CA_CERTIFICATE = base64.b64encode(b"offline-plan-placeholder-ca").decode()
#: The IP endpoint, and the DNS endpoint GKE names after the cluster (`gke-<id>-<project number>...`).
ENDPOINT = "offline-plan.invalid"
DNS_ENDPOINT = "gke-00000000000000000000000000000000-000000000000.offline-plan.gke.goog"


def computed_outputs(type_token: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The cluster's endpoints and CA, and the service account's email, which the component reads."""
    if type_token == CLUSTER_TYPE:
        master_auth = {**(inputs.get("masterAuth") or {}), "clusterCaCertificate": CA_CERTIFICATE}
        outputs: dict[str, Any] = {"endpoint": ENDPOINT, "masterAuth": master_auth}
        endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
        if endpoints.get("dnsEndpointConfig"):
            dns = {**endpoints["dnsEndpointConfig"], "endpoint": DNS_ENDPOINT}
            outputs["controlPlaneEndpointsConfig"] = {**endpoints, "dnsEndpointConfig": dns}
        return outputs
    if type_token == SERVICE_ACCOUNT_TYPE:
        return {"email": f"{inputs.get('accountId')}@{inputs.get('project')}.iam.gserviceaccount.com"}
    return {}


def call_answer(token: str) -> dict[str, Any] | None:
    """The GKE component calls no provider function."""
    return None
