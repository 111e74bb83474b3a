"""AKS: the CI identities GitHub Actions signs in as, made once by an administrator.

- Each platform stack's resource group (its `cluster.resourceGroupName`), so every role can be scoped
  to it before the cluster exists: Azure roles are inherited from a resource group by what it holds.
- A user-assigned managed identity per workflow, `spotkube-preview` and `spotkube-deploy`, whose
  federated credentials trust exactly the repository's GitHub environments: `preview` for the first,
  one per stack for the second (deploy.yml runs each stack in the environment of its name; the token's
  subject is `repo:OWNER/REPO:environment:NAME`). No secret exists anywhere. Azure refuses concurrent
  writes of federated credentials on one identity, so each waits for the one before it.
- spotkube's two custom roles and every assignment of clouds/aks/identities.py that the bootstrap
  grants, at the narrowest scope the table names; the deployer's RBAC Cluster Admin on the cluster is
  the platform program's own (it grants it to `cluster.deployer.objectId`).

The stack's outputs are the GitHub variables of each environment, named as the workflows read them.
"""

from collections.abc import Mapping

import pulumi
import pulumi_azure_native as azure

from spotkube.clouds.aks.identities import ASSIGNMENTS, RESOURCE_GROUP, SUBSCRIPTION, role_definition_id
from spotkube.platform.bootstrap import BootstrapSpec
from spotkube.platform.identities import Identity, Role
from spotkube.platform.spec import PlatformSpec

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
#: The audience Entra ID expects in a federated token (learn.microsoft.com/entra/workload-id/
#: workload-identity-federation-create-trust).
AUDIENCE = "api://AzureADTokenExchange"
IDENTITY_NAMES: Mapping[Identity, str] = {"preview": "spotkube-preview", "deploy": "spotkube-deploy"}


def subject(repository: str, environment: str) -> str:
    """The `sub` claim of a GitHub Actions token for a job in an environment."""
    return f"repo:{repository}:environment:{environment}"


def _subscription(resource_id: str) -> str:
    return "/".join(resource_id.split("/")[:3])


def ci_identities(spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec]) -> dict[str, dict[str, pulumi.Output]]:
    """Create the identities, their trust and their roles; return each environment's variables."""
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

    identities = {identity: azure.managedidentity.UserAssignedIdentity(
        identity, resource_name_=name, resource_group_name=home.name, location=location)
        for identity, name in IDENTITY_NAMES.items()}
    trusted: dict[Identity, tuple[str, ...]] = {"preview": (spec.preview_environment,), "deploy": spec.stacks}
    for identity, environments in trusted.items():
        previous: list[pulumi.Resource] = []
        for environment in environments:
            previous = [azure.managedidentity.FederatedIdentityCredential(
                f"{identity}-{environment}", federated_identity_credential_resource_name=f"github-{environment}",
                resource_group_name=home.name, resource_name_=identities[identity].name, issuer=GITHUB_ISSUER,
                subject=subject(spec.repository, environment), audiences=[AUDIENCE],
                opts=pulumi.ResourceOptions(depends_on=previous))]

    scopes = {RESOURCE_GROUP: [(name, group.id) for name, group in groups.items()],
              SUBSCRIPTION: [("subscription", subscription)]}
    custom: dict[str, azure.authorization.RoleDefinition] = {}
    for assignment in ASSIGNMENTS:
        if assignment.granted_by != "bootstrap":
            continue
        role = assignment.role
        if role.custom and role.name not in custom:
            custom[role.name] = _custom_role(role, subscription, [scope for _, scope in scopes[assignment.scope]])
        for where, scope in scopes[assignment.scope]:
            definition = (custom[role.name].id if role.custom
                          else scope.apply(lambda s, role_id=role.id: role_definition_id(s, role_id)))
            azure.authorization.RoleAssignment(
                f"{assignment.identity}-{_slug(role.name)}-{where}",
                principal_id=identities[assignment.identity].principal_id, principal_type="ServicePrincipal",
                role_definition_id=definition, scope=scope, description=f"spotkube {assignment.identity}: "
                f"{assignment.why}"[:1024], condition=assignment.condition,
                condition_version="2.0" if assignment.condition else None)

    def variables(identity: Identity) -> dict[str, pulumi.Output]:
        return {"ARM_CLIENT_ID": identities[identity].client_id, "ARM_TENANT_ID": identities[identity].tenant_id,
                "ARM_SUBSCRIPTION_ID": subscription.apply(lambda s: s.split("/")[2])}

    return {spec.preview_environment: variables("preview"), **{stack: variables("deploy") for stack in spec.stacks}}


def _custom_role(
    role: Role, subscription: pulumi.Output, scopes: list[pulumi.Output]
) -> azure.authorization.RoleDefinition:
    """One of spotkube's roles, defined in the subscription and assignable exactly where it is assigned."""
    return azure.authorization.RoleDefinition(
        _slug(role.name), role_name=role.name, description=role.description, role_type="CustomRole",
        scope=subscription, assignable_scopes=scopes,
        permissions=[{"actions": list(role.actions), "not_actions": list(role.not_actions),
                      "data_actions": list(role.data_actions), "not_data_actions": list(role.not_data_actions)}])


def _slug(name: str) -> str:
    return "-".join(name.lower().split())
