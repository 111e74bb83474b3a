"""The GPU catalog: the machines that carry GPUs, where each cloud offers them, and facts per GPU.

A file, not code, because the clouds ship GPU sizes several times a year: `spotkube catalog refresh`
rebuilds a cloud's part from the cloud's API into the user's catalog file, which overrides the shipped
copy as a user's price file overrides the bundled prices. Every part carries its date and source, which
the plan states, so a stale catalog looks stale. The GPU facts no cloud API reports live in
`catalog.json` beside this module, each cloud's part in `clouds/<cloud>/catalog.json`
(`Cloud.catalog_file`). A machine in no part's `machines` nor `cpuFamilies` is "not in the catalog",
never "without GPUs". Layout and refresh: docs/catalog.md. Pure module: no Pulumi, no network.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.input_messages import shown, validation_problems
from spotkube.platform.plan_scope import once
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.user_files import UserFile
from spotkube.platform.warnings import PlanWarning

SCHEMA_VERSION = 1
_BUNDLED_NAME = "catalog.json"
#: The environment variable that names a user catalog file.
CATALOG_ENV = "SPOTKUBE_CATALOG"
#: The user's catalog: `catalog.json` in the config directory, or the file $SPOTKUBE_CATALOG names.
CATALOG_FILE = UserFile("catalog.json", CATALOG_ENV, "catalog file")
#: Where a cloud's section came from when no user catalog overrides it.
BUNDLED = "bundled"
#: The id of the warning a pool gets when its machine is not in the catalog and its GPU was
#: declared instead: a team can acknowledge it by this id.
UNLISTED_SIZE = "catalog-unlisted-size"
#: The id of the warning a GPU pool gets when the catalog knows its machine but not whether the
#: stack's region offers it (no source read the region): never silence, and never a guess.
UNKNOWN_OFFER = "catalog-unknown-offer"
#: GPU types become label values and part of object names (`spotkube-<type>`, at most 63 characters):
#: lower-case letters, digits and hyphens, starting and ending with a letter or digit.
GPU_TYPE_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,52}[a-z0-9])?$"


def declared_gpu_problem(gpu_type: str) -> str | None:
    """Why a GPU type declared for a machine the catalog doesn't know can't be used, or None."""
    if re.fullmatch(GPU_TYPE_PATTERN, gpu_type):
        return None
    return (f"GPU type {shown(gpu_type)} can't be a GPU type: it becomes a node label value and part of the "
            "GPU's compute class name, so use at most 54 lower-case letters, digits and hyphens, e.g. "
            "nvidia-h100-80gb")


class CatalogFileError(SpotkubeError):
    """A catalog file that can't be used: names the file, the key and what is accepted."""


class CatalogSourceError(SpotkubeError):
    """A cloud API a refresh reads could not be read: says which, why, and what to do."""


class _Model(BaseModel):
    # Built when first used: a plan validates the catalog as a whole, so its parts' own validators would
    # be built at import for nothing.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class GpuFacts(_Model):
    """What spotkube knows about one GPU type that no cloud API reports."""

    model: str = Field(min_length=1, description="The GPU's name as its maker writes it, e.g. NVIDIA A100 80GB.")
    memory_gb: int | None = Field(default=None, alias="memoryGb", gt=0, description="Memory of one GPU, in GB.")
    mig: bool | None = Field(default=None, description="Whether the GPU can be partitioned with MIG.")


class MachineGpu(_Model):
    """The GPUs one machine comes with, as its nodes advertise them (`nvidia.com/gpu`)."""

    type: str = Field(pattern=GPU_TYPE_PATTERN)
    count: int = Field(ge=1, le=16)
    #: The part of one physical GPU that each advertised GPU is ("1/6" on Standard_NV6ads_A10_v5);
    #: None for whole GPUs. Cloud APIs report such a partition as one GPU.
    share: str | None = None

    @field_validator("share")
    @classmethod
    def _a_fraction(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            share = Fraction(value)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{value!r} is not a fraction; use e.g. 1/6") from None
        if not 0 < share < 1:
            raise ValueError(f"{value!r} is not a part of one GPU; use a fraction between 0 and 1, e.g. 1/6")
        return str(share)

    @property
    def fraction(self) -> Fraction:
        """The part of one physical GPU each advertised GPU is: 1 for whole GPUs."""
        return Fraction(self.share) if self.share else Fraction(1)


class Machine(_Model):
    """One machine that comes with GPUs."""

    gpu: MachineGpu
    vcpus: int | None = Field(default=None, ge=1)
    memory_gb: Decimal | None = Field(default=None, alias="memoryGb", gt=0, description="Memory, in GiB.")
    #: Whether the cloud sells it as spot (Azure's LowPriorityCapable); None when the source doesn't say.
    spot: bool | None = None
    #: The cloud's own family name, as its API writes it.
    family: str | None = None
    #: Region -> the zones offering it there ([] offered without zones; None zones unknown).
    regions: dict[str, tuple[str, ...] | None] = Field(default_factory=dict)


class Accelerator(_Model):
    """A GPU type a cloud offers by zone (GKE: what an N1 machine can take)."""

    max_per_machine: int | None = Field(default=None, alias="maxPerMachine", ge=1)
    #: The cloud's own description of it (Compute Engine's `description`).
    description: str | None = None
    #: Region -> the zones offering it.
    regions: dict[str, tuple[str, ...]] = Field(default_factory=dict)


Availability = Literal["offered", "absent", "unknown"]


@record
class Offer:
    """What the catalog says about a machine in a region: offered (in `zones`, None when the zones
    are unknown), absent (the catalog knows the region completely), or unknown."""

    status: Availability
    zones: tuple[str, ...] | None = None


class CloudCatalog(_Model):
    """One cloud's part of the catalog, with the day it was read and where from."""

    date: datetime.date
    source: str = Field(min_length=1)
    #: What else a reader should know about this part: how it was read, what it leaves out.
    notes: tuple[str, ...] = ()
    #: The regions whose offer is known completely, with their zones.
    regions: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    machines: dict[str, Machine] = Field(default_factory=dict)
    accelerators: dict[str, Accelerator] = Field(default_factory=dict)
    #: Families (GKE) or series (AKS) whose machines carry no GPU.
    cpu_families: tuple[str, ...] = Field(default=(), alias="cpuFamilies")

    def machine(self, name: str) -> Machine | None:
        return self.machines.get(name)

    def offer(self, machine: str, region: str) -> Offer:
        """Whether `machine` is offered in `region`, and in which zones."""
        entry = self.machines.get(machine)
        if entry is not None and region in entry.regions:
            return Offer("offered", entry.regions[region])
        return Offer("absent") if region in self.regions else Offer("unknown")

    def accelerator_zones(self, gpu_type: str, region: str) -> tuple[str, ...] | None:
        """The zones of `region` offering `gpu_type`, in zone order: empty when the catalog knows the
        region and the GPU is offered in none of its zones, None when the catalog can't say."""
        accelerator = self.accelerators.get(gpu_type)
        zones = accelerator.regions.get(region) if accelerator else None
        if zones:
            return tuple(sorted(zones))
        return () if region in self.regions else None

    def gpu_types(self) -> frozenset[str]:
        """Every GPU type this cloud's catalog names."""
        return frozenset({m.gpu.type for m in self.machines.values()} | set(self.accelerators))

    def regions_offering(self, machine: str) -> tuple[str, ...]:
        """The regions the catalog says offer `machine`, sorted."""
        entry = self.machines.get(machine)
        return tuple(sorted(entry.regions)) if entry else ()

    def describe(self) -> str:
        """The catalog's date and source in words: `2026-11-25, Azure Resource SKUs API (...)`."""
        return f"{self.date.isoformat()}, {self.source}"


class Catalog(_Model):
    """The whole catalog: GPU facts and each cloud's machines."""

    schema_version: Literal[1] = Field(alias="schemaVersion")
    notes: tuple[str, ...] = ()
    gpus: dict[str, GpuFacts] = Field(default_factory=dict)
    clouds: dict[str, CloudCatalog] = Field(default_factory=dict)
    #: The user catalog file merged into this one, and the clouds it supplied (set by `gpu_catalog`).
    _user_file: Path | None = PrivateAttr(default=None)
    _user_clouds: frozenset[str] = PrivateAttr(default=frozenset())

    def cloud(self, name: str) -> CloudCatalog:
        """One cloud's part; a cloud the catalog has no part for knows nothing, as of no date."""
        section = self.clouds.get(name)
        if section is None:
            return CloudCatalog(date=datetime.date.min, source="no catalog for this cloud")
        return section

    def gpu(self, gpu_type: str) -> GpuFacts | None:
        return self.gpus.get(gpu_type)

    @property
    def user_file(self) -> Path | None:
        return self._user_file

    def origin(self, cloud: str) -> str:
        """Where a cloud's part came from: "bundled", or the user catalog file that supplied it."""
        return str(self._user_file) if cloud in self._user_clouds else BUNDLED


# --- Reading and writing ---------------------------------------------------------------------------


_LAYOUT = ('a catalog file is a JSON object {"schemaVersion": 1, "clouds": {"<cloud>": '
           '{"date": "YYYY-MM-DD", "source": "...", "machines": {...}}}} as `spotkube catalog refresh` writes it; '
           'see docs/catalog.md')


_Parsed = TypeVar("_Parsed", Catalog, CloudCatalog)


def _parse(model: type[_Parsed], text: str, where: str, layout: str) -> _Parsed:
    """A catalog (or part) from its JSON text; every problem is a CatalogFileError naming `where` and the key."""
    try:
        data: Any = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as err:
        raise CatalogFileError(f"{where}: not JSON (line {err.lineno}, column {err.colno}: {err.msg})"
                               f"{layout and '; '}{layout}") from None
    try:
        return model.model_validate(data)
    except ValidationError as err:
        problems = [*(f"{where}: {p}" for p in validation_problems(err)), *([f"{where}: {layout}"] if layout else [])]
        raise CatalogFileError("\n".join(problems)) from None


def parse_catalog(text: str, where: str) -> Catalog:
    return _parse(Catalog, text, where, _LAYOUT)


#: Each cloud's shipped part of the catalog, by the catalog's name for the cloud (aks, gke): the files
#: the clouds' profiles name (`Cloud.catalog_file`), handed over by the registry.
CatalogParts = Mapping[str, Traversable]


@functools.lru_cache(maxsize=1)
def bundled_facts() -> Catalog:
    """The shipped GPU facts and notes that belong to no cloud (read once); it has no cloud parts."""
    return parse_catalog(resources.files(__package__).joinpath(_BUNDLED_NAME).read_text("utf-8"), _BUNDLED_NAME)


def bundled_facts_path() -> Path:
    """Where the shipped GPU facts live on disk, for checking a checkout's copy."""
    return Path(str(resources.files(__package__).joinpath(_BUNDLED_NAME)))


def parse_part(text: str, where: str) -> CloudCatalog:
    return _parse(CloudCatalog, text, where, "")


@functools.lru_cache(maxsize=8)
def bundled_part(file: Traversable) -> CloudCatalog:
    """A cloud's shipped part, from the file its profile names (read once)."""
    return parse_part(file.read_text("utf-8"), str(file))


@functools.lru_cache(maxsize=4)
def _bundled(parts: tuple[tuple[str, Traversable], ...]) -> Catalog:
    facts = bundled_facts()
    return Catalog(schemaVersion=SCHEMA_VERSION, notes=facts.notes, gpus=facts.gpus,
                   clouds={cloud: bundled_part(file) for cloud, file in parts})


def bundled_catalog(parts: CatalogParts) -> Catalog:
    """The catalog shipped inside the package: the GPU facts and every cloud's part (read once)."""
    return _bundled(tuple(sorted(parts.items())))


def load_catalog_file(path: Path) -> Catalog:
    """The catalog file at `path`, validated (CatalogFileError when it can't be read or used)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise CatalogFileError(f"{path}: cannot read the catalog file ({reason})") from None
    return parse_catalog(text, str(path))


def with_user_catalog(bundled: Catalog, user: Catalog, path: Path) -> Catalog:
    """`bundled` with each cloud part the user's file has replacing the bundled one whole (a refresh
    reads a cloud completely), and the user's GPU facts over the bundled ones, remembering `path`."""
    merged = Catalog(
        schemaVersion=SCHEMA_VERSION,
        notes=bundled.notes,
        gpus={**bundled.gpus, **user.gpus},
        clouds={**bundled.clouds, **user.clouds},
    )
    merged._user_file = path
    merged._user_clouds = frozenset(user.clouds)
    return merged


@functools.lru_cache(maxsize=8)
def _user_catalog(path: Path, mtime_ns: int, size: int) -> Catalog:
    """The user catalog file at `path`, read again when the file changes."""
    return load_catalog_file(path)


def _user_stamp(user_file: Path | None) -> tuple[Path, int, int] | None:
    """The user's catalog file with its change stamp, or None: looked up once per plan (`plan_scope`),
    so that every pool of a plan reads the same catalog."""
    return once(("catalog file", user_file), lambda: _stamp(user_file))


def _stamp(user_file: Path | None) -> tuple[Path, int, int] | None:
    path, problem = CATALOG_FILE.lookup(user_file)
    if problem is not None:
        raise CatalogFileError(f"{problem}; {_LAYOUT}")
    if path is None:
        return None
    stat = path.stat()
    return path.resolve(), stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=8)
def _merged(parts: tuple[tuple[str, Traversable], ...], path: Path, mtime_ns: int, size: int) -> Catalog:
    return with_user_catalog(_bundled(parts), _user_catalog(path, mtime_ns, size), path)


def gpu_catalog(parts: CatalogParts, user_file: Path | None = None) -> Catalog:
    """The catalog validation and the plan use: the bundled one with the user's catalog file
    (`CATALOG_FILE`'s rule) over it; a file that can't be used raises CatalogFileError."""
    stamp = _user_stamp(user_file)
    if stamp is None:
        return bundled_catalog(parts)
    return _merged(tuple(sorted(parts.items())), *stamp)


def cloud_part(cloud: str, bundled: Traversable, user_file: Path | None = None) -> CloudCatalog:
    """One cloud's part in use: the user's catalog file's when it has one, else the shipped file's; a
    cloud asks it for every machine it looks up (it can't reach the registry), so a plan finds it once."""
    return once(("catalog part", cloud, bundled, user_file), lambda: _cloud_part(cloud, bundled, user_file))


def _cloud_part(cloud: str, bundled: Traversable, user_file: Path | None) -> CloudCatalog:
    stamp = _user_stamp(user_file)
    user = _user_catalog(*stamp).clouds if stamp is not None else {}
    return user[cloud] if cloud in user else bundled_part(bundled)


def with_cloud(catalog: Catalog, cloud: str, section: CloudCatalog, gpus: Mapping[str, GpuFacts]) -> Catalog:
    """A copy of `catalog` with `cloud`'s part replaced by `section` and `gpus` added to its GPU facts."""
    return Catalog(
        schemaVersion=SCHEMA_VERSION,
        notes=catalog.notes,
        gpus=dict(sorted({**catalog.gpus, **gpus}.items())),
        clouds=dict(sorted({**catalog.clouds, cloud: section}.items())),
    )


def _json_value(value: Any) -> Any:
    """Decimals as JSON numbers (whole ones without a fraction), dates as ISO text."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} to the catalog")


def catalog_text(catalog: Catalog | CloudCatalog) -> str:
    """The catalog (or one cloud's part) as the JSON the bundled files hold, ending with a newline."""
    data = catalog.model_dump(mode="python", by_alias=True, exclude_none=True)
    for part in [data, *data.get("clouds", {}).values()] if isinstance(catalog, Catalog) else [data]:
        if "date" in part and not part.get("notes"):
            part.pop("notes", None)  # a cloud's part without notes, as a refresh writes it
    return json.dumps(data, indent=1, ensure_ascii=False, default=_json_value) + "\n"


def write_catalog(catalog: Catalog, path: Path) -> None:
    """Write `catalog` to `path`, through a file beside it, so an interrupted write never leaves half
    a catalog behind."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(catalog_text(catalog), encoding="utf-8")
    partial.replace(path)


# --- What the plan says about the catalog ----------------------------------------------------------


@record
class CatalogWarning:
    """A warning about a pool's machine and the catalog, with an id a team can acknowledge it by."""

    id: str
    pool: str
    message: str

    def __str__(self) -> str:
        return f"[{self.id}] {self.pool}: {self.message}"

    def plan_warning(self) -> PlanWarning:
        """The warning as the plan's: `catalog-unlisted-size:<pool>` (or `catalog-unknown-offer:<pool>`),
        so a stack acknowledges one pool's, or every pool's by the bare kind."""
        return PlanWarning(f"{self.id}:{self.pool}", f"{self.pool}: {self.message}")

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "pool": self.pool, "message": self.message}


def refresh_command(cloud: str) -> str:
    """The command that refreshes one cloud's part of the user's catalog."""
    return f"spotkube catalog refresh --cloud {cloud}"


def catalog_warnings(spec: PlatformSpec, catalog: Catalog, knows: Callable[[str], bool]) -> tuple[CatalogWarning, ...]:
    """A warning per GPU pool of the resolved `spec` whose machine the stack's cloud's part of `catalog`
    doesn't know (`knows`: the cloud's own test, which knows sizes a catalog may lack), then one per GPU
    pool whose machine it knows but not whether the stack's region offers it. Beside the catalog, so the
    plan's judges and the cluster components (which log them under `pulumi up`) run the one rule."""
    section = catalog.cloud(spec.cloud)
    unlisted = tuple(
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
    return unlisted + unknown
