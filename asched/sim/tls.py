"""HTTPS for ``asched sim``: the server's SSL context and the CA clients must trust.

The certificates come from :mod:`asched.sim.certificates` (``cryptography``, a core
dependency since ``asched run`` serves TLS too), imported only when a server asks for TLS.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServingTLS:
    """The server's SSL context and the CA certificate clients must trust (PEM)."""

    context: ssl.SSLContext
    ca_pem: bytes


def generate(host: str) -> ServingTLS:
    """A fresh CA and a serving certificate for ``host``, valid for a year."""
    from asched.sim import certificates

    return certificates.generate(host)
