"""`spotkube pipeline-check`: where each step of a compiled KFP pipeline can land on a stack.

A pipeline is compiled long before it meets a cluster, and a step whose tolerations or affinity
match no pool does not fail: its pod waits in Pending forever. This module reads what the KFP
compiler wrote (the pipeline spec and the Kubernetes platform spec), turns each step's scheduling
constraints into a `contract.Placement`, and asks the contract's matcher which pools of a stack
the step can land on, so the mistake shows up in CI instead of in a stuck run.

It imports neither kfp nor Pulumi, so it works in the core install; kfp is an optional extra.

What KFP writes differs from a Kubernetes pod spec in three places this reader minds:
- `nodeSelector` is `{labels: {...}}`, not a plain mapping;
- `nodeAffinity` is a list of terms: a term without `weight` becomes one of the OR'ed required
  node selector terms, a term with `weight` a preferred one (the KFP driver does exactly this);
- the GPU request is the executor's `resources.accelerator` (`resourceType`/`resourceCount`, or
  the older `type`/`count`), which the KFP driver turns into a container limit of that resource.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from spotkube.core import contract
from spotkube.core.contract import Placement, PoolContract, Requirement, Term, Toleration
from spotkube.core.errors import SpotkubeError

#: KFP's default `backoff_max_duration`. Argo measures it from the start of the first attempt and
#: ends later attempts at that deadline, so with it a spot step that runs over an hour is never
#: retried after an eviction.
KFP_DEFAULT_RETRY_WINDOW_SECONDS = 3600

#: Said once per stack when its spot steps rely on retries and the cluster is not known to retry
#: evicted pods. Argo's retry policies: https://argo-workflows.readthedocs.io/en/latest/retries/; the
#: phases come from argo-workflows' `inferFailedReason`.
CLUSTER_RETRY_POLICY_NOTE = (
    "step retries cover every way a spot node takes a pod away only if the cluster's Argo workflow-controller "
    "sets a default retryPolicy of Always, as spotkube's Kubeflow Pipelines deployment does by default (stack "
    "key kubeflow): KFP compiles set_retry without a retryPolicy, so the controller's default applies; a pod "
    "deleted with its node ends as Error, which OnFailure (Argo's own default) skips, and a pod evicted or "
    "stopped by a node shutdown ends as Failed, which OnError (KFP's shipped default) skips "
    "(kubeflow/pipelines #4333, #9950)"
)


class PipelineCheckError(SpotkubeError):
    """A file that is not a readable compiled KFP pipeline, or pool contracts that are malformed."""


# --- Reading a compiled pipeline -----------------------------------------------------------------


@dataclass(frozen=True)
class Retry:
    """A step's retry policy as compiled; `source` names the enclosing pipeline task it comes from
    when the step inherits it from a sub-pipeline's retry."""

    max_retries: int
    backoff_seconds: float | None = None
    backoff_factor: float | None = None
    window_seconds: float | None = None
    source: str = ""


@dataclass(frozen=True)
class Step:
    """One task of the pipeline that runs a pod: its path in the DAG and its constraints."""

    name: str
    executor: str
    placement: Placement
    retry: Retry | None = None


@dataclass(frozen=True)
class CompiledPipeline:
    """The pod-running steps of a compiled pipeline file, in the order the file lists them."""

    source: str
    name: str
    steps: tuple[Step, ...]


def read_pipeline(path: Path) -> CompiledPipeline:
    """Read a file written by `kfp.compiler.Compiler().compile(...)`.

    Raises PipelineCheckError naming the file when it is missing, empty, not YAML, or not a
    compiled KFP pipeline.
    """
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


@dataclass
class _Reader:
    source: str
    components: Mapping[str, Any]
    executors: Mapping[str, Any]
    platform: Mapping[str, Any]

    def walk(self, component: Mapping[str, Any], prefix: str, inherited: Retry | None,
             ancestors: frozenset[str] = frozenset()) -> Iterator[Step]:
        """Every pod-running task under a DAG component, sub-pipelines, conditions and loops included.

        A sub-pipeline's retry policy is inherited by the steps inside it that have none of their own.
        """
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
        gpus, gpu_problem = self.gpus(executor)
        if gpu_problem:
            unsupported.append(gpu_problem)
        placement = Placement(tolerations=tuple(tolerations), node_selector=labels, required=tuple(required) or None,
                              preferred=tuple(preferred), gpus=gpus, unsupported=tuple(unsupported))
        return Step(name=path, executor=executor, placement=placement, retry=retry)

    def gpus(self, executor: str) -> tuple[int, str]:
        """GPUs per pod from `resources.accelerator`, or why they cannot be judged."""
        spec = _mapping(self.executors.get(executor), f"{self.source}: deploymentSpec.executors.{executor}")
        resources = _mapping(_mapping(spec.get("container"), f"{self.source}: {executor}.container").get("resources"),
                             f"{self.source}: {executor}.resources")
        accelerator = _mapping(resources.get("accelerator"), f"{self.source}: {executor}.resources.accelerator")
        if not accelerator:
            return 0, ""
        kind = str(accelerator.get("resourceType") or accelerator.get("type") or "")
        count = str(accelerator.get("resourceCount") or accelerator.get("count") or "0")
        if not count.isdigit():
            return 0, (f"its accelerator count {count!r} is set from a pipeline parameter, which pipeline-check "
                       "cannot see; set_accelerator_limit with a number")
        if int(count) and kind != contract.GPU_RESOURCE:
            return 0, (f"it requests {count} × {kind or 'an unnamed accelerator'}, a resource no spotkube node "
                       f"advertises; use set_accelerator_type({contract.GPU_RESOURCE!r})")
        return int(count), ""


# --- Reading pool contracts ---------------------------------------------------------------------


def load_pool_contracts(data: Any, source: str, stack: str | None = None) -> tuple[str, list[PoolContract]]:
    """Pool contracts from any shape spotkube hands out, with the stack name when it is known.

    Accepted: the `poolContracts` stack output (a list), `pulumi stack output --json` (a mapping
    with `poolContracts`), `spotkube plan --format json` for one stack (`stack`, `pools`) or for
    several (`stacks`, then `stack` names the one to use).
    """
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


# --- Checking ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepResult:
    """Where one step can land (most preferred first), and what is wrong with it."""

    step: Step
    pools: tuple[str, ...]
    spot_pools: tuple[str, ...]
    error: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckReport:
    """The verdict for one pipeline against one stack's pools."""

    pipeline: CompiledPipeline
    stack: str
    steps: tuple[StepResult, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No step lands nowhere (warnings allowed)."""
        return all(result.error is None for result in self.steps)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON shape of `spotkube pipeline-check --format json` (one entry per stack)."""
        return {
            "stack": self.stack,
            "ok": self.ok,
            "steps": [
                {
                    "name": r.step.name,
                    "executor": r.step.executor,
                    "gpus": r.step.placement.gpus,
                    "retries": _retry_json(r.step.retry),
                    "pools": list(r.pools),
                    "spotPools": list(r.spot_pools),
                    "error": r.error,
                    "warnings": list(r.warnings),
                }
                for r in self.steps
            ],
            "warnings": list(self.warnings),
        }


def _retry_json(retry: Retry | None) -> dict[str, Any] | None:
    if retry is None:
        return None
    return {"maxRetries": retry.max_retries, "backoffSeconds": retry.backoff_seconds,
            "backoffFactor": retry.backoff_factor, "windowSeconds": retry.window_seconds,
            "from": retry.source or None}


def check_pipeline(
    pipeline: CompiledPipeline, pools: Sequence[PoolContract], stack: str, *, evictions_retried: bool = False
) -> CheckReport:
    """Judge every step against the stack's pools with the contract's matcher.

    `evictions_retried` says the cluster's Argo defaults already retry evicted pods (spotkube's
    Kubeflow Pipelines deployment sets that); otherwise a pipeline whose spot steps rely on retries
    gets the reminder that they need it.
    """
    by_name = {p.name: p for p in pools}
    results = []
    for step in pipeline.steps:
        landing = tuple(contract.landing_pools(step.placement, pools))
        spot = tuple(name for name in landing if by_name[name].capacity in contract.INTERRUPTIBLE)
        error = None if landing else why_step_lands_nowhere(step.placement, pools, stack)
        results.append(StepResult(step, landing, spot, error, tuple(_step_warnings(step, spot))))
    relies_on_retries = any(r.spot_pools and r.step.retry and r.step.retry.max_retries > 0 for r in results)
    return CheckReport(pipeline, stack, tuple(results),
                       (CLUSTER_RETRY_POLICY_NOTE,) if relies_on_retries and not evictions_retried else ())


def _step_warnings(step: Step, spot_pools: Sequence[str]) -> Iterator[str]:
    if not spot_pools:
        return
    where = ", ".join(spot_pools)
    retry = step.retry
    if retry is None or retry.max_retries <= 0:
        yield (f"can land on spot capacity ({where}) but has no retries: one eviction fails the run; "
               "use spotkube.pipelines.on_spot(...) or task.set_retry(...)")
        return
    if retry.window_seconds is not None and retry.window_seconds <= KFP_DEFAULT_RETRY_WINDOW_SECONDS:
        yield (f"its retries stop {retry.window_seconds:g}s after the first attempt started "
               "(backoffMaxDuration), and Argo ends a running retry at that deadline: if the step runs "
               "longer, an eviction is not retried; raise it (on_spot(..., retry_window='7d'))")
    if retry.backoff_factor is not None and retry.backoff_factor != int(retry.backoff_factor):
        yield (f"its backoffFactor {retry.backoff_factor:g} is not a whole number, which Argo's retry "
               "backoff requires; use 1 (constant) or 2 (doubling)")


def required_values(placement: Placement, key: str) -> set[str] | None:
    """The label values a placement insists on for `key`, or None if it accepts any.

    A nodeSelector pins one value; otherwise every required term must say `key In [...]` for the
    placement to insist (terms are OR'ed, so one unconstrained term accepts any value).
    """
    if key in placement.node_selector:
        return {placement.node_selector[key]}
    if not placement.required:
        return None
    allowed: set[str] = set()
    for term in placement.required:
        values = [set(r.values) for r in term if r.key == key and r.operator == "In"]
        if not values:
            return None
        allowed |= set.intersection(*values)
    return allowed


def _and_list(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items) or "none"
    return f"{', '.join(items[:-1])} and {items[-1]}"


def why_step_lands_nowhere(placement: Placement, pools: Sequence[PoolContract], stack: str) -> str:
    """The reason a user can act on: a missing GPU type, pool or GPU count before the per-pool detail."""
    if placement.unsupported:
        return placement.unsupported[0]
    gpu_types = required_values(placement, contract.ACCELERATOR_LABEL)
    have_types = sorted({p.accelerator for p in pools if p.accelerator})
    if gpu_types is not None and contract.NO_ACCELERATOR not in gpu_types \
            and not gpu_types & set(have_types):
        wanted = " or ".join(sorted(gpu_types))
        has = f"has only {_and_list(have_types)}" if have_types else "has no GPU pools"
        return f"needs GPU type {wanted}; stack {stack} {has}"
    pool_names = required_values(placement, contract.POOL_LABEL)
    if pool_names is not None and not pool_names & {p.name for p in pools}:
        return (f"needs pool {' or '.join(sorted(pool_names))}; stack {stack} has pools "
                f"{_and_list([p.name for p in pools])}")
    capacities = required_values(placement, contract.CAPACITY_LABEL)
    if capacities is not None:
        kind_pools = [p for p in pools if gpu_types is None or (p.accelerator or contract.NO_ACCELERATOR) in gpu_types]
        if not any(p.capacity in capacities for p in kind_pools):
            kind = "without GPUs" if gpu_types == {contract.NO_ACCELERATOR} else \
                f"with {' or '.join(sorted(gpu_types))}" if gpu_types else "of any kind"
            return (f"needs {' or '.join(sorted(capacities))} capacity {kind}; stack {stack} has no such pool "
                    "(fallback_to_on_demand=True prefers spot and accepts on-demand)")
    if placement.gpus:
        candidates = [p for p in pools if p.accelerator and (gpu_types is None or p.accelerator in gpu_types)]
        most = max((p.gpu_count for p in candidates), default=0)
        if candidates and placement.gpus > most:
            kinds = _and_list(sorted({p.accelerator for p in candidates if p.accelerator}))
            return (f"needs {placement.gpus} GPUs on one node; the largest {kinds} node of stack {stack} "
                    f"has {most}")
    return f"no pool of stack {stack} fits: {contract.why_nowhere(placement, pools)}"


# --- Rendering -----------------------------------------------------------------------------------


def _retry_text(retry: Retry | None) -> str:
    if retry is None or retry.max_retries <= 0:
        return "-"
    growth = f" ×{retry.backoff_factor:g}" if retry.backoff_factor not in (None, 1) else ""
    backoff = f", backoff {retry.backoff_seconds:g}s{growth}" if retry.backoff_seconds else ""
    via = f" (via {retry.source})" if retry.source else ""
    return f"{retry.max_retries}{backoff}{via}"


def render_reports_table(reports: Sequence[CheckReport], console: Console) -> None:
    """One table per stack: each step, its GPUs and retries, and the pools it can land on."""
    for report in reports:
        table = Table(title=f"{report.pipeline.name} on {report.stack}", title_justify="left")
        for column in ("step", "gpus", "retries", "lands on (preferred first)"):
            table.add_column(column, overflow="fold")
        for result in report.steps:
            if result.error:
                where = Text(f"nowhere: {result.error}", style="red")
            else:
                where = Text(", ".join(f"{p} (spot)" if p in result.spot_pools else p for p in result.pools))
            table.add_row(result.step.name, str(result.step.placement.gpus or "-"),
                          _retry_text(result.step.retry), where)
        lines: list[Any] = [table]
        lines += [Text(f"warning: {r.step.name}: {w}", style="yellow") for r in report.steps for w in r.warnings]
        lines += [Text(f"warning: {w}", style="yellow") for w in report.warnings]
        console.print(Group(*lines))
        console.print()


def reports_markdown(reports: Sequence[CheckReport]) -> str:
    """A compact block for a pull-request comment."""
    lines = []
    for report in reports:
        lines += [f"### {report.pipeline.name} on {report.stack}", "",
                  "| step | gpus | retries | lands on |", "|---|---|---|---|"]
        for r in report.steps:
            where = f"**nowhere**: {r.error}" if r.error else ", ".join(
                f"{p} (spot)" if p in r.spot_pools else p for p in r.pools)
            lines.append(f"| {r.step.name} | {r.step.placement.gpus or '-'} | {_retry_text(r.step.retry)} | {where} |")
        lines.append("")
        lines += [f"> {r.step.name}: {w}" for r in report.steps for w in r.warnings]
        lines += [f"> {w}" for w in report.warnings]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def reports_json(reports: Sequence[CheckReport]) -> str:
    """Every stack's verdict for one pipeline file."""
    first = reports[0].pipeline
    return json.dumps({"pipeline": first.name, "file": first.source, "ok": all(r.ok for r in reports),
                       "checks": [r.to_json() for r in reports]}, indent=2)
