"""Where a spot step should run: a GPU type, CPU spot capacity, or a named pool of a stack.

Each target turns into a `contract.Placement`, so the tolerations and node affinity a step gets
are the ones the pools were built to match. GPU and CPU targets only use spotkube's neutral labels
and tolerate the spot taints of both clouds, so a pipeline compiled with them runs on AKS and GKE
alike; a pool target ties the step to a pool name, which only the stacks with that pool have.

This module imports no kfp: targets can be built and checked without the pipelines extra.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from spotkube.clouds import CLOUDS
from spotkube.platform import contract
from spotkube.platform.contract import Placement, PoolContract
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.pipeline_reader import PipelineCheckError, load_pool_contracts, read_pool_file


def known_gpu_types() -> frozenset[str]:
    """spotkube's cloud-neutral GPU vocabulary (GKE's accelerator names, which the AKS catalog maps its
    VM sizes onto): every cloud's GPU types in the GPU catalog in use. A type outside it is a typo, or a
    GPU no spotkube pool can carry."""
    return frozenset().union(*(p.gpu_types() for p in CLOUDS.values()))

#: The most GPUs one spotkube node carries (the spec's limit for `gpu.count`).
MAX_GPUS_PER_NODE = 16


class PlacementError(SpotkubeError, ValueError):
    """A spot step asked for something no spotkube pool can give, said when the pipeline is built."""


def _gpu_count(count: Any, limit: int = MAX_GPUS_PER_NODE) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= limit:
        raise PlacementError(f"count={count!r} is not allowed; use a whole number of GPUs from 1 to {limit}")
    return count


def _gpu_type_hint(name: str) -> str:
    """When someone passes a machine name instead of a GPU type, say which GPU type it carries."""
    carried = next((gpu for p in CLOUDS.values() if (gpu := p.machine_gpu(name))), None)
    if carried:
        return f" ({name} is a machine; it carries {carried[0]})"
    return ""


@dataclass(frozen=True)
class GpuTarget:
    """Interruptible GPU capacity of one GPU type, on whichever cloud the pipeline runs.

    `gpu_type` uses spotkube's neutral names (`nvidia-tesla-t4`, `nvidia-l4`, `nvidia-a100-80gb`,
    ...), `count` is the GPUs the step's pod requests. With `fallback_to_on_demand`, spot or
    preemptible nodes are preferred and an on-demand pool of the same GPU type is accepted when spot
    capacity is gone; without it the step waits for spot capacity.
    """

    gpu_type: str | tuple[str, ...]
    count: int = 1
    fallback_to_on_demand: bool = False
    #: A MIG instance of this profile (`1g.10gb`) instead of whole GPUs, on a pool partitioned so.
    mig: str | None = None
    #: A share of a time-shared or MPS GPU (GKE), on a pool sharing its GPUs that way.
    sharing: str | None = None
    #: With `sharing`: only pools sharing each GPU among exactly this many pods.
    clients_per_gpu: int | None = None
    #: How the cluster's NVIDIA device plugin advertises MIG instances: `single` (spotkube's default,
    #: `nvidia.com/gpu`, the same on GKE) or `mixed` (`nvidia.com/mig-<profile>`).
    mig_strategy: str = "single"

    def __post_init__(self) -> None:
        types = (self.gpu_type,) if isinstance(self.gpu_type, str) else self.gpu_type
        if not isinstance(types, tuple) or not types:
            raise PlacementError(f"gpu_type={self.gpu_type!r}: name a GPU type, or a tuple of GPU types any of which "
                                 "will do")
        known = known_gpu_types()
        for gpu_type in types:
            if not isinstance(gpu_type, str) or gpu_type not in known:
                raise PlacementError(
                    f"GPU type {gpu_type!r} is not one spotkube builds pools for"
                    f"{_gpu_type_hint(str(gpu_type))}; use one of {', '.join(sorted(known))}"
                )
        if len(types) > 1 and (self.fallback_to_on_demand or self.mig is not None):
            raise PlacementError("several GPU types take neither fallback_to_on_demand (a compute class is one GPU "
                                 "type's) nor mig (profiles differ by GPU); name one GPU type")
        _gpu_count(self.count)
        if self.mig is not None and self.sharing is not None:
            raise PlacementError("mig and sharing are two ways to share a GPU; ask for one of them")
        if self.mig is not None:
            profiles = sorted({m for p in CLOUDS.values() for m in p.mig_profiles(str(self.gpu_type))})
            if self.mig not in profiles:
                offered = f"use one of {', '.join(profiles)}" if profiles else "it has no MIG; ask for whole GPUs"
                raise PlacementError(f"mig={self.mig!r} is not a MIG profile of {self.gpu_type} on any cloud; "
                                     f"{offered}")
        modes = sorted({m for p in CLOUDS.values() for m in p.shared_gpu_modes})
        if self.sharing is not None and self.sharing not in modes:
            raise PlacementError(f"sharing={self.sharing!r} is not a way spotkube shares GPUs; use one of "
                                 f"{', '.join(modes)}, or mig='<profile>' for a MIG instance")
        if self.clients_per_gpu is not None and (self.sharing is None or isinstance(self.clients_per_gpu, bool)
                                                 or not isinstance(self.clients_per_gpu, int)
                                                 or self.clients_per_gpu < 2):
            raise PlacementError(f"clients_per_gpu={self.clients_per_gpu!r} needs sharing and a whole number >= 2")
        if self.mig_strategy not in ("single", "mixed"):
            raise PlacementError(f"mig_strategy={self.mig_strategy!r}: use 'single' or 'mixed'")

    @property
    def shared(self) -> contract.SharedGpu | None:
        """The contract's request for a slice of a GPU, or None for whole GPUs."""
        if self.mig is not None:
            return contract.SharedGpu("mig", partition=self.mig, mig_strategy=self.mig_strategy)  # type: ignore[arg-type]
        if self.sharing is not None:
            return contract.SharedGpu(self.sharing, clients_per_gpu=self.clients_per_gpu)  # type: ignore[arg-type]
        return None

    def placement(self) -> Placement:
        return contract.spot_gpu(self.gpu_type, gpus=self.count, fallback_to_on_demand=self.fallback_to_on_demand,
                                 shared=self.shared)


@dataclass(frozen=True)
class CpuSpot:
    """Interruptible capacity without GPUs, for downloads, preprocessing and batch CPU work.

    `fallback_to_on_demand` defaults to True because a spot CPU pool is optional in a stack
    (`spotPools`): the step prefers spot or preemptible nodes without GPUs where the cluster has
    them and otherwise runs on the untainted on-demand platform pool. Set it to False to insist on
    spot capacity.
    """

    fallback_to_on_demand: bool = True

    def placement(self) -> Placement:
        return contract.spot_cpu(fallback_to_on_demand=self.fallback_to_on_demand)


PoolSource = str | PathLike[str] | Mapping[str, Any] | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class PoolTarget:
    """One named spot or preemptible pool of a stack (a GPU pool or a CPU spot pool), read from its
    pool contract.

    Pool names are per stack, so a pipeline compiled with a pool target runs only on clusters that
    have a pool of that name; prefer `GpuTarget` or `CpuSpot` for a pipeline meant for both clouds.
    `count` is the GPUs per pod on a GPU pool (default 1); leave it unset on a CPU pool.
    """

    pool: PoolContract
    count: int | None = None
    stack: str = ""

    def __post_init__(self) -> None:
        where = f"pool {self.pool.name!r}" + (f" of stack {self.stack}" if self.stack else "")
        if self.pool.capacity not in contract.INTERRUPTIBLE:
            fallback = (f"GpuTarget({self.pool.accelerator!r}, fallback_to_on_demand=True)" if self.pool.accelerator
                        else "CpuSpot()")
            raise PlacementError(
                f"{where} is {self.pool.capacity} capacity, and on_spot needs a spot or preemptible pool; use "
                f"{fallback} to prefer spot and fall back to on-demand"
            )
        if self.pool.accelerator:
            _gpu_count(self.gpus, limit=max(self.pool.advertised().values(), default=self.pool.gpu_count))
        elif self.gpus:
            raise PlacementError(f"{where} has no GPUs; leave count unset for it")

    @property
    def gpus(self) -> int:
        """GPUs per pod: `count`, or 1 on a GPU pool and 0 on a CPU pool when unset."""
        if self.count is None:
            return 1 if self.pool.accelerator else 0
        return self.count

    @classmethod
    def from_plan(
        cls, source: PoolSource, pool: str, *, count: int | None = None, stack: str | None = None
    ) -> PoolTarget:
        """The pool named `pool` from `spotkube plan --format json` or the stack's `poolContracts`.

        `source` is a path to that JSON, or the parsed data. A plan of several stacks (`--all`) needs
        `stack` to say which one.
        """
        try:
            if isinstance(source, str | PathLike):
                name, pools = read_pool_file(Path(source), stack)
            else:
                name, pools = load_pool_contracts(source, "pool contracts", stack)
        except PipelineCheckError as err:
            raise PlacementError(str(err)) from None
        chosen = next((p for p in pools if p.name == pool), None)
        if chosen is None:
            where = f"stack {name}" if name else "the pool contracts"
            raise PlacementError(f"{where} has no pool {pool!r}; pools: {', '.join(p.name for p in pools)}")
        return cls(chosen, count=count, stack=name)

    def placement(self) -> Placement:
        if self.pool.accelerator:
            sharing = self.pool.sharing
            shared = (contract.SharedGpu(sharing.mode, partition=sharing.partition,
                                         mig_strategy="mixed" if sharing.resource != contract.GPU_RESOURCE
                                         else "single") if sharing else None)
            return contract.spot_gpu(pool=self.pool.name, gpus=self.gpus, shared=shared)
        return contract.spot_cpu(pool=self.pool.name, fallback_to_on_demand=False)


SpotTarget = GpuTarget | CpuSpot | PoolTarget
