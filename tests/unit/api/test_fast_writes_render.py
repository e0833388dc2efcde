"""The fast path's requests as bytes (asched.api.fast_writes): body, request line, headers, TLS.

The Binding body must be the document the aiohttp path sends (``KubeClient.bind`` built a
dict and orjson encoded it), for any name JSON must escape; the request must carry the
path the client names in its errors, the Host and Authorization headers, and a
Content-Length that matches the body; the TLS context must verify exactly as
kubernetes-asyncio's own REST client's does.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from kubernetes_asyncio.client.rest import RESTClientObject

from asched.api.fast_writes import BadHeader, FastWrites, binding_body, pod_path, ssl_context
from asched.tools.sim.apiserver import tls as sim_tls


@dataclass
class Config:
    """The part of kubernetes-asyncio's Configuration the fast path reads."""

    host: str | None = "http://127.0.0.1:6443"
    ssl_ca_cert: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify_ssl: bool = True
    disable_strict_ssl_verification: bool = False
    tls_server_name: str | None = None
    # what RESTClientObject reads beyond these
    connection_pool_maxsize: int = 4
    proxy: str | None = None
    proxy_headers: dict[str, str] | None = None


class Token:
    """An ``authorize`` whose value a test can change (a rotated token)."""

    def __init__(self, value: str | None) -> None:
        self.value = value

    async def __call__(self) -> str | None:
        return self.value


@pytest.mark.parametrize(
    ("namespace", "name", "uid", "node"),
    [
        pytest.param("default", "web-1", "0f1e-22", "node-7", id="plain names with a uid"),
        pytest.param("default", "web-1", "", "node-7", id="no uid: no precondition field"),
        pytest.param("team-a", 'we"b\\1', "u", "n", id="a quote and a backslash"),
        pytest.param("ns", "tab\there\nline", "u\u0001", "n", id="control characters"),
        pytest.param("ns", "pod-\u00e9\u4e2d", "u", "n\u00fc", id="non-ASCII names"),
    ],
)
def test_binding_body(namespace: str, name: str, uid: str, node: str) -> None:
    body = binding_body(namespace, name, uid, node)
    # the document kube-apiserver expects, the names escaped as JSON escapes them
    metadata = {"name": name, "namespace": namespace} | ({"uid": uid} if uid else {})
    assert orjson.loads(body) == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": metadata,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    assert ("uid" in orjson.loads(body)["metadata"]) is bool(uid)


def _parse_request(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        assert key.lower() not in headers, f"header {key} twice"
        headers[key.lower()] = value.strip()
    return lines[0], headers, body


@pytest.mark.parametrize(
    ("host", "namespace", "name", "request_line", "host_header"),
    [
        pytest.param(
            "https://10.0.0.1:6443",
            "default",
            "web-1",
            "POST /api/v1/namespaces/default/pods/web-1/binding HTTP/1.1",
            "10.0.0.1:6443",
            id="explicit port",
        ),
        pytest.param(
            "https://api.example.com/",
            "default",
            "web-1",
            "POST /api/v1/namespaces/default/pods/web-1/binding HTTP/1.1",
            "api.example.com",
            id="default port, trailing slash",
        ),
        pytest.param(
            "https://rancher.example.com/k8s/clusters/c-1",
            "ns",
            "p",
            "POST /k8s/clusters/c-1/api/v1/namespaces/ns/pods/p/binding HTTP/1.1",
            "rancher.example.com",
            id="a path prefix in the server URL",
        ),
        pytest.param(
            "http://[::1]:8080",
            "ns",
            "a b/c",
            "POST /api/v1/namespaces/ns/pods/a%20b/c/binding HTTP/1.1",
            "[::1]:8080",
            id="IPv6, a name percent-quoted as the aiohttp path quotes it",
        ),
    ],
)
async def test_binding_request_line_and_headers(
    host: str, namespace: str, name: str, request_line: str, host_header: str
) -> None:
    writes = FastWrites(Config(host=host), Token("Bearer abc"), limit=1)
    path = pod_path(namespace, name, "binding")
    raw = await writes._render(b"POST", path, b"application/json", b"{}")
    line, headers, body = _parse_request(raw)
    assert line == request_line
    assert headers["host"] == host_header
    assert headers["authorization"] == "Bearer abc"
    assert headers["content-type"] == "application/json"
    assert headers["content-length"] == "2"  # len(b"{}")
    assert body == b"{}"


async def test_authorization_follows_the_current_token() -> None:
    token = Token("Bearer first")
    writes = FastWrites(Config(), token, limit=1)
    first = _parse_request(await writes._render(b"PATCH", "/x", b"a/b", b"{}"))[1]
    token.value = "Bearer second"  # an exec plugin or the in-cluster file rotated it
    second = _parse_request(await writes._render(b"PATCH", "/x", b"a/b", b"{}"))[1]
    token.value = None  # no credential at all: no header
    third = _parse_request(await writes._render(b"PATCH", "/x", b"a/b", b"{}"))[1]
    assert (first["authorization"], second["authorization"]) == ("Bearer first", "Bearer second")
    assert "authorization" not in third


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("Bearer abc\n", "line break", id="a token file with a trailing newline"),
        pytest.param("Bearer a\rInjected: 1", "line break", id="a carriage return"),
        pytest.param("Bearer \u4e2d", "not Latin-1", id="a character HTTP cannot carry"),
    ],
)
async def test_a_header_value_that_cannot_be_sent_is_refused_without_quoting_it(
    value: str, message: str
) -> None:
    writes = FastWrites(Config(), Token(value), limit=1)
    with pytest.raises(BadHeader) as caught:
        await writes._render(b"POST", "/x", b"a/b", b"{}")
    assert message in str(caught.value)
    assert "Bearer" not in str(caught.value)


def test_a_host_that_is_not_an_http_url_is_refused() -> None:
    with pytest.raises(ValueError, match="not an http"):
        FastWrites(Config(host="unix:///run/api.sock"), Token(None), limit=1)


@pytest.fixture(scope="module")
def ca_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ca") / "ca.crt"
    path.write_bytes(sim_tls.generate("127.0.0.1").ca_pem)
    return path


@pytest.mark.parametrize(
    ("settings"),
    [
        pytest.param({}, id="system roots, verified"),
        pytest.param({"ssl_ca_cert": "CA"}, id="a CA file"),
        pytest.param({"ssl_ca_cert": "CA", "verify_ssl": False}, id="insecure-skip-tls-verify"),
        pytest.param({"disable_strict_ssl_verification": True}, id="strict X.509 checks off"),
    ],
)
async def test_tls_verifies_as_kubernetes_asyncio_does(
    settings: dict[str, object], ca_file: Path
) -> None:
    config = Config(host="https://127.0.0.1:6443")
    for key, value in settings.items():
        setattr(config, key, str(ca_file) if value == "CA" else value)
    rest = RESTClientObject(config)
    try:
        theirs: ssl.SSLContext = rest.pool_manager.connector._ssl
        ours = ssl_context(config)
        assert ours.verify_mode == theirs.verify_mode
        assert ours.check_hostname == theirs.check_hostname
        assert ours.verify_flags == theirs.verify_flags
        assert ours.cert_store_stats() == theirs.cert_store_stats()
        assert ours.minimum_version == theirs.minimum_version
    finally:
        await rest.close()
    if config.verify_ssl:
        assert ours.verify_mode == ssl.CERT_REQUIRED
        assert ours.check_hostname
