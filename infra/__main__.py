"""This repository's own Pulumi program: one spotkube platform per stack.

Thin wiring only: read the stack's config, build the cluster for its cloud, export the outputs.
The offline plan (`spotkube plan`) runs this very file under Pulumi mocks.
"""

from pathlib import Path

import pulumi
from spotkube import AksGpuCluster
from spotkube.program import cluster_args, read_stack_spec

spec = read_stack_spec(Path(__file__).parent)
cluster = AksGpuCluster("spotkube", args=cluster_args(spec))

pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("poolContracts", cluster.pool_contracts)
