"""GKE: what `spotkube doctor` reads live from Google Cloud before a stack's first `up`.

Plain REST calls through clouds/http.py, with a token from Application Default Credentials (google-auth;
`gcloud auth application-default login` on a laptop, google-github-actions/auth in CI). With `--endpoint`,
every API is asked there (their paths don't overlap); a plain-HTTP endpoint is sent no credential.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from spotkube.clouds.gke.identities import PROJECT, read_role
from spotkube.clouds.gke.services import enable_command, needed_services
from spotkube.platform.cost.refresh import FetchSettings
from spotkube.platform.doctor import LIVE_READ_HINT, BackendPolicy, DoctorQuery, Finding, LiveAccess, PoolSize
from spotkube.platform.errors import SpotkubeError, first_line
from spotkube.platform.identities import Assignment, Identity, Role
from spotkube.platform.live_quota import installed, plain_http
from spotkube.platform.spec import PlatformSpec

SERVICE_USAGE = "https://serviceusage.googleapis.com"
RESOURCE_MANAGER = "https://cloudresourcemanager.googleapis.com"
IAM = "https://iam.googleapis.com"
COMPUTE = "https://compute.googleapis.com"
STORAGE = "https://storage.googleapis.com"
#: Bucket roles that write objects (Pulumi's state, history and locks) and those that only read them
#: (cloud.google.com/storage/docs/access-control/iam-roles).
STATE_WRITE_ROLES = frozenset({"roles/storage.objectUser", "roles/storage.objectAdmin", "roles/storage.objectCreator",
                               "roles/storage.admin", "roles/storage.legacyBucketOwner",
                               "roles/storage.legacyBucketWriter"})
STATE_READ_ROLES = frozenset({"roles/storage.objectViewer", "roles/storage.legacyObjectReader",
                              "roles/storage.legacyObjectOwner", "roles/storage.legacyBucketReader"})
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
SIGN_IN = "run `gcloud auth application-default login` (CI: google-github-actions/auth)"


def request_headers(credentials: Any, project: str) -> dict[str, str]:
    """The headers of every call: the bearer token and, for a person's Application Default Credentials, a
    quota project (`x-goog-user-project`: the one their ADC names, else the stack's), without which
    Google refuses most APIs to user credentials (403 "...requires a quota project"). Service accounts
    are billed to their own project and send none: the header would need `serviceusage.services.use`."""
    from google.oauth2 import credentials as user

    headers = {"Authorization": f"Bearer {credentials.token}"}
    quota = getattr(credentials, "quota_project_id", None) or (
        project if isinstance(credentials, user.Credentials) else None)
    return {**headers, "x-goog-user-project": str(quota)} if quota else headers


def _headers(endpoint: str | None, project: str) -> dict[str, str]:
    """The headers from Application Default Credentials, or none for a plain-HTTP endpoint."""
    if plain_http(endpoint):
        return {}
    if not installed("google.auth"):
        raise SpotkubeError("spotkube doctor signs in to Google Cloud with google-auth: pip install "
                            "'spotkube[refresh]'")
    import google.auth
    from google.auth import exceptions
    from google.auth.transport.requests import Request

    try:
        credentials, _ = google.auth.default(scopes=list(SCOPES))
        credentials.refresh(Request())
    except exceptions.GoogleAuthError as err:
        raise SpotkubeError(f"no Google Cloud credentials ({first_line(err)}); {SIGN_IN}") from None
    return request_headers(credentials, project)


class _Google:
    def __init__(self, endpoint: str | None, headers: Mapping[str, str], timeout: float) -> None:
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        self.settings = FetchSettings(timeout_s=timeout, retries=2)
        from spotkube.clouds import http  # requests: imported when doctor runs, not with every command

        self.http = http
        self.client = http.session(self.settings)
        self.headers = dict(headers)
        self.secret = self.headers.get("Authorization", "").removeprefix("Bearer ") or None

    def url(self, base: str, path: str) -> str:
        return f"{self.endpoint or base}{path}"

    def call(self, service: str, base: str, path: str, params: Mapping[str, str] | None = None,
             body: Mapping[str, Any] | None = None) -> Any:
        return self.http.get_json(self.client, service, self.url(base, path), self.settings, params=params,
                        headers=self.headers, secret=self.secret, hint=LIVE_READ_HINT, body=body)

    def exists(self, path: str) -> bool:
        """Whether Compute Engine has the object at `path` (404: it doesn't)."""
        answer = self.client.get(self.url(COMPUTE, path), headers=self.headers,
                                 timeout=(self.settings.timeout_s, self.settings.timeout_s))
        if answer.status_code == 404:
            return False
        if answer.status_code != 200:
            self.call("Compute Engine", COMPUTE, path)  # raises with the API's own reason
        return True


def _enabled(google: _Google, project: str) -> Iterator[str]:
    params = {"filter": "state:ENABLED", "pageSize": "200"}
    while True:
        page = google.call("Service Usage", SERVICE_USAGE, f"/v1/projects/{project}/services", params)
        for service in page.get("services") or ():
            name = (service.get("config") or {}).get("name") or str(service.get("name", "")).rsplit("/", 1)[-1]
            yield str(name)
        token = page.get("nextPageToken")
        if not token:
            return
        params = {**params, "pageToken": str(token)}


def member(principal: str) -> str:
    """An IAM member from what the user gave: `serviceAccount:x@p.iam.gserviceaccount.com` as is, a bare
    e-mail as a service account's (`.gserviceaccount.com`) or a user's."""
    if ":" in principal:
        return principal
    kind = "serviceAccount" if principal.endswith(".gserviceaccount.com") else "user"
    return f"{kind}:{principal}"


def _held(google: _Google, project: str, principals: Mapping[Identity, str]) -> dict[Identity, tuple[Assignment, ...]]:
    policy = google.call("Resource Manager", RESOURCE_MANAGER, f"/v1/projects/{project}:getIamPolicy",
                         body={"options": {"requestedPolicyVersion": 3}})
    roles: dict[str, Role] = {}
    held: dict[Identity, tuple[Assignment, ...]] = {}
    for identity, principal in principals.items():
        found = []
        for binding in policy.get("bindings") or ():
            name = str(binding.get("role") or "")
            if member(principal) not in (binding.get("members") or ()) or not name:
                continue
            if name not in roles:
                definition = google.call("IAM", IAM, f"/v1/{name}")
                roles[name] = read_role({**definition, "name": name})
            found.append(Assignment(identity, roles[name], PROJECT, "held",
                                    condition=(binding.get("condition") or {}).get("expression")))
        held[identity] = tuple(found)
    return held


def _sizes(google: _Google, project: str, zones: tuple[str, ...], sizes: tuple[PoolSize, ...]) -> tuple[
        Finding, ...]:
    findings = []
    other = "pick other zones or another machine (`spotkube catalog refresh` lists what is offered)"
    for need in sizes:
        where = need.zones or zones
        lacking = [zone for zone in where
                   if not google.exists(f"/compute/v1/projects/{project}/zones/{zone}/machineTypes/{need.machine}")
                   or (need.gpu_type is not None and not google.exists(
                       f"/compute/v1/projects/{project}/zones/{zone}/acceleratorTypes/{need.gpu_type}"))]
        what = need.machine + (f" with {need.gpu_type}" if need.gpu_type else "")
        if lacking:
            findings.append(Finding("sizes", need.name, "fail", f"pool {need.name}: {what} is not offered in zone(s) "
                                    f"{', '.join(lacking)}", other))
        else:
            findings.append(Finding("sizes", need.name, "ok", f"pool {need.name}: {what} is offered in zone(s) "
                                    f"{', '.join(where)}"))
    return tuple(findings)


def _grant(project: str) -> Callable[[str, Assignment], str]:
    def command(principal: str, assignment: Assignment) -> str:
        role = f"projects/{project}/roles/{assignment.role.id}" if assignment.role.custom else assignment.role.id
        if assignment.role.custom:
            return f"run the bootstrap stack (infra/bootstrap), which creates {role} and grants it"
        condition = f" --condition='expression={assignment.condition},title=spotkube'" if assignment.condition else ""
        return f"gcloud projects add-iam-policy-binding {project} --member {member(principal)} --role {role}{condition}"
    return command


def read_access(query: DoctorQuery) -> LiveAccess:
    """The project's enabled services, the CI identities' roles and the zones' sizes, read live."""
    from spotkube.clouds import http

    spec = query.spec
    project = str(getattr(spec.cluster, "project", "") or "")
    if not project:
        raise SpotkubeError("the stack names no Google Cloud project (spotkube:cluster.project)")
    google = _Google(query.endpoint, _headers(query.endpoint, project), query.timeout)
    needed = needed_services(query.type_tokens)
    zones = tuple(getattr(spec.cluster, "zones", ()) or ())
    try:
        enabled = frozenset(_enabled(google, project))
        unreadable: dict[Identity, str] = {}
        try:
            held = _held(google, project, query.principals) if query.principals else {}
        except http.PriceFetchError as err:
            held, unreadable = {}, {identity: str(err) for identity in query.principals}
        sizes = _sizes(google, project, zones, query.sizes)
    except http.PriceFetchError as err:
        raise SpotkubeError(str(err)) from None
    return LiveAccess(
        where=f"project {project}, region {spec.region}", apis_what="enabled", apis_needed=needed.needed,
        apis_unknown=needed.unknown_types, apis_enabled=enabled,
        enable_command=lambda name: enable_command(name, project), held=held, grant_command=_grant(project),
        sizes=sizes, unreadable=unreadable)


def read_backend(spec: PlatformSpec, url: str, endpoint: str | None, _account: str | None,
                 timeout: float) -> BackendPolicy | None:
    """The IAM policy of a `gs://` backend's bucket (None for another cloud's URL): who may write or read the
    stack's state there. Grants on the project or above also reach the bucket; they are the roles check's."""
    from spotkube.clouds import http

    scheme, _, rest = url.partition("://")
    if scheme != "gs":
        return None
    bucket = rest.split("/", 1)[0]
    project = str(getattr(spec.cluster, "project", "") or "")
    google = _Google(endpoint, _headers(endpoint, project), timeout)
    try:
        policy = google.call("Cloud Storage", STORAGE, f"/storage/v1/b/{bucket}/iam",
                             {"optionsRequestedPolicyVersion": "3"})
    except http.PriceFetchError as err:
        raise SpotkubeError(str(err)) from None
    roles: dict[str, tuple[str, ...]] = {}
    for binding in policy.get("bindings") or ():
        roles[str(binding.get("role"))] = (*roles.get(str(binding.get("role")), ()),
                                           *(str(m) for m in binding.get("members") or ()))
    return BackendPolicy(
        f"bucket gs://{bucket}", roles, STATE_WRITE_ROLES, STATE_READ_ROLES, member,
        frozenset({"allUsers", "allAuthenticatedUsers"}),
        lambda who, right: f"gcloud storage buckets add-iam-policy-binding gs://{bucket} --member={who} "
        f"--role={'roles/storage.objectUser' if right == 'write' else 'roles/storage.objectViewer'}")
