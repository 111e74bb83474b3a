"""The offline plan's engine: run the real `infra/__main__.py` under Pulumi mocks.

No CLI, cloud or credentials are needed: Pulumi's own unit-test mocks stand in for the engine, and
a recording monitor keeps every registration with its inputs and options. What the plan reports is
therefore what the program would really register, never a second implementation of it.

How the offline plan works: docs/architecture.md#tools.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import runpy
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from spotkube.clouds import load_stack_spec
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import Project, as_pulumi_config, stack_config
from spotkube.platform.spec import PlatformSpec

#: What AKS's `listClusterUserCredential` returns for an Entra ID cluster (Kubernetes 1.24 and
#: later): an exec kubeconfig that runs kubelogin in device-code mode, which needs a person. The
#: offline plan answers with this very shape, with obviously fake addresses and ids, so the
#: program's rewrite of it is exercised and the preflight judges what `pulumi up` would use.
AKS_USER_KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: b2ZmbGluZS1wbGFuLXBsYWNlaG9sZGVyLWNh
    server: https://offline-plan.hcp.invalid:443
  name: offline-plan
contexts:
- context:
    cluster: offline-plan
    user: clusterUser_offline-plan_offline-plan
  name: offline-plan
current-context: offline-plan
kind: Config
preferences: {}
users:
- name: clusterUser_offline-plan_offline-plan
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - get-token
      - --environment
      - AzurePublicCloud
      - --server-id
      - 6dae42f8-4368-4678-94ff-3960e28e3630
      - --client-id
      - 80faf920-1908-4b52-b5ef-a8e7bedfc67a
      - --tenant-id
      - 00000000-0000-0000-0000-00000000000a
      - --login
      - devicecode
      command: kubelogin
      env: null
      installHint: |2

        kubelogin is not installed which is required to connect to AAD enabled cluster.

        To learn more, please go to https://aka.ms/aks/kubelogin
      provideClusterInfo: false
"""
#: A Google Cloud project number, obviously fake.
OFFLINE_PROJECT_NUMBER = "000000000000"
#: The identity `getClientConfig` reports for whoever runs the plan, obviously fake. The program
#: must not depend on it (the deployer is configured), which tests check by planning under another.
OFFLINE_CLIENT_CONFIG = {
    "clientId": "00000000-0000-0000-0000-00000000000c",
    "objectId": "00000000-0000-0000-0000-00000000000d",
    "subscriptionId": "00000000-0000-0000-0000-00000000000e",
    "tenantId": "00000000-0000-0000-0000-00000000000a",
}


def _offline_guid(*parts: str) -> str:
    """A GUID that is the same on every run and obviously not Azure's (its node says `0ff1ce`)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "spotkube-offline-plan:" + "/".join(parts)))[:24] + "0ff1ce0ff1ce"


def _resource_id(type_token: str, name: str, inputs: Mapping[str, Any], subscription: str) -> str:
    """The id the cloud gives a resource. Azure's are ARM ids, as Azure returns them, since programs
    scope role assignments to them and read their subscription from them; others don't matter."""
    group = f"/subscriptions/{subscription}/resourceGroups/{inputs.get('resourceGroupName')}"
    if type_token == "azure-native:containerservice:ManagedCluster":
        return f"{group}/providers/Microsoft.ContainerService/managedClusters/{inputs.get('resourceName') or name}"
    if type_token == "azure-native:resources:ResourceGroup":
        return f"/subscriptions/{subscription}/resourceGroups/{inputs.get('resourceGroupName') or name}"
    if type_token == "azure-native:managedidentity:UserAssignedIdentity":
        identity = inputs.get("resourceName") or name
        return f"{group}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{identity}"
    if type_token == "azure-native:authorization:RoleDefinition":
        return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{_offline_guid(name)}"
    return f"{name}-offline-id"


def _computed_outputs(type_token: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Outputs the cloud computes and the components read, with obviously fake values."""
    if type_token == "gcp:container/cluster:Cluster":
        master_auth = {**(inputs.get("masterAuth") or {}),
                       "clusterCaCertificate": base64.b64encode(b"offline-plan-placeholder-ca").decode()}
        outputs: dict[str, Any] = {"endpoint": "offline-plan.invalid", "masterAuth": master_auth}
        endpoints = inputs.get("controlPlaneEndpointsConfig") or {}
        if endpoints.get("dnsEndpointConfig"):
            endpoint = "gke-00000000000000000000000000000000-000000000000.offline-plan.gke.goog"
            dns = {**endpoints["dnsEndpointConfig"], "endpoint": endpoint}
            outputs["controlPlaneEndpointsConfig"] = {**endpoints, "dnsEndpointConfig": dns}
        return outputs
    if type_token == "gcp:serviceaccount/account:Account":
        email = f"{inputs.get('accountId')}@{inputs.get('project')}.iam.gserviceaccount.com"
        return {"email": email, "name": f"projects/{inputs.get('project')}/serviceAccounts/{email}"}
    if type_token == "azure-native:managedidentity:UserAssignedIdentity":
        return {"clientId": _offline_guid("client", str(inputs.get("resourceName"))),
                "principalId": _offline_guid("principal", str(inputs.get("resourceName"))),
                "tenantId": OFFLINE_CLIENT_CONFIG["tenantId"]}
    # Google names pools and providers by project number, which the offline plan can't know.
    pools = f"projects/{OFFLINE_PROJECT_NUMBER}/locations/global/workloadIdentityPools"
    if type_token == "gcp:iam/workloadIdentityPool:WorkloadIdentityPool":
        return {"name": f"{pools}/{inputs.get('workloadIdentityPoolId')}"}
    if type_token == "gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider":
        return {"name": f"{pools}/{inputs.get('workloadIdentityPoolId')}/providers/"
                        f"{inputs.get('workloadIdentityPoolProviderId')}"}
    if type_token == "gcp:projects/iAMCustomRole:IAMCustomRole":
        return {"name": f"projects/{inputs.get('project')}/roles/{inputs.get('roleId')}"}
    return {}


@dataclass(frozen=True)
class Registration:
    """One resource the program registered, with the options a reviewer cares about."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: Mapping[str, Any]
    protect: bool = False
    ignore_changes: tuple[str, ...] = ()
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False
    dependencies: tuple[str, ...] = ()
    provider: str = ""


@dataclass(frozen=True)
class StackOutput:
    """A stack output: whether it is secret, and its value only when it is not."""

    secret: bool
    value: Any = None


@dataclass(frozen=True)
class Invoke:
    """A provider function the program called (such as the deployer's client config) and its answer."""

    token: str
    result: Mapping[str, Any]


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


class OfflineMocks(mocks.Mocks):
    """Echo inputs back as state and answer the few calls the components make."""

    def __init__(self, client_config: Mapping[str, str] = OFFLINE_CLIENT_CONFIG) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}
        self.invokes: list[Invoke] = []
        self.client_config = dict(client_config)

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        self.inputs[(args.typ, args.name)] = args.inputs
        # An Azure resource named by `resourceName` is known by that name, as Azure reports it.
        name = args.inputs.get("resourceName") if args.typ.startswith("azure-native:") else None
        state = {"name": name or args.name, **args.inputs, **_computed_outputs(args.typ, args.inputs)}
        return _resource_id(args.typ, args.name, args.inputs, self.client_config["subscriptionId"]), state

    def call(self, args: mocks.MockCallArgs) -> dict:
        result = self._answer(args)
        self.invokes.append(Invoke(args.token, result))
        return result

    def _answer(self, args: mocks.MockCallArgs) -> dict:
        if args.token == "azure-native:containerservice:listManagedClusterUserCredentials":
            value = base64.b64encode(AKS_USER_KUBECONFIG.encode()).decode()
            return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
        if args.token == "azure-native:authorization:getClientConfig":
            return dict(self.client_config)
        return {}


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
    project: Project, stack: str, client_config: Mapping[str, str] = OFFLINE_CLIENT_CONFIG
) -> StackRun:
    """Validate the stack, then run the real program under mocks and record what it registers.
    `client_config` is the identity the plan runs as (what `getClientConfig` answers)."""
    spec = load_stack_spec(project, stack)
    recording = record_stack(project, stack, client_config)
    return StackRun(stack=stack, spec=spec, registrations=recording.registrations,
                    outputs=recording.outputs, log=recording.log, invokes=recording.invokes,
                    source=project.relative(project.stack_file(stack)))


def record_stack(
    project: Project, stack: str, client_config: Mapping[str, str] = OFFLINE_CLIENT_CONFIG
) -> Recording:
    """Run any project's program (this repository's, or infra/bootstrap's) with one of its stacks'
    config, as the engine would hand it over, and record what it registers and exports."""
    with _program_path(project):
        return record_program(
            lambda: runpy.run_path(str(project.main), run_name="__main__"),
            project=project.name, stack=stack, config=as_pulumi_config(stack_config(project, stack)),
            client_config=client_config,
        )


@contextmanager
def _owned_event_loops() -> Iterator[None]:
    """Run the program on event loops this module owns, and close every one of them afterwards.

    Why: Pulumi's runtime never closes the loops it makes. `_sync_await` takes the main thread's
    loop from `asyncio.get_event_loop()`, and the mock monitor's calls run in the loop's default
    executor, where `pulumi.runtime.sync_await._ensure_event_loop` gives each worker thread a new
    loop of its own. Nothing closes them. An unclosed loop and its self-pipe socketpair form a
    reference cycle (the selector holds a handle bound to the loop), so at exit the cycle collector
    finalises them together, in no set order. When a socket happens to go first, its descriptor is
    already -1 when the loop's `__del__` calls `close()`, the selector refuses to drop it, and Python
    prints "Exception ignored in: <function BaseEventLoop.__del__ ...> ... ValueError: Invalid file
    descriptor: -1" on stderr, now and then, after an otherwise clean run.

    So the run gets a new loop with an executor of our own whose threads are each handed a loop up
    front (`_ensure_event_loop` then finds it rather than making one). When the run is over, the
    executor is shut down and every one of these loops is closed, while their sockets are still open.
    """
    worker_loops: list[asyncio.AbstractEventLoop] = []
    lock = threading.Lock()

    def give_the_thread_a_loop() -> None:
        worker_loop = asyncio.new_event_loop()
        asyncio.set_event_loop(worker_loop)
        with lock:
            worker_loops.append(worker_loop)

    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix="spotkube-offline", initializer=give_the_thread_a_loop)
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        executor.shutdown(wait=True)
        for worker_loop in worker_loops:
            worker_loop.close()
        asyncio.set_event_loop(None)
        loop.close()


@dataclass
class Recording:
    """What a program registered and exported under the recording mocks."""

    registrations: list[Registration]
    outputs: dict[str, StackOutput]
    log: list[str]
    invokes: list[Invoke]


def record_program(
    program: Callable[[], object], *, project: str, stack: str, config: Mapping[str, str],
    client_config: Mapping[str, str] = OFFLINE_CLIENT_CONFIG,
) -> Recording:
    """Run any Pulumi program function under the recording mocks (preview off, so every output
    resolves) and return its registrations, options and stack outputs.

    `config` is handed over as Pulumi's Python language host hands it (`pulumi.runtime.set_all_config`
    with the map of strings from `RunRequest.config`); `core.project.as_pulumi_config` turns a stack's
    values into exactly those strings. `client_config` is who runs it, as `getClientConfig` says."""
    offline_mocks = OfflineMocks(client_config)
    monitor = RecordingMonitor(offline_mocks)
    logger = logging.getLogger(f"spotkube.cli.offline.{project}.{stack}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    capture = _LogCapture()
    logger.addHandler(capture)
    with _owned_event_loops():
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
