"""spotkube's components as a Pulumi component provider, for programs in any Pulumi language.

`pulumi package add github.com/<owner>/spotkube@v0.1.0` runs the root `__main__.py` (which calls `main()`)
and reads the schema the provider infers from the components' TypedDict args and annotated outputs. The
component list is `spotkube.__all__`'s, so every component exported for Python is offered to every language.
"""

import inspect

import pulumi
from pulumi.provider.experimental import component_provider_host
from pulumi.provider.experimental.component import ComponentProvider

import spotkube

#: The package name in every type token (`spotkube:index:AksGpuCluster`); the host refuses others.
PACKAGE = "spotkube"


def components() -> list[type[pulumi.ComponentResource]]:
    """Every ComponentResource class `spotkube` exports, in `__all__` order."""
    exported = (getattr(spotkube, name) for name in spotkube.__all__)
    return [obj for obj in exported if inspect.isclass(obj) and issubclass(obj, pulumi.ComponentResource)]


def schema() -> str:
    """The package schema the provider serves, computed offline (no engine needed)."""
    return ComponentProvider(components(), PACKAGE, version=spotkube.__version__).schema


def main() -> None:
    """Serve the components to the Pulumi engine; the engine passes its address in argv."""
    component_provider_host(components(), PACKAGE, version=spotkube.__version__)
