"""GKE: the CI identities GitHub Actions signs in as, made once by an administrator.

A workload identity pool whose GitHub provider admits only the repository's tokens; a service account per
workflow, impersonable by exactly the subjects of its GitHub environments (no key exists anywhere); the
bindings of clouds/gke/identities.py in each stack's project, waiting `IAM_PROPAGATION` after the accounts
and custom roles they name (IAM is eventually consistent: cloud.google.com/iam/docs/access-change-propagation);
a Cloud KMS key per prod stack as its secrets provider, so the Pulumi token a pull request's preview holds
can't read prod's secrets (docs/identities.md); with `createBackend`, the state's buckets, versioned so a bad
write keeps the state before it (a preview takes no lock, so its reader only views); and every API of
clouds/gke/services.py, left on at destroy (other workloads may use them). The stack's outputs are the
GitHub variables of each environment, named as the workflows read them.
"""

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumiverse_time as time
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider

from spotkube.clouds.gke.identities import ASSIGNMENTS, CHECKPOINT_STORE, REGISTRY_GRANTS
from spotkube.clouds.gke.key_ring import DEFAULT_ENDPOINT, ensure_key_ring, ring_name
from spotkube.clouds.gke.services import required_services
from spotkube.clouds.gke.spec import GkeClusterSettings
from spotkube.platform.bootstrap import SECRETS_PROVIDERS, BootstrapSpec
from spotkube.platform.identities import GITHUB_ISSUER, Identity
from spotkube.platform.spec import PlatformSpec

ACCOUNT_IDS: Mapping[Identity, str] = {"preview": "spotkube-preview", "deploy": "spotkube-deploy"}
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
#: How long the bindings wait for new service accounts and custom roles; Google documents changes as
#: "typically" visible within 60 seconds and up to 7 minutes in rare cases.
IAM_PROPAGATION = "90s"
#: The most bytes Google accepts in a mapped `google.subject` (cloud.google.com/iam/docs/
#: workload-identity-federation#mapping): longer GitHub subjects can't sign in.
SUBJECT_BYTES = 127
#: The key ring of the prod stacks' keys, in each prod stack's project. Key rings can't be deleted, so the
#: ring is ensured (made if missing, adopted if there: clouds/gke/key_ring.py) and a rerun after a destroy
#: finds it; the keys are protected.
KEY_RING = "spotkube-secrets"
ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
#: The backend's object roles (cloud.google.com/storage/docs/access-control/iam-roles): create, read,
#: overwrite and delete objects, no IAM; and read and list them only.
STATE_WRITER = "roles/storage.objectUser"
STATE_READER = "roles/storage.objectViewer"


def key_name(stack: str) -> str:
    """A stack's key: Cloud KMS key names are 1-63 letters, digits, `_` and `-`."""
    if re.fullmatch(r"[A-Za-z0-9_-]{1,63}", stack):
        return stack
    return f"{re.sub(r'[^A-Za-z0-9_-]', '-', stack)[:50]}-{hashlib.sha256(stack.encode()).hexdigest()[:12]}"


def secrets_provider(project: str, stack: str) -> str:
    """Pulumi's secrets provider URL for a stack's Cloud KMS key (`pulumi stack change-secrets-provider`)."""
    return f"gcpkms://projects/{project}/locations/global/keyRings/{KEY_RING}/cryptoKeys/{key_name(stack)}"


def prod_account_id(stack: str) -> str:
    """A prod stack's own deploy service account: account ids are 6-30 lowercase letters, digits and `-`, too
    short for most stack names, so a hash of it (the display name says which stack)."""
    return f"spotkube-deploy-{hashlib.sha256(stack.encode()).hexdigest()[:12]}"


def subject(repository: str, environment: str) -> str:
    """The `sub` claim of a GitHub Actions token for a job in an environment."""
    return f"repo:{repository}:environment:{environment}"


def principal(pool_name: str, repository: str, environment: str) -> str:
    """The IAM principal of one GitHub environment's tokens in the pool (cloud.google.com/iam/docs/
    workload-identity-federation#principal-types: `principal://.../subject/SUBJECT`)."""
    return f"principal://iam.googleapis.com/{pool_name}/subject/{subject(repository, environment)}"


def ci_identities(spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec]) -> dict[str, pulumi.Input[object]]:
    """Create the pool, the service accounts, their trust and their roles; return each environment's
    variables, and `secretsProviders` (stack -> secrets provider URL) when a stack is prod."""
    too_long = [environment for environment in spec.environments
                if len(subject(spec.repository, environment).encode()) > SUBJECT_BYTES]
    if too_long:
        raise pulumi.RunError("\n".join(
            f"the GitHub environment {environment!r} of {spec.repository}: its token's subject "
            f"{subject(spec.repository, environment)!r} is longer than the {SUBJECT_BYTES} bytes Google's workload "
            "identity federation maps; use a shorter stack or environment name" for environment in too_long))
    home = spec.project or next(iter(stacks.values())).cluster.project
    projects = sorted({platform.cluster.project for platform in stacks.values() if platform.cluster.project})
    enabled = {project: [gcp.projects.Service(f"{service.split('.')[0]}-{project}", project=project, service=service,
                                              disable_on_destroy=False, disable_dependent_services=False)
                         for service in required_services()]
               for project in sorted({home, *projects})}
    at_home = pulumi.ResourceOptions(depends_on=enabled[home])
    pool = gcp.iam.WorkloadIdentityPool("github", workload_identity_pool_id=spec.pool_id, project=home,
                                        display_name="GitHub Actions", description=f"Workflows of {spec.repository}",
                                        opts=at_home)
    provider = gcp.iam.WorkloadIdentityPoolProvider(
        "github", workload_identity_pool_id=pool.workload_identity_pool_id,
        workload_identity_pool_provider_id=spec.provider_id, project=home, display_name="GitHub Actions OIDC",
        attribute_mapping={"google.subject": "assertion.sub", "attribute.repository": "assertion.repository",
                           "attribute.environment": "assertion.environment"},
        attribute_condition=f"assertion.repository == '{spec.repository}'",
        oidc={"issuer_uri": GITHUB_ISSUER}, opts=at_home)
    # account key (its Pulumi name) -> (Identity, account id, the GitHub environments it trusts, its stacks)
    served: dict[str, tuple[Identity, str, tuple[str, ...], tuple[str, ...]]] = {
        "preview": ("preview", ACCOUNT_IDS["preview"], (spec.preview,),
                    tuple(s for s, platform in stacks.items() if not platform.is_prod))}
    shared = tuple(s for s, platform in stacks.items() if not platform.is_prod)
    if shared:
        served["deploy"] = ("deploy", ACCOUNT_IDS["deploy"], shared, shared)
    served |= {f"deploy-{s}": ("deploy", prod_account_id(s), (s,), (s,))
               for s, platform in stacks.items() if platform.is_prod}
    accounts = {key: gcp.serviceaccount.Account(
        key, account_id=account_id, project=home, display_name=f"spotkube {key} (GitHub Actions)", opts=at_home)
        for key, (_, account_id, _, _) in served.items()}
    made = time.Sleep("accounts-propagation", create_duration=IAM_PROPAGATION,
                      triggers={key: account.unique_id for key, account in accounts.items()},
                      opts=pulumi.ResourceOptions(depends_on=list(accounts.values())))
    for key, (_, _, environments, _) in served.items():
        for environment in environments:
            gcp.serviceaccount.IAMMember(
                f"{key}-{environment}", service_account_id=accounts[key].name, role=WORKLOAD_IDENTITY_USER,
                member=pool.name.apply(lambda name, env=environment: principal(name, spec.repository, env)),
                opts=pulumi.ResourceOptions(depends_on=[made]))

    custom: dict[tuple[str, str], tuple[gcp.projects.IAMCustomRole, time.Sleep]] = {}
    for key, (identity, _, _, own) in served.items():
        for project in sorted({stacks[s].cluster.project for s in own if stacks[s].cluster.project}):
            in_project = [stacks[s] for s in own if stacks[s].cluster.project == project]
            drilled = any(platform.cluster.deployer.drills for platform in in_project)
            # Setting a repository's policy could also grant pushing to it: only where a stack names registries.
            pulls = any(isinstance(platform.cluster, GkeClusterSettings) and platform.cluster.registries
                        for platform in in_project)
            stores = any(platform.training.checkpoint_store for platform in in_project)
            for assignment in ASSIGNMENTS:
                if assignment.identity != identity or (assignment.drills_only and not drilled) or (
                        assignment.role == REGISTRY_GRANTS and not pulls) or (
                        assignment.role == CHECKPOINT_STORE and not stores):
                    continue
                role = assignment.role
                if role.custom and (role.name, project) not in custom:
                    defined = gcp.projects.IAMCustomRole(
                        f"{role.name}-{project}", role_id=role.name, project=project, title=role.name,
                        description=role.description, permissions=sorted(role.permissions), stage="GA",
                        opts=pulumi.ResourceOptions(depends_on=enabled[project]))
                    custom[(role.name, project)] = (defined, time.Sleep(
                        f"{role.name}-{project}-propagation", create_duration=IAM_PROPAGATION,
                        triggers={"role": defined.name}, opts=pulumi.ResourceOptions(depends_on=[defined])))
                defined_role = custom.get((role.name, project))
                gcp.projects.IAMMember(
                    f"{key}-{role.name.removeprefix('roles/')}-{project}", project=project,
                    role=defined_role[0].name if defined_role else role.name,
                    member=accounts[key].email.apply(lambda email: f"serviceAccount:{email}"),
                    condition={"title": "spotkube: only the nodes' role", "expression": assignment.condition}
                    if assignment.condition else None,
                    opts=pulumi.ResourceOptions(depends_on=[made, *enabled[project],
                                                            *([defined_role[1]] if defined_role else [])]))

    def variables(key: str) -> dict[str, pulumi.Output]:
        return {"GCP_WORKLOAD_IDENTITY_PROVIDER": provider.name, "GCP_SERVICE_ACCOUNT": accounts[key].email}

    outputs: dict[str, pulumi.Input[object]] = {
        environment: variables(key) for key, (_, _, environments, _) in served.items() for environment in environments}
    prod = {stack: platform.cluster.project for stack, platform in stacks.items()
            if platform.is_prod and platform.cluster.project}
    rings: dict[str, KeyRing] = {}
    for stack, project in prod.items():
        if project not in rings:
            rings[project] = KeyRing(f"secrets-{project}", project, "global", KEY_RING,
                                     opts=pulumi.ResourceOptions(protect=True, depends_on=enabled[project]))
        # The ring's name is known before it is ensured: the key names it and waits for it.
        key = gcp.kms.CryptoKey(
            f"secrets-{stack}", name=key_name(stack), key_ring=ring_name(project, "global", KEY_RING),
            purpose="ENCRYPT_DECRYPT", opts=pulumi.ResourceOptions(protect=True, depends_on=[rings[project]]))
        gcp.kms.CryptoKeyIAMMember(
            f"deploy-secrets-{stack}", crypto_key_id=key.id, role=ENCRYPTER_DECRYPTER,
            member=accounts[f"deploy-{stack}"].email.apply(lambda email: f"serviceAccount:{email}"),
            opts=pulumi.ResourceOptions(depends_on=[made]))
    if prod:
        outputs[SECRETS_PROVIDERS] = {stack: secrets_provider(project, stack) for stack, project in prod.items()}
    if spec.create_backend:
        _state_buckets(spec, stacks, home, accounts, enabled, made)
    return outputs


def _state_buckets(spec: BootstrapSpec, stacks: Mapping[str, PlatformSpec], home: str,
                   accounts: Mapping[str, gcp.serviceaccount.Account],
                   enabled: Mapping[str, list[gcp.projects.Service]], made: time.Sleep) -> None:
    """The backend's buckets and who may read and write each: the non-prod bucket's writer is the shared
    deploy account (if a stack is non-prod) and its reader the preview's; a prod stack's bucket's only writer
    is its own deploy account. Prod's buckets are protected."""
    prod = tuple(stack for stack, platform in stacks.items() if platform.is_prod)
    shared = [stack for stack, platform in stacks.items() if not platform.is_prod]
    first = stacks[(shared or list(stacks))[0]]
    for scope, name in spec.backend_names(prod).items():
        platform = first if scope is None else stacks[scope]
        project = home if scope is None else platform.cluster.project or home
        bucket = gcp.storage.Bucket(
            f"state-{scope or 'shared'}", name=name, project=project, location=platform.region.upper(),
            uniform_bucket_level_access=True, public_access_prevention="enforced", versioning={"enabled": True},
            force_destroy=False, opts=pulumi.ResourceOptions(protect=scope is not None, depends_on=enabled[project]))
        writer = "deploy" if scope is None else f"deploy-{scope}"
        grants = [(writer, STATE_WRITER)] if scope is not None or shared else []
        if scope is None:
            grants.append(("preview", STATE_READER))
        for key, role in grants:
            gcp.storage.BucketIAMMember(
                f"{key}-state-{scope or 'shared'}", bucket=bucket.name, role=role,
                member=accounts[key].email.apply(lambda email: f"serviceAccount:{email}"),
                opts=pulumi.ResourceOptions(depends_on=[made]))


class KeyRingProvider(ResourceProvider):
    """The dynamic provider: create ensures the ring; a change of project, location or name ensures another."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        ring = ensure_key_ring(props["project"], props["location"], props["ring"], endpoint=props["endpoint"])
        name = ring_name(props["project"], props["location"], props["ring"])
        return CreateResult(id_=name, outs={**props, "created": str(ring.get("createTime") or "")})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in ("project", "location", "ring", "endpoint") if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)


class KeyRing(pulumi.dynamic.Resource):
    """A Cloud KMS key ring that survives the bootstrap's destroy and rerun."""

    def __init__(self, name: str, project: str, location: str, ring: str,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(KeyRingProvider(), name, {"project": project, "location": location, "ring": ring,
                                                   "endpoint": DEFAULT_ENDPOINT, "created": None}, opts)
