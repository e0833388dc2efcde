"""HTTPS to an extender, as kube-scheduler's makeTransport and client-go's TLSConfigFor set it up.

The test extender serves HTTPS with a throw-away CA; the config carries that CA (or
another one, or none) the way a user writes it, base64 ``caData`` or a ``caFile``. Client
certificates are checked by a server context built here that requires them.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from asched.config.types import ExtenderConfig, ExtenderTLSConfig
from asched.errors import ExtenderError, InputError
from asched.extenders.client import ExtenderClient
from asched.extenders.filter_score import run_filters
from asched.tools.bench.extender_server import serve_extender
from asched.tools.sim.apiserver import tls as sim_tls
from tests.configs import load_config
from tests.unit.extender._support import nodes, pod, spec, started

NAMES = ["node1"]
NODES = nodes(*NAMES)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def filter_once(running) -> tuple[str, ...]:
    info, raw = pod()
    outcome = await run_filters(running.extenders, info, raw, NAMES, NODES.__getitem__)
    return outcome.feasible


@pytest.fixture(scope="module")
def other_ca() -> bytes:
    """The PEM of a CA that signed nothing the test extender serves."""
    return sim_tls.generate("127.0.0.1").ca_pem


async def test_verified_with_the_servers_ca() -> None:
    async with started(spec(), tls=True) as running:
        assert running.servers[0].url.startswith("https://127.0.0.1:")
        assert await filter_once(running) == ("node1",)


async def test_verified_with_a_ca_file(tmp_path: Path) -> None:
    async with serve_extender(tls=True) as server:
        assert server.ca_pem is not None
        ca_file = tmp_path / "ca.pem"
        ca_file.write_bytes(server.ca_pem)
        config = ExtenderConfig(
            url_prefix=server.url,
            filter_verb="filter",
            tls_config=ExtenderTLSConfig(ca_file=str(ca_file)),
        )
        client = ExtenderClient(config)
        try:
            answer = await client.post("filter", {"Pod": {}, "Nodes": None, "NodeNames": ["a"]})
        finally:
            await client.close()
    assert answer["NodeNames"] == ["a"]


@pytest.mark.parametrize(
    ("tls_config", "enable_https", "works"),
    [
        pytest.param("other CA", False, False, id="the wrong CA: verification fails"),
        pytest.param(None, False, False, id="no CA at all: the system roots do not know it"),
        pytest.param(None, True, True, id="enableHTTPS without a CA: not verified (upstream)"),
        pytest.param({"insecure": True}, False, True, id="insecure: not verified"),
        pytest.param(
            "server CA, serverName localhost", False, True, id="serverName the certificate names"
        ),
        pytest.param(
            "server CA, serverName elsewhere",
            False,
            False,
            id="serverName the certificate does not name",
        ),
    ],
)
async def test_server_verification(tls_config, enable_https, works, other_ca) -> None:
    async with serve_extender(tls=True) as server:
        assert server.ca_pem is not None
        entry = server.entry(enableHTTPS=enable_https)
        entry.pop("tlsConfig")
        if tls_config == "other CA":
            entry["tlsConfig"] = {"caData": b64(other_ca)}
        elif isinstance(tls_config, str):
            entry["tlsConfig"] = {
                "caData": b64(server.ca_pem),
                "serverName": tls_config.rsplit(" ", 1)[1],
            }
        elif tls_config is not None:
            entry["tlsConfig"] = tls_config
        (config,) = load_config(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "extenders": [entry],
            }
        ).extenders
        client = ExtenderClient(config)
        try:
            if works:
                await client.post("filter", {"Pod": {}, "Nodes": None, "NodeNames": []})
            else:
                with pytest.raises(ExtenderError) as caught:
                    await client.post("filter", {"Pod": {}, "Nodes": None, "NodeNames": []})
                assert caught.value.detail.startswith("TLS: SSLCertVerificationError")
                assert "certificate verify failed" in caught.value.detail
        finally:
            await client.close()


# --- client certificates --------------------------------------------------------------


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(ca_key, ca_cert, subject: str, usage, *, server: bool):
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    cert = builder.sign(ca_key, hashes.SHA256())
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


@pytest.fixture(scope="module")
def mutual_tls(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("test-ca"))
        .issuer_name(_name("test-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("mtls")
    files = {"ca.pem": ca_cert.public_bytes(serialization.Encoding.PEM)}
    files["server.crt"], files["server.key"] = _issue(
        ca_key, ca_cert, "extender", ExtendedKeyUsageOID.SERVER_AUTH, server=True
    )
    files["client.crt"], files["client.key"] = _issue(
        ca_key, ca_cert, "scheduler", ExtendedKeyUsageOID.CLIENT_AUTH, server=False
    )
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def _server_context(folder: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(folder / "ca.pem"))
    context.load_cert_chain(folder / "server.crt", folder / "server.key")
    context.verify_mode = ssl.CERT_REQUIRED
    return context


@pytest.mark.parametrize(
    ("client_tls", "works"),
    [
        pytest.param("data", True, id="certData and keyData"),
        pytest.param("files", True, id="certFile and keyFile"),
        pytest.param("none", False, id="no client certificate: the server refuses"),
    ],
)
async def test_client_certificate(mutual_tls: Path, client_tls: str, works: bool) -> None:
    folder = mutual_tls
    ca = (folder / "ca.pem").read_bytes()
    tls = {"caData": b64(ca)}
    if client_tls == "data":
        tls["certData"] = b64((folder / "client.crt").read_bytes())
        tls["keyData"] = b64((folder / "client.key").read_bytes())
    elif client_tls == "files":
        tls["certFile"] = str(folder / "client.crt")
        tls["keyFile"] = str(folder / "client.key")
    async with started(spec(tlsConfig=tls), tls=_server_context(folder)) as running:
        if works:
            assert await filter_once(running) == ("node1",)
        else:
            with pytest.raises(ExtenderError) as caught:
                await filter_once(running)
            assert caught.value.verb == "filter"
            assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("tls", "message"),
    [
        pytest.param(
            ExtenderTLSConfig(ca_data=b"not a certificate"),
            "extender https://ext.example: tlsConfig.caData: cannot load the CA: SSLError:",
            id="caData that is not PEM",
        ),
        pytest.param(
            ExtenderTLSConfig(ca_file="/nonexistent/ca.pem"),
            "extender https://ext.example: tlsConfig.caFile (/nonexistent/ca.pem): cannot load the CA: "
            "FileNotFoundError:",
            id="caFile that does not exist",
        ),
        pytest.param(
            ExtenderTLSConfig(cert_file="/nonexistent/tls.crt", key_file="/nonexistent/tls.key"),
            "extender https://ext.example: tlsConfig (/nonexistent/tls.crt, /nonexistent/tls.key): "
            "cannot load the client certificate and key: FileNotFoundError:",
            id="client certificate file that does not exist",
        ),
    ],
)
def test_unusable_tls_material_is_a_clear_input_error(tls, message) -> None:
    config = ExtenderConfig(url_prefix="https://ext.example", tls_config=tls)
    with pytest.raises(InputError) as caught:
        ExtenderClient(config)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
