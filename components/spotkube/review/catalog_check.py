"""What the plan says about the GPU catalog: which catalog judged the stack, and its warnings about the
stack's GPU pools (`platform.catalog.catalog_warnings`, which the cluster components run too).
"""

from __future__ import annotations

from typing import Any

from spotkube.clouds import gpu_catalog, profile
from spotkube.platform.catalog import BUNDLED, Catalog, CatalogWarning, catalog_warnings
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.warnings import PlanWarning


@record
class CatalogNote:
    cloud: str
    date: str
    source: str
    #: "bundled", or the path of the user's catalog file that supplied the cloud's part.
    origin: str
    warnings: tuple[CatalogWarning, ...] = ()

    def line(self) -> str:
        """The plan's line about the catalog: `GPU catalog (aks): 2026-11-25, <source> [bundled]`."""
        where = "bundled" if self.origin == BUNDLED else f"your catalog file {self.origin}"
        return f"GPU catalog ({self.cloud}): {self.date}, {self.source} [{where}]"

    def plan_warnings(self) -> list[PlanWarning]:
        return [w.plan_warning() for w in self.warnings]

    def to_json(self) -> dict[str, Any]:
        return {
            "cloud": self.cloud,
            "date": self.date,
            "source": self.source,
            "from": self.origin,
            "warnings": [warning.to_json() for warning in self.warnings],
        }


def catalog_note(spec: PlatformSpec, catalog: Catalog | None = None) -> CatalogNote:
    catalog = catalog if catalog is not None else gpu_catalog()
    section = catalog.cloud(spec.cloud)
    return CatalogNote(
        spec.cloud,
        section.date.isoformat(),
        section.source,
        catalog.origin(spec.cloud),
        catalog_warnings(spec, catalog, profile(spec.cloud).knows_machine),
    )
