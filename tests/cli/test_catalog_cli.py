"""`spotkube catalog refresh` and the plan's catalog line, as a user runs them.

The refresh signs in as it would on a runner (Azure's managed identity endpoint, Google's metadata
server) and reads both clouds' APIs, all served on 127.0.0.1 in the real APIs' shapes
(tests/cloud_apis.py); the plan then states the refreshed catalog's date and source, and a GPU
pool on a size no catalog knows plans with its acknowledgeable warning. The refresh runs as a process
of its own (Google's client libraries), the plans in the test's process (tests/in_process.py).
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cloud_apis import (
    AZURE_TOKEN,
    GCP_TOKEN,
    PROJECT,
    SUBSCRIPTION,
    CloudApis,
    azure_skus,
    gcp_types,
    serving,
)
from in_process import run_spotkube
from spotkube.clouds import CLOUDS, bundled_catalog
from spotkube.platform.catalog import CATALOG_FILE, UNLISTED_SIZE, catalog_text, load_catalog_file
from spotkube.platform.project import Project

CATALOG = bundled_catalog()
STACK = "aks-dev-eastus"
#: A GPU pool on a size no catalog knows, with its GPUs declared.
UNLISTED_POOL = {"name": "gb400", "machine": "Standard_ND128isr_GB400_v7", "capacity": "spot", "min": 0, "max": 2,
                 "gpu": {"type": "nvidia-gb400", "count": 4}}
#: A pool of a size that gets a part of one GPU.
A10_POOL = {"name": "a10", "machine": "Standard_NV6ads_A10_v5", "capacity": "spot", "min": 0, "max": 2}
CONFIG = {"cloud": "aks", "environment": "dev", "region": "eastus", "gpuPools": [UNLISTED_POOL, A10_POOL],
          "cluster": {"deployer": {"objectId": "c0ffee00-0000-4000-8000-000000000001",
                                   "principalType": "ServicePrincipal"}}}


@pytest.fixture
def spotkube(spotkube_process: Callable[..., subprocess.CompletedProcess[str]]
             ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`spotkube` as a process of its own: google-auth reads the metadata server's address (the fake's,
    each test its own) once per process."""
    return spotkube_process


@pytest.fixture
def apis(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[CloudApis]:
    """Both clouds' APIs on 127.0.0.1, and an environment whose only credentials point there."""
    descriptions = {name: facts.model for name, facts in CATALOG.gpus.items()}
    machine_types, accelerator_types = gcp_types(CATALOG.cloud("gke"), descriptions)
    served = CloudApis(azure_skus=azure_skus(CATALOG.cloud("aks")), gcp_machine_types=machine_types,
                       gcp_accelerator_types=accelerator_types, page_size=200)
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE",
                 "AZURE_USERNAME", "MSI_ENDPOINT", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_SUBSCRIPTION_ID",
                 "ARM_SUBSCRIPTION_ID", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    with serving(served) as running:
        for name, value in running.sign_in_environment().items():
            monkeypatch.setenv(name, value)
        yield running


def refresh(spotkube: Callable[..., subprocess.CompletedProcess[str]], apis: CloudApis,
            *extra: str) -> subprocess.CompletedProcess[str]:
    return spotkube("catalog", "refresh", "--cloud", "aks", "--cloud", "gke", "--subscription", SUBSCRIPTION,
                    "--gcp-project", PROJECT, "--azure-endpoint", apis.endpoint, "--gcp-endpoint", apis.endpoint,
                    *extra)


def plan_json(project: Project) -> dict[str, Any]:
    """The plan in this process: only the refresh loads Google's client libraries."""
    done = run_spotkube("plan", "-s", STACK, "--format", "json", cwd=project.root)
    assert done.returncode == 0, done.stderr
    stack: dict[str, Any] = json.loads(done.stdout)["stacks"][0]
    return stack


def test_refresh_reads_both_clouds_into_the_users_catalog_and_the_plan_says_so(
        spotkube: Callable[..., subprocess.CompletedProcess[str]], apis: CloudApis,
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack(STACK, CONFIG)
    before = plan_json(project)
    assert before["catalog"] == {
        "cloud": "aks", "date": CATALOG.cloud("aks").date.isoformat(), "source": CATALOG.cloud("aks").source,
        "from": "bundled", "warnings": before["catalog"]["warnings"]}

    done = refresh(spotkube, apis)
    assert done.returncode == 0, done.stderr
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    written = done.stdout.strip().splitlines()[-1].removeprefix("wrote ")
    assert written.endswith("spotkube/catalog.json")
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"aks: {len(CATALOG.cloud('aks').machines)} GPU machines with ")
    assert f"5 regions ({today}, Azure Resource SKUs API" in lines[0]
    assert any(line.startswith("gke: ") and "Compute Engine API" in line for line in lines)
    catalog = load_catalog_file(Path(written))
    assert set(catalog.clouds) == set(CLOUDS)
    assert catalog.cloud("aks").machines.keys() == CATALOG.cloud("aks").machines.keys()
    # Each SDK signed in through its cloud's usual chain, here served locally.
    assert {r.headers["authorization"] for r in apis.asked("/subscriptions/")} == {f"Bearer {AZURE_TOKEN}"}
    assert {r.headers["authorization"] for r in apis.asked("/compute/v1/")} == {f"Bearer {GCP_TOKEN}"}

    after = plan_json(project)
    assert after["catalog"]["date"] == today
    assert after["catalog"]["source"].startswith("Azure Resource SKUs API")
    assert after["catalog"]["from"] == written
    table = " ".join(run_spotkube("plan", "-s", STACK, cwd=project.root).stdout.split())
    assert (f"GPU catalog (aks): {today}, Azure Resource SKUs API, as offered to the subscription it was read with "
            f"[your catalog file {written}]") in table


def test_a_size_no_catalog_knows_plans_with_its_warning_and_id(
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    project = project_with_stack(STACK, CONFIG)
    done = run_spotkube("plan", "-s", STACK, "--strict", "--format", "json", cwd=project.root)
    assert done.returncode == 1
    stack = json.loads(done.stdout)["stacks"][0]
    # NV6ads_A10_v5 is in eastus's whole price list (karpenter-provider-azure's table): offered, no warning.
    (warning,) = stack["catalog"]["warnings"]
    assert (warning["id"], warning["pool"]) == (UNLISTED_SIZE, "gb400")
    assert f"not in spotkube's catalog of {CATALOG.cloud('aks').date.isoformat()}" in warning["message"]
    (listed,) = [w for w in stack["warnings"] if w["id"] == f"{UNLISTED_SIZE}:gb400"]
    assert listed["message"].startswith("gb400: Standard_ND128isr_GB400_v7 is not in spotkube's catalog of")
    assert f"warning [{UNLISTED_SIZE}:gb400]: gb400:" in done.stderr
    pools = {p["name"]: p for p in stack["pools"]}
    assert pools["gb400"]["gpu"] == {"type": "nvidia-gb400", "count": 4}
    assert pools["a10"]["gpu"] == {"type": "nvidia-a10", "count": 1, "share": "1/6"}
    printed = run_spotkube("plan", "-s", STACK, cwd=project.root).stdout
    assert "1 × nvidia-a10 (1/6 of a GPU each)" in printed and "Standard_NV6ads_A10_v5" in printed
    table = " ".join(printed.split())
    assert (f"warning [{UNLISTED_SIZE}:gb400]: gb400: Standard_ND128isr_GB400_v7 is not in spotkube's catalog of"
            in table)


def test_refresh_without_a_subscription_says_what_to_give(
        spotkube: Callable[..., subprocess.CompletedProcess[str]], apis: CloudApis) -> None:
    done = spotkube("catalog", "refresh", "--cloud", "aks", "--azure-endpoint", apis.endpoint)
    assert done.returncode == 2
    assert "--cloud aks needs the Azure subscription" in done.stderr
    assert "--subscription ID, or set ARM_SUBSCRIPTION_ID or AZURE_SUBSCRIPTION_ID" in done.stderr
    assert not apis.requests


@pytest.mark.parametrize("variable", ["ARM_SUBSCRIPTION_ID", "AZURE_SUBSCRIPTION_ID"])
def test_refresh_takes_the_subscription_from_the_environment_as_quota_does(
        spotkube: Callable[..., subprocess.CompletedProcess[str]], apis: CloudApis, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, SUBSCRIPTION)
    done = spotkube("catalog", "refresh", "--cloud", "aks", "--azure-endpoint", apis.endpoint,
                    "--file", str(tmp_path / "mine.json"))
    assert done.returncode == 0, done.stderr
    assert load_catalog_file(tmp_path / "mine.json").cloud("aks").machines
    assert apis.asked(f"/subscriptions/{SUBSCRIPTION}/providers/Microsoft.Compute/skus")


def test_a_failed_refresh_leaves_the_catalog_file_as_it_was(
        spotkube: Callable[..., subprocess.CompletedProcess[str]], apis: CloudApis, tmp_path: Path) -> None:
    target = tmp_path / "mine.json"
    assert refresh(spotkube, apis, "--file", str(target)).returncode == 0
    first = target.read_text()
    apis.failures["/compute/v1/"] = (500, {"error": {"code": 500, "message": "backend error"}})
    done = refresh(spotkube, apis, "--file", str(target))
    assert done.returncode == 2
    assert "the Compute Engine API answered 500" in done.stderr
    assert "Traceback" not in done.stderr
    assert target.read_text() == first


def test_without_the_refresh_extra_the_command_names_it() -> None:
    code = ("import sys; sys.modules['azure.mgmt.compute'] = None; from spotkube.cli.app import app; "
            "app(['catalog', 'refresh', '--cloud', 'aks', '--subscription', 'x'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert "needs the cloud SDKs of the refresh extra (azure.mgmt.compute is missing)" in done.stderr
    assert "pip install 'spotkube[refresh]'" in done.stderr


def test_the_core_never_imports_the_cloud_sdks() -> None:
    code = ("import sys; import spotkube.cli.app, spotkube.clouds; "
            "print(sorted(m for m in sys.modules if m.startswith(('azure', 'google.cloud'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_a_team_acknowledges_a_size_the_catalog_lags_behind(
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    """A size newer than the catalog is a warning a team can accept, with its reason, until a refresh."""
    reason = "GB400 pools ordered before the catalog lists them; refresh once Azure's SKU API shows it"
    acknowledged = {**CONFIG, "acknowledgements": [{"id": f"{UNLISTED_SIZE}:gb400", "reason": reason}]}
    project = project_with_stack(STACK, acknowledged)
    done = run_spotkube("plan", "-s", STACK, "--strict", "--format", "json", cwd=project.root)
    # Still unsafe for the stack's other warnings (a bare test stack), but no longer for this one.
    assert done.returncode == 1 and "warning [fallback-no-on-demand:nvidia-gb400]" in done.stderr
    assert UNLISTED_SIZE not in done.stderr
    stack = json.loads(done.stdout)["stacks"][0]
    assert not [w for w in stack["warnings"] if w["id"].startswith(UNLISTED_SIZE)]
    (accepted,) = [a for a in stack["acknowledged"] if a["acknowledgedAs"] == f"{UNLISTED_SIZE}:gb400"]
    assert accepted["reason"] == reason


def test_a_catalog_file_rewritten_while_a_plan_runs_gives_the_plan_one_catalog(
        project_with_stack: Callable[[str, dict[str, Any]], Project]) -> None:
    """The user's catalog is read once per plan: a file that changes half-way (here, rewritten by the
    stack's program, between the stack's validation and the review) can't give two pools two
    catalogs. The next plan reads the file as it is then."""
    def user_catalog(date: str, source: str) -> str:
        part = {**json.loads(catalog_text(CATALOG.cloud("aks"))), "date": date, "source": source}
        return json.dumps({"schemaVersion": 1, "clouds": {"aks": part}})

    path = CATALOG_FILE.default()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(user_catalog("2027-01-05", "read before the plan"))
    project = project_with_stack(STACK, {**CONFIG, "gpuPools": [A10_POOL]})
    program = project.main.read_text()
    rewrite = f"Path({str(path)!r}).write_text({user_catalog('2027-02-06', 'written by the program')!r})\n"
    project.main.write_text(program.replace("\nimport pulumi\n", f"\nimport pulumi\n\n{rewrite}", 1))

    first = plan_json(project)["catalog"]
    assert (first["date"], first["source"]) == ("2027-01-05", "read before the plan")
    second = plan_json(project)["catalog"]
    assert (second["date"], second["source"]) == ("2027-02-06", "written by the program")
