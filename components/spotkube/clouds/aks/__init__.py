"""Azure Kubernetes Service: everything spotkube knows and does about AKS, in one folder."""
