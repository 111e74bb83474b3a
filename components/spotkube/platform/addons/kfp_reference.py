"""What Kubeflow Pipelines 2.17.0 ships, as far as the plan needs it: its Deployments and Argo's defaults.

kustomize renders KFP's manifests inside the provider at deploy time, so the offline plan never sees them,
yet judges where each Deployment can land, which registries the nodes pull from, and whether spotkube's
Argo retry defaults are at least as strong as KFP's. So this module records exactly those fields, as
upstream ships them. None of the 14 Deployments sets node affinity, tolerations or GPU requests.

Source: https://github.com/kubeflow/pipelines/tree/2.17.0/manifests/kustomize/env/platform-agnostic
(Argo Workflows v4.0.5 bases included). A new KFP version needs this module re-read from its tag. The
facts: docs/platform-facts.md#kfp-standalone-install and docs/platform-facts.md#kfp-retry-defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from spotkube.platform.records import record

#: The KFP release this module describes (the git ref of the manifests).
VERSION = "2.17.0"
NAMESPACE = "kubeflow"
#: kustomize's common label on every object of the install.
APPLICATION_LABELS: Mapping[str, str] = {"application-crd-id": "kubeflow-pipelines"}
#: The image the init containers of several Deployments use to wait for their dependencies.
WAIT_IMAGE = "docker.io/alpine:3.23"
#: Where a reference without a registry host is pulled from (Docker's normalisation rule).
DEFAULT_REGISTRY = "docker.io"


@record
class ShippedDeployment:
    """The scheduling- and image-relevant part of one KFP Deployment, exactly as upstream ships it."""

    name: str
    #: The label (besides `APPLICATION_LABELS`) that selects the pods, e.g. ("app", "mysql").
    selector: tuple[str, str]
    #: (name, image) of each container, then of each init container.
    containers: tuple[tuple[str, str], ...]
    init_containers: tuple[tuple[str, str], ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    priority_class_name: str | None = None
    #: Pod labels beyond the selector's (Istio's opt-out on the Envoy proxy).
    extra_pod_labels: Mapping[str, str] = field(default_factory=dict)
    #: Whether the Deployment's own metadata carries the selector label (Argo's base does not).
    selector_on_metadata: bool = True

    def images(self) -> tuple[str, ...]:
        """Every image a pod of this Deployment pulls, init containers included."""
        return tuple(image for _, image in (*self.containers, *self.init_containers))

    def manifest(self) -> dict[str, Any]:
        """The Deployment as a Kubernetes object with only the recorded fields."""
        selector = {self.selector[0]: self.selector[1], **APPLICATION_LABELS}
        pod_spec: dict[str, Any] = {"containers": [{"name": n, "image": i} for n, i in self.containers]}
        if self.init_containers:
            pod_spec["initContainers"] = [{"name": n, "image": i} for n, i in self.init_containers]
        if self.node_selector:
            pod_spec["nodeSelector"] = dict(self.node_selector)
        if self.priority_class_name:
            pod_spec["priorityClassName"] = self.priority_class_name
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": self.name, "namespace": NAMESPACE,
                         "labels": dict(selector) if self.selector_on_metadata else dict(APPLICATION_LABELS)},
            "spec": {
                "selector": {"matchLabels": dict(selector)},
                "template": {"metadata": {"labels": {**selector, **self.extra_pod_labels}}, "spec": pod_spec},
            },
        }


def _kfp(image: str) -> str:
    return f"ghcr.io/kubeflow/{image}:{VERSION}"


#: The 14 Deployments of env/platform-agnostic, in kustomize's output order.
DEPLOYMENTS: tuple[ShippedDeployment, ...] = (
    ShippedDeployment("cache-deployer-deployment", ("app", "cache-deployer"),
                      (("main", _kfp("kfp-cache-deployer")),)),
    ShippedDeployment("cache-server", ("app", "cache-server"), (("server", _kfp("kfp-cache-server")),)),
    ShippedDeployment("metadata-envoy-deployment", ("component", "metadata-envoy"),
                      (("container", _kfp("kfp-metadata-envoy")),),
                      extra_pod_labels={"sidecar.istio.io/inject": "false"}),
    ShippedDeployment("metadata-grpc-deployment", ("component", "metadata-grpc-server"),
                      (("container", "gcr.io/tfx-oss-public/ml_metadata_store_server:1.14.0"),),
                      init_containers=(("wait-for-database", WAIT_IMAGE),)),
    ShippedDeployment("metadata-writer", ("app", "metadata-writer"), (("main", _kfp("kfp-metadata-writer")),),
                      init_containers=(("wait-for-metadata-grpc", WAIT_IMAGE),)),
    ShippedDeployment("ml-pipeline", ("app", "ml-pipeline"), (("ml-pipeline-api-server", _kfp("kfp-api-server")),),
                      init_containers=(("wait-for-database", WAIT_IMAGE), ("wait-for-metadata-grpc", WAIT_IMAGE))),
    ShippedDeployment("ml-pipeline-persistenceagent", ("app", "ml-pipeline-persistenceagent"),
                      (("ml-pipeline-persistenceagent", _kfp("kfp-persistence-agent")),),
                      init_containers=(("wait-for-ml-pipeline", WAIT_IMAGE),)),
    ShippedDeployment("ml-pipeline-scheduledworkflow", ("app", "ml-pipeline-scheduledworkflow"),
                      (("ml-pipeline-scheduledworkflow", _kfp("kfp-scheduled-workflow-controller")),),
                      init_containers=(("wait-for-ml-pipeline", WAIT_IMAGE),)),
    ShippedDeployment("ml-pipeline-ui", ("app", "ml-pipeline-ui"), (("ml-pipeline-ui", _kfp("kfp-frontend")),)),
    ShippedDeployment("ml-pipeline-viewer-crd", ("app", "ml-pipeline-viewer-crd"),
                      (("ml-pipeline-viewer-crd", _kfp("kfp-viewer-crd-controller")),)),
    ShippedDeployment("ml-pipeline-visualizationserver", ("app", "ml-pipeline-visualizationserver"),
                      (("ml-pipeline-visualizationserver", _kfp("kfp-visualization-server")),)),
    ShippedDeployment("mysql", ("app", "mysql"), (("mysql", "mysql:8.4"),)),
    ShippedDeployment("seaweedfs", ("app", "seaweedfs"), (("seaweedfs", "ghcr.io/chrislusf/seaweedfs:4.34"),)),
    # Argo's own base: the only Deployment with a node selector, and a PriorityClass of its own
    # (value 1000000) that the same install creates.
    ShippedDeployment("workflow-controller", ("app", "workflow-controller"),
                      (("workflow-controller", "quay.io/argoproj/workflow-controller:v4.0.5"),),
                      node_selector={"kubernetes.io/os": "linux"}, priority_class_name="workflow-controller",
                      selector_on_metadata=False),
)


def deployment_names() -> tuple[str, ...]:
    """The names of the shipped Deployments, in kustomize's output order."""
    return tuple(d.name for d in DEPLOYMENTS)


def shipped_deployments() -> list[dict[str, Any]]:
    """The shipped Deployments as Kubernetes objects (fresh dicts, safe to transform)."""
    return [d.manifest() for d in DEPLOYMENTS]


def registry_of(image: str) -> str:
    """The registry host an image reference is pulled from, by Docker's rule: the first path
    component is a host only if it has a dot or a port or is `localhost`; otherwise Docker Hub."""
    first, slash, _ = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return first
    return DEFAULT_REGISTRY


def image_registries() -> tuple[str, ...]:
    """Every registry the shipped Deployments pull from, sorted: what the nodes' egress must reach."""
    return tuple(sorted({registry_of(image) for d in DEPLOYMENTS for image in d.images()}))


#: Argo's controller-wide defaults as KFP ships them: finished workflows are deleted after an hour,
#: and every template retries twice on errors (`limit` is an IntOrString, written as a string).
WORKFLOW_DEFAULTS = """spec:
  ttlStrategy:
    secondsAfterCompletion: 3600
    secondsAfterSuccess: 3600
    secondsAfterFailure: 3600
  templateDefaults:
    retryStrategy:
      limit: '2'
      retryPolicy: OnError
"""
#: The artifact repository on the bundled SeaweedFS (upstream's comments left out).
ARTIFACT_REPOSITORY = """archiveLogs: true
s3:
  endpoint: "seaweedfs.kubeflow.svc:9000"
  bucket: "mlpipeline"
  keyFormat: "private-artifacts/{{workflow.namespace}}/{{workflow.name}}/{{workflow.creationTimestamp.Y}}/\
{{workflow.creationTimestamp.m}}/{{workflow.creationTimestamp.d}}/{{pod.name}}"
  insecure: true
  accessKeySecret:
    name: mlpipeline-minio-artifact
    key: accesskey
  secretKeySecret:
    name: mlpipeline-minio-artifact
    key: secretkey
"""
EXECUTOR = """imagePullPolicy: IfNotPresent
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  allowPrivilegeEscalation: false
  capabilities:
    drop:
      - ALL
  seccompProfile:
    type: RuntimeDefault
"""


def shipped_workflow_controller_configmap() -> dict[str, Any]:
    """Argo's `workflow-controller-configmap` as KFP ships it (a fresh dict, safe to transform)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "workflow-controller-configmap", "namespace": NAMESPACE,
                     "labels": dict(APPLICATION_LABELS)},
        "data": {"artifactRepository": ARTIFACT_REPOSITORY, "executor": EXECUTOR,
                 "workflowDefaults": WORKFLOW_DEFAULTS},
    }
