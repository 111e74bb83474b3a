"""The typed args promise what the checks require: mypy (pinned in the dev extra) refuses a misspelt
capacity, a missing AKS deployer and a missing GKE project before the program runs, and type-checks
examples/consumer clean, with the consumer's own mypy.ini."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONSUMER = REPO / "examples" / "consumer"

MISTAKES = '''\
from spotkube import AksGpuCluster, GkeGpuCluster

AksGpuCluster("training", args={
    "environment": "dev",
    "region": "uksouth",
    "gpu_pools": [{"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "max": 4, "capacity": "spott"}],
    "cluster": {"resource_group_name": "ml-rg"},
})
GkeGpuCluster("inference", args={
    "environment": "dev",
    "region": "us-central1",
    "gpu_pools": [{"name": "l4-spot", "machine": "g2-standard-8", "max": 4}],
    "cluster": {"channel": "STABLE"},
})
'''


@pytest.fixture
def cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mypy's incremental cache, one per test (tests may run at once on different workers), kept in the
    virtualenv the tests run in: a second `make test` re-checks only what changed, as mypy does for a
    developer, instead of the SDKs' type modules each time (about 15 CPU s). A new virtualenv starts
    it afresh; outside a virtualenv it lasts one run."""
    if sys.prefix == sys.base_prefix:
        return tmp_path_factory.mktemp("mypy-cache")
    return Path(sys.prefix) / ".cache" / "spotkube-tests-mypy" / request.node.name


def mypy(cwd: Path, cache: Path, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(CONSUMER / "mypy.ini"),
                           "--cache-dir", str(cache), *files],
                          cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def test_the_consumer_example_type_checks_clean(cache: Path) -> None:
    result = mypy(CONSUMER, cache)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues found in 2 source files" in result.stdout


def test_a_misspelt_capacity_and_a_missing_deployer_or_project_fail_type_checking(
    cache: Path, tmp_path: Path
) -> None:
    (tmp_path / "program.py").write_text(MISTAKES)
    result = mypy(tmp_path, cache, "program.py")
    assert result.returncode == 1, result.stdout + result.stderr
    errors = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 3, result.stdout
    assert any("program.py:6:" in e and "'spott'" in e and "capacity" in e for e in errors), errors
    assert any("program.py:7:" in e and 'Missing key "deployer"' in e for e in errors), errors
    assert any("program.py:13:" in e and 'Missing key "project"' in e for e in errors), errors
