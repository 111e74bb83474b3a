"""AKS: what spotkube's commands do on Azure (`Cloud.commands`), apart from the plan.

A plan never needs them, so the profile names this module instead of importing it: it loads the first
time a command asks (docs/architecture.md#one-folder-per-cloud).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from typing import Any

from spotkube.clouds.aks import access_api, identities, karpenter_price_copy, logs, options, usage_api
from spotkube.clouds.aks.profile import DEFAULT_MACHINE, FIND_OBJECT_ID, REGION_PATTERN
from spotkube.platform.command_support import CommandSupport, DeployAccess
from spotkube.platform.cost.refresh import Fetched, FetchSettings, PriceSource, PriceTarget
from spotkube.platform.errors import NewStackError


def new_stack_config(environment: str, region: str, flags: options.AksNewStack) -> dict[str, Any]:
    """An on-demand system and platform pool, a spot T4 pool from 0 and its on-demand fallback from 0: AKS
    offers T4 widely; the deployer and the ranges it connects from as named by the flags; the guards
    the plan checks switched on: Entra ID as the only way in, deletion protection, container logs kept in
    Log Analytics."""
    if flags.deployer_object_id is None:
        raise NewStackError("--deployer-object-id is required with --cloud aks: the identity that runs pulumi up, "
                            f"which gets the RBAC Cluster Admin role on the cluster; find it with {FIND_OBJECT_ID}")
    if not re.fullmatch(REGION_PATTERN, region):
        raise NewStackError(f"--region {region}: not an Azure region name; use e.g. eastus, westeurope or uksouth")
    return {
        "cloud": "aks",
        "environment": environment,
        "region": region,
        "systemPool": {"machine": DEFAULT_MACHINE, "min": 2, "max": 3},
        "platformPool": {"machine": DEFAULT_MACHINE, "min": 1, "max": 3},
        "gpuPools": [{
            "name": "t4spot", "machine": "Standard_NC4as_T4_v3", "capacity": "spot",
            "evictionPolicy": "Delete", "maxPrice": -1, "min": 0, "max": 4,
        }, {
            # Where GPU steps go when spot is out: at min 0 it costs nothing until a step needs it.
            "name": "t4ondemand", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand", "min": 0, "max": 2,
        }],
        "cluster": {"channel": "stable", **_api_server_access(flags),
                    "localAccountsDisabled": True, "deletionProtection": True, "logs": {"enabled": True}},
    }


def _api_server_access(flags: options.AksNewStack) -> dict[str, Any]:
    """The deployer as the flags name it and, when `--api-server-ranges` gives them, the ranges it connects
    from as the only ones the API server admits."""
    ranges = [r.strip() for r in (flags.api_server_ranges or "").split(",") if r.strip()]
    deployer = {"objectId": flags.deployer_object_id, "principalType": flags.deployer_type.value}
    if not ranges:
        return {"deployer": deployer}
    return {"deployer": {**deployer, "egressRanges": ranges}, "authorizedIpRanges": ranges}


#: An AKS node's provider ID: the VM scale set instance behind it, in the cluster's node resource group.
PROVIDER_ID = re.compile(r"^azure:///subscriptions/(?P<subscription>[^/]+)/resourceGroups/(?P<group>[^/]+)/providers/"
                         r"Microsoft\.Compute/virtualMachineScaleSets/(?P<vmss>[^/]+)/virtualMachines/(?P<id>[0-9]+)$",
                         re.IGNORECASE)


def eviction_command(provider_id: str) -> tuple[str, ...] | None:
    """`az vmss simulate-eviction`: Azure evicts the spot instance as it does when it reclaims capacity,
    with the 30-second Preempt notice AKS drains the node on (learn.microsoft.com/azure/virtual-machine-
    scale-sets/use-spot, "Simulate an eviction"). The subscription is the node's own, so the az CLI's
    default subscription does not matter."""
    match = PROVIDER_ID.fullmatch(provider_id)
    if match is None:
        return None
    return ("az", "vmss", "simulate-eviction", "--subscription", match["subscription"], "--resource-group",
            match["group"], "--name", match["vmss"], "--instance-id", match["id"])


def _fetch_prices(targets: Sequence[PriceTarget], settings: FetchSettings, endpoint: str | None,
                  today: datetime.date, credential: str | None) -> Fetched:
    """The Retail Prices client, imported only when a refresh runs: a plan never loads requests."""
    from spotkube.clouds.aks import retail_prices

    return retail_prices.fetch(targets, settings, endpoint, today, credential)


PRICE_SOURCE = PriceSource(
    name="Azure Retail Prices API", endpoint="https://prices.azure.com/api/retail/prices", fetch=_fetch_prices,
    examples="--region uksouth --sku Standard_NC4as_T4_v3",
)


COMMANDS = CommandSupport(
    options=options.OPTIONS,
    new_stack_config=new_stack_config,
    # What deploy.yml reads from the stack's GitHub environment, which the bootstrap writes.
    deploy=DeployAccess(variables=(("ARM_CLIENT_ID", "<client id of the identity that deploys>"),
                                   ("ARM_TENANT_ID", "<its Entra ID tenant id>"),
                                   ("ARM_SUBSCRIPTION_ID", "<the subscription to deploy into>"))),
    price_source=PRICE_SOURCE,
    price_copies={karpenter_price_copy.NAME: karpenter_price_copy.COPY},
    catalog_source="spotkube.clouds.aks.catalog_source",
    read_quota=usage_api.read_quota,
    read_access=access_api.read_access,
    read_backend=access_api.read_backend,
    log_query=logs.log_query,
    eviction_command=eviction_command,
    identities=identities.FACTS,
    flag_help={
        "--workspace": "the Log Analytics workspace's resource id (`pulumi stack output logWorkspaceId`; default: "
        "the stack's cluster.logs.workspaceId).",
        "--subscription": "the Azure subscription (default: $ARM_SUBSCRIPTION_ID, else $AZURE_SUBSCRIPTION_ID).",
    },
)
