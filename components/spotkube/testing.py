"""Unit-test spotkube's components with Pulumi's own mocks: `SpotkubeMocks` answers what they ask the clouds.

Pulumi's unit tests (`pulumi.runtime.set_mocks` and `@pulumi.runtime.test`) replace the engine and every
provider with a `pulumi.runtime.Mocks`. The clusters read a few values that only a cloud can give: AKS's
user kubeconfig (`listManagedClusterUserCredentials`), a GKE cluster's endpoints and CA certificate,
the nodes' service account e-mail; a program around them may ask who runs it (`getClientConfig`), which
never decides the deployer's grant (the stack names the deployer). `SpotkubeMocks` answers each of them
with a value shaped exactly like the cloud's own answer and obviously fake (`.invalid` hosts, nil-like
GUIDs), and echoes every resource's inputs back as its state, as Pulumi's documented mocks do.
The same answers drive `spotkube plan`, which runs the stack program under these mocks.

    import pulumi
    from spotkube.testing import SpotkubeMocks

    pulumi.runtime.set_mocks(SpotkubeMocks(), preview=False)

A consumer's own mocks subclass it and fall back to it (`return super().call(args)`), or wrap it
through `computed_outputs` and `call_result`. Under a plain `Mocks` that answers nothing, the
components still register every resource, leave what they could not be told (the kubeconfig, the
deployer's role assignments) unknown, and log a warning that names this module.

It answers from the same place as the offline plan: each cloud's `offline` module, asked through the
registry (`spotkube.clouds.offline_answer` and `offline_outputs`). It imports Pulumi and the pure
`spotkube.clouds`, never a cloud SDK, the components or the CLI.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import import_module
from typing import Any

import pulumi

from spotkube.clouds import PROFILES, offline_answer, offline_id, offline_outputs


@functools.cache
def _fixtures() -> dict[str, Any]:
    """The clouds' fake answers a consumer's tests compare with, by the name this module hands each out
    under: each registered cloud's `offline.FIXTURES`. Imported when first asked for, so that a plan
    loads only its own cloud's."""
    return {name: value for modules in PROFILES.values()
            for name, value in import_module(modules.module("offline")).FIXTURES.items()}


def __getattr__(name: str) -> Any:
    """One of the clouds' fake answers (`_fixtures`), as a module constant; `__all__` likewise."""
    if name == "__all__":
        return [*_fixtures(), "SpotkubeMocks", "call_result", "computed_outputs"]
    if name.startswith("_") or name not in _fixtures():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _fixtures()[name]


def computed_outputs(type_token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The outputs a cloud computes for a new resource and that spotkube's components, or the
    resources a consumer typically wires into them, read: a GKE cluster's endpoints and CA, a
    service account's e-mail, a resource group's name, a VPC's and subnetwork's self links, a
    public address. Everything else is left to the inputs, which the mocks echo as state."""
    return offline_outputs(type_token, name, inputs)


def call_result(token: str, args: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The answer to a provider function (invoke) that spotkube's components call, shaped like the
    cloud's, or None for a function spotkube does not call (a wrapping `Mocks` answers those).
    `args` are the invoke's arguments, which no answer spotkube gives depends on."""
    return offline_answer(token) or None


class SpotkubeMocks(pulumi.runtime.Mocks):
    """A `pulumi.runtime.Mocks` for programs that use spotkube: every resource's state is its inputs
    plus what the cloud would compute (`computed_outputs`), and the components' invokes get the
    clouds' answers (`call_result`); any other invoke gets `{}`, as a plain `Mocks` would answer.

    Subclass it to answer more, and hand the rest back with `super()`."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        state = {"name": args.name, **args.inputs, **computed_outputs(args.typ, args.name, args.inputs)}
        return offline_id(args.typ, args.name, args.inputs) or f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:  # type: ignore[override]
        result = call_result(args.token, args.args)
        return {} if result is None else result
