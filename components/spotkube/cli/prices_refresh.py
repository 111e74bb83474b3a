"""`spotkube prices refresh`: fresh prices from the clouds' own price lists into the user's price file
(never the installed package)."""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spotkube.clouds import CLOUDS, load_price_table, load_stack_spec, load_user_price_table, plan_platform
from spotkube.platform.cost import PriceTable, merge_rows, write_table
from spotkube.platform.cost.prices import PriceRow
from spotkube.platform.cost.refresh import FetchSettings, PriceSource, PriceTarget
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import Project

NEW_PRICE_FILE_NOTES = (
    "Your spotkube price file: its rows override the bundled table's rows with the same cloud, region, sku, kind "
    "and capacity, in `spotkube plan` and `spotkube cost`.",
    "`spotkube prices refresh` writes rows from the clouds' price lists here; add rows by hand for negotiated "
    "prices, with a source saying where each comes from.",
)


class RefreshRefused(SpotkubeError):
    """Options that can't make a refresh."""


@dataclass
class CloudOutcome:
    cloud: str
    source: PriceSource | None
    targets: int = 0
    rows: tuple[PriceRow, ...] = ()
    missing: tuple[str, ...] = ()
    skipped: str | None = None


@dataclass
class Outcome:
    clouds: list[CloudOutcome] = field(default_factory=list)
    target_file: Path | None = None
    day: datetime.date = field(default_factory=datetime.date.today)

    @property
    def rows(self) -> list[PriceRow]:
        return [row for cloud in self.clouds for row in cloud.rows]

    def lines(self) -> list[str]:
        out = []
        for cloud in self.clouds:
            if cloud.skipped:
                out.append(f"{cloud.cloud}: not refreshed: {cloud.skipped}")
                continue
            assert cloud.source is not None  # a list that was asked has its source
            out.append(
                f"{cloud.cloud}: {len(cloud.rows)} price rows from the {cloud.source.name}, read "
                f"{self.day.isoformat()}, for {cloud.targets} machine(s) and region(s), into {self.target_file}"
            )
            out += [f"{cloud.cloud}: no price for {what}" for what in cloud.missing]
        return out


def price_sources() -> dict[str, PriceSource | None]:
    return {profile.pricing.name: profile.commands.price_source for profile in CLOUDS.values()}


def stack_targets(project: Project, stacks: Sequence[str]) -> dict[str, list[PriceTarget]]:
    """What the stacks' pools need priced, per price table cloud: machine, region, and N1 GPUs."""
    out: dict[str, list[PriceTarget]] = {}
    for stack in stacks:
        plan = plan_platform(load_stack_spec(project, stack))
        cloud = CLOUDS[plan.cloud].pricing.name
        out.setdefault(cloud, []).extend(
            PriceTarget(plan.spec.region, pool.machine, pool.gpu_type, pool.gpu_count) for pool in plan.pools
        )
    return out


def table_targets(tables: Iterable[PriceTable]) -> dict[str, list[PriceTarget]]:
    """Every row of `tables` as a target (`--all`): its machine, or its GPU on its own."""
    out: dict[str, list[PriceTarget]] = {}
    for table in tables:
        for row in table.rows:
            out.setdefault(row.cloud, []).append(PriceTarget(row.region, row.sku, kind=row.kind))
    return out


def explicit_targets(clouds: Sequence[str], region: str | None, skus: Sequence[str]) -> dict[str, list[PriceTarget]]:
    """`[--cloud C] --region R --sku S...`; without --cloud, the one cloud whose regions include R."""
    if not region or not skus:
        raise RefreshRefused("name both --region and --sku (with --cloud), or neither to refresh what the stacks use")
    if not clouds:
        clouds = [p.pricing.name for p in CLOUDS.values() if region in p.regions]
    if len(clouds) != 1:
        raise RefreshRefused(
            f"--region and --sku need one --cloud, the price list they are in: {' or '.join(price_sources())}"
        )
    return {clouds[0]: [PriceTarget(region, sku) for sku in dict.fromkeys(skus)]}


def refresh(
    targets: Mapping[str, Sequence[PriceTarget]],
    *,
    asked: Sequence[str],
    target_file: Path,
    settings: FetchSettings,
    endpoints: Mapping[str, str | None],
    environ: Mapping[str, str] | None = None,
    today: datetime.date | None = None,
) -> Outcome:
    """Ask each price list for its targets and merge what they answer into `target_file`. A list that
    needs a key not in the environment is skipped, unless it was named in `asked` (--cloud)."""
    environ = os.environ if environ is None else environ
    outcome = Outcome(target_file=target_file, day=today or datetime.date.today())
    sources = price_sources()
    for cloud in asked:
        if cloud not in sources:
            raise RefreshRefused(f"--cloud {cloud}: not a price list spotkube reads; use {' or '.join(sources)}")
    for cloud in asked or sorted(targets):
        wanted = list(dict.fromkeys(targets.get(cloud, ())))
        source = sources.get(cloud)
        result = CloudOutcome(cloud, source, len(wanted))
        outcome.clouds.append(result)
        if source is None:
            result.skipped = "spotkube has no reader for this cloud's price list"
            continue
        if not wanted:
            result.skipped = "no stack uses it"
            continue
        credential = environ.get(source.credential_env, "").strip() if source.credential_env else None
        if source.credential_env and not credential:
            why = f"{source.credential_env} is not set (the {source.name} needs {source.credential_hint})"
            if cloud in asked:
                raise RefreshRefused(f"--cloud {cloud}: {why}")
            result.skipped = f"{why}; its prices stay the ones the plan has"
            continue
        fetched = source.fetch(wanted, settings, endpoints.get(cloud), outcome.day, credential)
        result.rows, result.missing = fetched.rows, fetched.missing
    if outcome.rows:
        write_rows(target_file, outcome.rows, outcome.day)
    return outcome


def write_rows(target: Path, rows: Sequence[PriceRow], day: datetime.date) -> None:
    if target.exists():
        table = load_user_price_table(target)
    else:
        table = PriceTable(currency="USD", date=day, notes=NEW_PRICE_FILE_NOTES, rows=())
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_table(merge_rows(table, rows, date=day), target)
    except OSError as err:
        raise RefreshRefused(f"{target}: cannot write the price file ({err.strerror or err})") from None


def tables_for_all(target_file: Path) -> list[PriceTable]:
    """The bundled table, and the price file when it exists: `--all` refreshes every row of both."""
    tables = [load_price_table()]
    if target_file.is_file():
        tables.append(load_user_price_table(target_file))
    return tables
