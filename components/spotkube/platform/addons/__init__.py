"""The add-ons (Kubeflow Pipelines and NVIDIA's device plugin) as plain Kubernetes objects."""
