"""Warnings a team can accept, through `spotkube plan`: ids in every format, the shipped stacks passing
`--strict` with each acknowledgement shown, and what an unused or expired acknowledgement does."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from spotkube.platform.project import Project

REPO = Path(__file__).resolve().parents[2]
Run = Callable[..., subprocess.CompletedProcess[str]]


def _config(stack: str) -> dict[str, Any]:
    body = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return {key.removeprefix("spotkube:"): value for key, value in body["config"].items()}


def test_the_shipped_stacks_pass_strict_with_every_acknowledgement_shown(spotkube: Run) -> None:
    result = spotkube("plan", "--all", "--strict", "--format", "json")

    assert result.returncode == 0, result.stderr
    stacks = json.loads(result.stdout)["stacks"]
    assert stacks, "the shipped stacks"
    for stack in stacks:
        assert stack["warnings"] == [], stack["stack"]
        config = _config(stack["stack"])
        acknowledged = {a["acknowledgedAs"]: a for a in stack["acknowledged"]}
        assert config["acknowledgements"], stack["stack"]
        for item in config["acknowledgements"]:  # each one explained and matched
            assert item["reason"].strip()
            assert acknowledged[item["id"]]["reason"] == item["reason"]


def test_ids_and_acknowledgements_in_the_table_and_markdown(spotkube: Run) -> None:
    table = spotkube("plan", "-s", "aks-dev-uksouth")
    markdown = spotkube("plan", "-s", "aks-dev-uksouth", "-f", "markdown")

    assert table.returncode == markdown.returncode == 0, table.stderr + markdown.stderr
    flat = " ".join(table.stdout.split())
    assert "acknowledged [security-api-server]: API server: reachable from the whole internet; reason: dev is " in flat
    assert "acknowledged [fallback-no-on-demand:nvidia-tesla-t4]: no on-demand fallback for nvidia-tesla-t4" in flat
    assert ("> acknowledged `security-local-accounts`: local accounts: the cluster-admin certificate bypasses Entra "
            "ID **Reason:** dev keeps the cluster-admin certificate") in markdown.stdout


def test_an_open_warning_shows_its_id_in_every_format_and_fails_strict(
    project_with_stack: Callable[[str, dict[str, Any]], Project], spotkube: Run,
) -> None:
    config = _config("gke-dev-us-central1")
    config["acknowledgements"] = [a for a in config["acknowledgements"] if a["id"] != "security-private-nodes"]
    project = project_with_stack("gke-dev-us-central1", config)

    table = spotkube("plan", "-s", "gke-dev-us-central1", "--strict", cwd=project.root)
    markdown = spotkube("plan", "-s", "gke-dev-us-central1", "-f", "markdown", cwd=project.root)
    as_json = spotkube("plan", "-s", "gke-dev-us-central1", "-f", "json", cwd=project.root)

    assert table.returncode == 1
    assert "warning [security-private-nodes]: private nodes: nodes have public IP addresses" in table.stdout
    assert "gke-dev-us-central1: warning [security-private-nodes]:" in table.stderr
    assert "> **warning** `security-private-nodes`: private nodes: nodes have public IP addresses" in markdown.stdout
    assert json.loads(as_json.stdout)["stacks"][0]["warnings"] == [
        {"id": "security-private-nodes", "message": "private nodes: nodes have public IP addresses"}]
    # Its bundled prices were read 2026-08-03, over 90 days ago: a note in every format, never a warning.
    note = "prices older than 90 days (the oldest read 2026-08-03"
    assert f"note: {note}" in " ".join(table.stdout.split())
    assert f"- note: {note}" in markdown.stdout
    assert json.loads(as_json.stdout)["stacks"][0]["cost"]["priceNotes"][0].startswith(note)


def test_an_unused_acknowledgement_warns_and_an_expired_one_fails(
    project_with_stack: Callable[[str, dict[str, Any]], Project], spotkube: Run,
) -> None:
    config = _config("gke-prod-europe-west4")
    config["acknowledgements"] = [
        {**config["acknowledgements"][0], "expires": "2020-01-31"},
        {"id": "security-api-server", "reason": "left over from before the DNS endpoint"},
    ]
    project = project_with_stack("gke-prod-europe-west4", config)

    result = spotkube("plan", "-s", "gke-prod-europe-west4", "-f", "json", cwd=project.root)

    assert result.returncode == 1
    (stack,) = json.loads(result.stdout)["stacks"]
    assert [w["id"] for w in stack["warnings"]] == ["fallback-no-on-demand:nvidia-tesla-t4",
                                                    "acknowledgement-unused:security-api-server"]
    assert stack["acknowledged"] == []
    assert any(e.startswith("acknowledgement fallback-no-on-demand:nvidia-tesla-t4 expired on 2020-01-31")
               for e in stack["errors"])
    assert "expired on 2020-01-31" in result.stderr


def test_an_unquoted_expiry_in_a_stack_file_is_refused_with_the_fix(spotkube: Run, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    text = (REPO / "stacks" / "Pulumi.gke-prod-europe-west4.yaml").read_text()
    text += '      expires: 2027-01-31\n'
    (project / "stacks" / "Pulumi.gke-prod-europe-west4.yaml").write_text(text)

    result = spotkube("plan", "-s", "gke-prod-europe-west4", cwd=project)

    assert result.returncode == 2
    assert "is a YAML date" in result.stderr and "quote it" in result.stderr
