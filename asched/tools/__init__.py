"""The tooling: what tests and benchmarks run, never imported by the scheduler product (``asched run``, ``explain``, ``plugins``).

* :mod:`asched.tools.sim`: the simulated API server and its controllers;
* :mod:`asched.tools.bench`: the benchmarks (``asched bench``, ``asched tune``);
* :mod:`asched.tools.backends`: the genuine control plane built from Go modules, launched;
* :mod:`asched.tools.reference`: the scalar reference implementation the core is held to.
"""
