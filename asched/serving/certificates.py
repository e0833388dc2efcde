"""Throw-away certificates: a CA and a serving certificate it signs, made in memory.

Why one module: ``asched run`` serves its health and metrics port over TLS with a
self-signed certificate when none is given (kube-scheduler's ``--cert-dir`` default), and
``asched sim --tls`` needs the same shape for its fake API server; both call :func:`issue`.

The shape is client-go's ``GenerateSelfSignedCertKey``: a CA named ``<name>-ca@<unix time>``
and a serving certificate signed by it, the chain (leaf then CA) in one PEM. A client that
trusts :attr:`Issued.ca_pem` verifies the server as it would a real one. Keys are EC P-256
(milliseconds to make, not the seconds an RSA key takes), valid for a year from five minutes
ago (clock skew). This is the only module of asched that imports ``cryptography``.
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: How long an issued certificate (and its CA) is valid, in days.
VALID_DAYS: Final = 365
#: Backdating of ``notBefore``, in minutes, so a client whose clock lags still accepts it.
BACKDATE_MINUTES: Final = 5


@dataclass(frozen=True, slots=True)
class Issued:
    """PEM material of a serving certificate.

    Attributes
    ----------
    cert_pem : bytes
        The serving certificate followed by the CA certificate (the chain a server sends).
    key_pem : bytes
        The serving certificate's private key (PKCS#8, unencrypted).
    ca_pem : bytes
        The CA certificate, what a client must trust.
    """

    cert_pem: bytes
    key_pem: bytes
    ca_pem: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def alt_names(hosts: Iterable[str]) -> list[x509.GeneralName]:
    """Subject alternative names for ``hosts``: DNS names first, then IP addresses.

    An IP address (``127.0.0.1``, ``::1``) becomes an IP entry; an unspecified address
    (``0.0.0.0``, ``::``) names no host and is left out, as is an empty string; anything
    else is a DNS name. Duplicates are dropped; IPs are sorted.
    """
    names: list[str] = []
    addresses: set[str] = set()
    for host in hosts:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            if host and host not in names:
                names.append(host)
            continue
        if not address.is_unspecified:
            addresses.add(str(address))
    general: list[x509.GeneralName] = [x509.DNSName(name) for name in names]
    general.extend(x509.IPAddress(ipaddress.ip_address(address)) for address in sorted(addresses))
    return general


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _ca_certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    not_before: datetime.datetime,
    not_after: datetime.datetime,
) -> x509.Certificate:
    """A self-signed CA certificate for ``key``: it may sign certificates and CRLs."""
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )


def _serving_certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    hosts: Iterable[str],
    ca_subject: x509.Name,
    ca_key: ec.EllipticCurvePrivateKey,
    not_before: datetime.datetime,
    not_after: datetime.datetime,
) -> x509.Certificate:
    """A server-auth certificate for ``key`` and ``hosts``, signed by the CA's key."""
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName(alt_names(hosts)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )


def issue(common_name: str, hosts: Iterable[str], *, ca_name: str | None = None) -> Issued:
    """A fresh CA and a serving certificate for ``hosts`` signed by it.

    Parameters
    ----------
    common_name : str
        The serving certificate's subject CN.
    hosts : iterable of str
        Host names and IP addresses the certificate is valid for (see :func:`alt_names`).
    ca_name : str, optional
        The CA's CN; by default ``<common_name>-ca@<unix time>`` (client-go's naming).
    """
    now = datetime.datetime.now(datetime.UTC)
    not_before = now - datetime.timedelta(minutes=BACKDATE_MINUTES)
    not_after = now + datetime.timedelta(days=VALID_DAYS)
    ca_subject = _name(ca_name or f"{common_name}-ca@{int(now.timestamp())}")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _ca_certificate(ca_subject, ca_key, not_before, not_after)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _serving_certificate(
        _name(common_name), key, hosts, ca_subject, ca_key, not_before, not_after
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return Issued(cert_pem=_pem(cert) + _pem(ca_cert), key_pem=key_pem, ca_pem=_pem(ca_cert))


def check_pair(cert_pem: bytes, key_pem: bytes, *, cert_name: str, key_name: str) -> str | None:
    """Why ``cert_pem`` and ``key_pem`` cannot serve TLS together (None when they can).

    The reason names the file at fault (``cert_name`` or ``key_name``): not a PEM
    certificate, not a PEM private key, an encrypted key (no passphrase can be given), or a
    key that does not match the first certificate of the chain.
    """
    try:
        (leaf, *_) = x509.load_pem_x509_certificates(cert_pem)
    except ValueError:
        return f"{cert_name}: not a PEM certificate"
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except TypeError:  # "Password was not given but private key is encrypted"
        return f"{key_name}: the private key is encrypted (give an unencrypted key)"
    except (ValueError, UnsupportedAlgorithm):
        return f"{key_name}: not a PEM private key"
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    ours = key.public_key().public_bytes(serialization.Encoding.DER, public)
    theirs = leaf.public_key().public_bytes(serialization.Encoding.DER, public)
    if ours != theirs:
        return f"{key_name}: the private key does not match the certificate in {cert_name}"
    return None
