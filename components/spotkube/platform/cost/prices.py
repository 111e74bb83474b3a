"""The bundled price table: loading, validating, looking up, and merging refreshed rows.

Why a bundled table: a plan must show what a stack costs without credentials, network or a cloud
account, and the same inputs must give the same figures in CI. Every row says where its number
came from and on which day, because spot prices move and a stale figure has to look stale.

Rows are keyed by (cloud, region, sku, kind, capacity), matched exactly: Azure ARM names are
case-sensitive in the Retail Prices API, so `Standard_D4s_v3` and `standard_d4s_v3` are different keys.
What differs between clouds is each cloud's `CloudPricing` (its profile's), so this module never tests a
cloud's name. A price no public source had is not guessed: the cloud's `prices.json` lists it under
`unpriced`, with the reason. A user price file has the same layout; its rows replace the bundled ones.
"""

from __future__ import annotations

import collections
import datetime
import functools
import json
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, ValidationInfo, model_validator

from spotkube.platform.cost.model import Capacity
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.input_messages import validation_problems
from spotkube.platform.records import record
from spotkube.platform.user_files import UserFile

Kind = Literal["machine", "accelerator"]

#: The environment variable that names a user price file.
PRICES_ENV = "SPOTKUBE_PRICES"
#: The user's price file: `prices.json` in the config directory, or the file $SPOTKUBE_PRICES names.
PRICE_FILE = UserFile("prices.json", PRICES_ENV, "price file")
#: Where a price came from when the user's file did not override it.
BUNDLED = "bundled"
#: Where a price came from when the stack states it itself (`spotkube:cost.prices`).
STACK_FILE = "stack file"


class _Keyed(BaseModel):
    """What a price is of: a machine (or a GPU) in a region at one capacity, on a cloud the table has."""

    # Built when first used, inside the table's validator (the plan never validates a row alone).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    cloud: str
    region: str = Field(pattern=r"^[a-z][a-z0-9-]*[a-z0-9]$")
    sku: str = Field(min_length=1)
    kind: Kind
    capacity: Capacity

    @model_validator(mode="after")
    def _a_known_cloud(self, info: ValidationInfo) -> Self:
        """The clouds' facts come as the validation context (`Pricing`), which every loader here passes;
        a row built directly, without them, is checked for its shape only."""
        problem = _unknown_cloud(self.cloud, info.context)
        if problem:
            raise ValueError(problem)
        return self

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """The identity of a row: two rows with the same key would be two prices for one thing."""
        return (self.cloud, self.region, self.sku, self.kind, self.capacity)


class PriceRow(_Keyed):
    """One published hourly price."""

    model_config = ConfigDict(populate_by_name=True)

    usd_per_hour: Decimal = Field(alias="usdPerHour", gt=0)
    source: str = Field(min_length=1)
    date: datetime.date

    @model_validator(mode="after")
    def _fits_the_cloud(self, info: ValidationInfo) -> PriceRow:
        """Refuse rows that cannot exist on their cloud, so a typo in the table fails the load, not the plan."""
        pricing = info.context
        cloud = pricing.get(self.cloud) if isinstance(pricing, Mapping) else None
        problem = cloud.row_problem(self) if cloud is not None else None
        if problem:
            raise ValueError(problem)
        return self


@record
class CloudPricing:
    """How one cloud appears in the price table: a fact of its profile (`Cloud.pricing`)."""

    #: The table's name for the cloud (azure, gcp).
    name: str
    #: Why a row can't exist on this cloud (Azure has no preemptible capacity), or None.
    row_problem: Callable[[PriceRow], str | None]
    #: Whether the GPUs of a node of this machine are billed as accelerator rows of their own, on top
    #: of the machine's price; ValueError when the machine can't take a GPU at all.
    gpus_billed_separately: Callable[[str], bool]
    #: The cloud's shipped rows (`clouds/<cloud>/prices.json`), a price table of this cloud only.
    table: Traversable


#: Every cloud's pricing facts, by the table's name for the cloud.
Pricing = Mapping[str, CloudPricing]


def _unknown_cloud(cloud: str, pricing: Any) -> str | None:
    """Why a row's cloud is none of the table's clouds (`pricing`, the validation context), if it is."""
    if not isinstance(pricing, Mapping) or cloud in pricing:
        return None
    return f"cloud: {cloud!r} is not accepted; use {' or '.join(map(repr, pricing))}"


class Unpriced(_Keyed):
    """A price the shipped table lacks on purpose: no public source had it, and the reason says which
    source was looked at. A plan of such a pool names it unpriced; the user's price file can add it."""

    reason: str = Field(min_length=1)


RowKey = tuple[str, str, str, str, str]
#: The rows of the tables looked up last, by key, each beside the rows tuple it indexes: a plan looks
#: up several prices per pool, and a scan of every row for each took longer than the pool's own review.
#: Kept outside the table, whose private attributes its equality compares.
_INDEXES: collections.OrderedDict[int, tuple[tuple[PriceRow, ...], dict[RowKey, PriceRow]]] = \
    collections.OrderedDict()


def _by_key(rows: tuple[PriceRow, ...]) -> dict[RowKey, PriceRow]:
    found = _INDEXES.get(id(rows))
    if found is None or found[0] is not rows:
        found = _INDEXES[id(rows)] = (rows, {row.key: row for row in rows})
        while len(_INDEXES) > 8:
            _INDEXES.popitem(last=False)
    return found[1]


class PriceTable(BaseModel):
    """The whole table: USD rows, the day it was put together, and notes on what it covers."""

    # Built when first used, like every model here: importing spotkube, or a command that prices
    # nothing, never pays for its validator.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    currency: Literal["USD"]
    date: datetime.date
    notes: tuple[str, ...]
    rows: tuple[PriceRow, ...]
    #: Machine prices no public source had, each with why (shipped tables only).
    unpriced: tuple[Unpriced, ...] = ()
    #: Where rows that are not the bundled table's came from, by key: the user price file's path (set
    #: by `price_table`) or `STACK_FILE` (set by `with_stack_rows`).
    _origins: dict[tuple[str, str, str, str, str], str] = PrivateAttr(default_factory=dict)
    _user_file: Path | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> PriceTable:
        """One price per key, and no row newer than the table that contains it."""
        seen: set[tuple[str, str, str, str, str]] = set()
        for row in self.rows:
            if row.key in seen:
                raise ValueError(f"two prices for {' '.join(row.key)}")
            seen.add(row.key)
            if row.date > self.date:
                raise ValueError(
                    f"row {' '.join(row.key)} is dated {row.date}, after the table ({self.date})"
                )
        for gap in self.unpriced:
            if gap.key in seen:
                raise ValueError(f"{' '.join(gap.key)} is listed as unpriced but has a price")
        return self

    def find(self, cloud: str, region: str, sku: str, kind: str, capacity: str) -> PriceRow | None:
        """The row with exactly this key, or None."""
        return _by_key(self.rows).get((cloud, region, sku, kind, capacity))

    @property
    def user_file(self) -> Path | None:
        """The user price file merged into this table, if any."""
        return self._user_file

    def origin(self, row: PriceRow) -> str:
        """Where a row came from: "bundled", the path of the user price file that supplied it, or
        "stack file" for a price the stack states itself (`cost.prices`)."""
        return self._origins.get(row.key, BUNDLED)


@record
class Price:
    """An hourly price ready to use, with where it came from and how old it is.

    When a price adds up several rows (an N1 machine plus its GPUs), `source` names all of them and
    `date` is the oldest, so the figure is never presented as fresher than its stalest part.
    """

    usd_per_hour: Decimal
    source: str
    date: datetime.date
    #: "bundled", or the user price file's path; both, joined by " + ", when the parts differ.
    origin: str = BUNDLED


def parse_table(text: str, pricing: Pricing) -> PriceTable:
    """Validate a price table from its JSON text, keeping every number exact as a Decimal."""
    data: Any = json.loads(text, parse_float=Decimal)
    return PriceTable.model_validate(data, context=pricing)


def load_cloud_table(cloud: CloudPricing, pricing: Pricing) -> PriceTable:
    """One cloud's shipped rows, which must all be that cloud's (a row filed in the wrong folder is
    refused, not silently used for the other cloud)."""
    table = parse_table(cloud.table.read_text("utf-8"), pricing)
    strays = sorted({" ".join(item.key) for item in (*table.rows, *table.unpriced) if item.cloud != cloud.name})
    if strays:
        raise ValueError(f"{cloud.table}: rows of another cloud than {cloud.name}: {', '.join(strays)}")
    return table


@functools.lru_cache(maxsize=1)
def _bundled_table(clouds: tuple[CloudPricing, ...]) -> PriceTable:
    pricing = {cloud.name: cloud for cloud in clouds}
    parts = [load_cloud_table(cloud, pricing) for cloud in clouds]
    return PriceTable(
        currency="USD",
        date=max(part.date for part in parts),
        notes=tuple(dict.fromkeys(note for part in parts for note in part.notes)),
        rows=tuple(row for part in parts for row in part.rows),
        unpriced=tuple(gap for part in parts for gap in part.unpriced),
    )


def load_table(pricing: Pricing, path: Path | None = None) -> PriceTable:
    """The table at `path`, or every cloud's shipped rows together (read once, then cached)."""
    if path is None:
        return _bundled_table(tuple(pricing.values()))
    return parse_table(path.read_text(encoding="utf-8"), pricing)


def bundled_table_paths(pricing: Pricing) -> tuple[Path, ...]:
    """Where each cloud's shipped rows live on disk, for writing refreshed rows back in a source checkout."""
    return tuple(Path(str(cloud.table)) for cloud in pricing.values())


def hourly_price(
    cloud: CloudPricing,
    region: str,
    machine: str,
    capacity: str,
    gpu_type: str | None = None,
    gpu_count: int = 0,
    *,
    table: PriceTable,
) -> Price | None:
    """The hourly price of one node, GPUs included, or None when the table has no such price.

    Machines that come with their GPUs (Azure GPU sizes, GCP a2/a3/g2) are priced whole, so the
    GPU arguments add nothing for them. GCP N1 machines pay per attached GPU, so for those the
    accelerator row times `gpu_count` is added; if that row is missing the node has no price.
    """
    if isinstance(gpu_count, bool) or not isinstance(gpu_count, int) or gpu_count < 0:
        raise ValueError(f"gpu_count must be a whole number of GPUs, got {gpu_count!r}")
    if gpu_count and gpu_type is None:
        raise ValueError(f"gpu_count is {gpu_count} but no gpu_type says which GPU")
    row = table.find(cloud.name, region, machine, "machine", capacity)
    if row is None:
        return None
    if gpu_type is None or gpu_count == 0 or not cloud.gpus_billed_separately(machine):
        return Price(row.usd_per_hour, row.source, row.date, table.origin(row))
    gpu = table.find(cloud.name, region, gpu_type, "accelerator", capacity)
    if gpu is None:
        return None
    return Price(
        usd_per_hour=row.usd_per_hour + gpu.usd_per_hour * gpu_count,
        source=f"{machine}: {row.source}; {gpu_count} x {gpu_type}: {gpu.source}",
        date=min(row.date, gpu.date),
        origin=" + ".join(dict.fromkeys((table.origin(row), table.origin(gpu)))),
    )


def merge_rows(table: PriceTable, fresh: Iterable[PriceRow], *, date: datetime.date) -> PriceTable:
    """A copy of `table` with `fresh` rows replacing rows of the same key and adding new ones.

    Rows the refresh did not return are kept as they were, with their old dates, so a partial
    refresh (one region, one SKU) never drops prices it did not look at. `date` becomes the
    table's date when it is newer.
    """
    merged = {row.key: row for row in table.rows}
    fresh = tuple(fresh)
    merged.update((row.key, row) for row in fresh)
    out = PriceTable(
        currency=table.currency,
        date=max(table.date, date),
        notes=table.notes,
        rows=tuple(sorted(merged.values(), key=lambda row: row.key)),
        unpriced=tuple(gap for gap in table.unpriced if gap.key not in merged),
    )
    replaced = {row.key for row in fresh}
    out._origins = {key: origin for key, origin in table._origins.items() if key not in replaced}
    out._user_file = table._user_file
    return out


def _json_value(value: Any) -> Any:
    """Write Decimals as JSON numbers and dates as ISO text, the layout of the bundled file.

    A float holds every price in the table exactly enough: none has more than 10 significant
    digits, and `float` prints the shortest text that reads back to the same value.
    """
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} to the price table")


def write_table(table: PriceTable, path: Path) -> None:
    """Write `table` in the bundled file's JSON layout, through a file beside `path` that then replaces
    it, so an interrupted write never leaves half a price file behind."""
    data = table.model_dump(mode="python", by_alias=True)
    if not data["unpriced"]:
        del data["unpriced"]
    text = json.dumps(data, indent=2, ensure_ascii=False, default=_json_value)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(path)


# --- the user's price file -----------------------------------------------------------------------


class PriceFileError(SpotkubeError):
    """A user price file that can't be used: names the file, the row and key, and what is accepted."""


def _row_fields(pricing: Pricing) -> str:
    """What a row must hold, for error messages."""
    return (f"a row has cloud ({' or '.join(pricing)}), region, sku, kind (machine or accelerator), capacity (spot, "
            "preemptible, flex-start or on-demand), usdPerHour (USD per node-hour, above 0), source (where the price "
            "comes from, e.g. your agreement) and date (YYYY-MM-DD)")


def _file_layout(pricing: Pricing) -> str:
    return ('a price file is a JSON object {"rows": [...]} with optional "currency" ("USD"), "date" '
            '(YYYY-MM-DD, default: its newest row\'s date), "notes" (a list of text) and "unpriced" (prices no '
            'source has: cloud, region, sku, kind, capacity and reason); ' + _row_fields(pricing))


def default_user_file() -> Path:
    """The per-user price file: `prices.json` in the user's config directory (platformdirs), e.g.
    ~/.config/spotkube/prices.json on Linux. It may not exist."""
    return PRICE_FILE.default()


def user_file_path(explicit: Path | None = None) -> Path:
    """The user price file that is read and refreshed: `explicit`, else $SPOTKUBE_PRICES, else
    `default_user_file()`. It may not exist."""
    return PRICE_FILE.path(explicit)


def _row_name(raw: Any) -> str:
    """A row's key as far as it can be read, to point at the row in an error."""
    if not isinstance(raw, dict):
        return "not a JSON object"
    parts = [str(raw[k]) for k in ("cloud", "region", "sku", "kind", "capacity") if k in raw]
    return " ".join(parts) or "no key fields"



def parse_user_table(text: str, path: Path, pricing: Pricing) -> PriceTable:
    """Validate a user price file; every problem is a PriceFileError naming `path`, the row
    (index and key) and what is accepted, never a traceback.

    Unlike the bundled table, `currency`, `date` and `notes` may be left out: a file holding one
    negotiated price is just `{"rows": [{...}]}`.
    """
    try:
        data: Any = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as err:
        raise PriceFileError(f"{path}: not JSON (line {err.lineno}, column {err.colno}: {err.msg}); "
                             f"{_file_layout(pricing)}") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise PriceFileError(f'{path}: no "rows" list; {_file_layout(pricing)}')
    unknown = sorted(set(data) - {"currency", "date", "notes", "rows", "unpriced"})
    if unknown:
        raise PriceFileError(f"{path}: unknown key {', '.join(map(repr, unknown))}; {_file_layout(pricing)}")
    rows: list[PriceRow] = []
    problems: list[str] = []
    for index, raw in enumerate(data["rows"]):
        try:
            rows.append(PriceRow.model_validate(raw, context=pricing))
        except ValidationError as err:
            problems += [f"{path}: rows[{index}] ({_row_name(raw)}): {p}" for p in validation_problems(err)]
    if problems:
        raise PriceFileError("\n".join([*problems, f"{path}: {_row_fields(pricing)}"]))
    fields = {"currency": "USD", "notes": (), **{k: v for k, v in data.items() if k != "rows"}}
    if "date" not in fields:
        fields["date"] = max((row.date for row in rows), default=datetime.date.min)
    try:
        return PriceTable.model_validate({**fields, "rows": rows})
    except ValidationError as err:
        raise PriceFileError("\n".join(
            [*(f"{path}: {p}" for p in validation_problems(err)), f"{path}: {_file_layout(pricing)}"])) from None


def load_user_table(path: Path, pricing: Pricing) -> PriceTable:
    """The user price file at `path`, validated (PriceFileError when it can't be read or used)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise PriceFileError(f"{path}: cannot read the price file ({reason})") from None
    return parse_user_table(text, path, pricing)


def with_user_rows(table: PriceTable, user: PriceTable, path: Path) -> PriceTable:
    """`table` with the user's rows replacing rows of the same key and adding new ones, remembering
    which rows came from `path`. The notes stay the table's; the date is the newer of the two."""
    merged = merge_rows(table, user.rows, date=user.date)
    merged._origins.update((row.key, str(path)) for row in user.rows)
    merged._user_file = path
    return merged


def with_stack_rows(table: PriceTable, rows: Iterable[PriceRow]) -> PriceTable:
    """`table` with a stack's own prices (`spotkube:cost.prices`) over every other row of the same key.

    A stack's price is dated in its row; an older one (a worked example's) leaves the table's date as it
    is, a newer one moves it forward, since no row may be newer than its table."""
    rows = tuple(rows)
    if not rows:
        return table
    merged = merge_rows(table, rows, date=max(row.date for row in rows))
    merged._origins.update((row.key, STACK_FILE) for row in rows)
    return merged


def price_table(pricing: Pricing, user_file: Path | None = None) -> PriceTable:
    """The prices a plan uses: the bundled table with the user's price file (`user_file`, else
    $SPOTKUBE_PRICES's, both of which must exist, else `default_user_file()` if it exists) merged over it."""
    path, problem = PRICE_FILE.lookup(user_file)
    if problem is not None:
        raise PriceFileError(f"{problem}; {_file_layout(pricing)}")
    if path is None:
        return load_table(pricing)
    return with_user_rows(load_table(pricing), load_user_table(path, pricing), path)
