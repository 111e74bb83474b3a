"""The pure core: the spec and its validation, the cloud profiles and catalogs, the plan, the
scheduling contract, cost, the add-on transforms and the checks (preflight, policy, placements).

It imports no Pulumi, no terminal rendering, no CLI and no kfp (import-linter enforces it in `make
test`), so every decision spotkube makes can be tested as plain data. See docs/architecture.md#core.
"""
