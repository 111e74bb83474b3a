"""The tools: the `spotkube` CLI, the offline engine that runs the real program under Pulumi's
mocks, and the views that render the core's typed results. See docs/architecture.md#cli.
"""
