"""GKE's kubeconfig, made to sign in without a person.

`gke-gcloud-auth-plugin` signs in as gcloud's active account unless it is told to use Application
Default Credentials, which is what CI's workload identity federation provides
(kubernetes/cloud-provider-gcp `cmd/gke-gcloud-auth-plugin/cred.go`). spotkube writes GKE's kubeconfig
itself (`gke_kubeconfig`), telling the plugin so; `login_problem` is the preflight's check of the same.
The facts: docs/platform-facts.md#gke-cluster-access. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spotkube.platform.kubeconfigs import dump, exec_users, load

GKE_AUTH_PLUGIN = "gke-gcloud-auth-plugin"
GKE_ADC_FLAG = "--use_application_default_credentials"
AUTH_PLUGIN_HINT = (
    "Install gke-gcloud-auth-plugin for kubectl: gcloud components install gke-gcloud-auth-plugin "
    "(https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl)"
)


def with_application_default_credentials(kubeconfig: str) -> str:
    """The kubeconfig with `gke-gcloud-auth-plugin` told to use Application Default Credentials."""
    config = load(kubeconfig)
    for _, exec_ in exec_users(config):
        if exec_.get("command") == GKE_AUTH_PLUGIN:
            args = [str(a) for a in exec_.get("args") or ()]
            exec_["args"] = args if GKE_ADC_FLAG in args else [*args, GKE_ADC_FLAG]
    return dump(config)


def gke_kubeconfig(context: str, endpoint: str, ca_certificate: str | None) -> str:
    """A kubeconfig that signs in through `gke-gcloud-auth-plugin` with Application Default
    Credentials (a person's `gcloud auth application-default login`, or CI's workload identity
    federation), so it holds no long-lived token; the component still exports it as a secret, like
    the AKS one. The DNS endpoint serves a publicly trusted certificate, so it needs no CA data."""
    cluster: dict[str, str] = {"server": f"https://{endpoint}"}
    if ca_certificate:
        cluster["certificate-authority-data"] = ca_certificate
    return with_application_default_credentials(dump({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [{"name": context, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": GKE_AUTH_PLUGIN,
            "installHint": AUTH_PLUGIN_HINT,
            "provideClusterInfo": True,
        }}}],
    }))


def login_problem(name: str, exec_: Mapping[str, Any]) -> str | None:
    """Why a gke-gcloud-auth-plugin user would sign in as gcloud's active account, which CI lacks."""
    if str(exec_.get("command", "")) != GKE_AUTH_PLUGIN or GKE_ADC_FLAG in [str(a) for a in exec_.get("args") or ()]:
        return None
    return (f"user {name!r} runs {GKE_AUTH_PLUGIN} without {GKE_ADC_FLAG}, so it signs in as "
            "gcloud's active account, which CI does not have")
