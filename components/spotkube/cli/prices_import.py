"""`spotkube prices import`: a dated public copy of a cloud's price list into a price table.

Each cloud's profile names the copies it can read (`CommandSupport.price_copies`); this module picks
the reader, the sizes to keep (every size of the cloud's catalog, and every size the table already
prices, such as the CPU pools' machines) and the regions (where the catalog doesn't say a GPU size is
absent), merges what the copy adds into the table, and, given the cloud's catalog part, teaches it where
each size is offered. It is how the bundled tables are rebuilt from the same copies (docs/cost.md).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path

from spotkube.clouds import CLOUDS, PRICING, bundled_catalog, load_user_price_table
from spotkube.platform.catalog import CloudCatalog, catalog_text, parse_part
from spotkube.platform.cost import PriceTable, write_table
from spotkube.platform.cost.price_copy import CopiedPrices, PriceCopyError, PriceCopyReader, with_copy, with_offers
from spotkube.platform.records import record

#: The notes of a price file an import creates.
NEW_TABLE_NOTES = ("Prices imported by `spotkube prices import` from dated public copies of the clouds' price lists; "
                   "each row names its copy and the day it was made.",)


@record
class Imported:
    """What an import changed, for the command's report."""

    cloud: str
    rows_before: int
    rows_after: int
    unpriced_after: int
    regions: int
    seen: datetime.date

    def summary(self, table: Path, catalog: Path | None) -> str:
        line = (f"{self.cloud}: {self.rows_after - self.rows_before} rows added or renewed from a copy made "
                f"{self.seen.isoformat()} ({self.regions} regions), {self.unpriced_after} unpriced listed, in {table}")
        return line + (f"; offers learned into {catalog}" if catalog else "")


def copies() -> dict[str, tuple[str, PriceCopyReader]]:
    """Every copy any cloud reads: name -> (cloud, reader)."""
    return {name: (cloud, copy.read) for cloud, p in CLOUDS.items() for name, copy in p.commands.price_copies.items()}


def _table(path: Path) -> PriceTable:
    if path.exists():
        return load_user_price_table(path)
    return PriceTable(currency="USD", date=datetime.date(2000, 1, 1), notes=NEW_TABLE_NOTES, rows=())


def import_copy(name: str, copy_file: Path, url: str, table_path: Path, catalog_path: Path | None = None,
                seen: datetime.date | None = None) -> Imported:
    """Read `copy_file` as the copy `name`, and merge what it adds into the table at `table_path` (created
    when missing) and, when given, the catalog part at `catalog_path`; both are read before either is written."""
    known = copies()
    if name not in known:
        raise PriceCopyError(f"{name}: not a copy spotkube reads; use {' or '.join(sorted(known))}")
    cloud, reader = known[name]
    try:
        text = copy_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PriceCopyError(f"{copy_file}: cannot read the copy ({getattr(err, 'strerror', None) or err})") from None
    copied = reader(text, url, seen)
    part = parse_part(catalog_path.read_text("utf-8"), str(catalog_path)) if catalog_path else \
        bundled_catalog().clouds[cloud]
    note = offers_note(name, url, copied)
    learned = with_offers(part, copied, note) if catalog_path else part
    table = _table(table_path)
    pricing = PRICING[copied.cloud]
    sizes = set(part.machines) | {r.sku for r in table.rows if r.kind == "machine" and r.cloud == pricing.name}
    merged = with_copy(table, copied, sizes, lambda region, sku: refresh_command(copied.cloud, region, sku),
                       wanted=_wanted(learned, copied), gapped=frozenset(part.machines))
    write_table(merged, table_path)
    if catalog_path:
        catalog_path.write_text(catalog_text(learned), encoding="utf-8")
    return Imported(cloud=copied.cloud, rows_before=len(table.rows), rows_after=len(merged.rows),
                    unpriced_after=len(merged.unpriced), regions=len(copied.regions()), seen=copied.seen)


def refresh_command(cloud: str, region: str, sku: str) -> str:
    """The command that reads one size's prices in one region from the cloud's own price list."""
    return f"spotkube prices refresh --cloud {cloud} --region {region} --sku {sku}"


def offers_note(name: str, url: str, copied: CopiedPrices) -> str:
    """The catalog note saying where its offers came from."""
    whole = " whole" if copied.whole_regions else ""
    return (f"Where each size is offered, in the {len(copied.regions())} regions of {url} (`spotkube prices import "
            f"{name}`, a copy made {copied.seen.isoformat()}): a size is offered where that{whole} price list sells it "
            "on demand" + ("; a size it doesn't list there is not offered." if copied.whole_regions else "."))


def _wanted(part: CloudCatalog, copied: CopiedPrices) -> Callable[[str, str], bool]:
    """Which (size, region) pairs to keep: a GPU size where the catalog doesn't call it absent; any other
    size in every region of a whole-list copy, else where the catalog offers some GPU size."""
    offering = {region for machine in part.machines.values() for region in machine.regions}

    def wanted(sku: str, region: str) -> bool:
        if sku in part.machines:
            return part.offer(sku, region).status != "absent"
        return copied.whole_regions or region in offering

    return wanted
