"""GKE's kubeconfig, made to sign in without a person.

`gke-gcloud-auth-plugin` signs in with gcloud's credentials, or with Application
Default Credentials when given `--use_application_default_credentials` (kubernetes/cloud-provider-gcp
`cmd/gke-gcloud-auth-plugin/cred.go`); neither waits for a person. spotkube writes GKE's kubeconfig
itself (`gke_kubeconfig`) exactly as gcloud would.
The facts: docs/platform-facts.md#gke-cluster-access. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spotkube.platform.kubeconfigs import dump

GKE_AUTH_PLUGIN = "gke-gcloud-auth-plugin"
GKE_ADC_FLAG = "--use_application_default_credentials"
#: The install hint gcloud writes into the kubeconfig (`GKE_GCLOUD_AUTH_INSTALL_HINT`).
AUTH_PLUGIN_HINT = (
    "Install gke-gcloud-auth-plugin for use with kubectl by following "
    "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin"
)


def gke_kubeconfig(context: str, endpoint: str, ca_certificate: str | None, dns_endpoint: bool) -> str:
    """The kubeconfig `gcloud container clusters get-credentials` writes for this cluster, so the
    provider signs in exactly as kubectl would (gcloud's `api_lib/container/kubeconfig.py`).

    - DNS endpoint (`--dns-endpoint`): `server: https://<endpoint>` and no CA data, because the
      `.gke.goog` name serves a publicly trusted certificate; the plugin runs without arguments,
      taking its token from gcloud, since gcloud refuses to pair a DNS endpoint with
      `--use_application_default_credentials`. No person is needed: CI's google-github-actions/auth
      points gcloud at its credential file (`CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE`).
    - IP endpoint: the cluster's CA data, and the plugin with
      `--use_application_default_credentials`, as gcloud writes it when the
      `container/use_application_default_credentials` property is set: it then needs no gcloud.

    The component exports the kubeconfig as a secret, like the AKS one.
    """
    cluster: dict[str, str] = {"server": f"https://{endpoint}"}
    exec_: dict[str, Any] = {
        "command": GKE_AUTH_PLUGIN,
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "installHint": AUTH_PLUGIN_HINT,
        "provideClusterInfo": True,
    }
    if not dns_endpoint:
        if ca_certificate:
            cluster["certificate-authority-data"] = ca_certificate
        exec_["args"] = [GKE_ADC_FLAG]
    return dump({
        "apiVersion": "v1",
        "clusters": [{"name": context, "cluster": cluster}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "kind": "Config",
        "preferences": {},
        "users": [{"name": context, "user": {"exec": exec_}}],
    })


def login_problem(name: str, exec_: Mapping[str, Any]) -> str | None:
    """Never a problem: gke-gcloud-auth-plugin signs in with gcloud's credentials, or with Application
    Default Credentials when given the flag, and neither waits for a person (in CI,
    google-github-actions/auth points both at one credential file)."""
    return None
