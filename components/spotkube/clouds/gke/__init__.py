"""Google Kubernetes Engine: everything spotkube knows and does about GKE, in one folder."""
