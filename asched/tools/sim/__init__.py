"""``asched sim``: an embedded simulated Kubernetes API server with hollow nodes.

It serves the Kubernetes REST API (the JSON shapes, headers and status codes of a
v1.37 kube-apiserver, checked side by side against the genuine one) from memory, for
tests and benchmarks. Nothing in production imports this package (import-linter).

Layout, bottom to top::

    apierrors, quantity, selectors, patch      pure helpers (Status errors, quantities,
                                               label/field selectors, the three PATCH formats)
    resources                                  the served resources, one row per GVR
    store                                      objects + resourceVersion + bounded history
    shapes, validation, hooks, pods, kinds     decoding types, per-kind defaults, validation
    registry, listing, lifecycle               the generic verbs; lists; deletion, binding
    views, watch, tables, printers, discovery  encoding (once), watch streams, kubectl tables
    protobuf                                   just enough to accept `kubectl create namespace`
    routing, handlers, admin, faults           HTTP: paths, verbs, admin endpoints, fault knobs
    nodes, bootstrap                           hollow nodes, snapshots, built-in objects
    tls, kubeconfig, server, command           process concerns: certs, files, lifetime, CLI
"""
