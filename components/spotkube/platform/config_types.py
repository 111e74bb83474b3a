"""Pulumi's config types of spotkube's stack keys, and the keys a stack file holds besides `config`.

The program asks on every run which values to decode as JSON, and the plan which keys a stack file
may hold, so this stays a small module of its own: the configuration reference, which builds the docs
and the schema from the same facts, loads only for the commands that write them.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from spotkube.platform.spec import PlatformSpec

#: Keys a Pulumi stack file may carry next to `config`.
STACK_FILE_KEYS: Mapping[str, dict[str, Any]] = {
    "encryptionsalt": {"type": "string", "description": "Salt of the passphrase secrets provider."},
    "secretsprovider": {"type": "string", "description": "The stack's secrets provider, e.g. a KMS URL."},
    "encryptedkey": {"type": "string", "description": "The data key, encrypted by the secrets provider."},
    "environment": {
        "description": "Pulumi ESC environments whose values the stack imports.",
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}],
    },
}

_PULUMI_SCALARS: dict[Any, str] = {str: "string", int: "integer", bool: "boolean"}


def _pulumi_type(annotation: Any) -> str | None:
    """Pulumi's config type of a spec field's type: a model or a mapping is an object, a tuple or a
    list an array. Read from the type itself, because the program asks on every run (to know which
    values to decode as JSON), and generating the spec's JSON Schema would cost it 30 ms each time."""
    origin = typing.get_origin(annotation)
    if origin in (tuple, list):
        return "array"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "object"
    return _PULUMI_SCALARS.get(annotation)


def config_types() -> dict[str, str]:
    """Pulumi's config type (`string`, `object`, ...) of every top-level key: the same on every cloud."""
    out = {}
    for name, field in PlatformSpec.model_fields.items():
        key = field.alias or name
        kind = _pulumi_type(field.annotation)
        if kind is None:
            raise ValueError(f"{key}: type {field.annotation!r} has no Pulumi config type")
        out[key] = kind
    return out
