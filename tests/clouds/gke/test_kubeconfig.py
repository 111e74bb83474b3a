"""GKE's kubeconfig: spotkube writes the one gcloud writes, and neither form waits for a person."""

from __future__ import annotations

import yaml

from spotkube.clouds import login_problems
from spotkube.clouds.gke.kubeconfig import gke_kubeconfig

#: What `gcloud container clusters get-credentials` writes (gcloud's kubeconfig.py): the plugin
#: through the DNS endpoint, without arguments and CA data: it signs in with gcloud's credentials.
GCLOUD_KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    server: https://gke-0123456789abcdef0123456789abcdef-000000000000.us-central1.gke.goog
  name: gke_proj_us-central1_ml
contexts:
- context:
    cluster: gke_proj_us-central1_ml
    user: gke_proj_us-central1_ml
  name: gke_proj_us-central1_ml
current-context: gke_proj_us-central1_ml
kind: Config
preferences: {}
users:
- name: gke_proj_us-central1_ml
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
"""


def exec_of(kubeconfig: str) -> dict:
    (user,) = yaml.safe_load(kubeconfig)["users"]
    return user["user"]["exec"]


def test_through_the_dns_endpoint_spotkube_writes_what_gcloud_writes() -> None:
    kubeconfig = gke_kubeconfig("gke_proj_us-central1_ml",
                                "gke-0123456789abcdef0123456789abcdef-000000000000.us-central1.gke.goog", None, True)
    assert yaml.safe_load(kubeconfig) == yaml.safe_load(GCLOUD_KUBECONFIG)


def test_through_the_ip_endpoint_the_plugin_uses_application_default_credentials() -> None:
    kubeconfig = gke_kubeconfig("gke_proj_us-central1_ml", "203.0.113.10", "Y2E=", False)
    exec_ = exec_of(kubeconfig)
    assert exec_["command"] == "gke-gcloud-auth-plugin" and exec_["args"] == ["--use_application_default_credentials"]
    assert yaml.safe_load(kubeconfig)["clusters"][0]["cluster"] == {"server": "https://203.0.113.10",
                                                                     "certificate-authority-data": "Y2E="}


def test_neither_form_waits_for_a_person() -> None:
    """The plugin reads gcloud's credentials (CI: the auth action's credential file) or ADC; it never prompts."""
    assert login_problems(GCLOUD_KUBECONFIG) == []
    assert login_problems(gke_kubeconfig("ctx", "203.0.113.10", "Y2E=", False)) == []
