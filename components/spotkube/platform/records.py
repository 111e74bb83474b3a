"""`record`: spotkube's frozen value types, dataclasses that share their equality, hash and repr.

Python 3.11 compiles six generated methods per frozen dataclass when it is defined, which was half of
spotkube's import time (docs/speed.md). A record is the same frozen dataclass, but its `__eq__`,
`__hash__` and `__repr__` are the three functions below, shared by every record, answering as the
generated ones do; a method the class defines itself is kept. Pure module.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, dataclass_transform

from pydantic.alias_generators import to_camel

_T = TypeVar("_T")

#: The class attributes a record keeps its fields' getters in, read by the shared methods.
_COMPARED = "_record_compared"
_HASHED = "_record_hashed"
_SHOWN = "_record_shown"


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields `names` of an object, as one tuple (what the generated methods compare and hash)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _eq(self: Any, other: Any) -> object:
    if other.__class__ is not self.__class__:
        return NotImplemented
    compared = getattr(self.__class__, _COMPARED)
    return bool(compared(self) == compared(other))


def _hash(self: Any) -> int:
    return hash(getattr(self.__class__, _HASHED)(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(self.__class__, _SHOWN))
    return f"{self.__class__.__qualname__}({shown})"


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[_T]) -> type[_T]:
    """`cls` as a frozen dataclass whose equality, hash and repr are the shared ones."""
    # The body's own methods, looked at before the dataclass adds anything (a body that defines __eq__
    # alone gets __hash__ = None from Python, which a dataclass replaces, as done here).
    body = dict(cls.__dict__)
    explicit_hash = "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)
    made: type[Any] = dataclass(frozen=True, eq=False, repr=False)(cls)
    fields = dataclasses.fields(made)
    setattr(made, _COMPARED, _getter([f.name for f in fields if f.compare]))
    setattr(made, _HASHED, _getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)]))
    setattr(made, _SHOWN, tuple(f.name for f in fields if f.repr))
    for name, method, wanted in (("__eq__", _eq, "__eq__" not in body), ("__hash__", _hash, not explicit_hash),
                                 ("__repr__", _repr, "__repr__" not in body)):
        if wanted:
            setattr(made, name, method)
    return made


#: A field's metadata that keeps it out of its record's JSON (`camel_json`): what only code reads.
NOT_IN_JSON: dict[str, Any] = {"json": False}
#: A field's metadata that leaves its key out of the JSON while the value is None.
OMITTED_WHEN_NONE: dict[str, Any] = {"json": "omitted when None"}


def camel_json(value: Any) -> Any:
    """A record as JSON, generated from its fields in their order: each key the field's name in camelCase
    (pydantic's `to_camel`, as the stack keys are spelled), nested records, mappings and sequences alike.
    A field marked `NOT_IN_JSON` is left out; one marked `OMITTED_WHEN_NONE` is left out while None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        shown = {}
        for found in dataclasses.fields(value):
            mode, item = found.metadata.get("json", True), getattr(value, found.name)
            if mode is not False and not (mode is not True and item is None):
                shown[to_camel(found.name)] = camel_json(item)
        return shown
    if isinstance(value, Mapping):
        return {str(key): camel_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [camel_json(item) for item in value]
    return value
