"""GKE: the prod stacks' Cloud KMS key ring, made if missing and adopted if there.

A key ring can't be deleted (cloud.google.com/kms/docs/resource-hierarchy: "key rings and keys cannot be
deleted"), so after the bootstrap is destroyed the ring is still there and pulumi-gcp's KeyRing, which
only creates, fails the rerun with 409 `ALREADY_EXISTS`. The bootstrap therefore ensures the ring through
a small dynamic resource (clouds/gke/bootstrap.py) whose creation calls `ensure_key_ring`: Cloud KMS's
REST API (`GET .../keyRings/NAME`, and on 404 `POST .../keyRings?keyRingId=NAME`) with Application
Default Credentials, the administrator's. Deleting the resource deletes nothing, as Google allows.
"""

from __future__ import annotations

from typing import Any

import requests

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.live_quota import plain_http

DEFAULT_ENDPOINT = "https://cloudkms.googleapis.com"
REQUEST_TIMEOUT = 30.0
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)


def ring_name(project: str, location: str, ring: str) -> str:
    """A key ring's resource name, which its keys name as their `key_ring`."""
    return f"projects/{project}/locations/{location}/keyRings/{ring}"


def _headers(endpoint: str) -> dict[str, str]:
    """The administrator's bearer token (Application Default Credentials); none for a plain-HTTP endpoint."""
    if plain_http(endpoint):
        return {}
    import google.auth  # the `bootstrap` extra
    from google.auth.transport.requests import Request

    credentials, _ = google.auth.default(scopes=list(SCOPES))
    credentials.refresh(Request())
    return {"Authorization": f"Bearer {credentials.token}"}


def _refused(answer: requests.Response, what: str) -> SpotkubeError:
    try:
        reason = answer.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        reason = answer.text[:200] or answer.reason
    return SpotkubeError(f"{what}: Cloud KMS answered {answer.status_code}: {reason}")


def ensure_key_ring(project: str, location: str, ring: str, *, endpoint: str = DEFAULT_ENDPOINT) -> dict[str, Any]:
    """The key ring, created when it doesn't exist and taken as it is when it does (a rerun after a destroy)."""
    name = ring_name(project, location, ring)
    headers = _headers(endpoint)
    found = requests.get(f"{endpoint}/v1/{name}", headers=headers, timeout=REQUEST_TIMEOUT)
    if found.status_code == 200:
        return dict(found.json())
    if found.status_code != 404:
        raise _refused(found, f"reading the key ring {name}")
    made = requests.post(f"{endpoint}/v1/projects/{project}/locations/{location}/keyRings", params={"keyRingId": ring},
                         json={}, headers=headers, timeout=REQUEST_TIMEOUT)
    if made.status_code == 409:  # made by someone else since the GET: it exists, which is all that matters
        return {"name": name}
    if made.status_code != 200:
        raise _refused(made, f"creating the key ring {name}")
    return dict(made.json())
