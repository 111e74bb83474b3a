"""A fresh subscription or project, first try: the bootstrap turns on every Azure resource provider and
Google API that the program's resources and the workflows use, before anything needs them; it waits for
the roles it defines before assigning them; and every name it derives is one the cloud accepts, for
every environment name the bootstrap and the stacks accept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fake_http import Reply, Request, serving
from spotkube.clouds.aks import bootstrap as aks_bootstrap
from spotkube.clouds.aks import providers
from spotkube.clouds.aks.bootstrap import CREDENTIAL_NAME, credential_name
from spotkube.clouds.aks.provider_registration import register
from spotkube.clouds.gke import bootstrap as gke_bootstrap
from spotkube.clouds.gke import services
from spotkube.components.offline import Recording, Registration, record_stack
from spotkube.platform.bootstrap import ENVIRONMENT, REPOSITORY
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import Project, find_project
from spotkube.platform.stack_names import NAME

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP = REPO / "infra" / "bootstrap"
DYNAMIC = "pulumi-python:dynamic:Resource"


@pytest.fixture(scope="module")
def bootstrap() -> dict[str, Recording]:
    project = find_project(BOOTSTRAP)
    return {stack: record_stack(project, stack) for stack in project.stacks()}


@pytest.fixture(scope="module")
def shipped(repo_project: Project) -> dict[str, Recording]:
    """The program as each shipped stack registers it."""
    return {stack: record_stack(repo_project, stack) for stack in repo_project.stacks()}


def test_aks_registers_the_namespace_of_every_type_the_program_registers(
    bootstrap: dict[str, Recording], shipped: dict[str, Recording]
) -> None:
    registered = {r.inputs["namespace"] for r in bootstrap["aks"].registrations if r.type == DYNAMIC}
    assert registered == set(providers.required_namespaces())
    types = {r.type for stack, recording in shipped.items() if stack.startswith("aks-")
             for r in recording.registrations} | {r.type for r in bootstrap["aks"].registrations}
    namespaces = providers.namespaces_of(types)
    assert "azure-native:containerservice:ManagedCluster" in namespaces
    unknown = sorted(token for token, namespace in namespaces.items() if namespace is None)
    assert not unknown, f"add to clouds/aks/identities.py RESOURCE_TYPES (or providers.BOOTSTRAP_TYPES): {unknown}"
    uncovered = {token: namespace for token, namespace in namespaces.items()
                 if namespace not in registered | providers.REGISTERED_BY_DEFAULT}
    assert not uncovered, f"the bootstrap doesn't register the namespaces of {uncovered}"
    assert {"Microsoft.ContainerService", "Microsoft.OperationalInsights", "Microsoft.Insights"} <= registered


def test_aks_makes_the_identities_only_once_their_namespace_is_registered(bootstrap: dict[str, Recording]) -> None:
    recording = bootstrap["aks"]
    urns = {r.inputs["namespace"]: r.urn for r in recording.registrations if r.type == DYNAMIC}
    identities = [r for r in recording.registrations if r.type == "azure-native:managedidentity:UserAssignedIdentity"]
    assert identities, "the bootstrap's identities"
    for identity in identities:
        assert urns["Microsoft.ManagedIdentity"] in identity.dependencies, identity.name
    subscriptions = {r.inputs["subscription_id"] for r in recording.registrations if r.type == DYNAMIC}
    assert len(subscriptions) == 1 and re.fullmatch(r"[0-9a-f-]{36}", subscriptions.pop())


def _by_urn(recording: Recording) -> dict[str, Registration]:
    return {r.urn: r for r in recording.registrations}


def _waits_for(recording: Recording, registration: Registration, token: str) -> set[str]:
    """The resources of type `token` that `registration` waits for through a time.Sleep it depends on."""
    urns = _by_urn(recording)
    sleeps = [urns[u] for u in registration.dependencies if urns[u].type == "time:index/sleep:Sleep"]
    return {u for sleep in sleeps for u in sleep.dependencies if urns[u].type == token}


def test_aks_assigns_a_custom_role_only_after_waiting_for_it_to_replicate(bootstrap: dict[str, Recording]) -> None:
    recording = bootstrap["aks"]
    definitions = {r.urn: r for r in recording.registrations
                   if r.type == "azure-native:authorization:RoleDefinition"}
    assert definitions
    assignments = [r for r in recording.registrations if r.type == "azure-native:authorization:RoleAssignment"]
    assert assignments, "the bootstrap's role assignments"
    for assignment in assignments:
        custom = {u for u in assignment.dependencies if u in definitions}
        assert custom <= _waits_for(recording, assignment, "azure-native:authorization:RoleDefinition"), \
            assignment.name


def test_gke_enables_the_api_of_every_type_the_program_registers_and_what_the_workflows_call(
    bootstrap: dict[str, Recording], shipped: dict[str, Recording]
) -> None:
    recording = bootstrap["gke"]
    enabled: dict[str, set[str]] = {}
    for service in (r for r in recording.registrations if r.type == "gcp:projects/service:Service"):
        assert service.inputs["disableOnDestroy"] is False
        enabled.setdefault(service.inputs["project"], set()).add(service.inputs["service"])
    assert set(enabled) == {"spotkube-dev-example", "spotkube-prod-example"}
    assert {"iamcredentials.googleapis.com", "sts.googleapis.com", "container.googleapis.com",
            "compute.googleapis.com", "iam.googleapis.com"} <= enabled["spotkube-dev-example"]
    gke = {stack: program for stack, program in shipped.items() if stack.startswith("gke-")}
    assert gke, "a shipped gke stack"
    for stack, program in gke.items():
        project = next(r.inputs["project"] for r in program.registrations if r.type == "gcp:container/cluster:Cluster")
        apis = services.services_of({r.type for r in program.registrations} | {r.type for r in recording.registrations})
        unknown = sorted(token for token, api in apis.items() if api is None)
        assert not unknown, f"add these types to clouds/gke/services.py: {unknown}"
        missing = {token: api for token, api in apis.items()
                   if api not in enabled[project] | services.ENABLED_BY_DEFAULT}
        assert not missing, f"{stack}: the bootstrap doesn't enable {missing} in {project}"


def test_gke_calls_a_project_s_apis_only_once_they_are_enabled(bootstrap: dict[str, Recording]) -> None:
    recording = bootstrap["gke"]
    by_project: dict[str, set[str]] = {}
    for service in (r for r in recording.registrations if r.type == "gcp:projects/service:Service"):
        by_project.setdefault(service.inputs["project"], set()).add(service.urn)
    checked = 0
    for registration in recording.registrations:
        project = registration.inputs.get("project")
        if registration.type == "gcp:projects/service:Service" or project not in by_project:
            continue
        assert by_project[project] <= set(registration.dependencies), registration.name
        checked += 1
    assert checked > 5


def test_gke_binds_new_accounts_and_roles_only_after_iam_propagates(bootstrap: dict[str, Recording]) -> None:
    recording = bootstrap["gke"]
    accounts = {r.urn for r in recording.registrations if r.type == "gcp:serviceaccount/account:Account"}
    roles = {r.urn for r in recording.registrations if r.type == "gcp:projects/iAMCustomRole:IAMCustomRole"}
    bindings = [r for r in recording.registrations
                if r.type in ("gcp:projects/iAMMember:IAMMember", "gcp:serviceaccount/iAMMember:IAMMember")]
    assert bindings
    for binding in bindings:
        assert _waits_for(recording, binding, "gcp:serviceaccount/account:Account") == accounts, binding.name
        custom = {u for u in binding.dependencies if u in roles}
        assert custom <= _waits_for(recording, binding, "gcp:projects/iAMCustomRole:IAMCustomRole"), binding.name


@given(st.one_of(st.from_regex(ENVIRONMENT, fullmatch=True), st.from_regex(NAME, fullmatch=True)))
def test_every_accepted_environment_gets_a_federated_credential_name_entra_accepts(environment: str) -> None:
    assert CREDENTIAL_NAME.fullmatch(credential_name(environment))


@given(st.lists(st.from_regex(ENVIRONMENT, fullmatch=True), min_size=2, max_size=5, unique=True))
def test_distinct_environments_get_distinct_credential_names(environments: list[str]) -> None:
    assert len({credential_name(e) for e in environments}) == len(environments)


@given(st.from_regex(NAME, fullmatch=True), st.from_regex(REPOSITORY, fullmatch=True))
def test_every_stack_gets_secrets_key_names_the_clouds_accept(stack: str, repository: str) -> None:
    """Key Vault: vault names 3-24 letters, digits and `-`, starting with a letter; key names 1-127 letters,
    digits and `-`. Cloud KMS: key names 1-63 letters, digits, `_` and `-`."""
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9-]{1,22}[A-Za-z0-9]", aks_bootstrap.vault_name(repository))
    assert re.fullmatch(r"[A-Za-z0-9-]{1,127}", aks_bootstrap.key_name(stack))
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,63}", gke_bootstrap.key_name(stack))


def test_a_plain_environment_keeps_its_readable_credential_name() -> None:
    assert credential_name("aks-prod-eastus") == "github-aks-prod-eastus"
    assert credential_name("aks.prod").startswith("github-aks-prod-")


def _provider(namespace: str, state: str) -> dict[str, object]:
    """Azure Resource Manager's Provider object (Providers - Get / Register, api-version 2021-04-01)."""
    return {"id": f"/subscriptions/0a1b2c3d-0000-4000-8000-000000000001/providers/{namespace}",
            "namespace": namespace, "registrationState": state, "registrationPolicy": "RegistrationRequired",
            "resourceTypes": [{"resourceType": "managedClusters", "locations": ["UK South"]}]}


def test_registering_a_namespace_asks_azure_then_waits_until_it_is_registered() -> None:
    states = iter(["Registering", "Registering", "Registered"])

    def respond(request: Request) -> Reply:
        return Reply(200, _provider("Microsoft.ContainerService", next(states)))

    with serving() as server:
        server.respond = respond
        state = register("0a1b2c3d-0000-4000-8000-000000000001", "Microsoft.ContainerService",
                         endpoint=server.url(), poll=0)
    assert state == "Registered"
    base = "/subscriptions/0a1b2c3d-0000-4000-8000-000000000001/providers/Microsoft.ContainerService"
    assert [(r.method, r.path) for r in server.requests] == [
        ("POST", f"{base}/register?api-version=2021-04-01"), ("GET", f"{base}?api-version=2021-04-01"),
        ("GET", f"{base}?api-version=2021-04-01")]
    assert all("authorization" not in r.headers for r in server.requests), "no token goes over plain HTTP"


def test_a_refused_registration_says_who_may_register_and_how() -> None:
    refusal = {"error": {"code": "AuthorizationFailed", "message": "The client 'x' does not have authorization to "
                         "perform action 'Microsoft.ContainerService/register/action'"}}
    with serving() as server:
        server.respond = lambda request: Reply(403, refusal)
        with pytest.raises(SpotkubeError) as raised:
            register("0a1b2c3d-0000-4000-8000-000000000001", "Microsoft.ContainerService", endpoint=server.url())
    message = str(raised.value)
    assert "403" in message and "register/action" in message
    assert "az provider register --namespace Microsoft.ContainerService" in message


def test_a_registration_that_never_ends_stops_with_the_command_to_check_it() -> None:
    with serving() as server:
        server.respond = lambda request: Reply(200, _provider("Microsoft.Insights", "Registering"))
        with pytest.raises(SpotkubeError, match=r"still Registering.*az provider show --namespace Microsoft\.Insights"):
            register("0a1b2c3d-0000-4000-8000-000000000001", "Microsoft.Insights", endpoint=server.url(),
                     wait=0, poll=0)


def test_the_registration_resource_registers_on_create_and_replaces_only_on_a_new_namespace() -> None:
    """What `pulumi up` runs for each namespace (the dynamic provider), against a local Resource Manager."""
    with serving() as server:
        server.respond = lambda request: Reply(200, _provider("Microsoft.Network", "Registered"))
        props = {"subscription_id": "0a1b2c3d-0000-4000-8000-000000000001", "namespace": "Microsoft.Network",
                 "endpoint": server.url(), "registration_state": None}
        created = aks_bootstrap.RegistrationProvider().create(props)
    assert created.id == "/subscriptions/0a1b2c3d-0000-4000-8000-000000000001/providers/Microsoft.Network"
    assert created.outs["registration_state"] == "Registered"
    assert [(r.method, r.path.split("?")[0].rsplit("/", 1)[-1]) for r in server.requests] == [("POST", "register")]
    provider = aks_bootstrap.RegistrationProvider()
    assert not provider.diff(created.id, created.outs, props).changes
    moved = provider.diff(created.id, created.outs, {**props, "namespace": "Microsoft.Compute"})
    assert moved.changes and moved.replaces == ["namespace"]
