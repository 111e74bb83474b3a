"""Send Kubeflow Pipelines steps to spotkube's spot GPU pools, eviction-safe, for AKS and GKE.

```python
from kfp import dsl
from spotkube.pipelines import CpuSpot, GpuTarget, on_demand, on_spot, to_queue

@dsl.pipeline
def training():
    data = prepare()
    on_spot(data, CpuSpot())                                   # CPU spot, 10 evictions survived
    model = train(data=data.output)
    on_spot(model, GpuTarget("nvidia-tesla-t4", count=1))      # spot T4 on either cloud
    declare_timing(model, runtime="3h", checkpoint_every="10m")  # for `spotkube simulate`
    to_queue(model)                                            # waits in Kueue's queue for GPU quota
    on_demand(publish(model=model.output))                     # never on spot
```

Every toleration and node affinity comes from `spotkube.platform.contract`, the module that also built the
pools, and uses only the neutral `spotkube.io/*` labels plus the spot taints of both clouds, so a
pipeline compiled once runs on an AKS or a GKE cluster built by spotkube. Check a compiled
pipeline against a stack with `spotkube pipeline-check pipeline.yaml --stack NAME`.

Why a step is retried is the cluster's decision: spotkube's Kubeflow Pipelines deployment sets Argo's
workflow defaults to retry a step a node took away (spot eviction, node shutdown, drain) up to
`kubeflow.evictionRetryLimit` times and a step that failed on its own at most
`kubeflow.failureRetryLimit` times, with a `retryStrategy.expression` over the message Argo records
(docs/evictions.md). `on_spot(..., evictions=N)` sets the step's own limit (KFP's `set_retry`), which
caps both. On a cluster whose KFP was installed another way, copy those workflow defaults; `spotkube
pipeline-check` warns when a stack's spot steps rely on retries and the stack does not install Kubeflow
Pipelines.

Install with the extra: `pip install "spotkube[pipelines]"` (kfp and kfp-kubernetes). This package
never imports Pulumi.
"""

try:
    from kfp import kubernetes as _kfp_kubernetes  # noqa: F401  (kfp-kubernetes is the second half of the extra)
except ImportError as err:
    raise ImportError(
        "spotkube.pipelines needs kfp and kfp-kubernetes; install them with: pip install 'spotkube[pipelines]'"
    ) from err

from spotkube.pipelines.steps import (
    DEFAULT_BACKOFF,
    DEFAULT_BACKOFF_FACTOR,
    DEFAULT_EVICTIONS,
    DEFAULT_RETRY_WINDOW,
    apply_placement,
    declare_timing,
    on_demand,
    on_spot,
    to_queue,
)
from spotkube.pipelines.targets import CpuSpot, GpuTarget, PlacementError, PoolTarget, SpotTarget, known_gpu_types

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_BACKOFF_FACTOR",
    "DEFAULT_EVICTIONS",
    "DEFAULT_RETRY_WINDOW",
    "CpuSpot",
    "GpuTarget",
    "PlacementError",
    "PoolTarget",
    "SpotTarget",
    "apply_placement",
    "declare_timing",
    "known_gpu_types",
    "on_demand",
    "on_spot",
    "to_queue",
]
