"""The controllers the simulator runs beside its API server: kube-controller-manager's PV binder, protection and reclaim, and a hollow CSI provisioner."""
