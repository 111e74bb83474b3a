"""No string outside `components/spotkube/clouds/` names a registered cloud: a message, a help text or a
field description that spells one would need an edit for the next cloud, so each cloud's wording lives
in its folder (its `Cloud` subclass: title, vendor, principal; its `CommandSupport`) and the neutral
code derives it from the registry.

What is read: every string constant in the package's Python files outside `clouds/`, parsed with `ast`.
What is exempt, and why:
- docstrings and bare string statements (attribute docs): they explain the code to its next
  maintainer and may name the cloud a design answers; comments are not in the syntax tree at all;
- the strings in `EXEMPT`, by file and exact value, each with why it stays.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import spotkube
from spotkube.clouds import CLOUDS, PROFILES

PACKAGE = Path(spotkube.__file__).parent

#: (file below the package, the string's exact value) -> why it may name a cloud.
EXEMPT: dict[tuple[str, str], str] = {
    ("platform/contract/labels.py", "cloud.google.com/compute-class"):
        "a Kubernetes label key, not prose: the contract sets it on every cloud's GPU pools",
}
def cloud_words() -> set[str]:
    """Every word the registry says names a cloud: its name, title, vendor (and the vendor's first word),
    its price table's name and its SDKs' loggers."""
    words = set()
    for name, cloud in CLOUDS.items():
        words |= {name, cloud.title, cloud.vendor, cloud.vendor.split()[0], cloud.pricing.name,
                  *PROFILES[name].sdk_loggers}
    return {w.lower() for w in words}


def string_constants(tree: ast.AST) -> list[ast.Constant]:
    """The tree's string constants that are not a statement by themselves (a docstring)."""
    statements = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [node for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in statements]


def naming_strings(words: set[str]) -> list[tuple[str, int, str]]:
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(words)) + r")\b", re.IGNORECASE)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith("clouds/"):
            continue
        for node in string_constants(ast.parse(path.read_text(encoding="utf-8"))):
            value = str(node.value)
            if not pattern.search(value) or (where, value) in EXEMPT:
                continue
            found.append((where, node.lineno, value))
    return found


def test_the_registry_names_each_cloud_in_words() -> None:
    words = cloud_words()
    assert {"aks", "azure", "gke", "google", "gcp"} <= words


def test_no_string_outside_the_clouds_folders_names_a_cloud() -> None:
    found = naming_strings(cloud_words())
    assert found == [], "\n".join(f"{where}:{line}: {value[:120]!r}" for where, line, value in found)


def test_every_exemption_still_matches_a_string() -> None:
    """An exemption whose string is gone would hide the next one written in its place."""
    seen = {(path.relative_to(PACKAGE).as_posix(), str(node.value))
            for path in PACKAGE.rglob("*.py")
            for node in string_constants(ast.parse(path.read_text(encoding="utf-8")))}
    assert EXEMPT
    for key in EXEMPT:
        assert key in seen, key


def test_the_check_finds_a_cloud_named_in_a_string_but_not_in_a_docstring() -> None:
    tree = ast.parse('"""On AKS, this docstring may say so."""\nMESSAGE = "use an AKS cluster"\n')
    assert [node.value for node in string_constants(tree)] == ["use an AKS cluster"]
