"""`spotkube catalog refresh`: the GPU machines each cloud offers, from its own API, into your catalog file."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli import catalog_refresh
from spotkube.cli.app import CLOUD_CHOICES, SpotkubeCommand, SpotkubeGroup, fail
from spotkube.cli.cloud_flags import with_cloud_flags
from spotkube.clouds import CLOUDS
from spotkube.clouds.stack_template import CloudName
from spotkube.platform.catalog import CATALOG_ENV, CATALOG_FILE
from spotkube.platform.cloud_options import CatalogRefreshOptions
from spotkube.platform.errors import SpotkubeError

catalog_app = typer.Typer(help="The GPU catalog: which machines carry which GPUs, and where the clouds offer them.",
                          no_args_is_help=True, cls=SpotkubeGroup)


@catalog_app.command("refresh", cls=SpotkubeCommand)
@with_cloud_flags({cloud: p.commands.options.catalog_refresh for cloud, p in CLOUDS.items()})
def refresh_catalog(
    cloud: Annotated[list[CloudName] | None, typer.Option(
        "--cloud", metavar=CLOUD_CHOICES, help="Cloud(s) whose part to refresh (default: every cloud).")] = None,
    options: dict[str, CatalogRefreshOptions] | None = None,
    catalog_file: Annotated[Path | None, typer.Option("--file", metavar="FILE", help=(
        f"Catalog file to write (default: ${CATALOG_ENV}, else catalog.json in your config directory); created with "
        "its folders when missing."))] = None,
) -> None:
    """Read the GPU machines each cloud offers, with their GPUs, vCPUs, memory, regions and zones, from the
    cloud's own API (Azure's Resource SKUs, Compute Engine's machine and accelerator types) into your catalog
    file, which `spotkube plan` and `pulumi up` then read over the bundled catalog. Needs spotkube's `refresh`
    extra, which brings the clouds' SDKs."""
    clouds = [str(c) for c in cloud] if cloud else list(CloudName)
    today = datetime.datetime.now(datetime.UTC).date()
    try:
        path, report = catalog_refresh.refresh(clouds, today, options or {}, catalog_file)
    except SpotkubeError as err:
        raise fail(str(err)) from None
    except OSError as err:
        target = CATALOG_FILE.path(catalog_file)
        raise fail(f"{target}: cannot write the catalog file ({err.strerror or err})") from None
    for done in report:
        typer.echo(done.summary())
        for note in done.result.notes:
            typer.echo(f"  {note}")
    typer.echo(f"wrote {path}")
