"""AKS: what `spotkube doctor` reads live from Azure Resource Manager before a stack's first `up`.

Plain ARM REST calls through clouds/http.py, with a token from azure-identity's DefaultAzureCredential
(the `refresh` extra; `az login` on a laptop, OIDC in CI); a plain-HTTP endpoint (a local proxy or test
server) is sent no credential.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from spotkube.clouds.aks import supply
from spotkube.clouds.aks.identities import (
    CLUSTER,
    REGISTRY,
    RESERVATION_GROUP,
    RESOURCE_GROUP,
    SUBSCRIPTION,
    read_role,
)
from spotkube.clouds.aks.providers import needed_namespaces, register_command
from spotkube.clouds.aks.spec import AksSpec
from spotkube.clouds.aks.usage_api import DEFAULT_ENDPOINT, SUBSCRIPTION_VARIABLES
from spotkube.platform.bootstrap import backend_location
from spotkube.platform.cost.refresh import FetchSettings
from spotkube.platform.doctor import LIVE_READ_HINT, BackendPolicy, DoctorQuery, Finding, LiveAccess, PoolSize
from spotkube.platform.errors import SpotkubeError, first_line
from spotkube.platform.identities import Assignment, Identity, Role
from spotkube.platform.live_quota import installed, plain_http
from spotkube.platform.spec import PlatformSpec

SERVICE = "Azure Resource Manager"
PROVIDERS_API = "2021-04-01"
AUTHORIZATION_API = "2022-04-01"
SKUS_API = "2021-07-01"
STORAGE_API = "2023-05-01"
#: The blob data actions of Pulumi's state: writing a checkpoint or a lock, and reading one.
BLOB_WRITE = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write"
BLOB_READ = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read"
SCOPE = "https://management.azure.com/.default"
SIGN_IN = "sign in with `az login` (CI: azure/login with OIDC, or ARM_CLIENT_ID, ARM_TENANT_ID and ARM_USE_OIDC)"


def _token(endpoint: str) -> str | None:
    """A bearer token for ARM, or None for a plain-HTTP endpoint; one line on failure."""
    if plain_http(endpoint):
        return None
    if not installed("azure.identity"):
        raise SpotkubeError("spotkube doctor signs in to Azure with azure-identity: pip install 'spotkube[refresh]'")
    from azure.core.exceptions import AzureError
    from azure.identity import DefaultAzureCredential

    # azure-identity logs every credential it tried, many lines; the one-line error below says it all.
    logging.getLogger("azure").addHandler(logging.NullHandler())
    logging.getLogger("azure").propagate = False
    try:
        return str(DefaultAzureCredential().get_token(SCOPE).token)
    except AzureError as err:
        raise SpotkubeError(f"no Azure credentials ({first_line(err)}); {SIGN_IN}") from None


class _Arm:
    """GETs against one subscription, following ARM's `nextLink` pages."""

    def __init__(self, endpoint: str, token: str | None, timeout: float) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.settings = FetchSettings(timeout_s=timeout, retries=2)
        from spotkube.clouds import http  # requests: imported when doctor runs, not with every command

        self.http = http
        self.client = http.session(self.settings)
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.secret = token

    def get(self, path: str, params: Mapping[str, str]) -> Any:
        return self.http.get_json(self.client, SERVICE, f"{self.endpoint}{path}", self.settings, params=params,
                        headers=self.headers, secret=self.secret, hint=LIVE_READ_HINT)

    def values(self, path: str, params: Mapping[str, str]) -> Iterator[Mapping[str, Any]]:
        page = self.get(path, params)
        while True:
            yield from (v for v in page.get("value") or () if isinstance(v, Mapping))
            following = page.get("nextLink")
            if not following:
                return
            page = self.http.get_json(self.client, SERVICE, str(following), self.settings, headers=self.headers,
                            secret=self.secret, hint=LIVE_READ_HINT)


def _outside_scopes(spec: Any, subscription: str, group: str | None) -> dict[str, set[str]]:
    """The ARM ids of the scopes outside the stack's group where its owners grant the CI
    identities rights: each registry, and the resource group of each capacity reservation group (the
    cluster's own for a group the stack creates)."""
    if not isinstance(spec, AksSpec):
        return {}
    own = f"/subscriptions/{subscription}/resourceGroups/{group}" if group else None
    groups = set()
    for pool in supply.reserved_pools(spec):
        existing = pool.capacity_reservation_group.id if pool.capacity_reservation_group else None
        found = supply.resource_group_id(existing) if existing else own
        if found and found.lower() not in {g.lower() for g in groups}:
            groups.add(found)
    return {REGISTRY: set(spec.cluster.registries), RESERVATION_GROUP: groups}


def _scopes(scope: str, subscription: str, group: str | None, outside: Mapping[str, set[str]]) -> list[str]:
    """Every table scope an assignment's ARM scope is: the stack's own, and the registry or the reservation
    group's resource group it also is (a group the stack creates lives in the cluster's own group)."""
    found = [name for name, ids in outside.items() if scope.rstrip("/").lower() in {i.lower() for i in ids}]
    own = _scope(scope, subscription, group)
    return ([own] if own else []) + found


def _scope(scope: str, subscription: str, group: str | None) -> str | None:
    """An assignment's ARM scope in the identity table's terms; None for a scope the stack lies outside."""
    scope = scope.rstrip("/").lower()
    root = f"/subscriptions/{subscription}".lower()
    if scope == root or scope.startswith("/providers/microsoft.management/managementgroups/") or scope == "/":
        return SUBSCRIPTION
    if group and scope == f"{root}/resourcegroups/{group.lower()}":
        return RESOURCE_GROUP
    if group and scope.startswith(f"{root}/resourcegroups/{group.lower()}/providers/microsoft.containerservice/"
                                  "managedclusters/"):
        return CLUSTER
    return None


def _role(definition: Mapping[str, Any]) -> Role:
    properties = definition.get("properties") or {}
    return read_role({"roleName": properties.get("roleName") or definition.get("name") or "",
                            "name": definition.get("name") or "", "permissions": properties.get("permissions"),
                            "roleType": properties.get("type"), "description": properties.get("description", "")})


def _held(arm: _Arm, subscription: str, group: str | None, identity: Identity, principal: str,
          outside: Mapping[str, set[str]]) -> tuple[Assignment, ...]:
    path = f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleAssignments"
    held = []
    definitions: dict[str, Role] = {}
    for assignment in arm.values(path, {"api-version": AUTHORIZATION_API, "$filter": f"assignedTo('{principal}')"}):
        properties = assignment.get("properties") or {}
        scopes = _scopes(str(properties.get("scope") or ""), subscription, group, outside)
        definition_id = str(properties.get("roleDefinitionId") or "")
        if not scopes or not definition_id:
            continue
        if definition_id not in definitions:
            definitions[definition_id] = _role(arm.get(definition_id, {"api-version": AUTHORIZATION_API}))
        held += [Assignment(identity, definitions[definition_id], scope, "held") for scope in scopes]
    return tuple(held)


def _offer(sku: Mapping[str, Any] | None, need: PoolSize, region: str) -> Finding:
    """Whether the region offers the pool's size to this subscription, in the pool's zones."""
    where = f"pool {need.name}: {need.machine} in {region}"
    other = "pick another size or region (`spotkube catalog refresh` lists what is offered)"
    if sku is None:
        return Finding("sizes", need.name, "fail", f"{where} is not offered", other)
    zones_restricted: set[str] = set()
    for restriction in sku.get("restrictions") or ():
        info = restriction.get("restrictionInfo") or {}
        if restriction.get("type") == "Location":
            return Finding("sizes", need.name, "fail", f"{where} is restricted for this subscription "
                           f"({restriction.get('reasonCode') or 'no reason given'})",
                           f"{other}, or ask Azure support to lift the restriction")
        if restriction.get("type") == "Zone":
            zones_restricted |= {str(z) for z in info.get("zones") or ()}
    blocked = sorted(set(need.zones) & zones_restricted)
    if blocked:
        return Finding("sizes", need.name, "fail", f"{where} is restricted in zone(s) {', '.join(blocked)} for this "
                       "subscription", f"drop those zones from the pool, or {other}")
    return Finding("sizes", need.name, "ok", f"{where} is offered" + (
        f" in zone(s) {', '.join(need.zones)}" if need.zones else ""))


def _sizes(arm: _Arm, subscription: str, region: str, sizes: tuple[PoolSize, ...]) -> tuple[Finding, ...]:
    wanted = {need.machine for need in sizes}
    skus = {}
    for sku in arm.values(f"/subscriptions/{subscription}/providers/Microsoft.Compute/skus",
                          {"api-version": SKUS_API, "$filter": f"location eq '{region}'"}):
        locations = {str(loc).lower() for loc in sku.get("locations") or ()}
        if sku.get("resourceType") == "virtualMachines" and sku.get("name") in wanted and region.lower() in locations:
            skus[str(sku["name"])] = sku
    return tuple(_offer(skus.get(need.machine), need, region) for need in sizes)


def _grant(subscription: str, group: str | None, outside: Mapping[str, set[str]]) -> Callable[[str, Assignment], str]:
    def command(principal: str, assignment: Assignment) -> str:
        if assignment.role.custom:
            return (f"run the bootstrap stack (infra/bootstrap), which creates the custom role "
                    f"'{assignment.role.name}' and assigns it")
        own = f"/subscriptions/{subscription}/resourceGroups/{group}".lower() if group else None
        if assignment.scope in outside and any(scope.lower() == own for scope in outside[assignment.scope]):
            # Azure keeps one assignment per principal, role and scope: in the stack's own group the
            # bootstrap's RBAC Administrator assignment carries every role the stack grants there.
            return ("rerun the bootstrap stack (infra/bootstrap): its one Role Based Access Control Administrator "
                    "assignment on the stack's resource group allows this grant (a second one there is refused, "
                    "RoleAssignmentExists)")
        if assignment.scope in outside:
            condition = (f" --condition-version 2.0 --condition \"{assignment.condition}\""
                         if assignment.condition else "")
            return f"{assignment.granted_by}: " + "; ".join(
                f"az role assignment create --assignee-object-id {principal} --assignee-principal-type "
                f"ServicePrincipal --role \"{assignment.role.name}\" --scope {scope}{condition}"
                for scope in sorted(outside[assignment.scope]))
        scope = f"/subscriptions/{subscription}" + (
            f"/resourceGroups/{group}" if assignment.scope != SUBSCRIPTION and group else "")
        return (f"az role assignment create --assignee-object-id {principal} --assignee-principal-type "
                f"ServicePrincipal --role \"{assignment.role.name}\" --scope {scope}")
    return command


def read_access(query: DoctorQuery) -> LiveAccess:
    """The subscription's providers, the CI identities' roles and the region's sizes, read live."""
    from spotkube.clouds import http

    subscription = query.account or next((os.environ[v] for v in SUBSCRIPTION_VARIABLES if os.environ.get(v)), None)
    if not subscription:
        raise SpotkubeError(f"name the Azure subscription to check: --subscription ID, or "
                            f"{' or '.join(SUBSCRIPTION_VARIABLES)} (as the workflows set it)")
    endpoint = query.endpoint or DEFAULT_ENDPOINT
    group = getattr(query.spec.cluster, "resource_group_name", None)
    region = query.spec.region
    arm = _Arm(endpoint, _token(endpoint), query.timeout)
    outside = _outside_scopes(query.spec, subscription, group)
    needed = needed_namespaces(query.type_tokens)
    try:
        registered = frozenset(
            str(p.get("namespace")) for p in arm.values(f"/subscriptions/{subscription}/providers",
                                                         {"api-version": PROVIDERS_API})
            if p.get("registrationState") == "Registered")
        held, unreadable = {}, {}
        for identity, principal in query.principals.items():
            try:
                held[identity] = _held(arm, subscription, group, identity, principal, outside)
            except http.PriceFetchError as err:
                unreadable[identity] = str(err)
        sizes = _sizes(arm, subscription, region, query.sizes)
    except http.PriceFetchError as err:
        raise SpotkubeError(str(err)) from None
    return LiveAccess(
        where=f"subscription {subscription}, region {region}", apis_what="registered",
        apis_needed=needed.needed, apis_unknown=needed.unknown_types, apis_enabled=registered,
        enable_command=lambda name: register_command(name, subscription), held=held,
        grant_command=_grant(subscription, group, outside), sizes=sizes,
        unreadable=unreadable)


def _allows(role: Role, action: str) -> bool:
    """Whether a role's data actions (wildcards included) allow `action`, less its not-data-actions."""
    def matches(patterns: tuple[str, ...]) -> bool:
        return any(fnmatch.fnmatch(action.lower(), pattern.lower()) for pattern in patterns)
    return matches(role.data_actions) and not matches(role.not_data_actions)


def read_backend(spec: PlatformSpec, url: str, endpoint: str | None, account: str | None,
                 timeout: float) -> BackendPolicy | None:
    """The role assignments reaching an `azblob://` backend's container (None for another cloud's URL, or
    one naming no storage account, which only the job's AZURE_STORAGE_ACCOUNT would say)."""
    from spotkube.clouds import http

    scheme, container, storage_account = backend_location(url)
    if scheme != "azblob" or storage_account is None:
        return None
    subscription = account or next((os.environ[v] for v in SUBSCRIPTION_VARIABLES if os.environ.get(v)), "")
    arm = _Arm(endpoint or DEFAULT_ENDPOINT, _token(endpoint or DEFAULT_ENDPOINT), timeout)
    try:
        found = next((a for a in arm.values(f"/subscriptions/{subscription}/providers/Microsoft.Storage/"
                                            "storageAccounts", {"api-version": STORAGE_API})
                      if str(a.get("name")) == storage_account), None)
        where = f"container {container.split('/')[0]} of storage account {storage_account}"
        if found is None:
            return BackendPolicy(where, {}, frozenset(), frozenset(), str, missing=(
                f"storage account {storage_account} of {url} is not in subscription {subscription}"))
        scope = f"{found['id']}/blobServices/default/containers/{container.split('/')[0]}"
        roles: dict[str, tuple[str, ...]] = {}
        definitions: dict[str, Role] = {}
        for assignment in arm.values(f"{scope}/providers/Microsoft.Authorization/roleAssignments",
                                     {"api-version": AUTHORIZATION_API, "$filter": "atScope()"}):
            properties = assignment.get("properties") or {}
            definition_id = str(properties.get("roleDefinitionId") or "")
            if definition_id not in definitions:
                definitions[definition_id] = _role(arm.get(definition_id, {"api-version": AUTHORIZATION_API}))
            name = definitions[definition_id].name
            roles[name] = (*roles.get(name, ()), str(properties.get("principalId") or ""))
    except http.PriceFetchError as err:
        raise SpotkubeError(str(err)) from None
    writes = frozenset(r.name for r in definitions.values() if _allows(r, BLOB_WRITE))
    reads = frozenset(r.name for r in definitions.values() if _allows(r, BLOB_READ)) - writes
    return BackendPolicy(where, roles, writes, reads, str, grant_command=lambda who, right: (
        f"az role assignment create --assignee-object-id {who} --assignee-principal-type ServicePrincipal --role "
        f"'Storage Blob Data {'Contributor' if right == 'write' else 'Reader'}' --scope {scope}"))
