"""What `spotkube catalog refresh` hands a cloud's catalog source, and what the source gives back.

The contract between the command and each cloud's `clouds/<cloud>/catalog_source.py` (named by its
`CommandSupport.catalog_source`), apart from the catalog itself (`catalog`), which every plan loads.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING

from spotkube.platform.catalog import CloudCatalog, GpuFacts
from spotkube.platform.records import record

if TYPE_CHECKING:
    # Named by an annotation only: the commands' options load with the command.
    from spotkube.platform.cloud_options import CatalogRefreshOptions


@record
class RefreshRequest:
    """What `spotkube catalog refresh` reads one cloud's API with (its profile's `catalog_source`): the
    date the catalog part is stamped with, and the cloud's own flags (its `options.catalog_refresh`)."""

    today: datetime.date
    options: CatalogRefreshOptions


@record
class SourceResult:
    """A cloud's part of the catalog as its API gave it, GPU facts for GPU types new to spotkube, and
    what the user should be told (GPUs kept under the cloud's own name, machines left out)."""

    section: CloudCatalog
    gpus: Mapping[str, GpuFacts]
    notes: tuple[str, ...] = ()
