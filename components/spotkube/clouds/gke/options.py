"""GKE's own flags on spotkube's commands and its bootstrap stack's settings (`spotkube.platform.cloud_options`):
the Google Cloud project a new stack or a catalog refresh reads, Google's API addresses, and the workload
identity pool of the CI identities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from spotkube.platform.bootstrap import BootstrapSpec
from spotkube.platform.cloud_options import (
    CatalogRefreshOptions,
    CommandOptions,
    NewStackOptions,
    PricesRefreshOptions,
    option,
)
from spotkube.platform.spec import Text


class GkeNewStack(NewStackOptions):
    instead_of: ClassVar[Mapping[str, str]] = {"--deployer-object-id": "GKE grants by IAM: docs/identities.md"}

    project: str | None = option("--gcp-project", "PROJECT", "GKE: the Google Cloud project id.")


class GkeCatalogRefresh(CatalogRefreshOptions):
    project: str | None = option(
        "--gcp-project", "PROJECT", "GKE: the Google Cloud project whose machine types are read (Application Default "
        "Credentials).", envvar="GOOGLE_CLOUD_PROJECT")
    endpoint: str | None = option("--gcp-endpoint", "URL", "Compute Engine API URL (default: compute.googleapis.com).")


class GkePricesRefresh(PricesRefreshOptions):
    endpoint: str | None = option("--gcp-endpoint", "URL", "Where the Cloud Billing Catalog API is, if not at Google "
                                  "(a local server in tests).")


class GkeBootstrapSpec(BootstrapSpec):
    """The CI identities on GKE: a workload identity pool trusting GitHub, and service accounts."""

    project: Text | None = Field(default=None, pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$",
                                 description="GKE: the Google Cloud project of the pool and the service accounts; "
                                 "default: the first stack's.")
    pool_id: Text = Field(default="github-actions", pattern=r"^[a-z][a-z0-9-]{2,30}[a-z0-9]$",
                          description="GKE: the workload identity pool's id (4-32 characters).")
    provider_id: Text = Field(default="github", pattern=r"^[a-z][a-z0-9-]{2,30}[a-z0-9]$",
                              description="GKE: the pool's OIDC provider id (4-32 characters).")

    #: Bucket names without dots: 3-63 lowercase letters, digits, `-` and `_`, a letter or digit at each end.
    backend_scheme: ClassVar[str | None] = "gs"
    backend_name: ClassVar[str] = r"^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$"
    backend_example: ClassVar[str] = "gs://spotkube-example-state"


OPTIONS = CommandOptions(new_stack=GkeNewStack, catalog_refresh=GkeCatalogRefresh, prices_refresh=GkePricesRefresh,
                         bootstrap=GkeBootstrapSpec)
