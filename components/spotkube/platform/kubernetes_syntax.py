"""Kubernetes' own syntax for label keys and values and for taints, checked before anything is registered:
the cloud API accepts a bad label, but the kubelet refuses to register the node, so the pool scales up
and its nodes never join. apimachinery's `IsQualifiedName` and `IsValidLabelValue`
(docs/platform-facts.md#kubernetes-label-syntax). Pure module: no Pulumi.
"""

from __future__ import annotations

import re

#: The name part of a qualified name, and a label value: alphanumerics with `-`, `_` and `.` inside.
_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
#: A DNS-1123 subdomain: the optional prefix of a qualified name.
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
NAME_MAX = 63
PREFIX_MAX = 253
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

KEY_RULE = (
    "a key is an optional DNS subdomain prefix of at most 253 characters and `/`, then a name of 1-63 "
    "letters, digits, `-`, `_` or `.` that starts and ends with a letter or digit (e.g. team or "
    "example.com/team)"
)
VALUE_RULE = (
    "a value is empty or 1-63 letters, digits, `-`, `_` or `.` that starts and ends with a letter or "
    "digit (e.g. ml-ops)"
)


def key_problem(key: str) -> str | None:
    """Why `key` is not a Kubernetes label or taint key, or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return f"the prefix before `/` is empty; {KEY_RULE}"
    if prefix and (len(prefix) > PREFIX_MAX or not _SUBDOMAIN.fullmatch(prefix)):
        return f"the prefix {prefix[:60]!r} is not a lower-case DNS subdomain; {KEY_RULE}"
    if not name:
        return f"the name is empty; {KEY_RULE}"
    if len(name) > NAME_MAX:
        return f"the name has {len(name)} characters; {KEY_RULE}"
    if not _NAME.fullmatch(name):
        return f"the name {name[:60]!r} has characters Kubernetes refuses; {KEY_RULE}"
    return None


def value_problem(value: str) -> str | None:
    """Why `value` is not a Kubernetes label or taint value, or None."""
    if not value:
        return None
    if len(value) > NAME_MAX:
        return f"it has {len(value)} characters; {VALUE_RULE}"
    if not _NAME.fullmatch(value):
        return f"it has characters Kubernetes refuses; {VALUE_RULE}"
    return None


def reserved_prefix(key: str, prefixes: tuple[str, ...]) -> str | None:
    """The reserved prefix `key` falls under (the domain itself or a subdomain of it), or None."""
    prefix = key.rpartition("/")[0]
    return next((p for p in prefixes if prefix == p or prefix.endswith(f".{p}")), None)
