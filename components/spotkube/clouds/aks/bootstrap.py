"""AKS: the CI identities GitHub Actions signs in as, made once by an administrator.

Each stack's resource group (so every role can be scoped to it before the cluster exists), a managed
identity per workflow whose federated credentials trust exactly the repository's GitHub environments (no
secret exists anywhere), spotkube's custom roles and the assignments of clouds/aks/identities.py that the
bootstrap grants, the resource providers' registration (clouds/aks/providers.py), with `createBackend` the
state's storage, and a Key Vault key per prod stack as its secrets provider, so the Pulumi token a pull
request's preview holds can't read prod's secrets (docs/identities.md). The stack's outputs are the GitHub
variables of each environment, named as the workflows read them.
"""

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_azure_native as azure
import pulumiverse_time as time
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider

from spotkube.clouds.aks.identities import (
    ASSIGNMENTS,
    EVICTION_DRILL,
    RBAC_ADMINISTRATOR,
    RESOURCE_GROUP,
    SUBSCRIPTION,
    grants_in_group,
    only_roles,
)
from spotkube.clouds.aks.provider_registration import DEFAULT_ENDPOINT, FEDERATED_AUDIENCE, register
from spotkube.clouds.aks.providers import required_namespaces
from spotkube.clouds.aks.resources import DRILL_ROLE_ID, role_definition_id
from spotkube.platform.bootstrap import SECRETS_PROVIDERS, BootstrapSpec, backend_location
from spotkube.platform.identities import GITHUB_ISSUER, Assignment, Identity, Role
from spotkube.platform.spec import PlatformSpec

IDENTITY_NAMES: Mapping[Identity, str] = {"preview": "spotkube-preview", "deploy": "spotkube-deploy"}
#: "Key Vault Crypto User": encrypt, decrypt, wrap and unwrap with a key, and read it; nothing else
#: (learn.microsoft.com/azure/role-based-access-control/built-in-roles/security#key-vault-crypto-user).
KEY_VAULT_CRYPTO_USER = "12338af0-0e69-4776-bea7-57ae8d297424"
#: The backend's data roles (learn.microsoft.com/azure/role-based-access-control/built-in-roles/storage):
#: read, write and delete blobs, which Pulumi's state, history and lock files are; and read them only.
STORAGE_BLOB_DATA_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
#: How long a new custom role's assignments wait for it to replicate. Azure documents no bound; its
#: troubleshooting page advises waiting and retrying for a few minutes after creating a role
#: (learn.microsoft.com/azure/role-based-access-control/troubleshooting).
ROLE_REPLICATION = "120s"
#: Entra ID's rule for a federated identity credential's name: 3-120 letters, digits, `-` and `_`, the
#: first a letter or digit (learn.microsoft.com/entra/workload-id/
#: workload-identity-federation-create-trust-user-assigned-managed-identity).
CREDENTIAL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{2,119}")
_CREDENTIAL_PREFIX = "github-"


def credential_name(environment: str) -> str:
    """The federated credential's name for a GitHub environment: `github-<environment>` when Entra accepts
    that; otherwise the environment with every other character as `-`, shortened, and a hash of the whole
    name, so any environment name GitHub allows gets a distinct, valid name."""
    plain = f"{_CREDENTIAL_PREFIX}{environment}"
    if CREDENTIAL_NAME.fullmatch(plain):
        return plain
    digest = hashlib.sha256(environment.encode()).hexdigest()[:12]
    kept = re.sub(r"[^A-Za-z0-9_-]", "-", environment)[:120 - len(_CREDENTIAL_PREFIX) - len(digest) - 1]
    return f"{_CREDENTIAL_PREFIX}{kept}-{digest}"


def subject(repository: str, environment: str) -> str:
    """The `sub` claim of a GitHub Actions token for a job in an environment."""
    return f"repo:{repository}:environment:{environment}"


def _subscription(resource_id: str) -> str:
    return "/".join(resource_id.split("/")[:3])


def vault_name(repository: str) -> str:
    """The secrets vault's name: Key Vault names are global, 3-24 letters, digits and `-`; the repository's
    hash keeps two repositories' vaults apart and a rerun's the same."""
    return f"spotkube-{hashlib.sha256(repository.lower().encode()).hexdigest()[:14]}"


def key_name(stack: str) -> str:
    """A stack's key: Key Vault key names are 1-127 letters, digits and `-`."""
    if re.fullmatch(r"[A-Za-z0-9-]{1,127}", stack):
        return stack
    return f"{re.sub(r'[^A-Za-z0-9-]', '-', stack)}-{hashlib.sha256(stack.encode()).hexdigest()[:12]}"


def secrets_provider(vault: str, key: str) -> str:
    """Pulumi's secrets provider URL for a Key Vault key (`pulumi stack change-secrets-provider`)."""
    return f"azurekeyvault://{vault}.vault.azure.net/keys/{key}"


def deployers(stacks: Mapping[str, PlatformSpec]) -> dict[str, tuple[str, ...]]:
    """Each deploy identity's name and the stacks it serves: `spotkube-deploy` for every non-prod stack, and
    one of its own per prod stack, so no identity a prod environment signs in as is trusted by another."""
    shared = tuple(name for name, platform in stacks.items() if not platform.is_prod)
    found = {IDENTITY_NAMES["deploy"]: shared} if shared else {}
    return {**found, **{f"{IDENTITY_NAMES['deploy']}-{name}": (name,)
                        for name, platform in stacks.items() if platform.is_prod}}


def ci_identities(spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec]) -> dict[str, pulumi.Input[object]]:
    """Create the identities, their trust and their roles; return each environment's variables, and
    `secretsProviders` (stack -> secrets provider URL) when a stack is prod."""
    unnamed = [name for name, platform in stacks.items() if not platform.cluster.resource_group_name]
    if unnamed:
        raise pulumi.RunError("\n".join(
            f"stacks/Pulumi.{name}.yaml: spotkube:cluster.resourceGroupName: is required for the bootstrap, which "
            f"creates the group and scopes the CI identities' roles to it; set it, e.g. spotkube-{name}"
            for name in unnamed))
    location = spec.location or next(iter(stacks.values())).region
    home = azure.resources.ResourceGroup("ci", resource_group_name=spec.identity_resource_group, location=location)
    groups = {name: azure.resources.ResourceGroup(
        f"rg-{name}", resource_group_name=platform.cluster.resource_group_name, location=platform.region,
        opts=pulumi.ResourceOptions(protect=platform.is_prod))
        for name, platform in stacks.items()}
    subscription = home.id.apply(_subscription)
    subscription_id = subscription.apply(lambda s: s.split("/")[2])
    registered = [ProviderRegistration(f"provider-{namespace}", subscription_id, namespace)
                  for namespace in required_namespaces()]
    after_registration = pulumi.ResourceOptions(depends_on=registered)

    # identity key (its Pulumi name) -> (Identity, Azure name, the GitHub environments it trusts)
    served = {IDENTITY_NAMES["preview"]: ("preview", (spec.preview,)),
              **{name: ("deploy", environments) for name, environments in deployers(stacks).items()}}
    identities = {name: azure.managedidentity.UserAssignedIdentity(
        _key(name), resource_name_=name, resource_group_name=home.name, location=location, opts=after_registration)
        for name in served}
    # Azure refuses concurrent writes of federated credentials on one identity: each waits for the one before.
    for name, (_, environments) in served.items():
        previous: list[pulumi.Resource] = []
        for environment in environments:
            previous = [azure.managedidentity.FederatedIdentityCredential(
                f"{_key(name)}-{environment}", federated_identity_credential_resource_name=credential_name(environment),
                resource_group_name=home.name, resource_name_=identities[name].name, issuer=GITHUB_ISSUER,
                subject=subject(spec.repository, environment), audiences=[FEDERATED_AUDIENCE],
                opts=pulumi.ResourceOptions(depends_on=previous))]

    drills = any(platform.cluster.deployer.drills for platform in stacks.values())
    if drills:
        # The program assigns it on each drilled cluster's node resource group (the deployer may assign
        # this role only), which doesn't exist yet: assignable anywhere in the subscription.
        azure.authorization.RoleDefinition(
            _slug(EVICTION_DRILL.name), role_definition_id=DRILL_ROLE_ID, role_name=EVICTION_DRILL.name,
            description=EVICTION_DRILL.description, role_type="CustomRole", scope=subscription,
            assignable_scopes=[subscription], permissions=[{"actions": list(EVICTION_DRILL.actions)}])
    # The preview reads the non-prod stacks only: prod is never previewed from a pull request.
    previewed = [name for name, platform in stacks.items() if not platform.is_prod]
    planned: list[tuple[str, Assignment, str, pulumi.Output[str]]] = []
    for name, (identity, environments) in served.items():
        own = previewed if identity == "preview" else list(environments)
        scopes = {RESOURCE_GROUP: [(stack, groups[stack].id) for stack in own],
                  SUBSCRIPTION: [("subscription", subscription)]}
        drilled = any(stacks[stack].cluster.deployer.drills for stack in own)
        planned += [(name, assignment, where, scope) for assignment in ASSIGNMENTS
                    if assignment.identity == identity and assignment.granted_by == "bootstrap"
                    and (drilled or not assignment.drills_only) for where, scope in scopes[assignment.scope]]
    # Each custom role is assignable exactly where it is assigned, each scope once (by its name in `planned`).
    custom = {role.name: _custom_role(role, subscription, list({where: scope for _, a, where, scope in planned
                                                                 if a.role == role}.values()))
              for role in {a.role.name: a.role for _, a, _, _ in planned if a.role.custom}.values()}
    for name, assignment, where, scope in planned:
        role = assignment.role
        definition = (custom[role.name][0].id if role.custom
                      else scope.apply(lambda s, role_id=role.id: role_definition_id(s, role_id)))
        condition: pulumi.Input[str] | None = assignment.condition
        if role == RBAC_ADMINISTRATOR and assignment.scope == RESOURCE_GROUP:
            # One assignment per principal, role and scope: every role the stack grants there, in one condition.
            condition = subscription_id.apply(lambda sid, stack=where: only_roles(grants_in_group(stacks[stack], sid)))
        azure.authorization.RoleAssignment(
            f"{_key(name)}-{_slug(role.name)}-{where}",
            principal_id=identities[name].principal_id, principal_type="ServicePrincipal",
            role_definition_id=definition, scope=scope, description=f"spotkube {assignment.identity}: "
            f"{assignment.why}"[:1024], condition=condition, condition_version="2.0" if assignment.condition else None,
            opts=pulumi.ResourceOptions(depends_on=[custom[role.name][1]] if role.custom else []))

    def variables(name: str) -> dict[str, pulumi.Output]:
        return {"ARM_CLIENT_ID": identities[name].client_id, "ARM_TENANT_ID": identities[name].tenant_id,
                "ARM_SUBSCRIPTION_ID": subscription_id}

    outputs: dict[str, pulumi.Input[object]] = {spec.preview: variables(IDENTITY_NAMES["preview"])}
    outputs |= {stack: variables(name) for name, served_stacks in deployers(stacks).items() for stack in served_stacks}
    prod = {stack: identities[f"{IDENTITY_NAMES['deploy']}-{stack}"]
            for stack, platform in stacks.items() if platform.is_prod}
    if prod:
        outputs[SECRETS_PROVIDERS] = _prod_secrets(spec, prod, home, location, registered)
    if spec.create_backend:
        _state_storage(spec, stacks, identities, home, location, registered)
    return outputs


def _state_storage(
    spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec],
    identities: Mapping[str, azure.managedidentity.UserAssignedIdentity],
    home: azure.resources.ResourceGroup, location: str, registered: list[pulumi.Resource],
) -> None:
    """The backend's storage account and containers, and who may read and write each: the non-prod
    container's writer is `spotkube-deploy` (if a stack is non-prod) and its reader the preview identity; a
    prod stack's container's only writer is its own deploy identity. Prod's containers are protected."""
    assert spec.backend_url is not None, "createBackend requires backendUrl"
    account_name = backend_location(spec.backend_url)[2]
    account = azure.storage.StorageAccount(
        "state", account_name=account_name, resource_group_name=home.name, location=location, kind="StorageV2",
        sku={"name": "Standard_ZRS"}, allow_shared_key_access=False, default_to_o_auth_authentication=True,
        minimum_tls_version="TLS1_2", allow_blob_public_access=False, enable_https_traffic_only=True,
        opts=pulumi.ResourceOptions(protect=True, depends_on=registered))
    prod = tuple(stack for stack, platform in stacks.items() if platform.is_prod)
    shared = [stack for stack, platform in stacks.items() if not platform.is_prod]
    for scope, name in spec.backend_names(prod).items():
        container = azure.storage.BlobContainer(
            f"state-{scope or 'shared'}", account_name=account.name, container_name=name,
            resource_group_name=home.name, public_access="None",
            opts=pulumi.ResourceOptions(protect=scope is not None))
        writer = IDENTITY_NAMES["deploy"] if scope is None else f"{IDENTITY_NAMES['deploy']}-{scope}"
        grants = [(writer, STORAGE_BLOB_DATA_CONTRIBUTOR, "writes")] if scope is not None or shared else []
        if scope is None:
            grants.append((IDENTITY_NAMES["preview"], STORAGE_BLOB_DATA_READER, "reads"))
        for identity, role_id, what in grants:
            azure.authorization.RoleAssignment(
                f"{_key(identity)}-state-{scope or 'shared'}", principal_id=identities[identity].principal_id,
                principal_type="ServicePrincipal", scope=container.id,
                role_definition_id=home.id.apply(lambda s, r=role_id: role_definition_id(s, r)),
                description=f"spotkube {_key(identity).split('-')[0]}: {what} "
                f"{'the non-prod stacks' if scope is None else scope}'s Pulumi state")


def _key(identity_name: str) -> str:
    """An identity's Pulumi name: the first two keep theirs (`preview`, `deploy`), a prod stack's is
    `deploy-<stack>`."""
    return identity_name.removeprefix("spotkube-")


def _prod_secrets(
    spec: BootstrapSpec, prod: Mapping[str, azure.managedidentity.UserAssignedIdentity],
    home: azure.resources.ResourceGroup, location: str, registered: list[pulumi.Resource],
) -> dict[str, str]:
    """One vault with RBAC authorization and purge protection (a lost key is prod's state lost), a key
    per prod stack, and Key Vault Crypto User on each key for that stack's own deploy identity and the
    administrator. `accessPolicies` is required unless the vault is recovered: an empty list, since RBAC
    decides (learn.microsoft.com/rest/api/keyvault/keyvault/vaults/create-or-update)."""
    client = azure.authorization.get_client_config_output()
    kept = pulumi.ResourceOptions(protect=True, depends_on=registered)
    in_vault = pulumi.ResourceOptions(protect=True)
    name = vault_name(spec.repository)
    vault = azure.keyvault.Vault(
        "secrets", vault_name=name, resource_group_name=home.name, location=location,
        properties={"tenant_id": client.tenant_id, "sku": {"family": "A", "name": "standard"},
                    "access_policies": [], "enable_rbac_authorization": True, "enable_purge_protection": True,
                    "soft_delete_retention_in_days": 90}, opts=kept)
    providers = {}
    for stack, deployer in prod.items():
        key = azure.keyvault.Key(
            f"secrets-{stack}", key_name=key_name(stack), vault_name=name, resource_group_name=home.name,
            properties={"kty": "RSA", "key_size": 2048, "key_ops": ["encrypt", "decrypt", "wrapKey", "unwrapKey"]},
            opts=pulumi.ResourceOptions.merge(in_vault, pulumi.ResourceOptions(depends_on=[vault])))
        role = key.id.apply(lambda scope: role_definition_id(scope, KEY_VAULT_CRYPTO_USER))
        azure.authorization.RoleAssignment(
            f"deploy-secrets-{stack}", principal_id=deployer.principal_id, principal_type="ServicePrincipal",
            role_definition_id=role, scope=key.id, description=f"spotkube deploy: encrypts and decrypts {stack}'s "
            "secrets")
        # Whoever runs the bootstrap switches the stack to the key (`pulumi stack change-secrets-provider`).
        azure.authorization.RoleAssignment(
            f"administrator-secrets-{stack}", principal_id=client.object_id, role_definition_id=role, scope=key.id,
            description=f"spotkube bootstrap administrator: switches {stack} to this key")
        providers[stack] = secrets_provider(name, key_name(stack))
    return providers


def _custom_role(
    role: Role, subscription: pulumi.Output, scopes: list[pulumi.Output]
) -> tuple[azure.authorization.RoleDefinition, time.Sleep]:
    """One of spotkube's roles, defined in the subscription and assignable exactly where it is assigned,
    and the wait for it to replicate, which its assignments depend on."""
    definition = azure.authorization.RoleDefinition(
        _slug(role.name), role_name=role.name, description=role.description, role_type="CustomRole",
        scope=subscription, assignable_scopes=scopes,
        permissions=[{"actions": list(role.actions), "not_actions": list(role.not_actions),
                      "data_actions": list(role.data_actions), "not_data_actions": list(role.not_data_actions)}])
    replicated = time.Sleep(f"{_slug(role.name)}-replication", create_duration=ROLE_REPLICATION,
                            triggers={"role": definition.id}, opts=pulumi.ResourceOptions(depends_on=[definition]))
    return definition, replicated


def _slug(name: str) -> str:
    return "-".join(name.lower().split())


class RegistrationProvider(ResourceProvider):
    """The dynamic provider: create registers, a change of namespace or subscription registers anew."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        state = register(props["subscription_id"], props["namespace"], endpoint=props["endpoint"])
        return CreateResult(id_=f"/subscriptions/{props['subscription_id']}/providers/{props['namespace']}",
                            outs={**props, "registration_state": state})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in ("subscription_id", "namespace", "endpoint") if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)


class ProviderRegistration(pulumi.dynamic.Resource):
    """One namespace registered in the subscription (`az provider register --namespace NS`)."""

    registration_state: pulumi.Output[str]

    def __init__(self, name: str, subscription_id: pulumi.Input[str], namespace: str) -> None:
        super().__init__(RegistrationProvider(), name, {"subscription_id": subscription_id, "namespace": namespace,
                                                 "endpoint": DEFAULT_ENDPOINT, "registration_state": None})
