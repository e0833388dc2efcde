"""HTTPS for ``asched sim``: the server's SSL context and the CA clients must trust.

A throw-away certificate authority and serving certificate, made by
:mod:`asched.serving.certificates` (the same helper gives ``asched run`` its self-signed
certificate): EC P-256, generated at start-up in milliseconds. The CA certificate goes
into the kubeconfig as ``certificate-authority-data``, so clients verify the server as
they would a real one; the serving certificate names ``localhost``, ``127.0.0.1``,
``::1`` and the bind host. Keys never leave the process except through a private
temporary directory that is removed once the SSL context has loaded them.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from asched.serving import certificates
from asched.serving.tls import server_context


@dataclass(frozen=True, slots=True)
class ServingTLS:
    """The server's SSL context and the CA certificate clients must trust (PEM)."""

    context: ssl.SSLContext
    ca_pem: bytes


def generate(host: str) -> ServingTLS:
    """A fresh CA and a serving certificate for ``host``, valid for a year."""
    issued = certificates.issue(
        "asched-sim", ["localhost", "127.0.0.1", "::1", host], ca_name="asched-sim-ca"
    )
    return ServingTLS(server_context(issued.cert_pem, issued.key_pem), issued.ca_pem)
