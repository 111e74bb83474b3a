"""What the plan says about the GPU catalog: which catalog judged the stack (its date, source and
whether it is the bundled one or the user's), a `catalog-unlisted-size` warning for each GPU pool
whose machine the catalog doesn't know, whose GPUs were taken from the pool's declaration, and a
`catalog-unknown-offer` warning for each GPU pool whose machine it knows but not whether the stack's
region offers it (a region none of its sources read). A region it knows without the machine is the
cloud's rules' to refuse.

The warnings are the neutral layer's rule (`platform.catalog.catalog_warnings`), which the cluster
components run too. A warning carries its id wherever warnings go (the plan's table, Markdown and JSON,
and the warnings the cluster components log under `pulumi up`), so a team can acknowledge it by that id.
Pure module: no Pulumi.
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
    """The catalog a stack was judged with, and its warnings."""

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
        """The catalog's warnings as the plan's, with the ids a stack acknowledges them by
        (`CatalogWarning.plan_warning`)."""
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
    """The catalog of the stack's cloud (the one in use unless `catalog` is given), and its warnings
    about the GPU pools of the resolved `spec` (`catalog_warnings`)."""
    catalog = catalog if catalog is not None else gpu_catalog()
    section = catalog.cloud(spec.cloud)
    return CatalogNote(spec.cloud, section.date.isoformat(), section.source, catalog.origin(spec.cloud),
                       catalog_warnings(spec, catalog, profile(spec.cloud).knows_machine))
