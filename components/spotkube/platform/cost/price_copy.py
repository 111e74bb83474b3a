"""Dated public copies of a cloud's price list, read into price table rows (`spotkube prices import`).

Why: the clouds' own price APIs need the network (GCP's also a key), so the bundled table is built from
dated copies that public projects generate. Each cloud reads its copies into `CopiedPrices`; the rules
here hold for every copy: a row from a copy seen on the same day or later stays; a capacity the copy
doesn't price becomes an `Unpriced` entry, never a guess; and a spot price equal to the on-demand price
is a copy's on-demand price filled into the spot column, never written.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal

from spotkube.platform.catalog import CloudCatalog
from spotkube.platform.cost.model import Capacity
from spotkube.platform.cost.prices import PriceRow, PriceTable, Unpriced
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.records import record

#: Capacities whose price is a discount on on-demand: such a row equal to on-demand is not a price.
DISCOUNTED: tuple[Capacity, ...] = ("spot", "preemptible")


@record
class CopiedPrices:
    """What one dated copy of a price list holds, as its reader understood it."""

    #: The price table's name for the cloud (azure, gcp).
    cloud: str
    #: The day the copy was generated (or committed, when it doesn't say).
    seen: datetime.date
    #: (region, capacity) -> size -> USD per hour, Linux, before discounts.
    prices: Mapping[tuple[str, Capacity], Mapping[str, Decimal]]
    #: The source text of a row, from its region and capacity: the copy, where to read it, and its column.
    source: Callable[[str, Capacity], str]
    #: Capacities the copy prices nowhere, with why (e.g. Azure Spot: "it holds on-demand prices only").
    missing: Mapping[Capacity, str]
    #: Of those, the ones `spotkube prices refresh` can't read either: their reason names no command.
    unrefreshable: frozenset[Capacity] = frozenset()
    #: Whether the copy is a region's whole price list, so a size it doesn't list there is not offered.
    whole_regions: bool = False

    def regions(self) -> tuple[str, ...]:
        return tuple(sorted({region for region, _ in self.prices}))


#: Why a spot row equal to its on-demand row is not a price.
COPIED_ON_DEMAND = ("the dated copy lists the on-demand price as its spot price (no spot meter in it), so no spot "
                    "price is known")

#: The `spotkube prices refresh` command that reads one size in one region: (region, size) -> command.
RefreshCommand = Callable[[str, str], str]


def equal_to_on_demand(rows: Iterable[PriceRow]) -> list[PriceRow]:
    """The spot and preemptible rows whose price is exactly the on-demand row's: a copy that lists its
    on-demand price in the spot column, which no table may ship as a spot price."""
    rows = tuple(rows)
    on_demand = {(r.cloud, r.region, r.sku, r.kind): r.usd_per_hour for r in rows if r.capacity == "on-demand"}
    return [r for r in rows if r.capacity in DISCOUNTED
            and on_demand.get((r.cloud, r.region, r.sku, r.kind)) == r.usd_per_hour]


def copied_rows(copy: CopiedPrices, sizes: Iterable[str], wanted: Callable[[str, str], bool]) -> list[PriceRow]:
    """The copy's rows for `sizes` in the regions `wanted(size, region)` accepts, as the copy has them."""
    sizes = frozenset(sizes)
    return [PriceRow(cloud=copy.cloud, region=region, sku=sku, kind="machine", capacity=capacity,
                     usdPerHour=price, source=copy.source(region, capacity), date=copy.seen)
            for (region, capacity), by_size in sorted(copy.prices.items())
            for sku, price in sorted(by_size.items()) if sku in sizes and wanted(sku, region)]


def with_copy(table: PriceTable, copy: CopiedPrices, sizes: Iterable[str], refresh_command: RefreshCommand,
              wanted: Callable[[str, str], bool] = lambda sku, region: True,
              gapped: frozenset[str] | None = None) -> PriceTable:
    """`table` with the copy's rows for `sizes` added where the table has none seen on the copy's day or
    later, and each capacity the copy can't price for a size it prices on demand listed as unpriced with
    the copy's reason, unless the table prices it already (only for the sizes in `gapped`, when given: the
    GPU sizes, whose pools may run at those capacities). A spot or preemptible row of the table equal to
    its on-demand row is taken out and listed as unpriced too."""
    current = {row.key: row for row in table.rows}
    copied = copied_rows(copy, sizes, wanted)
    not_prices = {row.key: row for row in equal_to_on_demand(copied)}
    fresh = {row.key: row for row in copied if row.key not in not_prices
             and (row.key not in current or current[row.key].date < row.date)}
    rows = {**current, **fresh}
    gaps = {gap.key: gap for gap in table.unpriced if gap.key not in rows}
    for row in [*equal_to_on_demand(rows.values()), *(r for r in not_prices.values() if r.key not in rows)]:
        rows.pop(row.key, None)
        gaps[row.key] = Unpriced(cloud=row.cloud, region=row.region, sku=row.sku, kind=row.kind,
                                 capacity=row.capacity, reason=f"{COPIED_ON_DEMAND}; "
                                 f"`{refresh_command(row.region, row.sku)}` reads it")
    for row in [r for r in fresh.values() if r.capacity == "on-demand" and (gapped is None or r.sku in gapped)]:
        for capacity, why in copy.missing.items():
            key = (row.cloud, row.region, row.sku, row.kind, capacity)
            if key not in rows:  # the copy's reason, newer than a gap's older one
                command = ("" if capacity in copy.unrefreshable
                           else f"; `{refresh_command(row.region, row.sku)}` reads it")
                gaps[key] = Unpriced(cloud=row.cloud, region=row.region, sku=row.sku, kind=row.kind, capacity=capacity,
                                     reason=why + command)
    return PriceTable(currency=table.currency, date=max(table.date, copy.seen), notes=table.notes,
                      rows=tuple(sorted(rows.values(), key=lambda r: r.key)),
                      unpriced=tuple(sorted(gaps.values(), key=lambda g: g.key)))


def with_offers(part: CloudCatalog, copy: CopiedPrices, note: str) -> CloudCatalog:
    """The catalog part with each of its sizes offered in every region where the copy sells it on demand,
    and, when the copy holds whole price lists, those regions known completely (a size the copy doesn't
    list there is not offered). Zones stay as the part had them (None: unknown)."""
    on_demand = {region: by_size for (region, capacity), by_size in copy.prices.items() if capacity == "on-demand"}
    machines = {name: machine.model_copy(update={"regions": dict(sorted(
        {**{region: None for region, by_size in on_demand.items() if name in by_size}, **machine.regions}.items()))})
        for name, machine in part.machines.items()}
    regions = dict(part.regions)
    if copy.whole_regions:
        regions = dict(sorted({**{region: () for region in on_demand}, **regions}.items()))
    notes = part.notes if note in part.notes else (*part.notes, note)
    return part.model_copy(update={"machines": machines, "regions": regions, "notes": notes,
                                   "date": max(part.date, copy.seen)})


class PriceCopyError(SpotkubeError):
    """A file that isn't the copy it was named as: says which file, where, and what was expected."""


#: (the copy's text, where it was read from (its pinned URL), the day it was made when the file doesn't
#: say, or None) -> its prices; PriceCopyError when the text is not such a copy.
PriceCopyReader = Callable[[str, str, "datetime.date | None"], CopiedPrices]


@record
class PriceCopy:
    """A dated public copy of a cloud's price list that `spotkube prices import` reads."""

    read: PriceCopyReader
    #: The file it is a copy of, as `prices import --help` names it.
    origin: str
    #: Whether the file says the day it was made; without it, `--date` must.
    dated_inside: bool
