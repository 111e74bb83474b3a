"""Write a Kubeflow Trainer TrainJob for a spotkube stack: queued, on the stack's runtime, with its checkpoints.

`train_job` returns the manifest of a multi-node PyTorch job as a dict (`to_yaml` for a file to
`kubectl apply -f` or to `spotkube pipeline-check`). It writes what the stack's scheduling contract needs
and nothing else: the Kueue queue label (all workers admitted at once, or none), the runtime of the GPU
type (`spotkube-<gpu type>`, which carries the pools' tolerations and affinity, the eviction grace and the
failure policy), the resources of each node, and the checkpoint contract, as environment variables every
worker reads:

- `SPOTKUBE_CHECKPOINT_DIR`: where to save and where to resume from (an object store URI the nodes'
  identity can write, or a path on a volume the workers mount); a restarted job finds its last
  checkpoint there. With `checkpoint_store` (the stack's `training.checkpointStore`, which
  `stack_checkpoint_store` reads from the stack file, or a cluster component's `checkpoint_store`, whose
  URI `store_location` gives) it is `<store>/<job name>`.
- `SPOTKUBE_CHECKPOINT_INTERVAL_SECONDS`: how often to save while running (`spotkube simulate` recommends
  one); on SIGTERM a worker saves at once, within the runtime's grace.

examples/training/ddp_train.py is a PyTorch DDP script that keeps this contract. No Pulumi, no kfp.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from spotkube.clouds import CLOUDS, load_stack_spec, profile
from spotkube.platform.addons import trainer_reference, training_runtime
from spotkube.platform.contract import GPU_RESOURCE, KUEUE_LOCAL_QUEUE, KUEUE_QUEUE_LABEL
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import find_project
from spotkube.platform.trainjob_reader import CHECKPOINT_DIR_ENV, CHECKPOINT_INTERVAL_ENV

__all__ = ["CHECKPOINT_DIR_ENV", "CHECKPOINT_INTERVAL_ENV", "stack_checkpoint_store", "store_location", "to_yaml",
           "train_job"]

#: Where spotkube's Kueue serves its LocalQueue (Kubeflow's namespace): a queued TrainJob must run there.
NAMESPACE = "kubeflow"
_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


def _positive(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what}: {value!r} is not a whole number above 0")
    return value


def train_job(
    name: str,
    *,
    gpu_type: str,
    image: str,
    command: Sequence[str],
    checkpoint_dir: str | None = None,
    checkpoint_store: str | None = None,
    num_nodes: int = 2,
    gpus_per_node: int = 1,
    checkpoint_interval_seconds: int = 1800,
    queue: str | None = KUEUE_LOCAL_QUEUE,
    cpu: str | None = None,
    memory: str | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A TrainJob of `num_nodes` workers with `gpus_per_node` GPUs of `gpu_type` each, sent to Kueue's `queue`
    (None: not queued, so not admitted as a gang) in Kubeflow's namespace, on the runtime spotkube registers
    for the GPU type. `command` runs on every node under torchrun (Trainer's torch runtime); `env` adds
    variables of the job's own. The job saves in `checkpoint_dir`, or under `checkpoint_store` (a store's
    location, `stack_checkpoint_store(stack)`) in `<store>/<name>`: exactly one of the two."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"name: {name!r} is not a Kubernetes name; use lower-case letters, digits and '-', "
                         "starting with a letter, at most 63 characters")
    if checkpoint_dir is not None and checkpoint_store is not None:
        raise ValueError("checkpoint_dir and checkpoint_store: give one; with checkpoint_store the job saves in "
                         f"{checkpoint_store.rstrip('/')}/{name}")
    if checkpoint_store is not None:
        if not checkpoint_store.strip("/"):
            raise ValueError("checkpoint_store: is empty; give the stack's store, stack_checkpoint_store(stack)")
        checkpoint_dir = f"{checkpoint_store.rstrip('/')}/{name}"
    if not checkpoint_dir:
        raise ValueError("checkpoint_dir: is empty; name where the workers save and resume, e.g. "
                         "gs://team-checkpoints/resnet or /mnt/checkpoints/resnet, or give checkpoint_store")
    if not command:
        raise ValueError("command: is empty; give the training script's command line, e.g. "
                         "['python', '/app/ddp_train.py']")
    extra = dict(env or {})
    reserved = sorted({CHECKPOINT_DIR_ENV, CHECKPOINT_INTERVAL_ENV} & set(extra))
    if reserved:
        raise ValueError(f"env: {reserved[0]} is set by train_job from its own argument; remove it from env")
    requests: dict[str, str] = {GPU_RESOURCE: str(_positive(gpus_per_node, "gpus_per_node"))}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    variables = {CHECKPOINT_DIR_ENV: checkpoint_dir,
                 CHECKPOINT_INTERVAL_ENV: str(_positive(checkpoint_interval_seconds, "checkpoint_interval_seconds")),
                 **extra}
    metadata: dict[str, Any] = {"name": name, "namespace": NAMESPACE}
    if queue is not None:
        metadata["labels"] = {KUEUE_QUEUE_LABEL: queue}
    return {
        "apiVersion": trainer_reference.API_VERSION,
        "kind": "TrainJob",
        "metadata": metadata,
        "spec": {
            "runtimeRef": {"name": training_runtime.runtime_name(gpu_type), "apiGroup": trainer_reference.API_GROUP,
                           "kind": training_runtime.KIND},
            "trainer": {
                "image": image,
                "command": list(command),
                "numNodes": _positive(num_nodes, "num_nodes"),
                "resourcesPerNode": {"requests": dict(requests), "limits": {GPU_RESOURCE: requests[GPU_RESOURCE]}},
                "env": [{"name": key, "value": value} for key, value in variables.items()],
            },
        },
    }


def stack_checkpoint_store(stack: str, project_dir: str | Path = ".") -> str:
    """The location of a stack's checkpoint store (`az://<account>/checkpoints`, `gs://<bucket>`), read from
    its stack file in the Pulumi project at or above `project_dir`; a stack without one is an error naming
    the key to set."""
    spec = load_stack_spec(find_project(Path(project_dir)), stack)
    store = spec.training.checkpoint_store
    if store is None:
        raise SpotkubeError(f"stack {stack} has no checkpoint store: set spotkube:training.checkpointStore "
                            "({name: ...}) in its stack file, or give train_job a checkpoint_dir")
    return store_location(spec.cloud, store.name)


def store_location(cloud: str, name: str) -> str:
    """The location of the checkpoint store a cluster component of `cloud` creates from its args'
    `checkpoint_store` (`name`), for programs that build the cluster in Python rather than from a stack file."""
    if cloud not in CLOUDS:
        raise ValueError(f"cloud: {cloud!r} is not a cloud spotkube knows; use {' or '.join(map(repr, CLOUDS))}")
    if not name:
        raise ValueError("name: is empty; give the cluster's checkpoint_store")
    return profile(cloud).checkpoint_location(name)


def to_yaml(job: Mapping[str, Any]) -> str:
    """The manifest as YAML, for `kubectl apply -f` and `spotkube pipeline-check`."""
    return yaml.safe_dump(dict(job), sort_keys=False)
