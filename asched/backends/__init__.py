"""A genuine kube-apiserver (+ etcd, kube-scheduler) built from Debian packages, and its launcher."""
