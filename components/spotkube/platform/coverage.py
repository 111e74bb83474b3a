"""The coverage table of docs/catalog.md: per GPU size, where the catalog says it is offered and where
the bundled prices cover it, generated from the shipped data so the page can't drift from it.

Why a table: a team picks a size and a region, and wants to know before planning whether the plan
will price it. A size is "priced" in a region when the bundled table has both its on-demand and its
spot row there (GKE N1 GPUs, billed apart from their machine, are not sizes here). Regions offered
but not priced are named, with the reasons in the price files' `unpriced` lists.

Pure module: no Pulumi; the registry hands over the clouds, and nothing here names one.
"""

from __future__ import annotations

from collections.abc import Sequence

from spotkube.platform.catalog import Catalog, CloudCatalog
from spotkube.platform.cloud import Clouds
from spotkube.platform.cost.prices import PriceTable

START = "<!-- coverage:start -->"
END = "<!-- coverage:end -->"


def _priced(table: PriceTable, cloud: str, region: str, machine: str) -> bool:
    return all(table.find(cloud, region, machine, "machine", capacity) for capacity in ("on-demand", "spot"))


def _regions(regions: Sequence[str]) -> str:
    return ", ".join(regions) if regions else "-"


def _cloud_table(name: str, section: CloudCatalog, table: PriceTable, price_name: str) -> list[str]:
    lines = [f"**{name}** (catalog of {section.date.isoformat()}; regions known completely: "
             f"{_regions(sorted(section.regions))})", "",
             "| size | GPUs | offered in | priced in | offered, not priced |", "|---|---|---|---|---|"]
    for machine, entry in sorted(section.machines.items()):
        offered = sorted(entry.regions)
        priced = [region for region in offered if _priced(table, price_name, region, machine)]
        missing = [region for region in offered if region not in priced]
        gpus = f"{entry.gpu.count} × {entry.gpu.type}"
        lines.append(f"| {machine} | {gpus} | {len(offered)} | {len(priced)} | {_regions(missing)} |")
    return [*lines, ""]


def coverage_markdown(catalog: Catalog, table: PriceTable, clouds: Clouds) -> str:
    """The Markdown between START and END (the markers excluded): one table per cloud."""
    lines: list[str] = []
    for name, cloud in sorted(clouds.items()):
        lines += _cloud_table(name, catalog.cloud(name), table, cloud.pricing.name)
    return "\n".join(lines)
