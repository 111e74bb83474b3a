"""Read what the KFP compiler wrote into steps, each with the `contract.Placement` its tolerations, node
selector, affinity and GPU request amount to, for `pipeline_check`. Imports neither kfp nor Pulumi.

Where KFP differs from a pod spec: `nodeSelector` is `{labels: {...}}`; `nodeAffinity` is a list of
terms, required without `weight` and preferred with it (as the KFP driver does); the GPU request is
the executor's `resources.accelerator` (`resourceType`/`resourceCount`, or the older `type`/`count`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from spotkube.platform import contract
from spotkube.platform.contract import Placement, PoolContract, Requirement, Term, Toleration
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.records import record

#: KFP's default `backoff_max_duration`. Argo measures it from the start of the first attempt and
#: ends later attempts at that deadline, so with it a spot step that runs over an hour is never
#: retried after an eviction.
KFP_DEFAULT_RETRY_WINDOW_SECONDS = 3600


class PipelineCheckError(SpotkubeError):
    """A file that is not a readable compiled KFP pipeline, or pool contracts that are malformed."""


# --- Reading a compiled pipeline -----------------------------------------------------------------


@record
class Retry:
    """A step's retry policy as compiled; `source` names the enclosing pipeline task it comes from
    when the step inherits it from a sub-pipeline's retry."""

    max_retries: int
    backoff_seconds: float | None = None
    backoff_factor: float | None = None
    window_seconds: float | None = None
    source: str = ""


@record
class Step:
    """One task of the pipeline that runs a pod: its path in the DAG, its constraints and the timing
    it declares (`runtime_seconds`, `checkpoint_seconds`: the pod annotations of
    `spotkube.pipelines.declare_timing`, None when not declared)."""

    name: str
    executor: str
    placement: Placement
    retry: Retry | None = None
    #: How often the step may be retried after failing on its own, as `on_spot(..., failures=N)` states
    #: it (the pod annotation `contract.FAILURE_RETRIES_ANNOTATION`); None when it states nothing.
    failures_wanted: int | None = None
    runtime_seconds: int | None = None
    checkpoint_seconds: int | None = None
    #: The Kueue LocalQueue the step's pod names (the pod label `contract.KUEUE_QUEUE_LABEL`, set by
    #: `spotkube.pipelines.to_queue`); None when the step is not queued.
    queue: str | None = None


@record
class CompiledPipeline:
    """The pod-running steps of a compiled pipeline file, in the order the file lists them."""

    source: str
    name: str
    steps: tuple[Step, ...]


def read_pipeline(path: Path) -> CompiledPipeline:
    """Read a file written by `kfp.compiler.Compiler().compile(...)`; PipelineCheckError names the file
    when it is missing, empty, not YAML, or not a compiled KFP pipeline."""
    source = str(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise PipelineCheckError(f"{source}: no such file; pass a pipeline compiled with "
                                 "kfp.compiler.Compiler().compile(...)") from None
    except (OSError, UnicodeDecodeError) as err:
        raise PipelineCheckError(f"{source}: cannot be read: {err}") from None
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise PipelineCheckError(
            f"{source}: is not valid YAML{where}: {getattr(err, 'problem', None) or err}"
        ) from None
    return parse_pipeline(documents, source)


def parse_pipeline(documents: Sequence[Any], source: str) -> CompiledPipeline:
    """Read the compiled documents: the pipeline spec, then the optional platform spec."""
    if not documents:
        raise PipelineCheckError(f"{source}: is empty; pass a pipeline compiled with "
                                 "kfp.compiler.Compiler().compile(...)")
    spec = documents[0]
    if not isinstance(spec, Mapping) or not isinstance(spec.get("root"), Mapping) \
            or not isinstance(spec.get("pipelineInfo"), Mapping):
        kind = f"; it is a Kubernetes {spec['kind']} manifest" if isinstance(spec, Mapping) and "kind" in spec else ""
        raise PipelineCheckError(
            f"{source}: is not a compiled KFP pipeline (it has no pipelineInfo and root{kind}); compile the "
            "pipeline with kfp.compiler.Compiler().compile(pipeline, 'pipeline.yaml')"
        )
    platform = _platform_executors(documents[1:], source)
    components = _mapping(spec.get("components"), f"{source}: components")
    executors = _mapping(_mapping(spec.get("deploymentSpec"), f"{source}: deploymentSpec").get("executors"),
                         f"{source}: deploymentSpec.executors")
    reader = _Reader(source, components, executors, platform)
    try:
        steps = tuple(reader.walk(spec["root"], prefix="", inherited=None))
    except (TypeError, ValueError, KeyError) as err:
        # A hand-edited or truncated file: a field of the wrong type deep inside a task or executor.
        raise PipelineCheckError(f"{source}: is not a well-formed compiled KFP pipeline ({err!r})") from None
    name = str(spec["pipelineInfo"].get("name") or Path(source).stem)
    return CompiledPipeline(source=source, name=name, steps=steps)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PipelineCheckError(f"{where}: expected a mapping, found {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise PipelineCheckError(f"{where}: expected a list, found {type(value).__name__}")
    return value


def _platform_executors(documents: Sequence[Any], source: str) -> Mapping[str, Any]:
    """`platforms.kubernetes.deploymentSpec.executors` of the platform spec (the second document);
    a pipeline without any Kubernetes settings has none."""
    if not documents:
        return {}
    platforms = _mapping(_mapping(documents[0], f"{source}: platform spec").get("platforms"), f"{source}: platforms")
    kubernetes = _mapping(platforms.get("kubernetes"), f"{source}: platforms.kubernetes")
    deployment = _mapping(kubernetes.get("deploymentSpec"), f"{source}: platforms.kubernetes.deploymentSpec")
    return _mapping(deployment.get("executors"), f"{source}: platforms.kubernetes.deploymentSpec.executors")


def _seconds(value: Any) -> float | None:
    """A protobuf Duration as compiled (`"300s"`), in seconds."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)s?\s*", str(value))
    return float(match.group(1)) if match else None


def _retry(task: Mapping[str, Any], source: str = "") -> Retry | None:
    policy = task.get("retryPolicy")
    if not isinstance(policy, Mapping):
        return None
    factor = policy.get("backoffFactor")
    return Retry(
        max_retries=int(policy.get("maxRetryCount") or 0),
        backoff_seconds=_seconds(policy.get("backoffDuration")),
        backoff_factor=float(factor) if isinstance(factor, int | float) else None,
        window_seconds=_seconds(policy.get("backoffMaxDuration")),
        source=source,
    )


def _declared_seconds(annotations: Mapping[str, Any], key: str, where: str) -> int | None:
    """A timing annotation in whole seconds (above 0), None when absent."""
    if key not in annotations:
        return None
    value = str(annotations[key])
    if not value.isdigit() or int(value) == 0:
        raise PipelineCheckError(f"{where}.podMetadata.annotations.{key}: {value!r} is not a whole number of "
                                 "seconds above 0; declare it with spotkube.pipelines.declare_timing")
    return int(value)


def _failures_wanted(annotations: Mapping[str, Any], where: str) -> int | None:
    """The step's stated failure retries, from its pod annotations (None when it states none)."""
    value = annotations.get(contract.FAILURE_RETRIES_ANNOTATION)
    if value is None:
        return None
    if not str(value).isdigit():
        raise PipelineCheckError(f"{where}.podMetadata.annotations.{contract.FAILURE_RETRIES_ANNOTATION}: "
                                 f"{value!r} is not a whole number of retries; set it with "
                                 "on_spot(..., failures=N)")
    return int(str(value))


@dataclass
class _Reader:
    source: str
    components: Mapping[str, Any]
    executors: Mapping[str, Any]
    platform: Mapping[str, Any]

    def walk(self, component: Mapping[str, Any], prefix: str, inherited: Retry | None,
             ancestors: frozenset[str] = frozenset()) -> Iterator[Step]:
        """Every pod-running task under a DAG component, sub-pipelines, conditions and loops included; a
        sub-pipeline's retry policy is inherited by the steps inside it that have none of their own."""
        tasks = _mapping(_mapping(component.get("dag"), f"{self.source}: dag").get("tasks"),
                         f"{self.source}: dag.tasks")
        for task_name, task in tasks.items():
            task = _mapping(task, f"{self.source}: task {prefix}{task_name}")
            path = f"{prefix}{task_name}"
            ref = _mapping(task.get("componentRef"), f"{self.source}: task {path}.componentRef").get("name")
            child = self.components.get(ref)
            if not isinstance(child, Mapping):
                raise PipelineCheckError(f"{self.source}: task {path} refers to component {ref!r}, "
                                         "which the file does not define")
            if "dag" in child:
                if ref in ancestors:
                    raise PipelineCheckError(f"{self.source}: component {ref!r} contains itself (task {path})")
                yield from self.walk(child, f"{path}/", _retry(task, source=path) or inherited, ancestors | {ref})
            elif child.get("executorLabel"):
                yield self.step(path, str(child["executorLabel"]), _retry(task) or inherited)

    def step(self, path: str, executor: str, retry: Retry | None) -> Step:
        where = f"{self.source}: platforms.kubernetes.deploymentSpec.executors.{executor}"
        config = _mapping(self.platform.get(executor), where)
        unsupported: list[str] = []
        tolerations: list[Toleration] = []
        for i, item in enumerate(_list(config.get("tolerations"), f"{where}.tolerations")):
            item = _mapping(item, f"{where}.tolerations[{i}]")
            if "tolerationJson" in item:
                unsupported.append("its tolerations come from a pipeline parameter, which pipeline-check "
                                   "cannot see; set them in the pipeline code")
                continue
            tolerations.append(Toleration.from_k8s(item))
        selector = _mapping(config.get("nodeSelector"), f"{where}.nodeSelector")
        if "nodeSelectorJson" in selector:
            unsupported.append("its nodeSelector comes from a pipeline parameter, which pipeline-check cannot see")
        labels = {str(k): str(v) for k, v in _mapping(selector.get("labels"), f"{where}.nodeSelector.labels").items()}
        required: list[Term] = []
        preferred: list[tuple[int, Term]] = []
        for i, term in enumerate(_list(config.get("nodeAffinity"), f"{where}.nodeAffinity")):
            term = _mapping(term, f"{where}.nodeAffinity[{i}]")
            if "nodeAffinityJson" in term:
                unsupported.append("its node affinity comes from a pipeline parameter, which pipeline-check cannot see")
                continue
            if term.get("matchFields"):
                unsupported.append("its node affinity uses matchFields (node names), which no pool contract has")
            try:
                expressions = tuple(Requirement.from_k8s(e) for e in _list(term.get("matchExpressions"),
                                                                             f"{where}.nodeAffinity[{i}].matchExpressions"))
            except (KeyError, TypeError, AttributeError):
                raise PipelineCheckError(f"{where}.nodeAffinity[{i}].matchExpressions: each needs a key "
                                         "and an operator") from None
            if not expressions and not term.get("matchFields"):
                continue  # the KFP driver skips empty terms
            if "weight" in term:
                preferred.append((int(term["weight"]), expressions))
            else:
                required.append(expressions)
        gpus, resource, gpu_problem = self.gpus(executor)
        if gpu_problem:
            unsupported.append(gpu_problem)
        placement = Placement(tolerations=tuple(tolerations), node_selector=labels, required=tuple(required) or None,
                              preferred=tuple(preferred), gpus=gpus, unsupported=tuple(unsupported),
                              gpu_resource=resource)
        pod_metadata = _mapping(config.get("podMetadata"), f"{where}.podMetadata")
        annotations = _mapping(pod_metadata.get("annotations"), f"{where}.podMetadata.annotations")
        queue = _mapping(pod_metadata.get("labels"), f"{where}.podMetadata.labels").get(contract.KUEUE_QUEUE_LABEL)
        return Step(name=path, executor=executor, placement=placement, retry=retry,
                    queue=None if queue is None else str(queue),
                    failures_wanted=_failures_wanted(annotations, where),
                    runtime_seconds=_declared_seconds(annotations, contract.RUNTIME_ANNOTATION, where),
                    checkpoint_seconds=_declared_seconds(annotations, contract.CHECKPOINT_ANNOTATION, where))

    def gpus(self, executor: str) -> tuple[int, str, str]:
        """GPUs (or GPU slices) per pod from `resources.accelerator` and the resource they are asked
        as, or why they cannot be judged."""
        spec = _mapping(self.executors.get(executor), f"{self.source}: deploymentSpec.executors.{executor}")
        resources = _mapping(_mapping(spec.get("container"), f"{self.source}: {executor}.container").get("resources"),
                             f"{self.source}: {executor}.resources")
        accelerator = _mapping(resources.get("accelerator"), f"{self.source}: {executor}.resources.accelerator")
        if not accelerator:
            return 0, contract.GPU_RESOURCE, ""
        kind = str(accelerator.get("resourceType") or accelerator.get("type") or "")
        count = str(accelerator.get("resourceCount") or accelerator.get("count") or "0")
        if not count.isdigit():
            return 0, contract.GPU_RESOURCE, (
                f"its accelerator count {count!r} is set from a pipeline parameter, which pipeline-check "
                "cannot see; set_accelerator_limit with a number")
        if int(count) and not contract.is_gpu_resource(kind):
            return 0, contract.GPU_RESOURCE, (
                f"it requests {count} × {kind or 'an unnamed accelerator'}, a resource no spotkube node "
                f"advertises; use set_accelerator_type({contract.GPU_RESOURCE!r}) (or "
                f"{contract.MIG_RESOURCE_PREFIX}<profile> for a MIG instance under the mixed strategy)")
        return int(count), kind or contract.GPU_RESOURCE, ""


# --- Reading pool contracts ---------------------------------------------------------------------


def load_pool_contracts(data: Any, source: str, stack: str | None = None) -> tuple[str, list[PoolContract]]:
    """Pool contracts, with the stack name when known, from the `poolContracts` output (a list),
    `pulumi stack output --json`, or `spotkube plan --format json` for one stack or several (`stack`)."""
    name = stack or ""
    pools: Any = data
    if isinstance(data, Mapping) and "stacks" in data:
        documents = [d for d in _list(data["stacks"], f"{source}: stacks") if isinstance(d, Mapping)]
        names = [str(d.get("stack")) for d in documents]
        if stack is None and len(documents) != 1:
            raise PipelineCheckError(f"{source}: holds the stacks {', '.join(names)}; name the one to use")
        chosen = next((d for d in documents if stack is None or d.get("stack") == stack), None)
        if chosen is None:
            raise PipelineCheckError(f"{source}: has no stack {stack!r}; stacks: {', '.join(names)}")
        data = chosen
    if isinstance(data, Mapping) and "pools" in data:
        name, pools = stack or str(data.get("stack") or ""), data["pools"]
    elif isinstance(data, Mapping) and "poolContracts" in data:
        pools = data["poolContracts"]
    if not isinstance(pools, list) or not pools:
        raise PipelineCheckError(
            f"{source}: holds no pool contracts; use the JSON of `spotkube plan --format json` or the "
            "stack's poolContracts output"
        )
    contracts = []
    for i, pool in enumerate(pools):
        try:
            contracts.append(PoolContract.from_json(pool))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise PipelineCheckError(f"{source}: pool [{i}] is not a pool contract ({err})") from None
    return name, contracts


def read_pool_file(path: Path, stack: str | None = None) -> tuple[str, list[PoolContract]]:
    """`load_pool_contracts` for a JSON file, with errors that name the file."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise PipelineCheckError(f"{path}: no such file; save `spotkube plan --stack NAME --format json` "
                                 "or `pulumi stack output --json` there") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PipelineCheckError(f"{path}: is not readable JSON: {err}") from None
    return load_pool_contracts(data, str(path), stack)
