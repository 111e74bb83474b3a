"""The coverage table of docs/catalog.md, generated from the shipped data: per GPU size, where the
catalog says it is offered and where the bundled prices cover it (both its on-demand and spot row), so
a team knows before planning whether the plan will price it. Pure module: nothing here names a cloud.
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
