"""spotkube: Pulumi components for ML platforms on AKS and GKE with spot GPU pools.

The components and their typed args are the public API. They are imported lazily, on first use,
so that the pure modules (`spotkube.platform.contract`, `spotkube.pipelines`, `spotkube.review.pipeline_check`)
can be used without loading Pulumi and the cloud SDKs: pipeline authors never need them.
"""

import functools
from importlib import import_module
from typing import TYPE_CHECKING, Any

#: Public name -> the module that defines it, for the names no cloud owns. Each registered cloud adds its
#: cluster and pool components and their args, generated from its spec, all named after the cloud
#: (`_cloud_exports`).
_EXPORTS = {
    "NvidiaDevicePlugin": "spotkube.components.device_plugin",
    "KubeflowPipelines": "spotkube.components.kubeflow",
    "Kueue": "spotkube.components.kueue",
    "KubeflowTrainer": "spotkube.components.trainer",
    **{name: "spotkube.components.args" for name in (
        "DevicePluginSettingsArgs",
        "KubeflowPipelinesArgs",
        "KubeflowTrainerArgs",
        "KueueArgs",
        "NvidiaDevicePluginArgs",
    )},
    "PoolContractOutput": "spotkube.shell.outputs",
}

if TYPE_CHECKING:
    __version__: str
    __all__: list[str]
    # Every registered cloud's components and args (a module `spotkube.cli.reference write` generates).
    from spotkube.clouds.exports import *  # noqa: F403
    from spotkube.components.args import DevicePluginSettingsArgs as DevicePluginSettingsArgs
    from spotkube.components.args import KubeflowPipelinesArgs as KubeflowPipelinesArgs
    from spotkube.components.args import KubeflowTrainerArgs as KubeflowTrainerArgs
    from spotkube.components.args import KueueArgs as KueueArgs
    from spotkube.components.args import NvidiaDevicePluginArgs as NvidiaDevicePluginArgs
    from spotkube.components.device_plugin import NvidiaDevicePlugin as NvidiaDevicePlugin
    from spotkube.components.kubeflow import KubeflowPipelines as KubeflowPipelines
    from spotkube.components.kueue import Kueue as Kueue
    from spotkube.components.trainer import KubeflowTrainer as KubeflowTrainer
    from spotkube.shell.outputs import PoolContractOutput as PoolContractOutput


@functools.cache
def _cloud_exports(name: str) -> dict[str, tuple[str, str | None]]:
    """A registered cloud's public names, each named after the cloud (`Aks...`) -> (the module that
    defines it, the SDK that module needs, which the base install leaves out). Read from the registry
    when a name of the cloud is first asked for, so that a program never loads another cloud's profile."""
    from spotkube.clouds import CLOUDS, PROFILES
    from spotkube.platform.args_source import cluster_args

    modules, cloud = PROFILES[name], CLOUDS[name]
    exports: dict[str, tuple[str, str | None]] = {
        cloud.component: (modules.module("component"), modules.sdk),
        cloud.node_pool.component: (modules.module("node_pool"), modules.sdk),
    }
    exports.update((args.name, (modules.module("args"), None)) for args in cluster_args(cloud))
    return exports


def _clouds() -> list[str]:
    return list(import_module("spotkube.clouds").PROFILES)


def _installed_version() -> str:
    """The installed distribution's version: pyproject.toml's `version` is its one source. Looked up
    on first use, because importlib.metadata costs every import of spotkube a few milliseconds."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("spotkube")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access (PEP 562); `__version__` and `__all__` likewise."""
    if name == "__version__":
        value: Any = _installed_version()
    elif name == "__all__":
        value = sorted([*_EXPORTS, *(n for cloud in _clouds() for n in _cloud_exports(cloud))])
    elif name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
    elif (cloud := next((c for c in _clouds() if name.startswith(c.capitalize())), None)) and (
            name in _cloud_exports(cloud)):
        module_name, sdk = _cloud_exports(cloud)[name]
        try:
            module = import_module(module_name)
        except ModuleNotFoundError as err:
            if sdk is None or (err.name or "").partition(".")[0] != sdk:
                raise
            from spotkube.shell.extras import missing_extra

            raise missing_extra(name, cloud) from None
        value = getattr(module, name)
    else:
        raise AttributeError(f"module 'spotkube' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *(n for cloud in _clouds() for n in _cloud_exports(cloud))})
