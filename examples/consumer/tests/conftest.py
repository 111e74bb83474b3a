"""Pulumi's mocks for every test, set before the program's modules are imported, as Pulumi's testing guide does.

`spotkube.testing.SpotkubeMocks` answers what spotkube's components ask the clouds (the AKS kubeconfig,
the deployer's identity, GKE's endpoints) and the outputs this program wires into them (the resource
group's name, the egress address, the VPC's self links). This subclass also keeps every resource it
is asked for, so the tests can read the inputs spotkube gave the clusters it builds inside its components.
"""

from __future__ import annotations

from collections.abc import Iterator

import pulumi
import pytest

from spotkube.testing import SpotkubeMocks

PROJECT = "ml-platforms"
GCP_PROJECT = "vision-ml-dev"
#: The Entra ID object id of the identity that deploys the AKS platform (obviously fake).
DEPLOYER = "c0ffee00-0000-4000-8000-000000000001"


class TeamMocks(SpotkubeMocks):
    """spotkube's answers, and a record of every resource's inputs by type."""

    def __init__(self) -> None:
        self.resources: list[pulumi.runtime.MockResourceArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        self.resources.append(args)
        return super().new_resource(args)

    def inputs_of(self, type_token: str) -> list[dict]:
        return [r.inputs for r in self.resources if r.typ == type_token]


MOCKS = TeamMocks()
pulumi.runtime.set_mocks(MOCKS, project=PROJECT, stack="test", preview=False)
pulumi.runtime.set_all_config({f"{PROJECT}:gcpProject": GCP_PROJECT, f"{PROJECT}:deployerObjectId": DEPLOYER})


@pytest.fixture
def mocks() -> Iterator[TeamMocks]:
    """The mocks, with the resources of earlier tests forgotten."""
    MOCKS.resources.clear()
    yield MOCKS
