"""Kubeconfigs that the Kubernetes provider can use without a person at a terminal.

`pulumi up` deploys every Kubernetes object through a provider built from the cluster's kubeconfig,
and nobody is there to answer a login prompt:
- AKS returns, for an Entra ID cluster on Kubernetes 1.24 or later, an exec kubeconfig that runs
  `kubelogin get-token --login devicecode`, which waits for a person to type a code in a browser
  (Azure/kubelogin#93). `with_kubelogin_mode` rewrites it the way `kubelogin convert-kubeconfig -l
  MODE` does (kubelogin `pkg/internal/converter/convert.go`).
- `gke-gcloud-auth-plugin` signs in with gcloud's credentials, or with Application Default
  Credentials when given `--use_application_default_credentials` (kubernetes/cloud-provider-gcp
  `cmd/gke-gcloud-auth-plugin/cred.go`). Neither waits for a person: in CI,
  google-github-actions/auth writes one credential file and points both gcloud
  (`CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE`) and ADC (`GOOGLE_APPLICATION_CREDENTIALS`) at it.

Pure module over kubeconfig text: no Pulumi. `login_problems` is the preflight's check of the same.

The facts: docs/platform-facts.md#aks-kubelogin and docs/platform-facts.md#gke-cluster-access.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import yaml

from spotkube.platform.spec import LoginMode

KUBELOGIN = "kubelogin"
GKE_AUTH_PLUGIN = "gke-gcloud-auth-plugin"
GKE_ADC_FLAG = "--use_application_default_credentials"
#: kubelogin's login modes that wait for a person; without `--login` it uses devicecode.
INTERACTIVE_LOGINS = ("devicecode", "interactive")
KUBELOGIN_DEFAULT_LOGIN = "devicecode"
#: Flags of AKS's kubeconfig that each mode keeps, as `kubelogin convert-kubeconfig` does. The
#: `--client-id` AKS writes is its own CLI app, not the deployer, so no mode keeps it: spn reads
#: the service principal from AZURE_CLIENT_ID, workloadidentity from AZURE_CLIENT_ID (and, on
#: GitHub Actions, the runner's OIDC token), msi from the host.
_KEPT_FLAGS: dict[str, tuple[str, ...]] = {
    "azurecli": (),
    "workloadidentity": (),
    "spn": ("--tenant-id", "--environment"),
    "msi": (),
}
_ALWAYS_KEPT = ("--server-id", "--cache-dir")


def _flags(args: Sequence[str]) -> dict[str, str]:
    """`get-token --a 1 --b 2` as {"--a": "1", "--b": "2"}; a flag without a value maps to ""."""
    flags: dict[str, str] = {}
    rest = [str(a) for a in args if str(a) != "get-token"]
    i = 0
    while i < len(rest):
        name, _, inline = rest[i].partition("=")
        if inline:
            flags[name] = inline
            i += 1
        elif i + 1 < len(rest) and not rest[i + 1].startswith("--"):
            flags[name] = rest[i + 1]
            i += 2
        else:
            flags[name] = ""
            i += 1
    return flags


def _exec_users(config: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for user in config.get("users") or ():
        exec_ = (user.get("user") or {}).get("exec")
        if isinstance(exec_, dict):
            yield str(user.get("name", "")), exec_


def _load(kubeconfig: str) -> dict[str, Any]:
    config = yaml.safe_load(kubeconfig)
    if not isinstance(config, dict):
        raise ValueError("the kubeconfig is not a YAML mapping")
    return config


def with_kubelogin_mode(kubeconfig: str, mode: LoginMode) -> str:
    """The kubeconfig with every kubelogin user signing in by `mode` instead of a device code."""
    config = _load(kubeconfig)
    for _, exec_ in _exec_users(config):
        if exec_.get("command") != KUBELOGIN:
            continue
        flags = _flags(exec_.get("args") or ())
        args = ["get-token", "--login", mode]
        for flag in (*_ALWAYS_KEPT, *_KEPT_FLAGS[mode]):
            if flags.get(flag):
                args += [flag, flags[flag]]
        exec_["args"] = args
        exec_.pop("env", None)
    return yaml.safe_dump(config, sort_keys=False)


def login_problems(kubeconfig: str) -> list[str]:
    """Why a kubeconfig would stop `pulumi up` at a login prompt (empty when it never does).

    Static credentials (a token, a client certificate) need nobody; kubelogin needs nobody unless
    its mode is interactive; the GKE plugin never prompts (it reads gcloud's or ADC's credentials).
    """
    try:
        config = _load(kubeconfig)
    except (ValueError, yaml.YAMLError) as err:
        return [f"the kubeconfig can't be read: {err}"]
    problems = []
    for name, exec_ in _exec_users(config):
        command = str(exec_.get("command", ""))
        args = [str(a) for a in exec_.get("args") or ()]
        if command == KUBELOGIN:
            login = _flags(args).get("--login") or KUBELOGIN_DEFAULT_LOGIN
            if login in INTERACTIVE_LOGINS:
                problems.append(f"user {name!r} runs `kubelogin --login {login}`, which waits for a person; "
                                "set spotkube:cluster.deployer.login to azurecli, workloadidentity, spn or msi")
    return problems

