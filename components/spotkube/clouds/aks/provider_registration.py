"""AKS: register a resource provider namespace in the subscription, as a resource of the bootstrap.

azure-native has no resource for it: registering is a POST (`/subscriptions/S/providers/NS/register`)
and the provider makes resources of PUT endpoints only (pulumi/pulumi-azure-native#1075). So the
bootstrap registers each namespace through a small dynamic resource (clouds/aks/bootstrap.py) whose
creation calls `register`: Azure Resource Manager's REST API, signed in the way azure-native signs in
the rest of the bootstrap (`arm_credential`: the same `ARM_*` variables, OIDC in CI, else the Azure
CLI's login), then a wait until Azure says `Registered`. azure-identity's DefaultAzureCredential reads
none of the `ARM_*` variables, so it would sign in as someone else, or no one, after the resource
groups exist. Deleting it unregisters nothing: other workloads of the subscription may use the namespace.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import requests

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.live_quota import plain_http

#: Azure Resource Manager in Azure's public cloud.
DEFAULT_ENDPOINT = "https://management.azure.com"
API_VERSION = "2021-04-01"
#: Registration usually takes a minute or two; a few namespaces take longer.
WAIT_SECONDS = 900.0
POLL_SECONDS = 10.0
REQUEST_TIMEOUT = 30.0


#: The audience Entra ID expects in a federated token, as azure-native asks GitHub for it
#: (learn.microsoft.com/entra/workload-id/workload-identity-federation-create-trust).
FEDERATED_AUDIENCE = "api://AzureADTokenExchange"


def _on(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in ("1", "true", "yes")


def github_oidc_token(environ: Mapping[str, str]) -> str:
    """The federated token azure-native would use: `ARM_OIDC_TOKEN`, the file `ARM_OIDC_TOKEN_FILE_PATH`
    names, or one asked of the job's token endpoint (`ARM_OIDC_REQUEST_URL`/`_TOKEN`, else GitHub's own
    `ACTIONS_ID_TOKEN_REQUEST_URL`/`_TOKEN`) for Entra's audience."""
    if environ.get("ARM_OIDC_TOKEN"):
        return environ["ARM_OIDC_TOKEN"]
    if environ.get("ARM_OIDC_TOKEN_FILE_PATH"):
        return Path(environ["ARM_OIDC_TOKEN_FILE_PATH"]).read_text(encoding="utf-8").strip()
    url = environ.get("ARM_OIDC_REQUEST_URL") or environ.get("ACTIONS_ID_TOKEN_REQUEST_URL")
    bearer = environ.get("ARM_OIDC_REQUEST_TOKEN") or environ.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
    if not url or not bearer:
        raise SpotkubeError("ARM_USE_OIDC is set but no OIDC token is at hand: set ARM_OIDC_TOKEN, or run in a "
                            "GitHub Actions job with `permissions: id-token: write`")
    answer = requests.get(url, params={"audience": FEDERATED_AUDIENCE}, headers={"Authorization": f"Bearer {bearer}"},
                          timeout=REQUEST_TIMEOUT)
    if answer.status_code != 200:
        raise SpotkubeError(f"the job's OIDC token endpoint answered {answer.status_code}; check the job's "
                            "`permissions: id-token: write`")
    return str(answer.json()["value"])


def arm_credential(environ: Mapping[str, str]) -> Any:
    """The credential azure-native would sign in with, from the same variables: OIDC (`ARM_USE_OIDC` with
    `ARM_CLIENT_ID` and `ARM_TENANT_ID`), a client secret (`ARM_CLIENT_SECRET`), a managed identity
    (`ARM_USE_MSI`), else the Azure CLI's login."""
    from azure import identity  # the `bootstrap` extra

    client, tenant = environ.get("ARM_CLIENT_ID"), environ.get("ARM_TENANT_ID")
    if _on(environ, "ARM_USE_OIDC"):
        if not client or not tenant:
            raise SpotkubeError("ARM_USE_OIDC needs ARM_CLIENT_ID and ARM_TENANT_ID, as azure-native does")
        return identity.ClientAssertionCredential(tenant, client, lambda: github_oidc_token(environ))
    if environ.get("ARM_CLIENT_SECRET") and client and tenant:
        return identity.ClientSecretCredential(tenant, client, environ["ARM_CLIENT_SECRET"])
    if _on(environ, "ARM_USE_MSI"):
        return identity.ManagedIdentityCredential(client_id=client or None)
    return identity.AzureCliCredential(tenant_id=tenant or None)


def _token(endpoint: str) -> dict[str, str]:
    """The bearer header for Azure Resource Manager; none for a plain-HTTP endpoint (a test's local server)."""
    if plain_http(endpoint):
        return {}
    token = arm_credential(os.environ).get_token(f"{DEFAULT_ENDPOINT}/.default").token
    return {"Authorization": f"Bearer {token}"}


def _state(answer: requests.Response, namespace: str) -> str:
    if answer.status_code != 200:
        try:
            reason = answer.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            reason = answer.text[:200] or answer.reason
        raise SpotkubeError(f"registering {namespace} in the subscription: Azure answered {answer.status_code}: "
                            f"{reason}; an administrator can run `az provider register --namespace {namespace} "
                            "--wait` and rerun the bootstrap")
    return str(answer.json().get("registrationState", ""))


def register(subscription_id: str, namespace: str, *, endpoint: str = DEFAULT_ENDPOINT,
             wait: float = WAIT_SECONDS, poll: float = POLL_SECONDS) -> str:
    """Register the namespace (a no-op when it is registered) and wait until Azure says so; the final state."""
    url = f"{endpoint}/subscriptions/{subscription_id}/providers/{namespace}"
    headers = _token(endpoint)
    state = _state(requests.post(f"{url}/register", params={"api-version": API_VERSION}, headers=headers,
                                 timeout=REQUEST_TIMEOUT), namespace)
    deadline = time.monotonic() + wait
    while state != "Registered":
        if time.monotonic() >= deadline:
            raise SpotkubeError(f"{namespace} is still {state or 'not registered'} after {wait:.0f} s; check it with "
                                f"`az provider show --namespace {namespace} --query registrationState` and rerun "
                                "the bootstrap")
        time.sleep(poll)
        state = _state(requests.get(url, params={"api-version": API_VERSION}, headers=headers,
                                    timeout=REQUEST_TIMEOUT), namespace)
    return state
