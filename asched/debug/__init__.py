"""Read-only debug pages of a running scheduler (``asched run --debug-addr HOST:PORT``).

* :mod:`asched.debug.recorder`: the decisions, recorded as the cycle makes them, in a
  bounded ring (:mod:`asched.debug.record` holds one);
* :mod:`asched.debug.rates`: per-second throughput and latency of the last minutes;
* :mod:`asched.debug.views`: the JSON documents the pages show;
* :mod:`asched.debug.pages` and :mod:`asched.debug.server`: the HTML, the script and the
  aiohttp listener (read-only, loopback unless TLS and authorization are given).

Nothing here runs, and nothing is recorded, unless the listener is on.
"""
