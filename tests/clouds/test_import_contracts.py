"""The import-linter contracts (pyproject.toml's [tool.importlinter]) are held against the registry: every
registered cloud has its contracts, and no contract names a cloud that isn't registered. A new cloud's
folder is then kept in its layers by the same rules as every other's, without anyone remembering to."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from spotkube.clouds import PROFILES

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
#: The Pulumi SDKs no cloud owns.
SHARED_SDKS = frozenset({"pulumi", "pulumi_kubernetes", "pulumi_random", "pulumiverse_time"})
#: The parts of a cloud's folder that import its SDK, and the layer each sits in.
SDK_PARTS = ("component", "node_pool", "bootstrap")


def contracts() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    return found


def _modules(contract: Mapping[str, Any]) -> Iterator[str]:
    """Every module a contract names, in any of its lists."""
    for key in ("source_modules", "forbidden_modules"):
        yield from contract.get(key, ())
    for layer in contract.get("layers", ()):
        yield from (part.strip() for part in layer.split("|"))
    for ignored in contract.get("ignore_imports", ()):
        yield from (part.strip() for part in ignored.split("->"))


def contract_problems(listed: list[dict[str, Any]], sdks: Mapping[str, str]) -> list[str]:
    """What the contracts lack or name wrongly for the clouds `sdks` registers (cloud -> its SDK module)."""
    problems = []
    for contract in listed:
        for module in _modules(contract):
            cloud = re.fullmatch(r"spotkube\.clouds\.([a-z0-9_]+)(\..*)?", module)
            if cloud and cloud[1] not in sdks:
                problems.append(f"{contract['name']!r} names {module}, but {cloud[1]} is not a registered cloud")
            if module.startswith("pulumi") and module not in SHARED_SDKS and module not in sdks.values():
                problems.append(f"{contract['name']!r} names {module}, which is no registered cloud's SDK")
    by_source = {tuple(c.get("source_modules", ())): c for c in listed}
    pure = by_source.get(("spotkube.clouds",), {})
    layers = " | ".join(next((c["layers"] for c in listed if c["type"] == "layers"), []))
    for cloud, sdk in sdks.items():
        folder = f"spotkube.clouds.{cloud}"
        others = {f"spotkube.clouds.{o}" for o in sdks if o != cloud} | {s for o, s in sdks.items() if o != cloud}
        own = by_source.get((folder,))
        if own is None or set(own["forbidden_modules"]) != others:
            problems.append(f"no contract keeps {folder} from importing the other clouds and SDKs: {sorted(others)}")
        missing = [f"{folder}.{part} -> {sdk}" for part in SDK_PARTS
                   if f"{folder}.{part} -> {sdk}" not in pure.get("ignore_imports", ())]
        if missing:
            problems.append(f"the clouds' purity contract does not let {', '.join(missing)}")
        for part in SDK_PARTS:
            if f"{folder}.{part}" not in layers:
                problems.append(f"the layers contract does not place {folder}.{part}")
        for contract in listed:
            forbidden = set(contract.get("forbidden_modules", ()))
            if forbidden & set(sdks.values()) and sdk not in forbidden and contract is not own:
                problems.append(f"{contract['name']!r} forbids other clouds' SDKs but not {sdk}")
            for part in ("component", "bootstrap"):
                if {f"spotkube.clouds.{o}.{part}" for o in sdks} & forbidden and f"{folder}.{part}" not in forbidden:
                    problems.append(f"{contract['name']!r} forbids other clouds' {part} but not {folder}.{part}")
    return problems


def test_the_contracts_hold_every_registered_cloud_and_only_those() -> None:
    listed = contracts()
    assert listed and PROFILES, "pyproject.toml lists import-linter contracts and the registry its clouds"
    assert contract_problems(listed, {name: m.sdk for name, m in PROFILES.items()}) == []


def test_a_cloud_registered_without_its_contracts_is_found() -> None:
    registered = {name: m.sdk for name, m in PROFILES.items()}
    problems = contract_problems(contracts(), {**registered, "eks": "pulumi_eks"})
    assert any("spotkube.clouds.eks from importing" in p for p in problems)
    assert any("does not let spotkube.clouds.eks.component -> pulumi_eks" in p for p in problems)
    assert any("does not place spotkube.clouds.eks.node_pool" in p for p in problems)
    assert any("not pulumi_eks" in p for p in problems)


@pytest.mark.parametrize("cloud", sorted(PROFILES))
def test_a_contract_naming_a_cloud_that_is_not_registered_is_found(cloud: str) -> None:
    remaining = {name: m.sdk for name, m in PROFILES.items() if name != cloud}
    problems = contract_problems(contracts(), remaining)
    assert any(f"but {cloud} is not a registered cloud" in p for p in problems)
    assert any(f"names {PROFILES[cloud].sdk}, which is no registered cloud's SDK" in p for p in problems)
