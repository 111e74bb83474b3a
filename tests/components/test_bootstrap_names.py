"""Every GitHub environment name the bootstrap accepts makes a federated credential name Entra takes,
and every other is refused, naming the key, before anything is registered.

Entra names a user-assigned identity's federated credential with 3-120 characters, a letter or digit
first, then letters, digits, `-` and `_` (the FederatedIdentityCredentials API's resource name rule);
the bootstrap names each one `github-<environment>`.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from spotkube.clouds import CLOUDS
from spotkube.components.offline import ProgramFailed, record_stack
from spotkube.platform.bootstrap import parse_bootstrap
from spotkube.platform.errors import SpecError
from spotkube.platform.project import find_project

REPO = Path(__file__).resolve().parents[2]
ENTRA_CREDENTIAL_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_-]{2,119}")
CREDENTIAL_TYPE = "azure-native:managedidentity:FederatedIdentityCredential"


def _bootstrap(tmp_path: Path, **change: object) -> Path:
    for name in ("Pulumi.yaml", "stacks", "infra"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    folder = tmp_path / "infra" / "bootstrap"
    path = folder / "Pulumi.aks.yaml"
    document = yaml.safe_load(path.read_text())
    document["config"].update({f"spotkube:{key}": value for key, value in change.items()})
    path.write_text(yaml.safe_dump(document))
    return folder


def test_every_registered_credential_name_is_one_entra_takes(tmp_path: Path) -> None:
    folder = _bootstrap(tmp_path, previewEnvironment="pr_preview-2")
    recording = record_stack(find_project(folder), "aks")
    names = [r.inputs["federatedIdentityCredentialResourceName"] for r in recording.registrations
             if r.type == CREDENTIAL_TYPE]
    assert "github-pr_preview-2" in names
    assert all(ENTRA_CREDENTIAL_NAME.fullmatch(name) for name in names), names


@pytest.mark.parametrize(("change", "key", "value"), [
    ({"previewEnvironment": "pr.preview"}, "spotkube:previewEnvironment", "'pr.preview'"),
    ({"stacks": ["aks-dev.uksouth"]}, "spotkube:stacks", "'aks-dev.uksouth'"),
])
def test_a_dot_in_an_environment_name_is_refused_before_anything_is_registered(
    tmp_path: Path, change: dict[str, object], key: str, value: str
) -> None:
    folder = _bootstrap(tmp_path, **change)
    with pytest.raises(ProgramFailed) as failure:
        record_stack(find_project(folder), "aks")
    message = str(failure.value)
    assert message.startswith("Pulumi.aks.yaml: "), message
    assert key in message and value in message, message
    assert "Entra names its federated credential github-<environment>" in message, message
    assert failure.value.registrations == []


names = st.text(st.sampled_from("abcXYZ019-_.~ /"), min_size=1, max_size=130)


@given(name=names)
def test_an_environment_name_is_accepted_exactly_when_entra_takes_its_credential_name(name: str) -> None:
    values = {"cloud": "aks", "repository": "octo/platform", "stacks": ["aks-dev-uksouth"],
              "previewEnvironment": name, "pulumiOrganization": "octo"}
    valid = ENTRA_CREDENTIAL_NAME.fullmatch(f"github-{name}") is not None
    try:
        parse_bootstrap(values, "Pulumi.aks.yaml", {c: p.commands.options.bootstrap for c, p in CLOUDS.items()})
    except SpecError as refused:
        assert not valid, str(refused)
        assert "spotkube:previewEnvironment" in str(refused)
    else:
        assert valid
