"""The Pulumi components: thin shells that spell the core's plan in each provider's terms.

The AKS and GKE shells never import each other; what both need lives in `common` or the core. See
docs/architecture.md#shell-and-the-components.
"""
