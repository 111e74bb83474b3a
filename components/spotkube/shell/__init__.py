"""What every Pulumi component shares: wired inputs, child options, the Kubernetes provider."""
