"""The server side of TLS: an SSL context from PEM files, or from a fresh self-signed pair.

kube-scheduler serves its port over TLS with ``--tls-cert-file``/``--tls-private-key-file``,
or with a self-signed certificate it makes at startup. :func:`ssl_context_for` does both.
The files are read and checked here, at startup, so a mistake is one line naming the file
(:class:`~asched.errors.InputError`, exit status 2) rather than a failed handshake later.
Generated keys never touch a disk but for a private temporary directory that is removed
as soon as the context has loaded them (Python's ``ssl`` loads keys from files only).

Not supported (say so when asked): reloading the files when they change (kube-scheduler
watches them; asched needs a restart), and client certificates (no ``--client-ca-file``).
"""

from __future__ import annotations

import socket
import ssl
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from asched.errors import InputError
from asched.serving import certificates

#: The serving certificate's CN when asched makes its own (the CA is ``asched-ca@<unix time>``).
SELF_SIGNED_NAME = "asched"


@dataclass(frozen=True, slots=True)
class ServerTLS:
    """A server's SSL context and, for a generated certificate, the CA clients must trust.

    Attributes
    ----------
    context : ssl.SSLContext
        For ``aiohttp.web.TCPSite(ssl_context=...)``; TLS 1.2 at least.
    ca_pem : bytes or None
        The generated CA (PEM); None when the certificate came from files.
    """

    context: ssl.SSLContext
    ca_pem: bytes | None


def server_context(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    """An SSL context serving ``cert_pem`` (a chain, leaf first) with ``key_pem``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="asched-tls-") as directory:
        cert_path = Path(directory) / "tls.crt"
        key_path = Path(directory) / "tls.key"
        cert_path.write_bytes(cert_pem)
        key_path.touch(mode=0o600)
        key_path.write_bytes(key_pem)
        context.load_cert_chain(cert_path, key_path)
    return context


def self_signed_hosts(bind_host: str) -> list[str]:
    """What a generated certificate names: ``localhost``, the loopback addresses, this
    machine's host name (a pod's name in Kubernetes) and ``bind_host`` when it is one host."""
    return ["localhost", socket.gethostname(), "127.0.0.1", "::1", bind_host]


def _read(path: str, flag: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read {flag}: {exc.strerror or exc}") from None


def ssl_context_for(
    cert_file: str | None = None,
    key_file: str | None = None,
    *,
    hosts: Iterable[str] = ("localhost", "127.0.0.1", "::1"),
) -> ServerTLS:
    """The SSL context of a TLS server: from the two PEM files, or self-signed for ``hosts``.

    Parameters
    ----------
    cert_file, key_file : str, optional
        ``--tls-cert-file`` (the certificate, then any intermediates) and
        ``--tls-private-key-file``; both or neither.
    hosts : iterable of str
        The names and addresses a generated certificate is valid for (ignored with files).

    Raises
    ------
    InputError
        One line naming the flag or the file: only one of the two files given, a file that
        cannot be read, is not PEM, holds an encrypted key, or a key that does not match.
    """
    if (cert_file is None) != (key_file is None):
        given, missing = (
            ("--tls-cert-file", "--tls-private-key-file")
            if key_file is None
            else ("--tls-private-key-file", "--tls-cert-file")
        )
        raise InputError(f"{missing}: required with {given}")
    if cert_file is None or key_file is None:
        issued = certificates.issue(SELF_SIGNED_NAME, hosts)
        return ServerTLS(server_context(issued.cert_pem, issued.key_pem), issued.ca_pem)
    cert_pem = _read(cert_file, "--tls-cert-file")
    key_pem = _read(key_file, "--tls-private-key-file")
    problem = certificates.check_pair(cert_pem, key_pem, cert_name=cert_file, key_name=key_file)
    if problem is not None:
        raise InputError(problem)
    try:
        return ServerTLS(server_context(cert_pem, key_pem), None)
    except ssl.SSLError as exc:  # what the checks above cannot see (a key type OpenSSL refuses)
        raise InputError(f"{cert_file}, {key_file}: cannot serve TLS: {exc.reason}") from None
