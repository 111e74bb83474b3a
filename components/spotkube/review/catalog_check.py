"""What the plan says about the GPU catalog: which catalog judged the stack (its date, source and
whether it is the bundled one or the user's), a `catalog-unlisted-size` warning for each GPU pool
whose machine the catalog doesn't know, whose GPUs were taken from the pool's declaration, and a
`catalog-unknown-offer` warning for each GPU pool whose machine it knows but not whether the stack's
region offers it (a region none of its sources read). A region it knows without the machine is the
cloud's rules' to refuse.

The warning carries its id wherever warnings go (the plan's table, Markdown and JSON, and the
warnings the cluster components log under `pulumi up`), so a team can acknowledge it by that id.
Pure module: no Pulumi.
"""

from __future__ import annotations

from typing import Any

from spotkube.clouds import gpu_catalog, profile
from spotkube.platform.catalog import (
    BUNDLED,
    UNKNOWN_OFFER,
    UNLISTED_SIZE,
    Catalog,
    CatalogWarning,
    refresh_command,
)
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
        """The catalog's warnings as the plan's: `catalog-unlisted-size:<pool>` (or `catalog-unknown-offer:<pool>`),
        so a stack acknowledges one pool's, or every pool's by the bare kind."""
        return [PlanWarning(f"{w.id}:{w.pool}", f"{w.pool}: {w.message}") for w in self.warnings]

    def to_json(self) -> dict[str, Any]:
        return {
            "cloud": self.cloud,
            "date": self.date,
            "source": self.source,
            "from": self.origin,
            "warnings": [warning.to_json() for warning in self.warnings],
        }


def catalog_note(spec: PlatformSpec, catalog: Catalog | None = None) -> CatalogNote:
    """The catalog of the stack's cloud (the one in use unless `catalog` is given), and a warning per
    GPU pool of the resolved `spec` whose machine it doesn't know."""
    catalog = catalog if catalog is not None else gpu_catalog()
    section = catalog.cloud(spec.cloud)
    knows = profile(spec.cloud).machines.known
    warnings = tuple(
        CatalogWarning(UNLISTED_SIZE, pool.name, (
            f"{pool.machine} is not in spotkube's catalog of {section.date.isoformat()} ({section.source}); its GPUs "
            f"are taken as declared: {pool.gpu.count} × {pool.gpu.type}. Check them against the cloud's documentation, "
            f"or run `{refresh_command(spec.cloud)}` so the catalog knows {pool.machine}"))
        for pool in spec.gpu_pools if pool.gpu is not None and not knows(pool.machine)
    )
    unknown = tuple(
        CatalogWarning(UNKNOWN_OFFER, pool.name, (
            f"spotkube's catalog of {section.date.isoformat()} knows {pool.machine} but not whether {spec.region} "
            f"offers it: none of its sources read that region (regions where it is offered: "
            f"{', '.join(section.regions_offering(pool.machine)) or 'none known'}). Check the region with the cloud, "
            f"or run `{refresh_command(spec.cloud)}`"))
        for pool in spec.gpu_pools
        if section.machine(pool.machine) is not None and section.offer(pool.machine, spec.region).status == "unknown"
    )
    return CatalogNote(spec.cloud, section.date.isoformat(), section.source, catalog.origin(spec.cloud),
                       warnings + unknown)
