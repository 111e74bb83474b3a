"""GitHub's REST API, as `spotkube doctor` reads a stack's environment: "Get an environment"
(`GET /repos/{owner}/{repo}/environments/{name}`, 404 when it doesn't exist) and its variables
(`GET .../environments/{name}/variables`, 30 a page by default, 30 variables is plenty here: asked
`per_page=100`). The token is GITHUB_TOKEN's; a plain-HTTP endpoint (a test's local server) is sent none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from spotkube.platform.cost.refresh import FetchSettings
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.live_quota import plain_http

DEFAULT_API = "https://api.github.com"


def read_environment(repository: str, name: str, api: str, timeout: float) -> tuple[
        Mapping[str, Any] | None, Mapping[str, str] | None]:
    """The environment as GitHub answers (None when it doesn't exist) and its variables by name (None when
    the token may not read them)."""
    from spotkube.clouds import http  # requests: imported when doctor runs, not with every command

    settings = FetchSettings(timeout_s=timeout, retries=2)
    client = http.session(settings, secret_headers=("Authorization",))
    token = os.environ.get("GITHUB_TOKEN")
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
               **({"Authorization": f"Bearer {token}"} if token and not plain_http(api) else {})}
    base = f"{api.rstrip('/')}/repos/{repository}/environments/{quote(name, safe='')}"
    try:
        answer = client.get(base, headers=headers, timeout=timeout)
        if answer.status_code == 404:
            return None, None
        if answer.status_code != 200:
            raise SpotkubeError(f"GitHub at {http.host(api)} answered HTTP {answer.status_code} for the environment "
                                f"{name} of {repository}; a token that may read it: GITHUB_TOKEN")
        environment = answer.json()
        found = client.get(f"{base}/variables", params={"per_page": "100"}, headers=headers, timeout=timeout)
    except (OSError, ValueError) as err:
        raise SpotkubeError(f"GitHub at {http.host(api)} could not be read ({type(err).__name__})") from None
    if found.status_code != 200:
        return environment, None
    return environment, {str(v.get("name")): str(v.get("value")) for v in found.json().get("variables") or ()}
