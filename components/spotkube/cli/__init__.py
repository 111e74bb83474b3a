"""The `spotkube` CLI and the views that render the judges' typed results. See docs/architecture.md#cli.
"""
