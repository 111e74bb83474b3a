"""The offline plan's engine: run the real `infra/__main__.py` under Pulumi mocks.

No CLI, cloud or credentials are needed: Pulumi's own unit-test mocks stand in for the engine, and
a recording monitor keeps every registration with its inputs and options. What the plan reports is
therefore what the program would really register, never a second implementation of it. Each
registration is a `spotkube.platform.registration.Registration`, the one type every judge reads.

It sits with the components, below the CLI, so the tests of the judges and the clouds can run it
without the CLI. How the offline plan works: docs/architecture.md#the-one-way-flow.
"""

from __future__ import annotations

import logging
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from spotkube.clouds import load_stack_spec, offline_id
from spotkube.components.mock_host import no_full_collections, owned_event_loops
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import Project, as_pulumi_config, stack_config
from spotkube.platform.registration import Invoke, Registration, StackOutput
from spotkube.platform.spec import PlatformSpec
from spotkube.testing import SpotkubeMocks


@dataclass
class StackRun:
    """Everything one offline run of a stack produced; `source` is its stack file, for messages."""

    stack: str
    spec: PlatformSpec
    registrations: list[Registration] = field(default_factory=list)
    outputs: dict[str, StackOutput] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    invokes: list[Invoke] = field(default_factory=list)
    source: str = ""

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_token]


class OfflineMocks(SpotkubeMocks):
    """`spotkube.testing.SpotkubeMocks`, which answers what the components ask the clouds, keeping
    every resource's inputs and every invoke with its answer for the report."""

    def __init__(self, answers: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        self.invokes: list[Invoke] = []
        self.answers = dict(answers or {})

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        self.inputs[(args.typ, args.name)] = args.inputs
        _, state = super().new_resource(args)
        return offline_id(args.typ, args.name, args.inputs) or f"{args.name}-offline-id", state

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


def run_stack(
    project: Project, stack: str, answers: Mapping[str, Mapping[str, Any]] | None = None
) -> StackRun:
    """Validate the stack, then run the real program under mocks and record what it registers.
    `answers` replace the clouds' answers to provider functions, by token (a test plans as
    another identity by answering `getClientConfig` itself)."""
    spec = load_stack_spec(project, stack)
    recording = record_stack(project, stack, answers)
    return StackRun(stack=stack, spec=spec, registrations=recording.registrations,
                    outputs=recording.outputs, log=recording.log, invokes=recording.invokes,
                    source=project.relative(project.stack_file(stack)))


def record_stack(
    project: Project, stack: str, answers: Mapping[str, Mapping[str, Any]] | None = None
) -> Recording:
    """Run any project's program (this repository's, or infra/bootstrap's) with one of its stacks'
    config, as the engine would hand it over, and record what it registers and exports."""
    with _program_path(project):
        return record_program(
            lambda: runpy.run_path(str(project.main), run_name="__main__"),
            project=project.name, stack=stack, config=as_pulumi_config(stack_config(project, stack)),
            answers=answers,
        )


@dataclass
class Recording:
    """What a program registered and exported under the recording mocks."""

    registrations: list[Registration]
    outputs: dict[str, StackOutput]
    log: list[str]
    invokes: list[Invoke]


def record_program(
    program: Callable[[], object], *, project: str, stack: str, config: Mapping[str, str],
    answers: Mapping[str, Mapping[str, Any]] | None = None,
) -> Recording:
    """Run any Pulumi program function under the recording mocks (preview off, so every output
    resolves) and return its registrations, options and stack outputs.

    `config` is handed over as Pulumi's Python language host hands it (`pulumi.runtime.set_all_config`
    with the map of strings from `RunRequest.config`); `core.project.as_pulumi_config` turns a stack's
    values into exactly those strings. `answers` replace the clouds' answers to provider functions."""
    offline_mocks = OfflineMocks(answers)
    monitor = RecordingMonitor(offline_mocks)
    logger = logging.getLogger(f"spotkube.components.offline.{project}.{stack}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    capture = _LogCapture()
    logger.addHandler(capture)
    with no_full_collections(), owned_event_loops():
        settings.reset_options(project=project, stack=stack, preview=False)
        pulumi.runtime.set_all_config(dict(config))
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
    return Recording(_registrations(monitor, offline_mocks), outputs, capture.lines, offline_mocks.invokes)


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
        )
        for request, urn in monitor.requests
        if request.type != "pulumi:pulumi:Stack"
    ]


def _read_output(value: Any) -> StackOutput:
    """Resolve a stack output; a secret's value is never read into the report."""
    if isinstance(value, pulumi.Output):
        if _sync_await(value.is_secret()):
            return StackOutput(secret=True)
        return StackOutput(secret=False, value=_sync_await(value.future()))
    return StackOutput(secret=False, value=value)
