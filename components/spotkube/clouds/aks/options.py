"""AKS's own flags on spotkube's commands and its bootstrap stack's settings (`spotkube.platform.cloud_options`):
the deployer a new stack names, the subscription whose VM sizes or quota are read, Azure's API addresses,
and where the CI identities live."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from spotkube.platform.bootstrap import BootstrapSpec
from spotkube.platform.cloud_options import (
    CatalogRefreshOptions,
    CommandOptions,
    NewStackOptions,
    PricesRefreshOptions,
    QuotaOptions,
    option,
)
from spotkube.platform.spec import Text


class PrincipalType(StrEnum):
    """What an AKS deployer's object id is, as Azure's role assignments name it."""

    User = "User"
    ServicePrincipal = "ServicePrincipal"
    Group = "Group"


class AksNewStack(NewStackOptions):
    deployer_object_id: str | None = option(
        "--deployer-object-id", "OBJECT_ID", "AKS: the Entra ID object id of the identity that runs pulumi up (CI's "
        "deploy identity: az ad sp show --id <appId> --query id -o tsv).")
    deployer_type: PrincipalType = option("--deployer-type", "User|ServicePrincipal|Group",
                                          "AKS: what --deployer-object-id is.", default=PrincipalType.ServicePrincipal)
    api_server_ranges: str | None = option(
        "--api-server-ranges", "CIDRS", "AKS: the public addresses the deploy runner connects from, comma-separated "
        "(203.0.113.0/24,198.51.100.7/32): the only ones the API server admits (cluster.authorizedIpRanges and "
        "cluster.deployer.egressRanges). Without them the plan warns (security-api-server) until you list them.")


class AksCatalogRefresh(CatalogRefreshOptions):
    subscription: str | None = option(
        "--subscription", "SUBSCRIPTION_ID", "AKS: the Azure subscription whose VM sizes are read (default: "
        "$ARM_SUBSCRIPTION_ID, else $AZURE_SUBSCRIPTION_ID, as for quota); Azure's DefaultAzureCredential signs in.")
    endpoint: str | None = option("--azure-endpoint", "URL",
                                  "Azure Resource Manager URL (default: management.azure.com).")


class AksPricesRefresh(PricesRefreshOptions):
    endpoint: str | None = option("--azure-endpoint", "URL", "Where the Azure Retail Prices API is, if not at Azure (a "
                                  "mirror, or a local server in tests).")


class AksQuota(QuotaOptions):
    account: str | None = option("--subscription", "SUBSCRIPTION_ID", "AKS: the Azure subscription (default: "
                                 "$ARM_SUBSCRIPTION_ID, else $AZURE_SUBSCRIPTION_ID).")


class AksBootstrapSpec(BootstrapSpec):
    """The CI identities on AKS: user-assigned managed identities in a resource group of their own."""

    location: Text | None = Field(default=None, pattern=r"^[a-z][a-z0-9]+$", description="AKS: the Azure region of "
                                  "the identities' resource group; default: the first stack's region.")
    identity_resource_group: Text = Field(default="spotkube-ci", pattern=r"^[-\w._()]{1,89}[-\w_()]$",
                                          description="AKS: the resource group the managed identities live in.")

    #: Blob container names: 3-63 lowercase letters, digits and single `-` between them.
    backend_scheme: ClassVar[str | None] = "azblob"
    backend_name: ClassVar[str] = r"^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$"
    backend_example: ClassVar[str] = "azblob://spotkube-state?storage_account=spotkubestate"


OPTIONS = CommandOptions(new_stack=AksNewStack, catalog_refresh=AksCatalogRefresh, prices_refresh=AksPricesRefresh,
                         quota=AksQuota, bootstrap=AksBootstrapSpec)
