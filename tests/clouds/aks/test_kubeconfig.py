"""AKS's kubeconfig rewrite and its preflight check, on the kubeconfig AKS really returns (as the offline
plan answers it)."""

from __future__ import annotations

import pytest
import yaml

from spotkube.clouds import login_problems
from spotkube.clouds.aks.kubeconfig import with_kubelogin_mode
from spotkube.clouds.aks.offline import USER_KUBECONFIG as AKS_USER_KUBECONFIG


def exec_of(kubeconfig: str) -> dict:
    (user,) = yaml.safe_load(kubeconfig)["users"]
    return user["user"]["exec"]


def test_aks_device_code_kubeconfig_needs_a_person() -> None:
    (problem,) = login_problems(AKS_USER_KUBECONFIG)
    assert "kubelogin --login devicecode" in problem and "spotkube:cluster.deployer.login" in problem


@pytest.mark.parametrize(("mode", "args"), [
    ("azurecli", ["get-token", "--login", "azurecli", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]),
    ("workloadidentity", ["get-token", "--login", "workloadidentity",
                          "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]),
    ("msi", ["get-token", "--login", "msi", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]),
    ("spn", ["get-token", "--login", "spn", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630",
             "--tenant-id", "00000000-0000-0000-0000-00000000000a", "--environment", "AzurePublicCloud"]),
])
def test_kubelogin_modes_match_convert_kubeconfig(mode: str, args: list[str]) -> None:
    rewritten = with_kubelogin_mode(AKS_USER_KUBECONFIG, mode)  # type: ignore[arg-type]
    exec_ = exec_of(rewritten)
    assert exec_["args"] == args
    assert exec_["command"] == "kubelogin" and "env" not in exec_
    assert "80faf920-1908-4b52-b5ef-a8e7bedfc67a" not in rewritten, "AKS's own CLI app id is not the deployer"
    assert login_problems(rewritten) == []
    original = yaml.safe_load(AKS_USER_KUBECONFIG)
    assert yaml.safe_load(rewritten)["clusters"] == original["clusters"], "only the user changes"


def test_rewriting_twice_changes_nothing_more() -> None:
    once = with_kubelogin_mode(AKS_USER_KUBECONFIG, "workloadidentity")
    assert with_kubelogin_mode(once, "workloadidentity") == once


def test_static_credentials_need_nobody_and_garbage_is_a_problem() -> None:
    token = "users: [{name: u, user: {token: abc}}]"
    assert login_problems(token) == []
    assert login_problems("- not a mapping") and "can't be read" in login_problems("- not a mapping")[0]
