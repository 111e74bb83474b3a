"""Reading a Kubeflow Trainer TrainJob manifest, for `spotkube pipeline-check` and `spotkube simulate`:
its runtime, node count, resources per node and Kueue queue label, as kubeflow/trainer v2.2.1
`pkg/apis/trainer/v1alpha1/trainjob_types.go` names them. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from spotkube.platform import contract
from spotkube.platform.addons import trainer_reference, training_runtime
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.pipeline_reader import CompiledPipeline, parse_pipeline, read_pipeline
from spotkube.platform.records import record

KIND = "TrainJob"
#: The checkpoint contract, as environment variables of every worker (`spotkube.training` writes them): where
#: to save and resume, and how often to save while running.
CHECKPOINT_DIR_ENV = "SPOTKUBE_CHECKPOINT_DIR"
CHECKPOINT_INTERVAL_ENV = "SPOTKUBE_CHECKPOINT_INTERVAL_SECONDS"


class TrainJobError(SpotkubeError):
    """A TrainJob manifest that can't be read or judged."""


@record
class TrainJob:
    """What the review reads of one TrainJob."""

    source: str
    name: str
    namespace: str
    runtime: str
    runtime_kind: str
    num_nodes: int
    #: The pod-level resources a node's worker asks for (`resourcesPerNode`), as Kubernetes quantities.
    resources: Mapping[str, Any]
    queue: str | None
    #: The checkpoint interval the job says it saves at (its workers' env), None when it says none.
    checkpoint_interval_seconds: int | None = None
    #: Where its workers save and resume (their env), None when it says nowhere.
    checkpoint_dir: str | None = None

    def worker_pod_spec(self, runtime_pod_spec: Mapping[str, Any]) -> dict[str, Any]:
        """A worker's pod spec on a runtime: the runtime's, with the job's resources on its trainer container."""
        containers = [dict(c) for c in runtime_pod_spec.get("containers") or ()] or [
            {"name": trainer_reference.TRAINER_CONTAINER}]
        for container in containers:
            if container.get("name") == trainer_reference.TRAINER_CONTAINER and self.resources:
                container["resources"] = dict(self.resources)
        return {**runtime_pod_spec, "containers": containers}


def is_trainjob(document: Any) -> bool:
    return (isinstance(document, Mapping) and document.get("kind") == KIND
            and str(document.get("apiVersion", "")).startswith(f"{trainer_reference.API_GROUP}/"))


def _whole(value: Any, where: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TrainJobError(f"{where}: {value!r} is not a whole number above 0")
    return value


def parse_trainjob(document: Mapping[str, Any], source: str) -> TrainJob:
    """One TrainJob; errors name the file and the field."""
    metadata = document.get("metadata") if isinstance(document.get("metadata"), Mapping) else {}
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        raise TrainJobError(f"{source}: TrainJob has no spec")
    ref = spec.get("runtimeRef")
    if not isinstance(ref, Mapping) or not ref.get("name"):
        raise TrainJobError(f"{source}: spec.runtimeRef.name is missing; name a runtime, e.g. "
                            f"{training_runtime.runtime_name('nvidia-l4')}")
    trainer = spec.get("trainer") or {}
    if not isinstance(trainer, Mapping):
        raise TrainJobError(f"{source}: spec.trainer is not a mapping")
    resources = trainer.get("resourcesPerNode") or {}
    if not isinstance(resources, Mapping):
        raise TrainJobError(f"{source}: spec.trainer.resourcesPerNode is not a mapping")
    labels = metadata.get("labels") if isinstance(metadata.get("labels"), Mapping) else {}
    env = {str(e.get("name")): e.get("value") for e in trainer.get("env") or () if isinstance(e, Mapping)}
    interval = env.get(CHECKPOINT_INTERVAL_ENV)
    return TrainJob(
        source=source,
        name=str(metadata.get("name") or Path(source).stem),
        namespace=str(metadata.get("namespace") or "default"),
        runtime=str(ref["name"]),
        runtime_kind=str(ref.get("kind") or training_runtime.KIND),
        num_nodes=_whole(trainer.get("numNodes"), f"{source}: spec.trainer.numNodes", 1),
        resources=dict(resources),
        queue=str(labels[contract.KUEUE_QUEUE_LABEL]) if labels.get(contract.KUEUE_QUEUE_LABEL) else None,
        checkpoint_interval_seconds=int(interval) if isinstance(interval, str) and interval.isdigit() else None,
        checkpoint_dir=str(env[CHECKPOINT_DIR_ENV]) if env.get(CHECKPOINT_DIR_ENV) else None,
    )


def read_documents(path: Path, expected: str) -> list[Any]:
    """The YAML documents of a file; `expected` says what the file should be, for the error."""
    source = str(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise SpotkubeError(f"{source}: no such file; pass {expected}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise SpotkubeError(f"{source}: cannot be read: {err}") from None
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise SpotkubeError(f"{source}: is not valid YAML{where}: {getattr(err, 'problem', None) or err}") from None


def read_check_file(path: Path) -> CompiledPipeline | TrainJob:
    """A file `pipeline-check` and `simulate` take: a TrainJob manifest, or else a compiled KFP pipeline
    (read with `read_pipeline`'s own messages)."""
    try:
        documents = read_documents(path, "a pipeline compiled with kfp.compiler.Compiler().compile(...)")
    except SpotkubeError:
        return read_pipeline(path)
    if documents and is_trainjob(documents[0]):
        if len(documents) > 1:
            raise TrainJobError(f"{path}: holds {len(documents)} documents; pass one TrainJob a file")
        return parse_trainjob(documents[0], str(path))
    return parse_pipeline(documents, str(path))
