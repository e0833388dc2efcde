"""The kubectl the tests run: the one built with the control plane, at its version.

Never one found on PATH: a fresh machine has none, and another version would test another
client. Tests that run it carry ``pytest.mark.kubectl``, so the build happens during
collection (see ``tests/conftest.py``), before any test's timeout starts.
"""

from __future__ import annotations

import functools

from asched.tools.backends.provision import provision, selected_version


@functools.cache
def kubectl_path() -> str:
    """Return the path of the provisioned kubectl (building it if the cache lacks it)."""
    return str(provision(version=selected_version()).kubectl)
