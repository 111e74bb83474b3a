"""AKS: the subscription's live vCPU quotas in a region, read through Azure's own Python SDK.

The SDK comes with the `refresh` extra and is imported only when a quota is read, so the rest of spotkube
never needs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from spotkube.clouds.aks.quota import family
from spotkube.platform.errors import SpotkubeError, first_line
from spotkube.platform.live_quota import LiveQuota, QuotaQuery, Usage, installed, plain_http

#: Azure Resource Manager, where the usage API lives in Azure's public cloud.
DEFAULT_ENDPOINT = "https://management.azure.com"
#: Where the workflows and the Azure CLI name the subscription, in the order they are read.
SUBSCRIPTION_VARIABLES = ("ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID")
#: azure-core retries 408, 429 and 5xx answers itself (honouring Retry-After); a few times is enough.
RETRIES = 3
NEEDS = ("Microsoft.Compute/locations/usages/read (and Microsoft.Compute/skus/read) on the subscription: "
         "Reader, or the quota reader role the bootstrap stack assigns (docs/identities.md)")


class _NoToken:
    """The credential of a plain-HTTP endpoint: the client's bearer policy is replaced, so nothing
    asks for a token, and a token asked for anyway is refused rather than sent unencrypted."""

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        raise SpotkubeError("no credential is sent to a plain-HTTP endpoint")


def environment_subscription() -> str | None:
    """The subscription the environment names, as every spotkube command that reads Azure takes it."""
    return next((os.environ[v] for v in SUBSCRIPTION_VARIABLES if os.environ.get(v)), None)


def _subscription(query: QuotaQuery) -> str:
    subscription = query.account or environment_subscription()
    if not subscription:
        raise SpotkubeError(f"name the Azure subscription whose quota to read: --subscription ID, or "
                            f"{' or '.join(SUBSCRIPTION_VARIABLES)} (as the workflows set it)")
    return subscription


def _client(query: QuotaQuery, subscription: str) -> Any:
    from azure.mgmt.compute import ComputeManagementClient  # the `refresh` extra; read_quota checked it is there

    endpoint = query.endpoint or DEFAULT_ENDPOINT
    options: dict[str, Any] = {"base_url": endpoint, "retry_total": RETRIES,
                               "connection_timeout": query.timeout, "read_timeout": query.timeout}
    if plain_http(endpoint):
        from azure.core.pipeline.policies import SansIOHTTPPolicy
        return ComputeManagementClient(_NoToken(), subscription, authentication_policy=SansIOHTTPPolicy(),
                                       **options)
    from azure.identity import DefaultAzureCredential
    return ComputeManagementClient(DefaultAzureCredential(), subscription, **options)


def _families(client: Any, region: str, sizes: Iterable[str]) -> dict[str, str]:
    wanted = set(sizes)
    if not wanted:
        return {}
    found: dict[str, str] = {}
    for sku in client.resource_skus.list(filter=f"location eq '{region}'"):
        if sku.resource_type == "virtualMachines" and sku.name in wanted and sku.family:
            found[sku.name] = sku.family
    return found


def read_quota(query: QuotaQuery) -> LiveQuota:
    """The region's vCPU quotas of the subscription, and the families of sizes spotkube's table lacks."""
    if not installed("azure.mgmt.compute", "azure.identity"):
        raise SpotkubeError("reading Azure quota needs Azure's SDK: pip install 'spotkube[refresh]'")
    from azure.core.exceptions import AzureError, ClientAuthenticationError, HttpResponseError

    subscription = _subscription(query)
    region = query.spec.region
    where = f"subscription {subscription}, region {region}"
    try:
        client = _client(query, subscription)
        regional = {u.name.value: Usage(float(u.limit), float(u.current_value)) for u in client.usage.list(region)
                    if u.name is not None and u.name.value}
        learnt = _families(client, region, (m for m in query.machines if family(m, {}) is None))
    except ClientAuthenticationError as err:
        raise SpotkubeError(f"could not sign in to Azure to read the quota of {where}: "
                            f"{first_line(err).rstrip('.')}; sign in (az login, or ARM_* with OIDC in CI)") from None
    except HttpResponseError as err:
        raise SpotkubeError(f"Azure answered {err.status_code} reading the quota of {where}: {first_line(err)}; "
                            f"the identity needs {NEEDS}") from None
    except AzureError as err:  # no credential found, connection refused, timeouts
        raise SpotkubeError(f"could not read the quota of {where}: {first_line(err)}") from None
    return LiveQuota(where=where, regional=regional, global_={}, learnt=learnt)

