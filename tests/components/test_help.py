"""`help()` on each component shows its own documentation: what it builds, its args, and its outputs
with when they resolve, never Pulumi's inherited constructor (`:param str t: The type of this resource`)."""

from __future__ import annotations

import pydoc

import pytest

import spotkube

#: Each component, and the outputs a consumer reads from it (Python attribute names).
OUTPUTS = {
    "AksGpuCluster": ["kubeconfig", "cluster_name", "resource_group_name", "oidc_issuer_url", "pool_contracts",
                      "log_workspace_id", "provider"],
    "GkeGpuCluster": ["kubeconfig", "cluster_name", "endpoint", "workload_pool", "node_service_account_email",
                      "pool_contracts", "provider"],
    "NvidiaDevicePlugin": ["mode"],
    "KubeflowPipelines": ["namespace", "ui_service", "object_store_access_key", "object_store_secret_key"],
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_help_shows_the_components_own_docstring_with_its_args_and_outputs(name: str) -> None:
    component = getattr(spotkube, name)
    shown = pydoc.render_doc(component, renderer=pydoc.plaintext)
    assert "The type of this resource" not in shown
    assert f"{name}Args" in shown and ":param args:" in shown
    listed = [key for key in OUTPUTS[name] if f"- `{key}`" in shown]
    assert listed == OUTPUTS[name], shown
    assert "Outputs" in shown and "resolve" in shown
