"""The genuine Kubernetes control plane (v1.37, built from Go modules) and the simulator, as
test and benchmark backends: provisioning, launching, and a small REST client."""
