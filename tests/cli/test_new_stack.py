"""`spotkube new-stack` adds a region in one step, and the stack it writes plans cleanly."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner, Result

from spotkube.cli.app import app
from spotkube.clouds import CLOUDS, load_stack_spec
from spotkube.clouds.aks.options import AksNewStack
from spotkube.clouds.gke import catalog as gke_catalog
from spotkube.clouds.gke.commands import NEW_STACK_GPU_CHOICES
from spotkube.clouds.gke.options import GkeNewStack
from spotkube.clouds.stack_template import (
    BOOTSTRAP_VARIABLES,
    DEPLOY_VARIABLES,
    CloudName,
    create_stack,
    next_steps,
)
from spotkube.platform.project import Project, find_project
from spotkube.platform.reference import MODELINE, stack_schema

REPO = Path(__file__).resolve().parents[2]


#: The deployer an AKS stack names: `--deployer-object-id` (its type defaults to ServicePrincipal).
DEPLOYER = ("11111111-2222-4333-8444-555555555555", "ServicePrincipal")
#: The flags a new stack of each cloud is made with in-process.
AKS_FLAGS = AksNewStack(deployer_object_id=DEPLOYER[0])
GKE_FLAGS = GkeNewStack(project="acme-ml-qa")

def spotkube(*args: str, cwd: Path) -> Result:
    """The command in-process (the same code path as the console script, without its start-up)."""
    return CliRunner().invoke(app, [*args, "--project", str(cwd)])


def refused(*args: str, cwd: Path) -> str:
    """Run new-stack, expect a user error, and return its message."""
    result = spotkube("new-stack", *args, cwd=cwd)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return " ".join(result.stderr.split())


def copy_project(root: Path) -> Path:
    """A throwaway copy of the project (Pulumi.yaml, the program, every stack, the stack schema) in `root`."""
    shutil.copy(REPO / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(REPO / "infra", root / "infra")
    shutil.copytree(REPO / "stacks", root / "stacks")
    shutil.copytree(REPO / "schemas", root / "schemas")
    return root


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    return copy_project(tmp_path)


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One AKS and one GKE stack made by new-stack in a project copy, then planned."""
    root = copy_project(tmp_path_factory.mktemp("project"))
    created = spotkube("new-stack", "--cloud", "aks", "--env", "dev", "--region", "eastus",
                       "--deployer-object-id", DEPLOYER[0], cwd=root)
    assert created.exit_code == 0, created.output
    printed = created.stdout.splitlines()
    assert printed[0] == "wrote stacks/Pulumi.aks-dev-eastus.yaml"
    assert printed[1].startswith("Left to do for aks-dev-eastus (deploy.yml and preview.yml list stacks/ themselves")
    assert f"   spotkube plan --project {root} --stack aks-dev-eastus" in printed
    assert f"   pulumi --cwd {root} stack init aks-dev-eastus" in printed
    created = spotkube("new-stack", "--cloud", "gke", "--env", "staging", "--region", "us-east4",
                       "--gcp-project", "acme-ml-staging", cwd=root)
    assert created.exit_code == 0, created.output
    plan = spotkube("plan", "--stack", "aks-dev-eastus", "--stack", "gke-staging-us-east4", "--format", "json",
                    cwd=root)
    assert plan.exit_code == 0, plan.output
    return {document["stack"]: document for document in json.loads(plan.stdout)["stacks"]}


def test_aks_stack_in_one_step_plans_cleanly(planned: dict[str, dict[str, Any]]) -> None:
    document = planned["aks-dev-eastus"]
    assert (document["cloud"], document["region"], document["environment"]) == ("aks", "eastus", "dev")
    spot, fallback = (next(p for p in document["pools"] if p["role"] == "gpu" and p["capacity"] == capacity)
                      for capacity in ("spot", "on-demand"))
    assert (spot["machine"], spot["min"], fallback["machine"], fallback["min"]) == (
        "Standard_NC4as_T4_v3", 0, "Standard_NC4as_T4_v3", 0)
    assert spot["gpu"] == {"type": "nvidia-tesla-t4", "count": 1}


def test_gke_stack_gets_a_gpu_the_region_offers_and_plans_cleanly(planned: dict[str, dict[str, Any]]) -> None:
    document = planned["gke-staging-us-east4"]
    assert (document["cloud"], document["region"]) == ("gke", "us-east4")
    gpu = next(p for p in document["pools"] if p["role"] == "gpu" and p["capacity"] == "spot")
    assert gpu["min"] == 0
    assert gpu["zones"] and set(gpu["zones"]) <= set(gke_catalog.zones_offering("us-east4", gpu["gpu"]["type"]) or ())


def test_a_gke_region_outside_the_complete_five_gets_a_gpu_pool_in_zones_a_source_names(project_copy: Path) -> None:
    created = spotkube("new-stack", "--cloud", "gke", "--env", "dev", "--region", "asia-southeast1",
                       "--gcp-project", "acme-ml-dev", cwd=project_copy)
    assert created.exit_code == 0, created.output
    plan = spotkube("plan", "--stack", "gke-dev-asia-southeast1", "--format", "json", cwd=project_copy)
    assert plan.exit_code == 0, plan.output
    (document,) = json.loads(plan.stdout)["stacks"]
    gpu = next(p for p in document["pools"] if p["role"] == "gpu" and p["capacity"] == "spot")
    assert gpu["machine"] == "g2-standard-8" and gpu["zones"] == ["asia-southeast1-b"]
    assert document["cost"]["pools"] and all(pool["priced"] for pool in document["cost"]["pools"])
    # Its prices are the Cloud Billing Catalog API's as a dated copy read them months ago: noted, not failed.
    (note,) = document["cost"]["priceNotes"]
    assert note.startswith("prices older than 90 days (the oldest read 2026-08-03")
    assert "spotkube prices refresh" in note


def test_an_existing_stack_is_never_overwritten(project_copy: Path) -> None:
    path = project_copy / "stacks" / "Pulumi.aks-dev-eastus.yaml"
    path.write_text("config: {}  # someone's hand-tuned stack\n")
    error = refused("--cloud", "aks", "--env", "dev", "--region", "eastus", "--deployer-object-id", DEPLOYER[0],
                    cwd=project_copy)
    assert "stacks/Pulumi.aks-dev-eastus.yaml already exists" in error
    assert path.read_text() == "config: {}  # someone's hand-tuned stack\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--cloud", "gke", "--env", "dev", "--region", "southamerica-east1", "--gcp-project", "acme-ml"],
     "--region southamerica-east1: spotkube's GPU catalog ("),
    (["--cloud", "gke", "--env", "dev", "--region", "us-central1"], "--gcp-project is required with --cloud gke"),
    (["--cloud", "aks", "--env", "dev", "--region", "us-central1", "--deployer-object-id", "x"],
     "not an Azure region name"),
    (["--cloud", "aks", "--env", "dev", "--region", "eastus", "--gcp-project", "acme-ml"],
     "--gcp-project applies to --cloud gke only"),
    (["--cloud", "aks", "--env", "dev", "--region", "eastus"],
     "--deployer-object-id is required with --cloud aks"),
    (["--cloud", "aks", "--env", "dev", "--region", "eastus", "--deployer-object-id", "not-a-guid"],
     "spotkube:cluster.deployer.objectId: 'not-a-guid' is not an Entra ID object id"),
    (["--cloud", "gke", "--env", "dev", "--region", "us-east4", "--gcp-project", "acme-ml",
      "--deployer-object-id", "11111111-2222-4333-8444-555555555555"], "--deployer-object-id applies to --cloud aks"),
])
def test_bad_flags_write_nothing(project_copy: Path, args: list[str], message: str) -> None:
    before = sorted(p.name for p in (project_copy / "stacks").iterdir())
    assert message in refused(*args, cwd=project_copy)
    assert sorted(p.name for p in (project_copy / "stacks").iterdir()) == before


@pytest.mark.parametrize("region", gke_catalog.gpu_regions())
def test_every_known_gke_region_gets_a_valid_stack(project_copy: Path, region: str) -> None:
    project: Project = find_project(project_copy)
    created = create_stack(project, CloudName.gke, "qa", region, GKE_FLAGS)
    spec = load_stack_spec(project, created.stack)
    pool, fallback = spec.gpu_pools
    assert pool.gpu is not None and pool.gpu.type in {gpu for gpu, *_ in NEW_STACK_GPU_CHOICES}
    assert pool.zones and set(pool.zones) <= set(gke_catalog.zones_offering(region, pool.gpu.type) or ())
    assert (fallback.capacity, fallback.machine, fallback.min) == ("on-demand", pool.machine, 0)


@pytest.mark.parametrize(("cloud", "region", "flags"), [("aks", "eastus", AKS_FLAGS), ("gke", "us-east4", GKE_FLAGS)])
def test_a_new_stack_file_names_and_meets_the_editor_schema(
    project_copy: Path, cloud: str, region: str, flags: AksNewStack | GkeNewStack,
) -> None:
    created = create_stack(find_project(project_copy), CloudName(cloud), "qa", region, flags)
    text = created.path.read_text()
    assert text.splitlines()[0] == MODELINE
    jsonschema.validate(yaml.safe_load(text), stack_schema(CLOUDS))


def test_a_project_without_the_schema_gets_no_modeline(project_copy: Path) -> None:
    shutil.rmtree(project_copy / "schemas")
    created = create_stack(find_project(project_copy), CloudName.aks, "qa", "eastus", AKS_FLAGS)
    assert "yaml-language-server" not in created.path.read_text()


def test_new_stack_prints_every_step_left_as_a_command(project_copy: Path) -> None:
    """The environment, its rules, variables and trust are the bootstrap's: deploy.yml refuses a stack
    whose environment it didn't make, so new-stack names the bootstrap rerun, not commands by hand."""
    project = find_project(project_copy)
    created = create_stack(project, CloudName.aks, "prod", "westeurope", AKS_FLAGS)
    lines = next_steps(project, created, CloudName.aks, cwd=project_copy)
    assert "   It plans without a warning: `--strict` passes." in lines
    commands = [line.strip() for line in lines if line.startswith("   ") and not line.startswith("   It ")]
    assert commands == [
        "spotkube plan --stack aks-prod-westeurope",
        "pulumi stack init aks-prod-westeurope",
        "pulumi --cwd infra/bootstrap up -s aks",
        'git add stacks/Pulumi.aks-prod-westeurope.yaml && git commit -m "Add stack aks-prod-westeurope"',
    ]
    (step,) = [line for line in lines if line.startswith("3. ")]
    assert "infra/bootstrap/Pulumi.aks.yaml" in step and "protected branches only, required reviewers" in step
    assert "ARM_CLIENT_ID, ARM_TENANT_ID, ARM_SUBSCRIPTION_ID" in step and "no secret" in step
    assert "a deploy identity of its own" in step
    assert not any("gh secret" in line or "PULUMI_ACCESS_TOKEN" in line for line in lines)


def test_a_dev_gke_stack_needs_no_reviewers_and_shares_the_deploy_identity(project_copy: Path) -> None:
    project = find_project(project_copy)
    created = create_stack(project, CloudName.gke, "dev", "us-east4", GkeNewStack(project="acme-ml"))
    lines = next_steps(project, created, CloudName.gke, cwd=project_copy)
    (step,) = [line for line in lines if line.startswith("3. ")]
    assert "required reviewers" not in step and "the shared deploy identity" in step
    assert "GCP_WORKLOAD_IDENTITY_PROVIDER, GCP_SERVICE_ACCOUNT" in step and "ARM_" not in step
    assert "   pulumi --cwd infra/bootstrap up -s gke" in lines


@pytest.mark.parametrize("workflow", ["deploy.yml", "preview.yml"])
def test_new_stack_names_exactly_what_the_workflows_read(workflow: str) -> None:
    """The variables the bootstrap writes are the ones the workflows read, per cloud (the GCP ones only in
    steps for gke- stacks), and no workflow reads a secret."""
    text = (REPO / ".github" / "workflows" / workflow).read_text()
    # DEPLOY_STACKS is the team's optional list of stacks deploy.yml deploys, not a stack's variable.
    read = set(re.findall(r"\$\{\{ vars\.(\w+) \}\}", text)) - {"DEPLOY_STACKS"}
    identities = {name for variables in DEPLOY_VARIABLES.values() for name, _ in variables}
    assert read - identities <= set(BOOTSTRAP_VARIABLES) and identities <= read
    assert not re.findall(r"\$\{\{ *secrets\.", text)
    steps = [step for job in yaml.safe_load(text)["jobs"].values() for step in job.get("steps", [])]
    assert DEPLOY_VARIABLES["gke"], "new-stack names gke's variables"
    for name, _ in DEPLOY_VARIABLES["gke"]:
        (step,) = [s for s in steps if f"vars.{name} " in json.dumps(s)]
        assert step["if"] == "startsWith(matrix.stack, 'gke-')"


@pytest.mark.parametrize("env", ["../../etc", "dev/x", "dev x"])
def test_a_stack_name_that_would_be_a_path_is_refused(project_copy: Path, env: str) -> None:
    before = sorted(p.name for p in (project_copy / "stacks").iterdir())
    message = refused("--cloud", "aks", "--env", env, "--region", "eastus", cwd=project_copy)
    assert "not a stack name" in message
    assert sorted(p.name for p in (project_copy / "stacks").iterdir()) == before
    assert not (project_copy / "etc").exists()


# --- a new stack passes its own check ------------------------------------------------------------

#: Regions per cloud, Asia's among them: each new stack priced and offered there, with nothing to acknowledge.
FRESH_STACKS = {
    "aks": [(region, ("--api-server-ranges", "203.0.113.0/24")) for region in ("japaneast", "centralindia", "eastus")],
    "gke": [(region, ("--gcp-project", "acme-ml")) for region in ("asia-northeast1", "us-central1", "europe-west4")],
}


def _new(cloud: str, region: str, extra: tuple[str, ...], cwd: Path) -> tuple[str, Result]:
    owner = ("--deployer-object-id", DEPLOYER[0]) if cloud == "aks" else ()
    result = spotkube("new-stack", "--cloud", cloud, "--env", "qa", "--region", region, *owner, *extra, cwd=cwd)
    assert result.exit_code == 0, result.output
    return f"{cloud}-qa-{region}", result


@pytest.mark.parametrize("cloud", sorted(FRESH_STACKS))
def test_a_fresh_stack_passes_plan_strict_without_acknowledging_anything(project_copy: Path, cloud: str) -> None:
    made = [_new(cloud, region, extra, project_copy) for region, extra in FRESH_STACKS[cloud]]

    strict = spotkube("plan", "--strict", "--format", "json", *(a for stack, _ in made for a in ("--stack", stack)),
                      cwd=project_copy)

    assert strict.exit_code == 0, strict.output
    documents = {d["stack"]: d for d in json.loads(strict.stdout)["stacks"]}
    assert len(documents) == len(made)
    for stack, created in made:
        document = documents[stack]
        assert (document["warnings"], document["errors"], document["acknowledged"]) == ([], [], [])
        config = yaml.safe_load((project_copy / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
        assert "spotkube:acknowledgements" not in config
        assert "   It plans without a warning: `--strict` passes." in created.stdout.splitlines()
        # Steps have an on-demand pool to go to when spot is out, at min 0.
        assert [(p["capacity"], p["min"]) for p in config["spotkube:gpuPools"]] == [("spot", 0), ("on-demand", 0)]


def test_what_new_stack_cannot_avoid_stays_a_warning_and_strict_fails(project_copy: Path) -> None:
    """No API server ranges, and a region no bundled copy knows: each stays a warning."""
    stack, created = _new("aks", "denmarkeast", (), project_copy)

    lines = created.stdout.splitlines()
    assert any(line.startswith("   It raises ") and "(new-stack acknowledges none)" in line for line in lines)
    assert any(line.startswith("   - security-api-server: ") and "--api-server-ranges" in line for line in lines)
    assert any(line.startswith("   - cost-unpriced:system: ") and "prices refresh" in line for line in lines)
    assert "acknowledgements" not in (project_copy / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    strict = spotkube("plan", "--strict", "--stack", stack, cwd=project_copy)
    assert strict.exit_code != 0
    assert "cost-unpriced:system" in strict.output and "security-api-server" in strict.output
