"""The prod stacks' key ring survives the bootstrap's destroy and rerun: Cloud KMS can't delete a ring,
so the bootstrap ensures it (made when missing, adopted when there) instead of pulumi-gcp's KeyRing,
whose create fails a rerun with 409. Against Cloud KMS's REST API on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_http import FakeServer, Reply, Request, serving
from spotkube.clouds.gke.key_ring import ensure_key_ring
from spotkube.components.offline import record_stack
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[3]
PROJECT = "spotkube-prod-example"
NAME = f"projects/{PROJECT}/locations/global/keyRings/spotkube-secrets"


class Kms:
    """Cloud KMS's key rings: GET one (404 when missing), POST one (409 when it exists)."""

    def __init__(self) -> None:
        self.rings: dict[str, dict[str, str]] = {}

    def respond(self, request: Request) -> Reply:
        path = request.path.split("?", 1)[0]
        if request.method == "GET":
            ring = self.rings.get(path.removeprefix("/v1/"))
            return Reply(body=ring) if ring else Reply(404, {"error": {
                "code": 404, "message": f"KeyRing {path.removeprefix('/v1/')} not found.", "status": "NOT_FOUND"}})
        name = f"{path.removeprefix('/v1/')}/{request.query['keyRingId'][0]}"
        if name in self.rings:
            return Reply(409, {"error": {"code": 409, "message": f"KeyRing {name} already exists.",
                                         "status": "ALREADY_EXISTS"}})
        assert json.loads(request.body) == {}
        self.rings[name] = {"name": name, "createTime": "2026-12-02T03:40:00.000000Z"}
        return Reply(body=self.rings[name])


@pytest.fixture
def kms() -> Iterator[tuple[FakeServer, Kms]]:
    state = Kms()
    with serving() as server:
        server.respond = state.respond
        yield server, state


def test_a_missing_ring_is_made_and_a_rerun_adopts_it(kms: tuple[FakeServer, Kms]) -> None:
    server, state = kms
    made = ensure_key_ring(PROJECT, "global", "spotkube-secrets", endpoint=server.url())
    assert made["name"] == NAME and set(state.rings) == {NAME}
    # After a destroy the ring is still there: the rerun takes it as it is.
    again = ensure_key_ring(PROJECT, "global", "spotkube-secrets", endpoint=server.url())
    assert again == made
    assert [r.method for r in server.requests] == ["GET", "POST", "GET"]
    assert not any("authorization" in r.headers for r in server.requests), "no token over plain HTTP"


def test_a_refusal_names_the_ring_and_kms_s_reason(kms: tuple[FakeServer, Kms]) -> None:
    server, _ = kms
    denied = {"error": {"code": 403, "message": "Permission 'cloudkms.keyRings.get' denied",
                        "status": "PERMISSION_DENIED"}}
    server.respond = lambda request: Reply(403, denied)
    with pytest.raises(SpotkubeError, match=f"reading the key ring {NAME}: Cloud KMS answered 403: Permission"):
        ensure_key_ring(PROJECT, "global", "spotkube-secrets", endpoint=server.url())


def test_the_prod_key_names_the_ensured_ring_and_waits_for_it() -> None:
    recording = record_stack(find_project(REPO / "infra" / "bootstrap"), "gke")
    (ring,) = [r for r in recording.registrations if r.type == "pulumi-python:dynamic:Resource"]
    assert (ring.inputs["project"], ring.inputs["ring"], ring.protect) == (PROJECT, "spotkube-secrets", True)
    assert not [r for r in recording.registrations if r.type == "gcp:kms/keyRing:KeyRing"]
    (key,) = [r for r in recording.registrations if r.type == "gcp:kms/cryptoKey:CryptoKey"]
    assert key.inputs["keyRing"] == NAME and ring.urn in key.dependencies
