"""A throw-away certificate authority and serving certificate for ``asched sim --tls``.

The one module that imports ``cryptography`` (the ``sim`` extra); import it through
:func:`asched.sim.tls.generate`, which says what to install when it is missing.
Generated at start-up with ``cryptography`` (EC P-256: milliseconds, not the seconds an
RSA key takes). The CA certificate goes into the kubeconfig as
``certificate-authority-data``, so clients verify the server as they would a real one;
the serving certificate names ``localhost``, ``127.0.0.1``, ``::1`` and the bind host.
Keys never leave the process except through a private temporary directory that is
removed once the SSL context has loaded them.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from asched.sim.tls import ServingTLS


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _alt_names(host: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    addresses = {"127.0.0.1", "::1"}
    try:
        addresses.add(str(ipaddress.ip_address(host)))
    except ValueError:
        if host:
            names.append(x509.DNSName(host))
    names.extend(x509.IPAddress(ipaddress.ip_address(address)) for address in sorted(addresses))
    return names


def generate(host: str) -> ServingTLS:
    """A fresh CA and a serving certificate for ``host``, valid for a year."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("asched-sim-ca"))
        .issuer_name(_name("asched-sim-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
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
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("asched-sim"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(_alt_names(host)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory(prefix="asched-sim-tls-") as directory:
        cert_path = Path(directory) / "tls.crt"
        key_path = Path(directory) / "tls.key"
        cert_path.write_bytes(
            cert.public_bytes(serialization.Encoding.PEM)
            + ca_cert.public_bytes(serialization.Encoding.PEM)
        )
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        key_path.chmod(0o600)
        context.load_cert_chain(cert_path, key_path)
    return ServingTLS(context, ca_cert.public_bytes(serialization.Encoding.PEM))
