"""`spotkube prices refresh` and `import`: prices from the clouds' own price lists, or dated copies of them."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli import prices_import, prices_refresh
from spotkube.cli.app import Format, ProjectOption, SpotkubeCommand, SpotkubeGroup, fail
from spotkube.cli.cloud_flags import with_cloud_flags
from spotkube.clouds import CLOUDS, PRICING
from spotkube.clouds import profile as cloud_profile
from spotkube.platform.cloud_options import PricesRefreshOptions
from spotkube.platform.cost import PRICES_ENV, user_file_path
from spotkube.platform.cost.price_copy import PriceCopy
from spotkube.platform.cost.refresh import (
    DEFAULT_RETRIES,
    DEFAULT_RETRY_AFTER_MAX_S,
    DEFAULT_TIMEOUT_S,
    FetchSettings,
)
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import find_project

#: The price lists, by the price table's names for the clouds, as help shows them.
PRICE_LIST_CHOICES = "|".join(PRICING)

prices_app = typer.Typer(help="Prices: the bundled table and your own price file.", no_args_is_help=True,
                         cls=SpotkubeGroup)

@prices_app.command("refresh", cls=SpotkubeCommand)
@with_cloud_flags({cloud: p.commands.options.prices_refresh for cloud, p in CLOUDS.items()})
def refresh_prices(
    all_rows: Annotated[bool, typer.Option("--all", help=(
        "Refresh every row of the bundled table and of your price file too, not only what the stacks use."))] = False,
    cloud: Annotated[list[str] | None, typer.Option("--cloud", metavar=PRICE_LIST_CHOICES, help=(
        "Only this price list (repeatable); a list named here must be read, so a missing key is an error."))] = None,
    region: Annotated[str | None, typer.Option("--region", metavar="REGION", help=(
        "With --cloud and --sku: refresh these machines in this region, e.g. uksouth or us-central1."))] = None,
    sku: Annotated[list[str] | None, typer.Option("--sku", metavar="SIZE", help=(
        "With --cloud and --region: a VM size (Standard_NC4as_T4_v3) or machine type (g2-standard-8); "
        "repeatable."))] = None,
    table_path: Annotated[Path | None, typer.Option("--table", metavar="FILE", help=(
        f"Price file to write (default: ${PRICES_ENV}, else prices.json in your config directory); "
        "created with its folders when missing."))] = None,
    options: dict[str, PricesRefreshOptions] | None = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", help=(
        "Seconds to wait for a connection and for each answer; a service that doesn't answer is not tried again "
        "after this long, retries included."))] = DEFAULT_TIMEOUT_S,
    retries: Annotated[int, typer.Option("--retries", metavar="N", help=(
        "Attempts after the first on 429, 5xx and dropped connections, with exponential backoff."))] = DEFAULT_RETRIES,
    retry_after_max: Annotated[int, typer.Option("--retry-after-max", metavar="SECONDS", help=(
        "The longest Retry-After honoured; a server asking for more waits this long."))] = DEFAULT_RETRY_AFTER_MAX_S,
    output: Annotated[Format, typer.Option("--format", "-f", metavar="table|markdown", help=(
        "table: one line per price list; markdown: the same as a list for a pull-request comment."))] = Format.table,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Read fresh on-demand and spot prices from the clouds' own price lists into your price file.

    Azure: the Retail Prices API (no credentials). GCP: the Cloud Billing Catalog API, with an API key in
    SPOTKUBE_GCP_BILLING_API_KEY; without the key GCP is skipped and the summary says so. By default it
    refreshes what the stacks use. It never writes into the installed package: the plan and `spotkube
    cost` read your price file over the bundled table.
    """
    target = user_file_path(table_path)
    asked = list(dict.fromkeys(cloud or []))
    try:
        settings = FetchSettings(timeout_s=timeout, retries=retries, retry_after_max_s=retry_after_max)
        if region is not None or sku:
            targets = prices_refresh.explicit_targets(asked, region, sku or [])
        else:
            project = find_project(project_dir)
            targets = prices_refresh.stack_targets(project, project.stacks())
            if all_rows:
                for name, extra in prices_refresh.table_targets(prices_refresh.tables_for_all(target)).items():
                    targets.setdefault(name, []).extend(extra)
        outcome = prices_refresh.refresh(targets, asked=asked, target_file=target, settings=settings,
                                         endpoints={cloud_profile(c).pricing.name: o.endpoint
                                                    for c, o in (options or {}).items()})
    except ValueError as err:
        raise fail(str(err)) from None
    except SpotkubeError as err:
        raise fail(str(err)) from None
    lines = outcome.lines()
    if output is Format.markdown:
        typer.echo("**Prices** (`spotkube prices refresh`):\n\n" + "\n".join(f"- {line}" for line in lines) + "\n")
    else:
        for line in lines:
            typer.echo(line)


#: The cloud the help's example paths name: the registry's first.
_EXAMPLE = next(iter(CLOUDS))


def _copies() -> list[tuple[str, PriceCopy]]:
    """Every price copy the clouds read, by name, in the registry's order."""
    return [item for p in CLOUDS.values() for item in p.commands.price_copies.items()]


@prices_app.command("import", cls=SpotkubeCommand)
def import_prices(
    copy: Annotated[str, typer.Argument(metavar="COPY", help=(
        "Which copy FILE is: " + " or ".join(f"{name} ({copy.origin})" for name, copy in _copies()) + "."))],
    copy_file: Annotated[Path, typer.Argument(metavar="FILE", help="The copy, as downloaded.")],
    url: Annotated[str, typer.Option("--url", metavar="URL", help=(
        "Where FILE was read, pinned to its commit: every row's source names it."))],
    date: Annotated[str | None, typer.Option("--date", metavar="YYYY-MM-DD", help=(
        "The day the copy was made (its commit's day), for a copy not dated inside ("
        + ", ".join(name for name, copy in _copies() if not copy.dated_inside) + ")."))] = None,
    table_path: Annotated[Path | None, typer.Option("--table", metavar="FILE", help=(
        f"Price table to write (default: ${PRICES_ENV}, else prices.json in your config directory); a checkout's "
        f"components/spotkube/clouds/{_EXAMPLE}/prices.json rebuilds the bundled one."))] = None,
    catalog_path: Annotated[Path | None, typer.Option("--catalog", metavar="FILE", help=(
        f"A cloud's part of the GPU catalog (components/spotkube/clouds/{_EXAMPLE}/catalog.json) to learn where "
        "each size is offered from the same copy."))] = None,
) -> None:
    """Read a dated public copy of a cloud's price list into a price table: every size of the catalog (and
    every size the table prices) in every region the copy has, each row with the copy and its day. A price
    the copy lacks is listed as unpriced with why and the `spotkube prices refresh` command that reads it;
    a spot price equal to its on-demand price is never written."""
    target = user_file_path(table_path)
    try:
        seen = datetime.date.fromisoformat(date) if date else None
    except ValueError:
        raise fail(f"--date {date}: not a day; use YYYY-MM-DD, e.g. 2026-08-03") from None
    try:
        result = prices_import.import_copy(copy, copy_file, url, target, catalog_path, seen)
    except (SpotkubeError, ValueError) as err:
        raise fail(str(err)) from None
    typer.echo(result.summary(target, catalog_path))
