"""The bootstrap's provider registrations sign in as azure-native does: from the same `ARM_*` variables,
with GitHub's OIDC token in CI (asked of the job's token endpoint for Entra's audience), a client secret,
a managed identity, or else the Azure CLI's login; never azure-identity's DefaultAzureCredential, which
reads none of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from azure import identity

from fake_http import Reply, Request, serving
from spotkube.clouds.aks.provider_registration import arm_credential, github_oidc_token
from spotkube.platform.errors import SpotkubeError

TENANT = "7c1a2b3d-0000-4000-8000-000000000001"
CLIENT = "9e8d7c6b-0000-4000-8000-000000000002"


def test_in_a_github_job_the_token_is_asked_of_the_job_s_endpoint_for_entra_s_audience() -> None:
    with serving() as server:
        server.respond = lambda request: Reply(body={"count": 1, "value": "eyJ.github.token"})
        environ = {"ACTIONS_ID_TOKEN_REQUEST_URL": server.url("/_apis/token?api-version=2.0"),
                   "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "job-request-token"}
        assert github_oidc_token(environ) == "eyJ.github.token"
        (asked,) = server.requests
    assert isinstance(asked, Request) and asked.headers["authorization"] == "Bearer job-request-token"
    assert asked.query["audience"] == ["api://AzureADTokenExchange"]
    assert asked.query["api-version"] == ["2.0"]


def test_a_token_given_outright_or_in_a_file_is_used_as_is(tmp_path: Path) -> None:
    assert github_oidc_token({"ARM_OIDC_TOKEN": "eyJ.given"}) == "eyJ.given"
    (tmp_path / "token").write_text("eyJ.from-file\n")
    assert github_oidc_token({"ARM_OIDC_TOKEN_FILE_PATH": str(tmp_path / "token")}) == "eyJ.from-file"


def test_oidc_without_a_token_says_what_the_job_lacks() -> None:
    with pytest.raises(SpotkubeError, match="permissions: id-token: write"):
        github_oidc_token({})


@pytest.mark.parametrize(("environ", "kind"), [
    ({"ARM_USE_OIDC": "true", "ARM_CLIENT_ID": CLIENT, "ARM_TENANT_ID": TENANT}, identity.ClientAssertionCredential),
    ({"ARM_CLIENT_ID": CLIENT, "ARM_TENANT_ID": TENANT, "ARM_CLIENT_SECRET": "s3cret"},
     identity.ClientSecretCredential),
    ({"ARM_USE_MSI": "true", "ARM_CLIENT_ID": CLIENT}, identity.ManagedIdentityCredential),
    ({}, identity.AzureCliCredential),
    ({"ARM_TENANT_ID": TENANT}, identity.AzureCliCredential),
])
def test_the_credential_follows_azure_native_s_variables(environ: dict[str, str], kind: type) -> None:
    assert isinstance(arm_credential(environ), kind)


def test_oidc_without_the_client_and_tenant_is_refused() -> None:
    with pytest.raises(SpotkubeError, match="ARM_USE_OIDC needs ARM_CLIENT_ID and ARM_TENANT_ID"):
        arm_credential({"ARM_USE_OIDC": "true", "ARM_CLIENT_ID": CLIENT})
