"""``asched sim``: an embedded simulated Kubernetes API server with hollow nodes."""
