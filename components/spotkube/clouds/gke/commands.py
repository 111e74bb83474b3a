"""GKE: what spotkube's commands do on Google Cloud (`Cloud.commands`), apart from the plan.

A plan never needs them, so the profile names this module instead of importing it: it loads the first
time a command asks (docs/architecture.md#one-folder-per-cloud).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from typing import Any

from spotkube.clouds.gke import access_api, catalog, identities, karpenter_price_copy, logs, options, usage_api
from spotkube.clouds.gke.profile import BILLING_API_KEY_ENV, DEFAULT_MACHINE
from spotkube.platform.command_support import CommandSupport, DeployAccess
from spotkube.platform.cost.refresh import Fetched, FetchSettings, PriceSource, PriceTarget
from spotkube.platform.errors import NewStackError

#: GKE GPU pools `new-stack` offers, best first: (GPU type, pool name, machine type, GPU count or
#: None when the machine type fixes it). L4 is the usual price/performance pick for inference and
#: fine-tuning; T4 is the most widely available fallback.
NEW_STACK_GPU_CHOICES: tuple[tuple[str, str, str, int | None], ...] = (
    ("nvidia-l4", "l4-spot", "g2-standard-8", None),
    ("nvidia-tesla-t4", "t4-spot", "n1-standard-8", 1),
)


def _new_stack_gpu_pools(region: str) -> list[dict[str, Any]]:
    """A spot pool of the first GPU in NEW_STACK_GPU_CHOICES that the catalog names a zone of in the region
    (in a region it doesn't know completely, the zones a source named: never a zone it guessed), and its
    on-demand fallback from 0, where GPU steps go when spot is out."""
    for gpu_type, name, machine, count in NEW_STACK_GPU_CHOICES:
        if catalog.zones_offering(region, gpu_type):
            gpu = {"gpu": {"type": gpu_type, "count": count}} if count is not None else {}
            fallback = name.removesuffix("-spot") + "-ondemand"
            return [{"name": name, "machine": machine, "capacity": "spot", "min": 0, "max": 4, **gpu},
                    {"name": fallback, "machine": machine, "capacity": "on-demand", "min": 0, "max": 2, **gpu}]
    offered = ", ".join(gpu for gpu, *_ in NEW_STACK_GPU_CHOICES)
    if catalog.region_zones(region) is None:
        known = sorted({r for gpu, *_ in NEW_STACK_GPU_CHOICES for r in catalog.regions_with_zones(gpu)})
        raise NewStackError(
            f"--region {region}: spotkube's GPU catalog ({catalog.section().describe()}) names no zone of it "
            f"offering {offered}; regions where it does: {', '.join(known)}"
        )
    raise NewStackError(f"--region {region}: offers none of {offered}; pick another region")


def new_stack_config(environment: str, region: str, flags: options.GkeNewStack) -> dict[str, Any]:
    """On-demand system and platform pools and a spot pool of a GPU the region really offers, with the
    guards the plan checks switched on: private nodes (out through Cloud NAT; the control plane stays
    reachable through its IAM-guarded DNS endpoint) and deletion protection."""
    if not flags.project:
        raise NewStackError("--gcp-project is required with --cloud gke (the Google Cloud project id)")
    return {
        "cloud": "gke",
        "environment": environment,
        "region": region,
        "systemPool": {"machine": DEFAULT_MACHINE, "min": 2, "max": 3},
        "platformPool": {"machine": DEFAULT_MACHINE, "min": 1, "max": 3},
        # Zones left out on purpose: spotkube fills in the zones of the region that offer the GPU.
        "gpuPools": _new_stack_gpu_pools(region),
        "cluster": {"project": flags.project, "channel": "REGULAR", "private": True, "deletionProtection": True},
    }


#: A GKE node's provider ID: the Compute Engine instance behind it.
PROVIDER_ID = re.compile(r"^gce://(?P<project>[^/]+)/(?P<zone>[^/]+)/(?P<instance>[^/]+)$")


def eviction_command(provider_id: str) -> tuple[str, ...] | None:
    """`gcloud compute instances simulate-maintenance-event`: on a spot or preemptible VM Compute Engine
    preempts it, with the 30-second notice and ACPI soft-off that start the kubelet's graceful node
    shutdown (cloud.google.com/compute/docs/instances/simulating-host-maintenance). The project is the
    node's own, so gcloud's default project does not matter."""
    match = PROVIDER_ID.fullmatch(provider_id)
    if match is None:
        return None
    return ("gcloud", "compute", "instances", "simulate-maintenance-event", match["instance"], "--zone",
            match["zone"], "--project", match["project"])


def _fetch_prices(targets: Sequence[PriceTarget], settings: FetchSettings, endpoint: str | None,
                  today: datetime.date, credential: str | None) -> Fetched:
    """The Billing Catalog client, imported only when a refresh runs: a plan never loads requests."""
    from spotkube.clouds.gke import billing_catalog

    return billing_catalog.fetch(targets, settings, endpoint, today, credential)


PRICE_SOURCE = PriceSource(
    name="Cloud Billing Catalog API", endpoint="https://cloudbilling.googleapis.com", fetch=_fetch_prices,
    credential_env=BILLING_API_KEY_ENV,
    credential_hint="an API key of any Google Cloud project with the Cloud Billing API enabled "
    "(console: APIs & Services > Credentials > Create credentials > API key, restricted to the Cloud Billing API)",
    examples="--region us-central1 --sku g2-standard-8",
)


COMMANDS = CommandSupport(
    options=options.OPTIONS,
    new_stack_config=new_stack_config,
    # What deploy.yml reads from the stack's GitHub environment, which the bootstrap writes.
    deploy=DeployAccess(variables=(
        ("GCP_WORKLOAD_IDENTITY_PROVIDER",
         "projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>"),
        ("GCP_SERVICE_ACCOUNT", "<email of the service account that deploys>"))),
    price_source=PRICE_SOURCE,
    price_copies={karpenter_price_copy.NAME: karpenter_price_copy.COPY},
    catalog_source="spotkube.clouds.gke.catalog_source",
    read_quota=usage_api.read_quota,
    read_access=access_api.read_access,
    read_backend=access_api.read_backend,
    log_query=logs.log_query,
    eviction_command=eviction_command,
    identities=identities.FACTS,
    flag_help={"--cluster": "the cluster's name (`pulumi stack output clusterName`)."},
)
