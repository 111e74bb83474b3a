"""The components' args TypedDicts, written out as Python source from the spec models.

Pulumi's analyzer reads each key's description from the docstring under it in the module's source
(`inspect.getsource`), so TypedDicts built at run time would lose every description. A cloud's types
carry its title (`AksGpuPoolArgs`), so an AKS user is never offered a GKE field, nor the reverse.
"""

from __future__ import annotations

import json
import textwrap
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from spotkube.platform.cloud import Cloud, Clouds
from spotkube.platform.records import record
from spotkube.platform.spec import (
    ClusterSettings,
    DevicePluginSettings,
    KubeflowSettings,
    KueueSettings,
    PlatformPool,
    RequiredArg,
    SystemPool,
    TrainingSettings,
    Wired,
)

REGENERATE = "python -m spotkube.cli.reference write"
#: Keys of a stack's spec that a cluster component's args don't take: the component is the cloud,
#: the cost scenario and the acknowledged warnings are the plan's, and the add-ons are components of
#: their own.
NOT_CLUSTER_ARGS = ("cloud", "cost", "device_plugin", "kubeflow", "kueue", "training",
                    "acknowledgements")
PACKAGE = Path(__file__).resolve().parents[1]

LITERALS_NOTE = '''"""`Literal` for type checkers, `str` at run time: Pulumi's analyzer accepts no `Literal`, so the
schema types them as strings and the component's checks name the accepted values."""'''

INPUT_ALIAS = '''_T = TypeVar("_T")

Input = _T | Awaitable[_T] | Output[_T]
"""`pulumi.Input[T]` without its forward reference to `Output[T]`, so `typing.get_type_hints` resolves it."""
'''


@record
class Extra:
    """A key an args TypedDict has beyond its model's fields, declared here with its type and words."""

    name: str
    annotation: str
    required: bool
    description: str
    #: Put before the model's fields (an identifying key such as `cloud`), else after them.
    first: bool = False


#: The one training setting a cluster's args take, because the cluster creates it: a stack file's
#: `training.checkpointStore.name` (Kubeflow Trainer itself is another component).
CHECKPOINT_STORE_ARG = Extra(
    "checkpoint_store", "str", False, "The name of an object store the cluster creates for training checkpoints, "
    "writable by the identity the workers run as, as a stack file's `training.checkpointStore.name` is (the cloud's "
    "storage account or bucket, whose naming rules it checks); `spotkube.training.store_location` gives its URI "
    "for `train_job`. Unset = none.")


@record
class ArgsType:
    """One TypedDict to generate: its name, the model it mirrors, and how it differs from the model."""

    name: str
    model: type[BaseModel]
    doc: str
    exclude: tuple[str, ...] = ()
    extra: tuple[Extra, ...] = ()
    #: Names of the TypedDicts that nested models become.
    nested: Mapping[type[BaseModel], str] = field(default_factory=dict)


# --- types ------------------------------------------------------------------------------------------


def _marked(info: FieldInfo | None, annotation: Any, mark: type) -> bool:
    marks = list(info.metadata) if info is not None else []
    if typing.get_origin(annotation) is typing.Annotated:
        marks += typing.get_args(annotation)[1:]
    return any(isinstance(m, mark) for m in marks)


def _wired(info: FieldInfo | None, annotation: Any) -> bool:
    return _marked(info, annotation, Wired)


def _rules_require(info: FieldInfo) -> bool:
    """Whether the cloud's rules require a field (`RequiredArg`), or settings that hold one, at any depth
    (`cluster`, whose `deployer` needs an `object_id`)."""
    if _marked(info, info.annotation, RequiredArg):
        return True
    annotation = info.annotation
    while typing.get_origin(annotation) in (typing.Annotated, typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    return (isinstance(annotation, type) and issubclass(annotation, BaseModel)
            and any(_rules_require(inner) for inner in annotation.model_fields.values()))


def required_arg(info: FieldInfo) -> bool:
    """Whether the args must give a field: the model requires it, or the cloud's rules do."""
    return info.is_required() or _rules_require(info)


#: Each closed set of values a module's args take -> the name of its type there.
Literals = Mapping[tuple[Any, ...], str]


def _python_type(annotation: Any, nested: Mapping[type[BaseModel], str], info: FieldInfo | None = None,
                 literals: Literals | None = None) -> str:
    """A model field's annotation as the args spell it: primitives, lists, dicts and nested TypedDicts
    (what the analyzer accepts); a value from a fixed set is its named `Literal` (`str` at run time); a
    `Wired` value is `Input[...]`."""
    wired = _wired(info, annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        text = _python_type(args[0], nested, literals=literals)
    elif origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise ValueError(f"{annotation!r}: a union the args can't spell")
        text = _python_type(inner[0], nested, literals=literals)
    elif origin is Literal:
        text = (literals or {}).get(args) or type(args[0]).__name__
    elif origin in (tuple, list):
        text = f"list[{_python_type(args[0], nested, literals=literals)}]"
    elif origin is dict:
        text = (f"dict[{_python_type(args[0], nested, literals=literals)}, "
                f"{_python_type(args[1], nested, literals=literals)}]")
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        text = nested[annotation]
    elif annotation in (str, int, float, bool):
        text = annotation.__name__
    else:
        raise ValueError(f"{annotation!r}: a type the args can't spell")
    return f"Input[{text}]" if wired else text


def literal_sets(annotation: Any) -> Iterator[tuple[Any, ...]]:
    """The closed sets of values an annotation holds, at any depth of lists, dicts and optionals."""
    if typing.get_origin(annotation) is Literal:
        yield typing.get_args(annotation)
        return
    for arg in typing.get_args(annotation):
        yield from literal_sets(arg)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def module_literals(classes: Sequence[ArgsType]) -> dict[tuple[Any, ...], str]:
    """A name for each closed set of values the classes take, after the first field that takes it:
    `AksGpuPoolCapacity` (a set shared by several fields keeps its first name)."""
    names: dict[tuple[Any, ...], str] = {}
    for args in classes:
        for name, info in args.model.model_fields.items():
            if name in args.exclude:
                continue
            for values in literal_sets(info.annotation):
                names.setdefault(values, f"{args.name.removesuffix('Args')}{_camel(name)}")
    return names


def nested_models(annotation: Any) -> Iterator[type[BaseModel]]:
    """The settings models an annotation holds, at any depth of lists, dicts and optionals."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from nested_models(arg)


# --- text -------------------------------------------------------------------------------------------


def _docstring(text: str, indent: str) -> list[str]:
    """A docstring of `text` on one line, quotes and backslashes escaped. The analyzer takes a docstring
    as written, so a wrapped one would put its line breaks and indentation into every SDK's docs;
    the generated modules are exempt from the line length for that (pyproject.toml)."""
    text = " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return [f'{indent}"""{text}"""'] if text else []


def plain(value: Any) -> Any:
    """A default as YAML and JSON hold it: tuples become lists."""
    return list(value) if isinstance(value, tuple) else value


#: Fields whose default is the cloud's: (shared model, field) -> the `Cloud` attribute that holds it.
CLOUD_DEFAULTS = {(SystemPool, "machine"): "default_machine", (PlatformPool, "machine"): "default_machine",
                  (ClusterSettings, "channel"): "default_channel"}


def short_default(value: Any) -> str:
    """A default that says something, as text ("" for none, an empty list or a settings model)."""
    if value is None or isinstance(value, BaseModel) or (isinstance(value, tuple | list | dict) and not value):
        return ""
    return json.dumps(plain(value)) if isinstance(value, bool | int | float | list | tuple | dict) else str(value)


def default_words(model: type[BaseModel], name: str, info: FieldInfo, cloud: Cloud | None) -> str:
    """` Default: X.` for a field the args may leave out, when its default says something."""
    for (shared, field_name), attribute in CLOUD_DEFAULTS.items():
        if cloud is not None and field_name == name and issubclass(model, shared):
            return f" Default: `{getattr(cloud, attribute)}`."
    shown = "" if info.is_required() else short_default(info.get_default(call_default_factory=True))
    return f" Default: `{shown}`." if shown else ""


def _extra(extra: Extra) -> list[str]:
    kind = extra.annotation if extra.required else f"NotRequired[{extra.annotation}]"
    return [f"    {extra.name}: {kind}", *_docstring(extra.description, "    ")]


def _class(args: ArgsType, cloud: Cloud | None, literals: Literals) -> list[str]:
    lines = [f"class {args.name}(TypedDict):", *_docstring(args.doc, "    "), ""]
    for extra in args.extra:
        lines += _extra(extra) if extra.first else []
    for name, info in args.model.model_fields.items():
        if name in args.exclude:
            continue
        kind = _python_type(info.annotation, args.nested, info, literals)
        lines.append(f"    {name}: {kind if required_arg(info) else f'NotRequired[{kind}]'}")
        lines += _docstring((info.description or "") + default_words(args.model, name, info, cloud), "    ")
    for extra in args.extra:
        lines += [] if extra.first else _extra(extra)
    return lines


def module_source(doc: str, classes: Sequence[ArgsType], cloud: Cloud | None = None) -> str:
    """A module of TypedDicts, in the order given (nested ones first)."""
    needs_input = any(
        "Input[" in _python_type(info.annotation, c.nested, info)
        for c in classes for name, info in c.model.model_fields.items() if name not in c.exclude
    )
    literals = module_literals(classes)
    wrapped = textwrap.wrap(doc, 110, break_long_words=False, break_on_hyphens=False)
    lines = ['"""' + "\n".join(wrapped) + '\n"""', ""]
    typing_names = [*(["TYPE_CHECKING", "Literal"] if literals else []), "NotRequired", "TypedDict"]
    if needs_input:
        lines += ["from collections.abc import Awaitable",
                  f"from typing import {', '.join([*typing_names, 'TypeVar'])}",
                  "", "from pulumi import Output", "", INPUT_ALIAS.rstrip()]
    else:
        lines += [f"from typing import {', '.join(typing_names)}"]
    if literals:
        lines += ["", "if TYPE_CHECKING:"]
        lines += [f"    {name} = Literal[{', '.join(json.dumps(v) for v in values)}]"
                  for values, name in literals.items()]
        lines += ["else:"]
        lines += [f"    {name} = {type(values[0]).__name__}" for values, name in literals.items()]
        lines += [LITERALS_NOTE]
    for args in classes:
        lines += ["", "", *_class(args, cloud, literals)]
    return "\n".join(line.rstrip() for line in lines) + "\n"


# --- the modules ------------------------------------------------------------------------------------


def cluster_args_name(cloud: Cloud) -> str:
    """`AksGpuClusterArgs`: the args of the cloud's cluster component."""
    return f"{cloud.cloud.capitalize()}GpuClusterArgs"


def _args_name(cloud: Cloud, model: type[BaseModel]) -> str:
    """`AksGpuPool` -> `AksGpuPoolArgs`, `GpuSpec` -> `AksGpuArgs`, `DeployerSettings` -> `GkeDeployerArgs`."""
    prefix = cloud.cloud.capitalize()
    stem = model.__name__.removeprefix(prefix)
    for suffix in ("Settings", "Spec"):
        stem = stem.removesuffix(suffix)
    return f"{prefix}{stem}Args"


def cluster_args(cloud: Cloud) -> list[ArgsType]:
    """The TypedDicts of a cloud's cluster component, nested ones first."""
    root = cloud.spec_model
    order: list[type[BaseModel]] = []

    def visit(model: type[BaseModel], skip: Sequence[str] = ()) -> None:
        for name, info in model.model_fields.items():
            if name in skip:
                continue
            for inner in nested_models(info.annotation):
                if inner not in order:
                    visit(inner)
                    order.append(inner)

    visit(root, NOT_CLUSTER_ARGS)
    names = {model: _args_name(cloud, model) for model in order}
    out = [ArgsType(names[m], m, docstring_of(m), nested=names) for m in order]
    about = docstring_of(root)
    component = cluster_args_name(cloud).removesuffix("Args")
    out.append(ArgsType(cluster_args_name(cloud), root, f"The args of `{component}`: {about[:1].lower()}{about[1:]}",
                        exclude=NOT_CLUSTER_ARGS, nested=names, extra=(CHECKPOINT_STORE_ARG,)))
    out.append(node_pool_args(cloud, names))
    return out


def node_pool_args(cloud: Cloud, nested: Mapping[type[BaseModel], str]) -> ArgsType:
    """The args of the cloud's pool component: the keys that name the cluster it joins, then the keys of
    one entry of the cluster component's `gpu_pools`."""
    facts = cloud.node_pool
    pool_model = next(nested_models(cloud.spec_model.model_fields["gpu_pools"].annotation))
    extras = tuple(Extra(key.name, key.annotation, key.required, key.description, first=True)
                   for key in facts.target)
    return ArgsType(f"{facts.component}Args", pool_model,
                    f"The args of `{facts.component}`: one pool, GPU or CPU, added to a cluster spotkube may not have "
                    f"made (an entry of `{cloud.component}`'s `gpu_pools` and the cluster it joins). A "
                    "machine without a GPU makes a CPU pool.", extra=extras, nested=nested)


def docstring_of(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").split())


def args_module_path(cloud: Cloud) -> Path:
    """Where a cloud's args module lives: `args.py` beside its spec module."""
    module = cloud.spec_model.__module__
    return PACKAGE.joinpath(*module.split(".")[1:]).with_name("args.py")


def cloud_args_source(cloud: Cloud) -> str:
    component = cluster_args_name(cloud).removesuffix("Args")
    doc = (f"The typed args of `{component}`, generated from `{cloud.spec_model.__module__}` by `{REGENERATE}`; "
           "do not edit. The cross-language schema is derived from them and their docstrings; only `Wired` "
           "settings are `Input[...]`, every other field decides the plan and is a plain value.")
    return module_source(doc, cluster_args(cloud), cloud)


def _plugin_of(cloud: Cloud) -> str:
    """What the device plugin component does on a cloud, for its `cloud` arg's description."""
    if cloud.device_plugin_mode == "daemonset":
        return f"`{cloud.cloud}` (deploys NVIDIA's plugin as a DaemonSet)"
    return f"`{cloud.cloud}` (keeps {cloud.title}'s managed plugin, deploys nothing)"


def addon_args(clouds: Clouds) -> tuple[ArgsType, ...]:
    """The add-ons' TypedDicts; the device plugin's `cloud` says what it does on each registered cloud."""
    plugin_extras = (
        Extra("cloud", "str", True, f"The cluster's cloud: {' or '.join(map(_plugin_of, clouds.values()))}. "
              "Python: use `NvidiaDevicePlugin.for_cluster(name, cluster)`, which takes it from the cluster.",
              first=True),
        Extra("extra_taints", "list[str]", False, "Taints your GPU pools carry beyond spotkube's own, as "
              "key=value:Effect; the plugin tolerates them. Python: `NvidiaDevicePlugin.for_cluster` tolerates "
              "every GPU pool's own taints without them."),
    )
    return (
        ArgsType("NvidiaDevicePluginArgs", DevicePluginSettings, "The args of `NvidiaDevicePlugin`: NVIDIA's device "
                 "plugin settings and the cluster's cloud and taints. `enabled` is not an arg: not creating the "
                 "component says so.", exclude=("enabled",), extra=plugin_extras),
        ArgsType("DevicePluginSettingsArgs", DevicePluginSettings, "The device plugin's own settings, for "
                 "`NvidiaDevicePlugin.for_cluster` (Python only): the cluster gives the cloud and the GPU pools' "
                 "taints.", exclude=("enabled",)),
        ArgsType("KubeflowPipelinesArgs", KubeflowSettings, "The args of `KubeflowPipelines`: "
                 f"{docstring_of(KubeflowSettings)}", exclude=("enabled",)),
        ArgsType("KueueArgs", KueueSettings, f"The args of `Kueue`: {docstring_of(KueueSettings)}",
                 exclude=("enabled",)),
        ArgsType("KubeflowTrainerArgs", TrainingSettings,
                 f"The args of `KubeflowTrainer`: {docstring_of(TrainingSettings)}",
                 exclude=("enabled", "checkpoint_store")),
    )


ADDON_ARGS_PATH = PACKAGE / "components" / "args.py"


def addon_args_source(clouds: Clouds) -> str:
    doc = (f"The typed args of the add-on components, generated from `spotkube.platform.spec` (and "
           f"`spotkube.platform.args_source`) by `{REGENERATE}`; do not edit. None accepts an Output.")
    return module_source(doc, addon_args(clouds))


#: The module that names every registered cloud's public classes for type checkers.
EXPORTS_PATH = PACKAGE / "clouds" / "exports.py"


def exports_source(clouds: Clouds) -> str:
    """`spotkube.clouds.exports`: each registered cloud's components and args, imported under their names,
    which `spotkube/__init__.py` star-imports for type checkers only (at run time it resolves each name
    from the registry on first use, so no cloud's module loads before it is asked for)."""
    lines = ['"""Every registered cloud\'s components and their args, as `spotkube` exports them, for type checkers:',
             f"generated from the registry by `{REGENERATE}`; do not edit.", '"""', ""]
    for cloud in sorted(clouds.values(), key=lambda c: c.cloud):
        folder = cloud.spec_model.__module__.rpartition(".")[0]
        lines += [f"from {folder}.args import {name} as {name}" for name in sorted(a.name for a in cluster_args(cloud))]
        lines += [f"from {folder}.{module} import {name} as {name}"
                  for module, name in (("component", cloud.component), ("node_pool", cloud.node_pool.component))]
    return "\n".join(lines) + "\n"


def args_files(clouds: Clouds) -> dict[Path, str]:
    """Every generated args module, and the exports module: path -> its text."""
    files = {args_module_path(cloud): cloud_args_source(cloud) for cloud in clouds.values()}
    files[ADDON_ARGS_PATH] = addon_args_source(clouds)
    files[EXPORTS_PATH] = exports_source(clouds)
    return files
