"""Validate once: the models, the rules every cloud shares, then the cloud's own, then resolve.

`parse_spec` is the one way a stack file, component args or the Python API become a spec: it reports
every problem at once and fills in what follows from the facts. Why each rule exists:
docs/architecture.md#validation-rules-and-why-they-exist. Pure module: no Pulumi.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ValidationError, create_model
from pydantic.alias_generators import to_camel

from spotkube.platform.cloud import Cloud, Clouds, RuleOutput
from spotkube.platform.contract import (
    KUBERNETES_LABEL_PREFIXES,
    LABEL_PREFIX,
    reserved_label_prefix,
    reserved_taint_prefix,
)
from spotkube.platform.cost.prices import PriceRow
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import (
    KeyStyle,
    accepted_keys,
    cut,
    describe,
    did_you_mean,
    field_at,
    literal_values,
    model_in,
    shown,
)
from spotkube.platform.spec import (
    CONFIG_KEYS,
    MaintenanceSettings,
    PlatformSpec,
    all_pools,
    config_key,
    in_style,
    key_path,
    styled_key,
    worker_pools,
)


def parse_spec(values: Mapping[str, Any], source: str, clouds: Clouds, style: KeyStyle = "stack") -> PlatformSpec:
    """Validate config values (keys without namespace) and apply the cloud's rules; SpecError lists
    every problem with the key path as the user spelt it (`style`: stack file or Python args)."""
    spec, problems = model_problems(values, clouds, style)
    if spec is None:
        raise SpecError(source, problems)
    spec, rule_problems = resolve(spec, clouds)
    problems.extend(in_style(rule_problems, style, type(spec)))
    if problems:
        raise SpecError(source, problems)
    return spec


def checked(spec: PlatformSpec, source: str, clouds: Clouds, style: KeyStyle = "stack") -> PlatformSpec:
    """A typed spec with the rules applied and resolved, for `from_spec`: the stack program's spec
    comes from `parse_spec` and passes unchanged (resolving is idempotent), while a spec someone
    built by hand is refused as `parse_spec` would refuse its values."""
    model = clouds[spec.cloud].spec_model if spec.cloud in clouds else None
    if model is None or not isinstance(spec, model):
        built = f"a {type(spec).__name__}"
        wanted = f"one of {', '.join(p.spec_model.__name__ for p in clouds.values())}" if model is None \
            else model.__name__
        raise SpecError(source, [Problem(config_key("cloud") if style == "stack" else "cloud",
                                         f"{shown(spec.cloud)} in {built}: build the spec with {wanted}")])
    resolved, problems = resolve(spec, clouds)
    if problems:
        raise SpecError(source, in_style(problems, style, type(spec)))
    return resolved


def deployable(spec: PlatformSpec, source: str, clouds: Clouds, style: KeyStyle = "stack") -> PlatformSpec:
    """`spec`, once it also says what only deploying it needs (the cloud's `deploy_rules`: on AKS, who
    deploys). Run where a stack or a cluster component is read for `pulumi up` (the stack file, a
    component's args or spec), not where a platform is only planned or priced from its settings."""
    problems = list(clouds[spec.cloud].deploy_rules(spec)) if spec.cloud in clouds else []
    if problems:
        raise SpecError(source, in_style(problems, style, type(spec)))
    return spec


def model_problems(
    values: Mapping[str, Any], clouds: Clouds, style: KeyStyle = "stack"
) -> tuple[PlatformSpec | None, list[Problem]]:
    """Validate config values against the model of the stack's cloud alone (its rules come after, in
    `parse_spec`). Until the cloud is known only the top-level keys can be judged, so a missing or
    unknown `cloud` is reported with them alone."""
    known = [*CONFIG_KEYS, *PlatformSpec.model_fields]
    accepted = accepted_keys(PlatformSpec, style)
    unknown = [key for key in values if key not in known]
    problems = [
        Problem(styled_key(cut(key), style), f"is not a known key; accepted keys: {', '.join(accepted)}"
                f"{did_you_mean(str(key), accepted)}")
        for key in unknown
    ]
    choice = values.get("cloud")
    cloud = clouds.get(choice) if isinstance(choice, str) else None
    if cloud is None:
        return None, [*problems, *_cloud_problems(values, clouds, style)]
    model = cloud.spec_model
    remaining = {k: v for k, v in values.items() if k not in unknown}
    while True:
        try:
            return model.model_validate(remaining), problems
        except ValidationError as err:
            errors = err.errors()
        foreign = [e for e in errors if e["type"] == "extra_forbidden" and _owner(e["loc"], cloud, clouds)]
        for error in errors:
            message = _other_cloud_hint(error, cloud, clouds, style) or describe(error, model, style)
            problems.append(Problem(styled_key(key_path(tuple(error["loc"])), style), message))
        if len(foreign) < len(errors):
            return None, problems
        # Only other clouds' settings: without them the stack may be valid, so that its cloud's rules
        # still run and every problem is reported at once.
        stripped = remaining
        for error in foreign:
            stripped = _without(stripped, tuple(error["loc"]))
        if stripped == remaining:  # nothing left to take out: report what was found
            return None, problems
        remaining = stripped


def _without(values: Any, loc: Sequence[str | int]) -> Any:
    """`values` (as the user gave them: mappings and lists) without the key at `loc`."""
    if not loc:
        return values
    head, rest = loc[0], loc[1:]
    if isinstance(values, Mapping):
        if not rest:
            return {k: v for k, v in values.items() if k != head}
        return {k: _without(v, rest) if k == head else v for k, v in values.items()}
    if isinstance(values, list | tuple) and isinstance(head, int):
        return [_without(v, rest) if i == head else v for i, v in enumerate(values)]
    return values


def _cloud_problems(values: Mapping[str, Any], clouds: Clouds, style: KeyStyle) -> list[Problem]:
    """`cloud` missing or not one of the registry's, in the words any other choice gets."""
    choice: type[BaseModel] = create_model(
        "CloudChoice", cloud=(Literal[tuple(clouds)], ...), __config__={"extra": "ignore"})  # type: ignore[call-overload]
    try:
        choice.model_validate({k: v for k, v in values.items() if k == "cloud"})
    except ValidationError as err:
        return [Problem(styled_key("cloud", style), describe(error, choice, style)) for error in err.errors()]
    return []


def _owner(loc: Sequence[str | int], cloud: Cloud, clouds: Clouds, value: str | None = None) -> Cloud | None:
    """The other cloud whose spec has a field at exactly `loc` (that takes `value`, when given), if any."""
    for other in clouds.values():
        if other is cloud:
            continue
        _, info, rest = field_at(other.spec_model, loc)
        if info is not None and not rest and (value is None or value in literal_values(info.annotation)):
            return other
    return None


def _other_cloud_hint(error: Mapping[str, Any], cloud: Cloud, clouds: Clouds, style: KeyStyle) -> str | None:
    """What to say when a stack sets a key, or picks a value, that only another cloud's spec has (found
    in the registry's specs, so no cloud lists the others' settings), with the cloud's `instead_of`."""
    loc, value = tuple(error["loc"]), error.get("input")
    if error["type"] == "extra_forbidden":
        other = _owner(loc, cloud, clouds)
        if other is not None:
            names = [to_camel(part) for part in reversed(loc) if isinstance(part, str)]
            instead = next((cloud.instead_of[n] for n in names if n in cloud.instead_of), None)
            return (f"{shown(value)} is {_a(other.title)} setting; remove it from {_a(cloud.title)} stack"
                    + (f" ({instead})" if instead else ""))
        return _near_other_cloud_key(loc, cloud, clouds, style)
    if error["type"] == "literal_error" and isinstance(value, str) and (other := _owner(loc, cloud, clouds, value)):
        noun = str(loc[-1]) if style == "python" else to_camel(str(loc[-1]))
        words = "".join(f" {c.lower()}" if c.isupper() else c for c in noun).replace("_", " ")
        accepted = str(error["msg"]).removeprefix("Input should be ")
        return f"{shown(value)} is {_a(other.title)} {words}; on {cloud.title} use {accepted}"
    return None


def _near_other_cloud_key(
    loc: Sequence[str | int], cloud: Cloud, clouds: Clouds, style: KeyStyle
) -> str | None:
    """An unknown key that is close to none of the cloud's own keys but to another cloud's: the
    usual message, with the near miss named as that cloud's setting."""
    own = _model_at(cloud.spec_model, loc[:-1])
    if own is None:
        return None
    keys = accepted_keys(own, style)
    if did_you_mean(str(loc[-1]), keys):
        return None
    for other in clouds.values():
        theirs = _model_at(other.spec_model, loc[:-1]) if other is not cloud else None
        near = did_you_mean(str(loc[-1]), [k for k in accepted_keys(theirs, style) if k not in keys]) if theirs else ""
        if near:
            key = near.removeprefix("; did you mean ").removesuffix("?")
            return (f"is not a known key; accepted keys: {', '.join(keys)}; did you mean {key}? That is "
                    f"{_a(other.title)} setting, which {_a(cloud.title)} stack does not take")
    return None


def _model_at(root: type[BaseModel], loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The settings model at `loc` (list indexes allowed), or None when `loc` is not a model."""
    if not [part for part in loc if isinstance(part, str)]:
        return root
    _, info, rest = field_at(root, loc)
    if info is None or any(isinstance(part, str) for part in rest):
        return None
    return model_in(info.annotation)


#: Why each reserved prefix is not a stack's to use, for the messages.
RESERVED_FOR = {
    LABEL_PREFIX: "which is spotkube's scheduling contract",
    **dict.fromkeys(KUBERNETES_LABEL_PREFIXES, "which Kubernetes keeps for itself: a kubelet may set only "
                    "kubelet.kubernetes.io/ and node.kubernetes.io/ labels there, so the cloud refuses the pool or its "
                    "nodes would not join"),
}


def _reserved_for(prefix: str, cloud: Cloud) -> str:
    """Whose a reserved prefix is: spotkube's, Kubernetes', or else the stack's cloud's own."""
    return RESERVED_FOR.get(prefix) or f"which {cloud.title} keeps for its own node labels and taints"


def _a(title: str) -> str:
    """`an AKS`, `a GKE`: the article as the letters are spoken."""
    return f"{'an' if title[0] in 'AEFHILMNORSX' else 'a'} {title}"


def common_rules(spec: PlatformSpec, clouds: Clouds) -> RuleOutput:
    """Rules every cloud shares; `clouds` tells a region of another cloud from a typo."""
    seen: dict[str, str] = {}
    for path, pool in all_pools(spec):
        name, low, high = pool.name, pool.min, pool.max
        if name in seen:
            yield Problem(config_key(f"{path}.name"),
                          f"{shown(name)} is already the name of {seen[name]}; pool names must be unique")
        seen.setdefault(name, path)
        if low > high:
            yield Problem(config_key(f"{path}.min"), f"{low} is above max {high}; use 0 <= min <= max <= 1000")
    if spec.system_pool.min < 1:
        yield Problem(config_key("systemPool.min"),
                      f"{spec.system_pool.min} is not allowed; the system pool needs min >= 1")
    for path, capacity in (("systemPool", spec.system_pool.capacity), ("platformPool", spec.platform_pool.capacity)):
        if capacity != "on-demand":
            yield Problem(config_key(f"{path}.capacity"), f"{shown(capacity)} is not allowed; the {path} must be "
                          "'on-demand' (a spot pool can't be a System pool, and evictions would take the platform "
                          "down)")
    labelled = [("systemPool", spec.system_pool.labels), ("platformPool", spec.platform_pool.labels)]
    labelled += [(path, p.labels) for path, p in worker_pools(spec)]
    for i, spot in enumerate(spec.spot_pools):
        if spot.capacity == "on-demand":
            yield Problem(config_key(f"spotPools[{i}].capacity"), "'on-demand' is not a spot pool; use 'spot' or "
                          "'preemptible', or the platformPool for on-demand CPU nodes")
        elif spot.capacity == "flex-start":
            yield Problem(config_key(f"spotPools[{i}].capacity"), "'flex-start' is a tier of GPU pools only; use "
                          "'spot' or 'preemptible' here, or make it a GPU pool")
    cloud = clouds[spec.cloud]
    for path, labels in labelled:
        for label in labels:
            reserved = reserved_label_prefix(spec.cloud, label)
            if reserved:
                name = label.rpartition("/")[2]
                yield Problem(config_key(f"{path}.labels.{cut(label)}"),
                              f"{shown(label)} uses the prefix {reserved}/, {_reserved_for(reserved, cloud)}; use your "
                              f"own prefix (e.g. example.com/{cut(name)})")
    for path, pool in worker_pools(spec):
        for t, taint in enumerate(pool.parsed_taints()):
            reserved = reserved_taint_prefix(spec.cloud, taint.key)
            if reserved:
                name = taint.key.rpartition("/")[2]
                yield Problem(config_key(f"{path}.taints[{t}]"), f"{shown(str(taint))} uses the prefix {reserved}/, "
                              f"{_reserved_for(reserved, cloud)}; use your own prefix (e.g. example.com/{name})")
    channel, channels = spec.cluster.channel, cloud.channels
    if channel is not None and channel not in channels:
        yield Problem(config_key("cluster.channel"), f"{shown(channel)} is not {_a(cloud.title)} channel; use one of "
                      f"{', '.join(channels)}")
    # The clouds' region names never overlap, so the others (and their modules) are consulted only for a
    # region that isn't the stack's own cloud's.
    other = None if spec.region in cloud.regions else \
        next((p for p in clouds.values() if p is not cloud and spec.region in p.regions), None)
    if other is not None:
        yield Problem(config_key("region"), f"{shown(spec.region)} is {_a(other.title)} region; "
                      f"{_a(cloud.title)} stack takes a region such as {cloud.region_examples}")
    elif spec.region not in cloud.regions and not spec.cluster.allow_unlisted_region:
        # A pool component has no cluster settings to accept a region newer than spotkube's list with.
        newer = ("; a pool component takes only the regions spotkube knows, so a newer region needs a newer spotkube"
                 if spec.environment == EXTERNAL_ENVIRONMENT
                 else ", or, for a region newer than spotkube's list, set cluster.allowUnlistedRegion: true")
        yield Problem(config_key("region"), f"{shown(spec.region)} is not {_a(cloud.title)} region spotkube knows; use "
                      f"a region such as {cloud.region_examples}{newer}"
                      f"{did_you_mean(spec.region, cloud.regions, quoted=True)}")
    version = spec.cluster.kubernetes_version
    if version is not None and not re.fullmatch(cloud.version_pattern, version):
        yield Problem(config_key("cluster.kubernetesVersion"), f"{shown(version)} is not a Kubernetes version "
                      f"{cloud.title} takes; use {cloud.version_accepted}")
    pool_names = [pool.name for _, pool in all_pools(spec)]
    scenario = [(f"cost.hours.{cut(pool)}", pool) for pool in spec.cost.hours]
    scenario += [(f"cost.workloads[{i}].pool", w.pool) for i, w in enumerate(spec.cost.workloads)]
    for path, pool in scenario:
        if pool not in pool_names:
            yield Problem(config_key(path),
                          f"{shown(pool)} is not a pool of this stack; use one of {', '.join(pool_names)}")
    for pool, hours in spec.cost.hours.items():
        if hours < 0:
            yield Problem(config_key(f"cost.hours.{cut(pool)}"),
                          f"{hours:g} is not allowed; use 0 or more node-hours per month")
    cidrs = [(f"cluster.authorizedIpRanges[{i}]", c) for i, c in enumerate(spec.cluster.authorized_ip_ranges)]
    cidrs += [(f"cluster.deployer.egressRanges[{i}]", c) for i, c in enumerate(spec.cluster.deployer.egress_ranges)]
    for path, cidr in cidrs:
        try:
            ipaddress.ip_network(cidr, strict=True)
        except ValueError:
            yield Problem(config_key(path), f"{shown(cidr)} is not a CIDR; use e.g. 203.0.113.0/24")
    busy = [period.name for period in spec.cluster.maintenance.busy_periods]
    for i, name in enumerate(busy):
        if name in busy[:i]:
            yield Problem(config_key(f"cluster.maintenance.busyPeriods[{i}].name"),
                          f"{shown(name)} is already the name of another busy period; names must be unique")
    if spec.system_pool.critical_addons_only_taint() and not spec.platform_pool.enabled:
        yield Problem(config_key("platformPool.enabled"), "false leaves Kubeflow and other platform workloads no "
                      "untainted on-demand pool; enable it or set systemPool.criticalAddonsOnly: false")
    if spec.kubeflow.enabled and not spec.platform_pool.enabled:
        yield Problem(config_key("platformPool.enabled"), "false leaves Kubeflow Pipelines no pool: it runs only "
                      "on the platform pool; enable the platform pool or set kubeflow.enabled: false")
    if spec.kueue.enabled and not spec.kubeflow.enabled:
        yield Problem(config_key("kueue.enabled"), "true needs Kubeflow Pipelines: Kueue's LocalQueue and the pod "
                      "integration serve the pipelines' namespace; set kubeflow.enabled: true or kueue.enabled: false")
    if spec.kueue.enabled and not spec.gpu_pools:
        yield Problem(config_key("kueue.enabled"), "true with no GPU pools gives the ClusterQueue no quota, so no "
                      "queued step would ever be admitted; add a GPU pool or set kueue.enabled: false")
    if spec.training.enabled and not spec.kueue.enabled:
        yield Problem(config_key("training.enabled"), "true needs Kueue: a TrainJob names Kueue's LocalQueue, which "
                      "admits all its workers at once or none; set kueue.enabled: true or training.enabled: false")
    if spec.training.enabled and not any(pool.sharing is None for pool in spec.gpu_pools):
        yield Problem(config_key("training.enabled"), "true with no GPU pool that gives whole GPUs leaves the "
                      "training runtimes nowhere to place a worker; add one or set training.enabled: false")
    # A store outlives training being on (in prod it is protected, so it could not simply go), and a cluster's
    # args ask for it without Kubeflow Trainer, which is another component.
    if spec.training.checkpoint_store is not None and spec.training.checkpoint_location is not None:
        yield Problem(config_key("training.checkpointLocation"), "is set with training.checkpointStore, whose "
                      "location is where the jobs save; remove one of them")
    yield from _price_overrides(spec, cloud)


def _price_overrides(spec: PlatformSpec, cloud: Cloud) -> RuleOutput:
    """A stack's own prices must be rows the price table could hold for its cloud and region (Azure has
    no preemptible capacity, GKE accelerators are GPU types), one price per sku, kind and capacity."""
    seen: set[tuple[str, str, str]] = set()
    for i, price in enumerate(spec.cost.prices):
        path = config_key(f"cost.prices[{i}]")
        try:
            PriceRow.model_validate({"cloud": cloud.pricing.name, "region": spec.region, "sku": price.sku,
                                     "kind": price.kind, "capacity": price.capacity, "usdPerHour": price.usd_per_hour,
                                     "source": price.source, "date": price.date},
                                    context={cloud.pricing.name: cloud.pricing})
        except ValidationError as err:
            for error in err.errors():
                yield Problem(path, f"{error['msg'].removeprefix('Value error, ')}")
        key = (price.sku, price.kind, price.capacity)
        if key in seen:
            yield Problem(path, f"repeats the {price.capacity} price of {shown(price.sku)}; keep one row per sku, kind "
                          "and capacity")
        seen.add(key)


def _maintenance(settings: MaintenanceSettings, cloud: Cloud) -> MaintenanceSettings:
    """The cloud's default window for a stack that declares none (and did not ask for `anytime`)."""
    if settings.window is not None or settings.anytime or cloud.default_maintenance_window is None:
        return settings
    return settings.model_copy(update={"window": cloud.default_maintenance_window})


def resolve(spec: PlatformSpec, clouds: Clouds) -> tuple[PlatformSpec, list[Problem]]:
    """Check `spec` against its cloud's rules and fill in defaults that follow from the facts."""
    cloud: Cloud = clouds[spec.cloud]
    problems = [*common_rules(spec, clouds), *cloud.check(spec)]
    pools = []
    for i, pool in enumerate(spec.gpu_pools):
        gpu, error = cloud.gpu_of(pool)
        if error:
            problems.append(Problem(config_key(f"gpuPools[{i}].gpu" if pool.gpu else f"gpuPools[{i}].machine"),
                                    error))
        pools.append(cloud.pool_defaults(spec, pool.model_copy(update={"gpu": gpu or pool.gpu})))
    machine = cloud.default_machine
    resolved = spec.model_copy(update={
        "gpu_pools": tuple(pools),
        "system_pool": spec.system_pool.model_copy(update={"machine": spec.system_pool.machine or machine}),
        "platform_pool": spec.platform_pool.model_copy(update={"machine": spec.platform_pool.machine or machine}),
        "cluster": spec.cluster.model_copy(update={
            "channel": spec.cluster.channel or cloud.default_channel,
            "maintenance": _maintenance(spec.cluster.maintenance, cloud)}),
        "kubeflow": spec.kubeflow.model_copy(update={
            "step_grace_period_seconds":
                spec.kubeflow.step_grace_period_seconds or cloud.workload_notice_seconds}),
    })
    return resolved, problems


#: The environment a pool added to someone else's cluster is validated in: a pool's rules don't depend
#: on it, and the cluster's own environment is its owner's business.
EXTERNAL_ENVIRONMENT = "external"
#: Where a pool component's own keys sit in the one-pool platform it is validated as.
_POOL_LISTS = ("gpu_pools", "spot_pools")


def parse_node_pool(values: Mapping[str, Any], cloud: Cloud, source: str, clouds: Clouds) -> PlatformSpec:
    """A pool component's args, validated as the one pool of a platform, so it meets every rule a pool of
    a spotkube cluster meets; problems are named by the component's own keys. A machine without a GPU
    (and no `gpu` declared) is a CPU pool."""
    target = {key.name: key.spec_key for key in cloud.node_pool.target}
    pool = {k: v for k, v in values.items() if k not in target}
    platform: dict[str, Any] = {"cloud": cloud.cloud, "environment": EXTERNAL_ENVIRONMENT,
                                "kubeflow": {"enabled": False}}
    renamed = {spec_key: name for name, spec_key in target.items() if spec_key is not None}
    for spec_key, name in renamed.items():
        if name not in values:
            continue
        *sections, leaf = spec_key.split(".")
        holder = platform
        for section in sections:
            holder = holder.setdefault(section, {})
        holder[leaf] = values[name]
    machine = pool.get("machine")
    cpu = "gpu" not in pool and isinstance(machine, str) and cloud.machine_gpu(machine) is None
    kind = _POOL_LISTS[1] if cpu else _POOL_LISTS[0]
    platform[kind] = [pool]
    try:
        return parse_spec(platform, source, clouds, "python")
    except SpecError as err:
        raise SpecError(source, [Problem(_pool_key(p.path, kind, renamed), p.message) for p in err.problems]) from None


def _pool_key(path: str, kind: str, renamed: Mapping[str, str]) -> str:
    """A one-pool platform's key path as the pool component spells it."""
    inside = f"{kind}[0]"
    if path == inside:
        return "args"
    if path.startswith(inside + "."):
        return path.removeprefix(inside + ".")
    return next((name + path.removeprefix(key) for key, name in renamed.items()
                 if path == key or path.startswith(key + ".")), path)
