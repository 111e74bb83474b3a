"""Send Kubeflow Pipelines steps to spotkube's spot GPU pools, eviction-safe, for AKS and GKE.

```python
from kfp import dsl
from spotkube.pipelines import CpuSpot, GpuTarget, on_demand, on_spot

@dsl.pipeline
def training():
    data = prepare()
    on_spot(data, CpuSpot())                                   # CPU spot, 5 retries 5 min apart
    model = train(data=data.output)
    on_spot(model, GpuTarget("nvidia-tesla-t4", count=1))      # spot T4 on either cloud
    declare_timing(model, runtime="3h", checkpoint_every="10m")  # for `spotkube simulate`
    on_demand(publish(model=model.output))                     # never on spot
```

Every toleration and node affinity comes from `spotkube.platform.contract`, the module that also built the
pools, and uses only the neutral `spotkube.io/*` labels plus the spot taints of both clouds, so a
pipeline compiled once runs on an AKS or a GKE cluster built by spotkube. Check a compiled
pipeline against a stack with `spotkube pipeline-check pipeline.yaml --stack NAME`.

Retries need one cluster setting: KFP compiles `set_retry` into an Argo retryStrategy without a
retryPolicy, so the workflow-controller's default applies. Argo's own default (OnFailure) skips a pod
deleted with its node (an Error), and KFP's shipped default (OnError) skips a pod evicted or stopped
by a node shutdown (a Failure) (kubeflow/pipelines #4333, #9950; docs/platform-facts.md#argo-retry-policies).
spotkube's Kubeflow Pipelines deployment sets the default retryPolicy to `Always` (stack key
`kubeflow.retryPolicy`); on a cluster whose KFP was installed another way, set `retryPolicy: Always`
in the workflow-controller's `workflowDefaults`. `spotkube pipeline-check` warns when a stack's spot steps
rely on retries and the stack does not install Kubeflow Pipelines.

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
    DEFAULT_RETRIES,
    DEFAULT_RETRY_WINDOW,
    apply_placement,
    declare_timing,
    on_demand,
    on_spot,
)
from spotkube.pipelines.targets import CpuSpot, GpuTarget, PlacementError, PoolTarget, SpotTarget, known_gpu_types

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_BACKOFF_FACTOR",
    "DEFAULT_RETRIES",
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
]
