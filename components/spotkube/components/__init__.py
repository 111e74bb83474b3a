"""The add-on components (device plugin, Kubeflow Pipelines), the stack program's glue, the component
provider, and the offline engine that runs the components under Pulumi's mocks.

The cluster components live in their clouds' folders (`spotkube.clouds.<cloud>.component`). See
docs/architecture.md#shell-and-components.
"""
