"""The offline plan's engine: run a project's real program under Pulumi mocks.

Pulumi's unit-test mocks stand in for the engine, and a recording monitor keeps every registration with
its inputs and options, so the plan reports what the program would really register, never a second
implementation of it. Below the CLI, so the tests of the judges and the clouds can run it.
How it works: docs/architecture.md#the-one-way-flow.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import runpy
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pulumi
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from spotkube.clouds import CLOUDS, checked, load_stack_spec, offline_id
from spotkube.components.mock_host import alias_urns_left_to_the_engine, no_full_collections, owned_event_loops
from spotkube.platform.contract import PoolContract
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.plan_scope import one_plan
from spotkube.platform.project import Project, describes_platform, program_config, stack_config
from spotkube.platform.registration import BuiltCluster, Invoke, Registration, StackOutput
from spotkube.platform.review_settings import CLUSTERS_KEY, ClusterReview
from spotkube.platform.spec import PlatformSpec
from spotkube.shell.common import Built, ClusterOfProvider, built_clusters
from spotkube.shell.pools import PoolBuild
from spotkube.testing import SpotkubeMocks

#: How Pulumi shows a secret value in a preview's details.
SECRET_MASK = "[secret]"


def masked(value: Any) -> Any:
    """Registered inputs as JSON with every secret replaced by `[secret]`, as Pulumi masks them."""
    if rpc.is_rpc_secret(value):
        return SECRET_MASK
    if isinstance(value, Mapping):
        return {str(k): masked(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [masked(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire has only floats; Pulumi shows whole numbers without ".0"
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def unwrapped(value: Any) -> Any:
    """Registered inputs with secrets unwrapped: what pulumi-policy hands a policy pack's rules."""
    if rpc.is_rpc_secret(value):
        return unwrapped(value["value"])
    if isinstance(value, Mapping):
        return {k: unwrapped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unwrapped(v) for v in value]
    return value


@dataclass
class StackRun:
    """Everything one offline run of a stack produced; `source` is its stack file, for messages."""

    stack: str
    clusters: list[BuiltCluster]
    registrations: list[Registration] = field(default_factory=list)
    outputs: dict[str, StackOutput] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    invokes: list[Invoke] = field(default_factory=list)
    source: str = ""
    #: The stack file's own platform, when its `spotkube:` keys describe one (this repository's stacks).
    stack_spec: PlatformSpec | None = None

    @property
    def spec(self) -> PlatformSpec:
        """The platform of a stack that builds one: the stack file's, or its one cluster's."""
        if self.stack_spec is not None:
            return self.stack_spec
        if len(self.clusters) != 1:
            names = ", ".join(c.name for c in self.clusters) or "none"
            raise SpotkubeError(f"{self.source}: the program builds {len(self.clusters)} spotkube clusters "
                                f"({names}); this needs a stack with exactly one")
        return self.clusters[0].spec

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_token]

    @functools.cached_property
    def shown_inputs(self) -> dict[str, Any]:
        """Each registration's inputs as the plan shows them, by URN: secrets masked as Pulumi masks them."""
        return {r.urn: masked(r.inputs) for r in self.registrations}

    @functools.cached_property
    def seen_by_pack(self) -> list[Registration]:
        """The registrations as a policy pack's rules see them: secrets unwrapped."""
        return [dataclasses.replace(r, inputs=unwrapped(r.inputs)) for r in self.registrations]


class OfflineMocks(SpotkubeMocks):
    """`SpotkubeMocks`, keeping every resource's inputs and every invoke with its answer for the report."""

    def __init__(self, answers: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        #: The id each resource got, by (type, name).
        self.ids: dict[tuple[str, str], str] = {}
        self.invokes: list[Invoke] = []
        self.answers = dict(answers or {})

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        self.inputs[(args.typ, args.name)] = args.inputs
        _, state = super().new_resource(args)
        self.ids[(args.typ, args.name)] = offline_id(args.typ, args.name, args.inputs) or f"{args.name}-offline-id"
        return self.ids[(args.typ, args.name)], state

    def call(self, args: mocks.MockCallArgs) -> dict:
        result = dict(self.answers[args.token]) if args.token in self.answers else super().call(args)
        self.invokes.append(Invoke(args.token, result))
        return result


class RecordingMonitor(mocks.MockMonitor):
    """A MockMonitor that keeps each request's options, which MockResourceArgs does not carry."""

    def __init__(self, mocks_: OfflineMocks) -> None:
        super().__init__(mocks_)
        self.requests: list[Any] = []

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        self.requests.append((request, response.urn))
        return response


class _LogCapture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname.lower()}: {record.getMessage()}")


@contextmanager
def _program_path(project: Project) -> Iterator[None]:
    """Like the Pulumi language host, put the program's folder on sys.path while it runs."""
    folder = str(project.main.parent)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)


class NoCluster(SpotkubeError):
    """The program registers no spotkube cluster, so there is nothing to review."""


def run_stack(
    project: Project, stack: str, answers: Mapping[str, Mapping[str, Any]] | None = None
) -> StackRun:
    """Validate the stack, then run the real program under mocks and record what it registers.
    `answers` replace the clouds' answers to provider functions, by token.

    A stack whose `spotkube:` keys describe a whole platform is validated as one before the program
    runs, so its errors name the stack file's keys; any other stack's `spotkube:clusters` goes to each
    cluster's review. The validation and the program read the user's files once (`plan_scope`)."""
    with one_plan():
        return _run_stack(project, stack, answers)


def _run_stack(project: Project, stack: str, answers: Mapping[str, Mapping[str, Any]] | None) -> StackRun:
    config = stack_config(project, stack, CLOUDS)
    source = project.relative(project.stack_file(stack))
    stack_spec = load_stack_spec(project, stack) if describes_platform(config) else None
    reviews = {} if stack_spec is not None else ClusterReview.of_stack(config, source)
    recording = record_stack(project, stack, answers)
    if not recording.clusters:
        components = " or ".join(cloud.component for cloud in CLOUDS.values())
        raise NoCluster(f"{source}: the program ({project.relative(project.main)}) registers no spotkube cluster "
                        f"({components}), so there is nothing to review")
    unknown = sorted(set(reviews) - {c.name for c in recording.clusters})
    if unknown:
        raise SpotkubeError(f"{source}: spotkube:clusters names {', '.join(unknown)}, which the program does not "
                            f"build; its clusters: {', '.join(c.name for c in recording.clusters)}")
    clusters = [dataclasses.replace(c, spec=checked(reviews[c.name].over(c.spec), f"{source}: {CLUSTERS_KEY}.{c.name}"))
                if c.name in reviews else c for c in recording.clusters]
    return StackRun(stack=stack, clusters=clusters, registrations=recording.registrations,
                    outputs=recording.outputs, log=recording.log, invokes=recording.invokes,
                    source=source, stack_spec=stack_spec)


def record_stack(
    project: Project, stack: str, answers: Mapping[str, Mapping[str, Any]] | None = None
) -> Recording:
    """Run any project's program with one of its stacks' config, as the engine would hand it over (a
    secure value as a secret placeholder, never decrypted), and record what it registers and exports.
    A program that fails with anything but a Pulumi error is shown at its own file and line."""
    config, secret_keys = program_config(stack_config(project, stack))
    with _program_path(project):
        try:
            return record_program(
                lambda: runpy.run_path(str(project.main), run_name="__main__"),
                project=project.name, stack=stack, config=config, answers=answers, secret_keys=secret_keys,
            )
        except (SpotkubeError, KeyboardInterrupt):
            raise
        except Exception as err:
            raise ProgramFailed(_where_it_failed(project, err), []) from None


def _where_it_failed(project: Project, err: Exception) -> str:
    """`infra/__main__.py:12: KeyError: 'x'`: the program's last frame of the error, as its author reads it."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if _inside(project, f.filename)]
    what = "".join(traceback.format_exception_only(err)).strip()
    if not frames:
        return f"{project.relative(project.main)}: the program failed: {what}"
    frame = frames[-1]
    hint = ""
    if isinstance(err, ModuleNotFoundError):
        # The plan runs the program in spotkube's own Python, not in the virtualenv `pulumi up` would use.
        where = f" (Pulumi.yaml's virtualenv, {project.virtualenv}, is not used)" if project.virtualenv else ""
        hint = f"; spotkube plan runs the program with the Python it runs in{where}: install the program's " \
               "requirements there"
    return f"{project.relative(Path(frame.filename))}:{frame.lineno}: {what}{hint}"


def _inside(project: Project, filename: str) -> bool:
    try:
        Path(filename).resolve().relative_to(project.root.resolve())
    except ValueError:
        return False
    return True


@dataclass
class Recording:
    """What a program registered and exported under the recording mocks."""

    registrations: list[Registration]
    outputs: dict[str, StackOutput]
    log: list[str]
    invokes: list[Invoke]
    #: Every spotkube cluster component the program built.
    clusters: list[BuiltCluster] = field(default_factory=list)


def record_program(
    program: Callable[[], object], *, project: str, stack: str, config: Mapping[str, str],
    answers: Mapping[str, Mapping[str, Any]] | None = None, secret_keys: Sequence[str] = (),
) -> Recording:
    """Run any Pulumi program function under the recording mocks (preview off, so every output
    resolves) and return its registrations, options and stack outputs. `config` is handed over as
    Pulumi's Python language host hands it (`set_all_config` with `RunRequest.config`'s strings)."""
    offline_mocks = OfflineMocks(answers)
    monitor = RecordingMonitor(offline_mocks)
    logger = logging.getLogger(f"spotkube.components.offline.{project}.{stack}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    capture = _LogCapture()
    logger.addHandler(capture)
    with no_full_collections(), owned_event_loops(), alias_urns_left_to_the_engine(), built_clusters() as built:
        settings.reset_options(project=project, stack=stack, preview=False)
        pulumi.runtime.set_all_config(dict(config), list(secret_keys))
        mocks.set_mocks(offline_mocks, project=project, stack=stack, preview=False,
                        monitor=monitor, logger=logger)
        root = settings.get_root_resource()
        try:
            _sync_await(run_pulumi_func(program))
        except pulumi.RunError as err:
            raise ProgramFailed(str(err), _registrations(monitor, offline_mocks)) from None
        finally:
            logger.removeHandler(capture)
        outputs = {name: _read_output(value) for name, value in (getattr(root, "outputs", None) or {}).items()}
        by_id = {offline_mocks.ids[(request.type, request.name)]: urn for request, urn in monitor.requests
                 if (request.type, request.name) in offline_mocks.ids}
        clusters = [*(_built(found, built) for found in built.clusters), *_external_clusters(built, by_id)]
    return Recording(_registrations(monitor, offline_mocks), outputs, capture.lines, offline_mocks.invokes, clusters)


def _built(found: ClusterOfProvider, built: Built) -> BuiltCluster:
    """A cluster component as the review reads it, with its add-ons' settings in its spec."""
    cluster = cast(pulumi.ComponentResource, found.cluster)
    contracts = _read_output(getattr(found.cluster, "pool_contracts", None))
    addons = {key: settings for owner, key, settings in built.addons if owner is found.cluster}
    return BuiltCluster(
        name=cluster.pulumi_resource_name, urn=_sync_await(cluster.urn.future()),
        spec=found.cluster.plan.spec.model_copy(update=addons),
        contracts=None if contracts.secret or contracts.value is None
        else tuple(PoolContract.from_json(pool) for pool in contracts.value),
        label=found.label,
    )


def _external_clusters(built: Built, by_id: Mapping[str, str]) -> list[BuiltCluster]:
    """Each cluster spotkube didn't make here that pool components joined, as the review reads it: one
    spec holding its pools, their contracts, its add-ons' settings, and the cluster resource itself when
    the program registers it too (`by_id`: URNs by the cloud's ids), whose autoscaler the review reads."""
    joined: dict[tuple[str, str], list[tuple[pulumi.ComponentResource, PoolBuild]]] = {}
    for component, build in built.pools:
        cluster_id = str(_sync_await(pulumi.Output.from_input(build.target["cluster_id"]).future()))
        # Azure's resource ids are case-insensitive: one cluster, however a program spells its id.
        same = next((key for key in joined if key[0] == build.plan.cloud and key[1].lower() == cluster_id.lower()),
                     (build.plan.cloud, cluster_id))
        joined.setdefault(same, []).append((component, build))
    clusters = []
    for (cloud, cluster_id), pools in joined.items():
        _one_cluster(cluster_id, [(c.pulumi_resource_name, b) for c, b in pools])
        specs = [build.plan.spec for _, build in pools]
        name = cluster_id.rstrip("/").rpartition("/")[2]
        components = {id(component) for component, _ in pools}
        addons = [(addon, key, settings) for addon, owner, key, settings in built.pool_addons
                  if id(owner) in components]
        spec = specs[0].model_copy(update={
            "gpu_pools": tuple(p for s in specs for p in s.gpu_pools),
            "spot_pools": tuple(p for s in specs for p in s.spot_pools),
            **{key: settings for _, key, settings in addons}})
        members = [*(component for component, _ in pools), *(owned for found, _, _ in addons for owned in found)]
        # What deploys through the same provider as the add-ons on these pools (Kubeflow Pipelines) is here too.
        providers = {id(p) for found, _, _ in addons for p in found[1:]}
        through = [(found, key, settings) for found, key, settings in built.provider_addons
                   if any(id(p) in providers for p in found[1:])]
        members += [owned for found, _, _ in through for owned in found]
        spec = spec.model_copy(update={key: settings for _, key, settings in through})
        urns = [_sync_await(m.urn.future()) for m in members]
        clusters.append(BuiltCluster(
            name=name, urn=f"external:{cloud}:{cluster_id}", spec=spec,
            contracts=tuple(build.contract for _, build in pools), external=True,
            members=tuple(dict.fromkeys(urns)), context=(by_id[cluster_id],) if cluster_id in by_id else ()))
    return clusters


def _one_cluster(cluster_id: str, pools: Sequence[tuple[str, PoolBuild]]) -> None:
    """Refuse pool components that can't all be on the cluster `cluster_id` names: two of one name (one
    node pool in the cloud) or of two regions."""
    names: dict[str, str] = {}
    for component, build in pools:
        other = names.setdefault(build.pool.name, component)
        if other != component:
            raise ProgramFailed(f"{component} and {other}: both add the pool {build.pool.name!r} to {cluster_id}; "
                                "give each pool on a cluster a name of its own", [])
    regions = sorted({build.plan.spec.region for _, build in pools})
    if len(regions) > 1:
        raise ProgramFailed(f"the pools on {cluster_id} name the regions {' and '.join(regions)}; a cluster is in one "
                            "region: give every pool on it the cluster's region", [])


class ProgramFailed(SpotkubeError):
    """The program stopped with a user error; `registrations` shows what it had registered."""

    def __init__(self, message: str, registrations: list[Registration]) -> None:
        super().__init__(message)
        self.registrations = registrations


def _registrations(monitor: RecordingMonitor, offline_mocks: OfflineMocks) -> list[Registration]:
    return [
        Registration(
            type=request.type,
            name=request.name,
            urn=urn,
            parent=request.parent,
            custom=request.custom,
            inputs=offline_mocks.inputs.get((request.type, request.name), {}),
            protect=bool(request.protect),
            ignore_changes=tuple(request.ignoreChanges),
            replace_on_changes=tuple(request.replaceOnChanges),
            delete_before_replace=request.deleteBeforeReplace,
            dependencies=tuple(request.dependencies),
            provider=request.provider,
            providers=tuple(request.providers.values()),
            moved_from=_moved_from(request),
        )
        for request, urn in monitor.requests
        if request.type != "pulumi:pulumi:Stack"
    ]


def _moved_from(request: Any) -> tuple[str, ...]:
    """The former parents a registration's aliases name, with its own type and name (a resource moved
    under a new component). The aliases of other API versions' types, which every azure-native and
    Kubernetes resource sends, name none."""
    return tuple(alias.spec.parentUrn for alias in request.aliases
                 if alias.HasField("spec") and alias.spec.parentUrn and not alias.spec.type and not alias.spec.name)


def _read_output(value: Any) -> StackOutput:
    """Resolve a stack output; a secret's value is never read into the report."""
    if isinstance(value, pulumi.Output):
        if _sync_await(value.is_secret()):
            return StackOutput(secret=True)
        return StackOutput(secret=False, value=_sync_await(value.future()))
    return StackOutput(secret=False, value=value)
