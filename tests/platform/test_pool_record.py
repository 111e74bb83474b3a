"""A registered pool has one read-side record, and the plan's JSON of a pool is generated from it: its
keys are the record's fields in camelCase, in their order, so the JSON, its schema and the record can't
drift apart."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import field
from pathlib import Path

from pydantic.alias_generators import to_camel

from spotkube.platform.cloud import RegisteredPool
from spotkube.platform.records import NOT_IN_JSON, OMITTED_WHEN_NONE, camel_json, record

REPO = Path(__file__).resolve().parents[2]


@record
class _Part:
    usd_per_hour: float
    share: str | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@record
class _Line:
    pool_name: str
    parts: tuple[_Part, ...]
    max_run_seconds: int | None = None
    read_by_code: str = field(default="", metadata=NOT_IN_JSON)


def test_a_records_json_is_its_fields_in_camel_case_in_their_order() -> None:
    line = _Line("a100spot", (_Part(1.5), _Part(0.25, "1/6")), read_by_code="never shown")
    shown = camel_json(line)
    assert shown == {"poolName": "a100spot", "parts": [{"usdPerHour": 1.5}, {"usdPerHour": 0.25, "share": "1/6"}],
                     "maxRunSeconds": None}
    assert list(shown) == ["poolName", "parts", "maxRunSeconds"]


def _pool(**labels: str) -> RegisteredPool:
    return RegisteredPool(cloud_name="spotkube-gpu-1a2b", capacity="spot", machine="Standard_NC24ads_A100_v4",
                          min=0, max=4, taints=("nvidia.com/gpu=present:NoSchedule",), labels=labels,
                          eviction_policy="Delete", max_price=-1, zones=("1",), where="AgentPool 'spotkube-gpu'",
                          gpu_count=1, has_gpu=True, system=False, parsed_taints=frozenset())


def test_a_pools_json_keys_are_the_records_and_the_schema_names_each() -> None:
    pool = _pool(**{"spotkube.io/pool": "gpu", "spotkube.io/role": "gpu", "spotkube.io/accelerator": "nvidia-a100"})
    shown = pool.to_json()
    fields = [to_camel(f.name) for f in dataclasses.fields(RegisteredPool) if f.metadata.get("json", True) is not False]
    assert list(shown) == [key for key in fields if key != "zoneLabels"], "zoneLabels only with a contract"
    assert (shown["name"], shown["role"], shown["gpu"]) == ("gpu", "gpu", {"type": "nvidia-a100", "count": 1})
    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())["$defs"]["pool"]
    assert set(schema["properties"]) == set(fields)
    assert set(schema["required"]) <= set(shown)


def test_a_pool_without_spotkube_labels_is_named_as_the_cloud_names_it() -> None:
    shown = _pool().to_json()
    assert (shown["name"], shown["role"], shown["gpu"]) == ("spotkube-gpu-1a2b", "unknown", None)
