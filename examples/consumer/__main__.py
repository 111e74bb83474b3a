"""The program `pulumi up` runs: read this project's config, build both platforms, export what workloads need."""

import platforms
import pulumi

config = pulumi.Config()
environment = config.get("environment") or "dev"

training = platforms.training(environment, config.require("deployerObjectId"))
inference = platforms.inference(environment, config.require("gcpProject"))

pulumi.export("trainingKubeconfig", training.cluster.kubeconfig)  # secret outputs
pulumi.export("inferenceKubeconfig", inference.cluster.kubeconfig)
pulumi.export("trainingPools", training.cluster.pool_contracts)  # labels and taints per pool
pulumi.export("inferencePools", inference.cluster.pool_contracts)
pulumi.export("pipelinesUi", training.pipelines.ui_service)
