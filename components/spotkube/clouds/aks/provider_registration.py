"""AKS: register a resource provider namespace in the subscription, as a resource of the bootstrap.

azure-native has no resource for it: registering is a POST (`/subscriptions/S/providers/NS/register`)
and the provider makes resources of PUT endpoints only (pulumi/pulumi-azure-native#1075). So the
bootstrap registers each namespace through a small dynamic resource (clouds/aks/bootstrap.py) whose
creation calls `register`: Azure Resource Manager's REST API with the administrator's credentials
(azure-identity's DefaultAzureCredential: the Azure CLI's login), then a wait until Azure says
`Registered`. Deleting it unregisters nothing: other workloads of the subscription may use the namespace.
"""

from __future__ import annotations

import time

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


def _token(endpoint: str) -> dict[str, str]:
    """The administrator's bearer token; none for a plain-HTTP endpoint (a test's local server)."""
    if plain_http(endpoint):
        return {}
    from azure.identity import DefaultAzureCredential  # the `refresh` extra, which the bootstrap's docs install

    return {"Authorization": f"Bearer {DefaultAzureCredential().get_token(f'{DEFAULT_ENDPOINT}/.default').token}"}


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
