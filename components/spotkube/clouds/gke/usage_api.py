"""GKE: the project's live Compute Engine quotas, read through Google's own Python SDK.

Quotas a project was never given are absent. Credentials are Application Default Credentials (CI:
google-github-actions/auth). The SDK comes with the `refresh` extra and is imported only when a quota is read.
"""

from __future__ import annotations

from typing import Any

from spotkube.platform.errors import SpotkubeError, first_line
from spotkube.platform.live_quota import LiveQuota, QuotaQuery, Usage, installed, plain_http

NEEDS = ("compute.regions.get and compute.projects.get on the project (the preview reader role the bootstrap "
         "stack creates, docs/identities.md, or roles/compute.viewer)")


def _clients(query: QuotaQuery) -> tuple[Any, Any]:
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import compute_v1

    options = ClientOptions(api_endpoint=query.endpoint) if query.endpoint else None
    credentials = AnonymousCredentials() if plain_http(query.endpoint) else None  # None: ADC
    return (compute_v1.RegionsClient(credentials=credentials, client_options=options, transport="rest"),
            compute_v1.ProjectsClient(credentials=credentials, client_options=options, transport="rest"))


def _usages(quotas: Any) -> dict[str, Usage]:
    return {str(q.metric): Usage(float(q.limit), float(q.usage)) for q in quotas if q.metric}


def read_quota(query: QuotaQuery) -> LiveQuota:
    """The region's and the project's quotas of the stack's project."""
    if not installed("google.cloud.compute_v1"):
        raise SpotkubeError("reading Google Cloud quota needs Google's SDK: pip install 'spotkube[refresh]'")
    from google.api_core import exceptions
    from google.auth import exceptions as auth_exceptions

    project, region = query.spec.cluster.project, query.spec.region
    where = f"project {project}, region {region}"
    try:
        regions, projects = _clients(query)
        regional = _usages(regions.get(project=project, region=region, timeout=query.timeout).quotas)
        global_ = _usages(projects.get(project=project, timeout=query.timeout).quotas)
    except auth_exceptions.DefaultCredentialsError as err:
        raise SpotkubeError(f"no Google Cloud credentials to read the quota of {where}: {first_line(err)}; run "
                            "`gcloud auth application-default login`, or google-github-actions/auth in CI") from None
    except exceptions.GoogleAPICallError as err:
        code = f" {err.code}" if getattr(err, "code", None) else ""
        raise SpotkubeError(f"Google Cloud answered{code} reading the quota of {where}: {first_line(err)}; the "
                            f"identity needs {NEEDS}") from None
    except (exceptions.GoogleAPIError, auth_exceptions.GoogleAuthError, OSError) as err:
        raise SpotkubeError(f"could not read the quota of {where}: {first_line(err)}") from None
    return LiveQuota(where=where, regional=regional, global_=global_, learnt={})

