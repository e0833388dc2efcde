"""The simulated API server: REST verbs over an in-memory store, as kube-apiserver v1.37 answers them."""
