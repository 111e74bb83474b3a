"""The typed outputs the cluster components share, as Pulumi's component analyzer accepts them.

`poolContracts` is each cluster component's output (`PoolContract.to_json`, one per pool), so that
other programs can target the pools; these TypedDicts give it a type in every language's SDK. The
args, which differ per cloud, are generated from the specs (`spotkube.platform.args_source`).
"""

from typing import NotRequired, TypedDict


class PoolContractGpu(TypedDict):
    type: str
    """GPU type."""
    count: int
    """GPUs per node."""


class PoolContractOutput(TypedDict):
    name: str
    """Pool name."""
    role: str
    """`system`, `platform` or `gpu`."""
    capacity: str
    """`spot`, `preemptible` or `on-demand`."""
    gpu: NotRequired[PoolContractGpu]
    """The pool's GPUs, absent on pools without GPUs."""
    labels: dict[str, str]
    """Every label the nodes carry, declared and cloud-added."""
    taints: list[str]
    """Every taint the nodes carry, as key=value:Effect."""
