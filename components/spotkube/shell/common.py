"""What every component shares on the Pulumi side, so that the AKS and GKE modules never import each other.

Wired inputs. A few cluster args may be another resource's Output (the cloud's spec marks them `Wired`).
The core is pure and validates values, so an Output is replaced by a placeholder every rule accepts, and
the real Output goes to the resources (`Wiring`) behind an apply that runs the core's rules again on the
resolved value, failing the deployment with the message a plain value would get. An Output anywhere else
is refused before anything is registered: those fields decide the plan.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import pulumi
import pulumi_kubernetes as k8s
from pulumi.output import UNKNOWN

from spotkube.clouds import CLOUDS, checked, deployable, gpu_catalog, parse_spec, plan_platform, price_table, profile
from spotkube.platform.args_source import CHECKPOINT_STORE_ARG
from spotkube.platform.catalog import catalog_warnings
from spotkube.platform.component_names import name_problem
from spotkube.platform.cost.pricing import priced_pools, stack_prices
from spotkube.platform.errors import Problem, SpecError, SpotkubeError
from spotkube.platform.input_messages import cut, did_you_mean, kind, shown
from spotkube.platform.plan import PlatformPlan, missing_fallbacks
from spotkube.platform.records import record
from spotkube.platform.spec import PlatformSpec, Settings, parse_settings, wired_fields
from spotkube.platform.warnings import LOGGED_PLAN_WARNING, tagged

Validated = TypeVar("Validated")
Resolved = TypeVar("Resolved")


def wired_cluster_args(cloud: str) -> dict[str, tuple[bool, str]]:
    """The cluster args of a cloud's component that accept an Output: key -> (whether the Outputs go
    in a list's items, the placeholder validated in their place). A list itself stays plain, because
    its length decides what is registered."""
    return wired_fields(profile(cloud).spec_model.model_fields["cluster"].annotation)


@functools.cache
def placeholders() -> dict[str, str]:
    """What the core's rules see in place of a wired Output until it resolves, by key, on every cloud.
    Gathered on first use, which loads every cloud: a module constant would load them all at import."""
    return {key: placeholder for cloud in CLOUDS for key, (_, placeholder) in wired_cluster_args(cloud).items()}


def wired_text(cloud: str) -> str:
    """The cluster args that accept an Output, in words: `cluster.project, ... and the items of ...`."""
    wired = wired_cluster_args(cloud)
    whole = [f"cluster.{key}" for key, (is_list, _) in wired.items() if not is_list]
    items = [f"cluster.{key}" for key, (is_list, _) in wired.items() if is_list]
    text = ", ".join(whole)
    return f"{text} and the items of {' and '.join(items)}" if items else text


class _Buildable(Protocol):
    def _build(self, name: str, value: Any, opts: pulumi.ResourceOptions | None) -> None: ...


Buildable = TypeVar("Buildable", bound=_Buildable)


def validated(check: Callable[[], Validated]) -> Validated:
    """Run a validation before anything is registered; bad input ends the program with its message,
    as a `pulumi.RunError`: how a Pulumi program reports an error without a traceback."""
    try:
        return check()
    except SpecError as err:
        raise pulumi.RunError(str(err)) from None


def _keys(typed: type) -> list[str]:
    return list(typing.get_type_hints(typed))


def checked_args(
    args: object, typed: type, where: str, *, refused: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A component's args as a dict, once they are a mapping of its own keys: refused before the values
    are validated, so that a caller's mistake reads in the public API's terms (a typo gets the nearest
    key; `refused` keys their own reason). The values are the spec models' to judge."""
    accepted = _keys(typed)
    if not isinstance(args, Mapping):
        raise pulumi.RunError(f"{where}: {shown(args)} is {kind(args)}; give a mapping (dict) of its keys: "
                              f"{', '.join(accepted)}")
    refused = refused or {}
    problems = []
    for key in args:
        if key in refused:
            problems.append(Problem(cut(key), refused[key]))
        elif key not in accepted:
            problems.append(Problem(cut(key), f"is not a known key; accepted keys: {', '.join(accepted)}"
                                              f"{did_you_mean(str(key), accepted)}"))
    if problems:
        raise SpecError(where, problems)
    return dict(args)


def is_output(value: object) -> bool:
    """Whether a value is known only later: an Output, or any other awaitable `pulumi.Input`."""
    return isinstance(value, pulumi.Output) or inspect.isawaitable(value)


def _outputs_in(value: object, path: str = "") -> Iterator[str]:
    """The key paths (as the args spell them) of every Output in a value of args."""
    if is_output(value):
        yield path or "args"
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _outputs_in(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _outputs_in(item, f"{path}[{i}]")


def addon_settings(args: object, typed: type, model: type[Settings], where: str, *,
                   refused: Mapping[str, str]) -> Settings:
    """An add-on's args as its settings: only its own keys, and no Output, because every arg decides a
    manifest, a transform or the queue before anything is registered."""
    values = checked_args(args, typed, where, refused=refused)
    refuse_outputs(values, where)
    return parse_settings(model, values, where)


def enabled_refusal(installs: str, key: str) -> str:
    """Why an add-on's args have no `enabled`: a component that installed nothing would still export
    names its consumers would wait on for ever."""
    return (f"is not a key of these args: the component always installs {installs}; to install none, don't "
            f"create the component, as a stack file's {key}.enabled: false does")


def refuse_disabled(source: str, key: str, enabled: bool, what: str) -> None:
    """Refuse building an add-on from a spec that turns it off."""
    if not enabled:
        raise SpecError(source, [Problem(key, f"is false, so build no {what}: skip the component, as "
                                         "infra/__main__.py does")])


def cluster_behind(opts: pulumi.ResourceOptions | None, source: str, needs: str) -> ClusterOfProvider:
    """The spotkube cluster an add-on deploys into, which it needs (`needs`: why)."""
    clusters = clusters_behind(opts)
    if not clusters:
        raise SpecError(source, [Problem("opts", f"deploys through no spotkube cluster's provider; {needs}, so "
                                         "give providers=[cluster.provider]")])
    return clusters[0]


def props_transform(change: Callable[[Any], dict[str, Any] | None]) -> pulumi.ResourceTransform:
    """The Pulumi adapter around a pure change of an object; it leaves untouched objects alone."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        changed = change(args.props)
        return None if changed is None else pulumi.ResourceTransformResult(props=changed, opts=args.opts)

    return transform


def built_onto_pools(cls: type[Buildable], name: str, pools: Sequence[pulumi.Resource], key: str,
                     request: Callable[[], Any], opts: pulumi.ResourceOptions | None) -> Buildable:
    """An add-on built from pool components (each add-on's `for_pools`), reported for their cluster's review."""
    addon = built_from(cls, name, validated(request), opts)
    deployed_onto_pools(addon, pools, key, cast(Any, addon).settings, opts)
    return addon


def refuse_outputs(args: object, where: str, *, cluster: str | None = None) -> None:
    """Refuse an Output where spotkube must read the value before anything is registered. A cluster's
    args (`cluster` names its cloud) have a few wired keys (`_unwired` took them out already)."""
    wired = wired_cluster_args(cluster) if cluster else {}
    wired_lists = {f"cluster.{key}" for key, (is_list, _) in wired.items() if is_list}
    accepted = (f"Outputs are accepted only in {wired_text(cluster)}" if cluster
                else "none of its args accepts an Output")
    problems = []
    for path in _outputs_in(args):
        if path in wired_lists:
            problems.append(Problem(path, "is an Output of a whole list; give a plain list whose items may be "
                                    "Outputs: the number of items decides what spotkube registers (one role "
                                    "assignment per admin group; an API server restricted by address or not)"))
        else:
            problems.append(Problem(path, "is an Output, but spotkube reads it before anything is registered, to "
                                    f"validate it and plan from it; give a plain value ({accepted})"))
    if problems:
        raise SpecError(where, problems)


@record
class Wiring:
    """The wired cluster inputs as the cloud resources receive them."""

    resource_group_name: pulumi.Input[str] | None = None
    project: pulumi.Input[str] | None = None
    network: pulumi.Input[str] | None = None
    subnetwork: pulumi.Input[str] | None = None
    admin_group_object_ids: tuple[pulumi.Input[str], ...] = ()
    authorized_ip_ranges: tuple[pulumi.Input[str], ...] = ()

    @classmethod
    def of(cls, spec: PlatformSpec) -> Wiring:
        """The spec's own values, for a cluster whose args are all plain."""
        return cls(**{key: getattr(spec.cluster, key) for key in wired_cluster_args(spec.cloud)})

    def api_server_ranges(self, spec: PlatformSpec, restricted: bool) -> pulumi.Input[list[str]]:
        """`ClusterSettings.api_server_ranges` over the wired authorized ranges, once they resolve."""
        def ranges(values: list[str]) -> list[str]:
            settings = spec.cluster.model_copy(update={"authorized_ip_ranges": tuple(values)})
            return list(settings.api_server_ranges(restricted))
        return resolved(self.authorized_ip_ranges, ranges)


@record
class ClusterPlan:
    """What a cluster component builds from: the plan, and the wired inputs its resources take."""

    plan: PlatformPlan
    wiring: Wiring


def resolved(values: Sequence[pulumi.Input[Any]], build: Callable[[list[Any]], Resolved]) -> pulumi.Input[Resolved]:
    """`build(values)` now when every value is plain (so plain inputs stay plain), or once they resolve."""
    if any(is_output(v) for v in values):
        return pulumi.Output.all(*values).apply(build)
    return build(list(values))


def then(value: pulumi.Input[Any], build: Callable[[Any], Resolved]) -> pulumi.Input[Resolved]:
    """`build(value)` now when the value is plain, or once it resolves."""
    return pulumi.Output.from_input(value).apply(build) if is_output(value) else build(value)


def joined(*parts: pulumi.Input[str]) -> pulumi.Input[str]:
    """Text joined now when every part is plain, or an Output of it once they resolve."""
    return resolved(parts, "".join)


def wired_value_problems(spec: PlatformSpec, key: str, index: int | None, value: object) -> list[Problem]:
    """What the core's rules say about a wired value once it has resolved, with the spec's other values."""
    path = f"cluster.{key}" if index is None else f"cluster.{key}[{index}]"
    if not isinstance(value, str) or not value:
        return [Problem(path, f"the Output resolved to {value!r}; it must resolve to a non-empty string")]
    if index is None:
        update: dict[str, Any] = {key: value}
    else:
        items = list(getattr(spec.cluster, key))
        items[index] = value
        update = {key: tuple(items)}
    candidate = spec.model_copy(update={"cluster": spec.cluster.model_copy(update=update)})
    try:
        checked(candidate, "", "python")
    except SpecError as err:
        return list(err.problems)
    return []


def _checked_when_resolved(
    spec: PlatformSpec, key: str, index: int | None, value: Any, where: str
) -> pulumi.Output[str]:
    """The wired Output, failing the deployment with the core's message if its value breaks a rule.
    A secret's value is never printed."""
    output = pulumi.Output.from_input(value)

    def check(resolved_and_secret: list[Any]) -> str:
        resolved_value, secret = resolved_and_secret
        problems = wired_value_problems(spec, key, index, resolved_value)
        if problems:
            message = str(SpecError(where, problems))
            if secret:
                message = message.replace(repr(resolved_value), "[secret]").replace(shown(resolved_value), "[secret]")
            raise pulumi.RunError(message)
        return resolved_value

    return pulumi.Output.all(output, pulumi.Output.from_input(output.is_secret())).apply(check)


def _unwired(
    cloud: str, args: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[tuple[str, int | None], Any]]:
    """The args with each wired Output replaced by its placeholder, and the Outputs by (key, index)."""
    cluster = args.get("cluster")
    if not isinstance(cluster, Mapping):
        return dict(args), {}
    plain_cluster, wired = dict(cluster), {}
    for key, (is_list, placeholder) in wired_cluster_args(cloud).items():
        value = cluster.get(key)
        if is_list and isinstance(value, list | tuple):
            items = list(value)
            for i, item in enumerate(items):
                if is_output(item):
                    wired[(key, i)], items[i] = item, placeholder
            plain_cluster[key] = items
        elif not is_list and is_output(value):
            wired[(key, None)], plain_cluster[key] = value, placeholder
    return {**args, "cluster": plain_cluster}, wired


def _cluster_refusals(cloud: str) -> dict[str, str]:
    """Keys of the stack file's settings that a cluster's args don't take, and why."""
    others = " or ".join(p.component for p in CLOUDS.values() if p.cloud != cloud)
    return {
        "cloud": f"is fixed by the component, which builds {cloud}; remove the key (use {others} for the other cloud)",
        "kubeflow": "is not a key of a cluster's args: Kubeflow Pipelines is its own component, KubeflowPipelines",
        "device_plugin": "is not a key of a cluster's args: the device plugin is its own component, "
                         "NvidiaDevicePlugin.for_cluster(name, cluster)",
    }


def _store_arg(path: str) -> str:
    """`training.checkpoint_store.name`, as the cluster's args spell it: `checkpoint_store`."""
    return CHECKPOINT_STORE_ARG.name if path.startswith("training.checkpoint_store") else path


def plan_from_args(cloud: str, args: Mapping[str, Any], typed: type, where: str) -> ClusterPlan:
    """The plan of a cluster component's args, and its wired inputs. The component fixes the cloud, and
    Kubeflow is another component, so its rules don't apply to a cluster's args."""
    def parse() -> tuple[PlatformSpec, dict[tuple[str, int | None], Any]]:
        plain, wired = _unwired(cloud, checked_args(args, typed, where, refused=_cluster_refusals(cloud)))
        refuse_outputs(plain, where, cluster=cloud)
        store = plain.pop(CHECKPOINT_STORE_ARG.name, None)
        training = {} if store is None else {"training": {"checkpoint_store": {"name": store}}}
        try:
            spec = parse_spec({**plain, **training, "cloud": cloud, "kubeflow": {"enabled": False}}, where, "python")
        except SpecError as err:
            # The store's rules name the stack file's place for it; these args hold it at the top.
            raise SpecError(err.source, [dataclasses.replace(p, path=_store_arg(p.path)) for p in err.problems]) \
                from None
        return deployable(spec, where, "python"), wired

    spec, wired = validated(parse)
    plan = plan_platform(spec)
    fields: dict[str, Any] = {key: getattr(plan.spec.cluster, key) for key in wired_cluster_args(cloud)}
    for (key, index), value in wired.items():
        output = _checked_when_resolved(plan.spec, key, index, value, where)
        if index is None:
            fields[key] = output
        else:
            fields[key] = (*fields[key][:index], output, *fields[key][index + 1:])
    return ClusterPlan(plan, Wiring(**fields))


def plan_from_spec(cloud: str, spec: PlatformSpec, component: str) -> ClusterPlan:
    """The plan of a typed spec (the stack program's): the rules run on the value itself, so a spec
    built by hand can't skip them."""
    if spec.cloud != cloud:
        raise pulumi.RunError(f"{component}: the spec is for {spec.cloud}; build it with the {spec.cloud} component")
    plan = plan_platform(validated(lambda: deployable(checked(spec, component), component)))
    return ClusterPlan(plan, Wiring.of(plan.spec))


def refuse_bad_name(label: str, name: str, plan: PlatformPlan) -> None:
    """Refuse a cluster component's name that would make cloud names the cloud refuses."""
    problem = name_problem(profile(plan.cloud).component_naming, name, plan.spec.environment)
    if problem:
        raise pulumi.RunError(f"{label}: {problem}")


def log_plan_warnings(component: pulumi.Resource, label: str, plan: PlatformPlan) -> None:
    """Say under `pulumi up` what `spotkube plan` warns about this platform's pools, each once, as the
    plan words them: from the rules the plan's judges run. A price file that can't be read skips the
    cost warnings with its reason, because a warning must never stop a deployment."""
    cloud = profile(plan.cloud)
    pricing = cloud.pricing
    try:
        table = stack_prices(plan.spec, price_table(), pricing)
        warnings = [str(w) for w in priced_pools(plan.spec, plan.pools, table, pricing, cloud.price_refresh)[1]]
    except SpotkubeError as err:
        warnings = [tagged("cost-unreadable-prices", f"no cost warnings: {err}")]
    warnings += [str(w) for w in missing_fallbacks(plan.pools)]
    warnings += [str(w.plan_warning()) for w in catalog_warnings(plan.spec, gpu_catalog(), cloud.knows_machine)]
    for warning in dict.fromkeys(warnings):
        pulumi.log.warn(f"{label}: {LOGGED_PLAN_WARNING}: {warning}", resource=component)


def security_concerns(component: pulumi.Resource, label: str, cloud: str) -> pulumi.ResourceTransform:
    """A transform for the cluster resource that logs under `pulumi up` the security concerns the plan
    shows for it, read from the inputs as the engine registers them. It changes nothing.

    Only the update logs them: in a preview an input wired from a resource not created yet reaches a
    transform as None, and an unknown list of authorized ranges would read as "any address"."""
    read = profile(cloud).read_posture

    def transform(args: pulumi.ResourceTransformArgs) -> None:
        if pulumi.runtime.is_dry_run():
            return
        posture = read(args.type_, args.name, args.props, bool(args.opts.protect))
        for warning in posture.warnings if posture else ():
            pulumi.log.warn(f"{label}: {LOGGED_PLAN_WARNING}: {warning}", resource=component)

    return transform


#: Where a test finds answers for what only a cloud can tell: named in the warning below.
TESTING_MODULE = "spotkube.testing"


def unanswered(component: pulumi.Resource, label: str, what: str, source: str) -> Any:
    """An unknown value, with a warning, for `what` the cloud did not tell (`source`). A real cloud always
    answers these; Pulumi's unit-test mocks answer `{}`. Returned from an apply, it leaves the output
    unknown, as in a preview, so the applies that need the value never run on a None."""
    pulumi.log.warn(f"{label}: {source} gave no {what}, so it stays unknown (and what is built from it). Under "
                    f"Pulumi's unit-test mocks, use {TESTING_MODULE}.SpotkubeMocks, or answer it in your own Mocks",
                    resource=component)
    return UNKNOWN


def required(component: pulumi.Resource, label: str, value: pulumi.Output[Any], what: str,
             source: str) -> pulumi.Output[Any]:
    """`value`, or unknown (with `unanswered`'s warning) when the cloud gave none."""
    return value.apply(lambda found: found if found else unanswered(component, label, what, source))


def built_from(cls: type[Buildable], name: str, value: Any, opts: pulumi.ResourceOptions | None) -> Buildable:
    """A component built from a typed, already-checked value: `__init__` keeps the signature Pulumi's
    schema analyzer reads (`args: <TypedDict>`), so this runs the same `_build` without it."""
    component = cls.__new__(cls)
    component._build(name, value, opts)
    return component


def child(parent: pulumi.Resource, **options: object) -> pulumi.ResourceOptions:
    """Options for a child resource: always parented to the component."""
    return pulumi.ResourceOptions(parent=parent, **options)  # type: ignore[arg-type]


def protected(wanted: bool) -> bool | None:
    """The `protect` option of a child that spotkube's own rules may protect: True or unset, never False,
    since Pulumi gives a child its parent's `protect` only when the child leaves the option unset."""
    return True if wanted else None


class GpuCluster(Protocol):
    """What the add-ons need of a cluster component, without importing either cloud's: also what a training
    worker's environment needs there."""

    plan: PlatformPlan
    provider: k8s.Provider

    @property
    def training_env(self) -> Mapping[str, pulumi.Output[str]]: ...


@record
class ClusterOfProvider:
    """The cluster component behind a Kubernetes provider, and its name in messages."""

    label: str
    cluster: GpuCluster


#: The attribute a cluster component's Kubernetes provider carries that cluster in. An add-on given the
#: provider in its options learns the cluster's cloud and pools from it, so a caller never has to repeat
#: them (and can't contradict them). On the provider itself rather than in a map: the cluster holds its
#: provider, so even a weak-keyed map from providers to clusters kept every cluster ever built alive,
#: with all its resources and outputs (about 7,000 objects a plan, in a process that plans many times).
_CLUSTER_ATTRIBUTE = "_spotkube_cluster"


@dataclass
class Built:
    """What a program built while `built_clusters` watched: each spotkube cluster, in the order built,
    and each add-on's (cluster, spec key, settings)."""

    clusters: list[ClusterOfProvider] = field(default_factory=list)
    addons: list[tuple[GpuCluster, str, Any]] = field(default_factory=list)
    #: Each pool component built on a cluster spotkube didn't make here, with what it built from
    #: (`shell.pools.PoolBuild`).
    pools: list[tuple[pulumi.ComponentResource, Any]] = field(default_factory=list)
    #: Each add-on deployed onto such pools: (the add-on and the providers it deploys through, one of the
    #: pool components, spec key, settings).
    pool_addons: list[tuple[list[pulumi.Resource], pulumi.Resource, str, Any]] = field(default_factory=list)
    #: Each add-on deployed through a provider of no spotkube cluster: (the add-on and its providers, spec
    #: key, settings); reviewed with the external cluster whose pools' add-ons use the same provider.
    provider_addons: list[tuple[list[pulumi.Resource], str, Any]] = field(default_factory=list)


#: What `built_clusters` is watching: each cluster component and add-on built meanwhile is added to each.
_WATCHERS: list[Built] = []


@contextmanager
def built_clusters() -> Iterator[Built]:
    """Every spotkube cluster component built while the block runs, and what its add-ons deploy: only the
    component knows its plan, so it reports itself here when it makes its provider."""
    found = Built()
    _WATCHERS.append(found)
    try:
        yield found
    finally:
        _WATCHERS.remove(found)


def pool_watchers() -> list[Built]:
    """Whatever `built_clusters` is watching now, for the pool components to report to."""
    return list(_WATCHERS)


def deployed_onto_pools(addon: pulumi.Resource, pools: Sequence[pulumi.Resource], key: str, settings: Any,
                        opts: pulumi.ResourceOptions | None) -> None:
    """An add-on deployed onto pool components on a cluster spotkube didn't make here, for that
    cluster's review: the add-on and its Kubernetes providers belong to it."""
    owned = [addon, *_providers(opts)]
    for watcher in _WATCHERS:
        watcher.pool_addons += [(owned, pool, key, settings) for pool in pools[:1]]


def deployed_onto(opts: pulumi.ResourceOptions | None, key: str, settings: Any,
                  addon: pulumi.Resource | None = None) -> None:
    """An add-on's settings, for the review of each spotkube cluster it deploys into. Through any other
    provider, the add-on is reviewed with the external cluster whose pool components use that provider."""
    clusters = clusters_behind(opts)
    for found in clusters:
        for watcher in _WATCHERS:
            watcher.addons.append((found.cluster, key, settings))
    if not clusters and addon is not None:
        for watcher in _WATCHERS:
            watcher.provider_addons.append(([addon, *_providers(opts)], key, settings))


def _providers(opts: pulumi.ResourceOptions | None) -> list[k8s.Provider]:
    """The Kubernetes providers options name."""
    if opts is None:
        return []
    providers = opts.providers.values() if isinstance(opts.providers, Mapping) else opts.providers or []
    return [p for p in [opts.provider, *providers] if isinstance(p, k8s.Provider)]


def kubernetes_provider(
    parent: GpuCluster, label: str, name: str, kubeconfig: pulumi.Output[str],
    depends_on: list[pulumi.Resource] | None = None,
) -> k8s.Provider:
    """The provider later components deploy through. It waits for `depends_on`, and everything deployed
    through it waits for it: so the cluster's grants, egress and pools come before any Kubernetes object."""
    provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig,
                            opts=child(cast(pulumi.Resource, parent), depends_on=depends_on or []))
    found = ClusterOfProvider(label, parent)
    setattr(provider, _CLUSTER_ATTRIBUTE, found)
    for watcher in _WATCHERS:
        watcher.clusters.append(found)
    return provider


def clusters_behind(opts: pulumi.ResourceOptions | None) -> list[ClusterOfProvider]:
    """The spotkube clusters whose Kubernetes provider these options deploy through."""
    found = [cast(ClusterOfProvider | None, getattr(p, _CLUSTER_ATTRIBUTE, None)) for p in _providers(opts)]
    return list({id(c.cluster): c for c in found if c is not None}.values())


def all_created(children: Sequence[pulumi.Resource]) -> pulumi.Output[list[Any]]:
    """Every child's id as one Output that depends on all of them, for `settled`."""
    return pulumi.Output.all(*[child.id for child in children if isinstance(child, pulumi.CustomResource)])


def settled(value: pulumi.Input[Resolved], created: pulumi.Output[list[Any]]) -> pulumi.Output[Resolved]:
    """`value`, resolved only once every child exists (`created`), and depending on all of them.

    A cluster's outputs promise a cluster whose pools exist: a resource built on `cluster.kubeconfig`
    must not run while the GPU pools are still being created, and an id is known only once the cloud
    created the resource. Plain data (the pool contracts) waits as it is: `Output.from_input` would wrap
    each of its nested values in an Output of its own, some eighty a pool.
    """
    if next(_outputs_in(value), None) is None:
        return created.apply(lambda _: cast(Resolved, value))
    return pulumi.Output.all(pulumi.Output.from_input(value), created).apply(lambda values: values[0])


def pool_contract_outputs(plan: PlatformPlan) -> list[dict]:
    """Pool contracts in their output shape, so other programs can target the pools."""
    return [c.to_json() for c in plan.contracts()]
