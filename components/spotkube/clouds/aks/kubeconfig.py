"""AKS's kubeconfig, made to sign in without a person.

AKS returns, for an Entra ID cluster on Kubernetes 1.24 or later, an exec kubeconfig that runs
`kubelogin get-token --login devicecode`, which waits for a person to type a code in a browser
(Azure/kubelogin#93). `with_kubelogin_mode` rewrites it the way `kubelogin convert-kubeconfig -l MODE`
does (kubelogin `pkg/internal/converter/convert.go`); `login_problem` is the preflight's check of the
same. The facts: docs/platform-facts.md#aks-kubelogin. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spotkube.platform.kubeconfigs import dump, exec_users, load
from spotkube.platform.spec import LoginMode

KUBELOGIN = "kubelogin"
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


def with_kubelogin_mode(kubeconfig: str, mode: LoginMode) -> str:
    """The kubeconfig with every kubelogin user signing in by `mode` instead of a device code."""
    config = load(kubeconfig)
    for _, exec_ in exec_users(config):
        if exec_.get("command") != KUBELOGIN:
            continue
        flags = _flags(exec_.get("args") or ())
        args = ["get-token", "--login", mode]
        for flag in (*_ALWAYS_KEPT, *_KEPT_FLAGS[mode]):
            if flags.get(flag):
                args += [flag, flags[flag]]
        exec_["args"] = args
        exec_.pop("env", None)
    return dump(config)


def login_problem(name: str, exec_: Mapping[str, Any]) -> str | None:
    """Why a kubelogin user waits for a person: its mode is interactive (devicecode unless told)."""
    if str(exec_.get("command", "")) != KUBELOGIN:
        return None
    login = _flags([str(a) for a in exec_.get("args") or ()]).get("--login") or KUBELOGIN_DEFAULT_LOGIN
    if login not in INTERACTIVE_LOGINS:
        return None
    return (f"user {name!r} runs `kubelogin --login {login}`, which waits for a person; "
            "sign in with azurecli, workloadidentity, spn or msi instead (spotkube:cluster.deployer.login on a "
            "spotkube cluster; `kubelogin convert-kubeconfig -l azurecli` on a kubeconfig of your own)")
