"""`spotkube catalog refresh`: read each cloud's GPU machines from its own API into a catalog file.

The network clients live in the clouds' folders (each profile's `catalog_source`, e.g.
`clouds/aks/catalog_source.py`) and need the `refresh` extra; this module picks the file, merges each
cloud's fresh part into it (the other cloud's part, and the file's GPU facts, stay as they were) and
says what it found. It writes the user's catalog file, never the installed package, unless `--file`
names another.
"""

from __future__ import annotations

import datetime
import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from spotkube.clouds import bundled_catalog, profile
from spotkube.platform.catalog import (
    CATALOG_FILE,
    SCHEMA_VERSION,
    Catalog,
    CatalogSourceError,
    load_catalog_file,
    with_cloud,
    write_catalog,
)
from spotkube.platform.catalog_source import RefreshRequest, SourceResult
from spotkube.platform.cloud_options import CatalogRefreshOptions
from spotkube.platform.records import record

#: The notes of a catalog file `catalog refresh` creates.
NEW_FILE_NOTES = (
    "Your spotkube GPU catalog: each cloud's part here replaces the bundled one whole, in `spotkube plan` and "
    "`pulumi up`; `spotkube catalog refresh` rewrites a cloud's part from the cloud's own API (docs/catalog.md).",
)


@record
class Refreshed:
    """What one cloud's refresh found, for the command's report."""

    cloud: str
    result: SourceResult

    def summary(self) -> str:
        section = self.result.section
        return (f"{self.cloud}: {len(section.machines)} GPU machines with {len(section.gpu_types())} GPU types, "
                f"{len(section.regions)} regions ({section.describe()})")


def _read(cloud: str, request: RefreshRequest, known_gpus: frozenset[str]) -> SourceResult:
    source = profile(cloud).commands.catalog_source
    if source is None:
        raise CatalogSourceError(f"--cloud {cloud}: spotkube has no API reader for this cloud's catalog")
    try:
        module = importlib.import_module(source)
    except ImportError as err:
        raise CatalogSourceError(f"`spotkube catalog refresh` needs the cloud SDKs of the refresh extra ({err.name} "
                                 "is missing); install them with pip install 'spotkube[refresh]'") from None
    result: SourceResult = module.refresh(request, known_gpus)
    return result


def refresh(clouds: Sequence[str], today: datetime.date, options: Mapping[str, CatalogRefreshOptions],
            target: Path | None = None) -> tuple[Path, list[Refreshed]]:
    """Refresh each cloud's part of the catalog file (`target`, else $SPOTKUBE_CATALOG, else the user's
    config directory's catalog.json) with the cloud's own flags (`options`), creating it with its folders
    when missing. Every cloud is read before anything is written, so a failure leaves the file as it was."""
    path = CATALOG_FILE.path(target)
    catalog = load_catalog_file(path) if path.exists() else Catalog(schemaVersion=SCHEMA_VERSION, notes=NEW_FILE_NOTES)
    known = frozenset({*bundled_catalog().gpus, *catalog.gpus})
    report = []
    for cloud in dict.fromkeys(clouds):
        result = _read(cloud, RefreshRequest(today, options[cloud]), known)
        catalog = with_cloud(catalog, cloud, result.section, result.gpus)
        report.append(Refreshed(cloud, result))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_catalog(catalog, path)
    return path, report
