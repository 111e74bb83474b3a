"""GKE's kubeconfig: the one spotkube writes signs in with Application Default Credentials, and the one
gcloud writes is told to."""

from __future__ import annotations

import yaml

from spotkube.clouds import login_problems
from spotkube.clouds.gke.kubeconfig import gke_kubeconfig, with_application_default_credentials

#: What `gcloud container clusters get-credentials` writes (gcloud's kubeconfig.py): the plugin
#: without arguments, which signs in as gcloud's active account.
GCLOUD_KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Y2E=
    server: https://203.0.113.10
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


def test_gcloud_kubeconfig_is_told_to_use_application_default_credentials() -> None:
    assert "gcloud's active account" in login_problems(GCLOUD_KUBECONFIG)[0]
    rewritten = with_application_default_credentials(GCLOUD_KUBECONFIG)
    assert exec_of(rewritten)["args"] == ["--use_application_default_credentials"]
    assert login_problems(rewritten) == []
    assert with_application_default_credentials(rewritten) == rewritten


def test_the_kubeconfig_spotkube_writes_needs_nobody() -> None:
    kubeconfig = gke_kubeconfig("gke_proj_us-central1_ml", "203.0.113.10", "Y2E=")
    exec_ = exec_of(kubeconfig)
    assert exec_["command"] == "gke-gcloud-auth-plugin" and exec_["args"] == ["--use_application_default_credentials"]
    assert yaml.safe_load(kubeconfig)["clusters"][0]["cluster"] == {"server": "https://203.0.113.10",
                                                                     "certificate-authority-data": "Y2E="}
    assert login_problems(kubeconfig) == []
