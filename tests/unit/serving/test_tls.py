"""ssl_context_for: HTTPS that a client verifies, from files or self-signed; bad files, one line.

Servers are the real health server on 127.0.0.1; clients verify with the CA they are given
(no ``verify=False`` anywhere except where a failure to verify is the point).
"""

from __future__ import annotations

import ipaddress
import ssl
from pathlib import Path

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from asched.errors import InputError
from asched.serving import certificates, health, ssl_context_for
from asched.serving.tls import self_signed_hosts


def client_trusting(ca_pem: bytes) -> ssl.SSLContext:
    return ssl.create_default_context(cadata=ca_pem.decode("ascii"))


async def get(url: str, context: ssl.SSLContext | bool) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as http,
        http.get(url, ssl=context) as response,
    ):
        return response.status, await response.text()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_self_signed_certificate_is_verified_with_its_ca(host: str) -> None:
    tls = ssl_context_for(hosts=self_signed_hosts("127.0.0.1"))
    assert tls.ca_pem is not None
    async with health.serve(health.HealthState(), "127.0.0.1", 0, ssl_context=tls.context) as s:
        assert s.url.startswith("https://")
        url = f"https://{host}:{s.port}/healthz"
        assert await get(url, client_trusting(tls.ca_pem)) == (200, "ok")


async def test_another_ca_does_not_verify_it() -> None:
    tls = ssl_context_for()
    other = certificates.issue("other", ["127.0.0.1"])
    async with health.serve(health.HealthState(), "127.0.0.1", 0, ssl_context=tls.context) as s:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await get(f"{s.url}/healthz", client_trusting(other.ca_pem))


async def test_plain_http_to_the_tls_port_gets_no_answer() -> None:
    tls = ssl_context_for()
    async with health.serve(health.HealthState(), "127.0.0.1", 0, ssl_context=tls.context) as s:
        with pytest.raises(aiohttp.ClientError):
            await get(f"http://127.0.0.1:{s.port}/healthz", False)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, bytes]:
    issued = certificates.issue("asched.example.com", ["127.0.0.1"])
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert.write_bytes(issued.cert_pem)
    key.write_bytes(issued.key_pem)
    return cert, key, issued.ca_pem


async def test_the_files_are_served(files) -> None:
    cert, key, ca_pem = files
    tls = ssl_context_for(str(cert), str(key))
    assert tls.ca_pem is None  # the CA is the user's, not ours
    async with health.serve(health.HealthState(), "127.0.0.1", 0, ssl_context=tls.context) as s:
        assert await get(f"{s.url}/healthz", client_trusting(ca_pem)) == (200, "ok")


def encrypted(key_pem: bytes) -> bytes:
    key = serialization.load_pem_private_key(key_pem, password=None)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )


@pytest.mark.parametrize(
    ("cert_content", "key_content", "message"),
    [
        pytest.param(
            None, "good", "{cert}: cannot read --tls-cert-file: No such file", id="no cert file"
        ),
        pytest.param(
            "good",
            None,
            "{key}: cannot read --tls-private-key-file: No such file",
            id="no key file",
        ),
        pytest.param(b"hello\n", "good", "{cert}: not a PEM certificate", id="cert not PEM"),
        pytest.param("key", "good", "{cert}: not a PEM certificate", id="files swapped"),
        pytest.param("good", b"hello\n", "{key}: not a PEM private key", id="key not PEM"),
        pytest.param(
            "good",
            "encrypted",
            "{key}: the private key is encrypted (give an unencrypted key)",
            id="encrypted key",
        ),
        pytest.param(
            "good",
            "other",
            "{key}: the private key does not match the certificate in {cert}",
            id="mismatched key",
        ),
    ],
)
def test_bad_files_are_one_line_naming_the_file(
    tmp_path: Path, cert_content, key_content, message: str
) -> None:
    issued = certificates.issue("asched", ["127.0.0.1"])
    contents = {
        "good": None,
        "key": issued.key_pem,
        "encrypted": encrypted(issued.key_pem),
        "other": certificates.issue("other", ["127.0.0.1"]).key_pem,
    }
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    for path, content, good in (
        (cert, cert_content, issued.cert_pem),
        (key, key_content, issued.key_pem),
    ):
        if content is not None:
            path.write_bytes(good if content == "good" else contents.get(content, content))
    with pytest.raises(InputError) as raised:
        ssl_context_for(str(cert), str(key))
    expected = message.format(cert=cert, key=key)
    assert str(raised.value).startswith(expected), str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("cert", "key", "message"),
    [
        pytest.param("tls.crt", None, "--tls-private-key-file: required with --tls-cert-file"),
        pytest.param(None, "tls.key", "--tls-cert-file: required with --tls-private-key-file"),
    ],
)
def test_the_two_files_go_together(cert, key, message: str) -> None:
    with pytest.raises(InputError, match=f"^{message}$"):
        ssl_context_for(cert, key)


@pytest.mark.parametrize(
    ("hosts", "dns", "ips"),
    [
        pytest.param(
            ["localhost", "127.0.0.1", "::1", "0.0.0.0"],
            ["localhost"],
            ["127.0.0.1", "::1"],
            id="an unspecified bind address names no host",
        ),
        pytest.param(
            ["localhost", "asched-7d9f", "127.0.0.1", "10.0.0.7", "localhost", ""],
            ["localhost", "asched-7d9f"],
            ["10.0.0.7", "127.0.0.1"],
            id="pod name and IP, duplicates and empty dropped",
        ),
    ],
)
def test_the_names_a_certificate_is_valid_for(hosts, dns, ips) -> None:
    issued = certificates.issue("asched", hosts)
    leaf = x509.load_pem_x509_certificates(issued.cert_pem)[0]
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == dns
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address(ip) for ip in ips]


def test_the_chain_is_leaf_then_ca_and_the_ca_is_named_like_client_go() -> None:
    issued = certificates.issue("asched", ["localhost"])
    leaf, ca = x509.load_pem_x509_certificates(issued.cert_pem)
    assert issued.ca_pem == ca.public_bytes(serialization.Encoding.PEM)
    assert leaf.issuer == ca.subject
    (cn,) = ca.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)
    assert str(cn.value).startswith("asched-ca@")
    validity = leaf.not_valid_after_utc - leaf.not_valid_before_utc
    # valid for 365 days from 5 minutes ago
    assert validity.total_seconds() == 365 * 86400 + 5 * 60
