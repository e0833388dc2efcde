"""serving.plan: TLS with delegated auth, or plain HTTP, from the bind address and the flags."""

from __future__ import annotations

import pytest

from asched.errors import InputError
from asched.serving import Plan, is_loopback, plan


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        pytest.param("127.0.0.1", True, id="127.0.0.1"),
        pytest.param("127.1.2.3", True, id="all of 127/8"),
        pytest.param("::1", True, id="::1"),
        pytest.param("localhost", True, id="localhost"),
        pytest.param("LocalHost", True, id="localhost in any case"),
        pytest.param("0.0.0.0", False, id="every IPv4 interface"),
        pytest.param("::", False, id="every IPv6 interface"),
        pytest.param("", False, id="empty: every interface"),
        pytest.param("10.0.0.7", False, id="a pod IP"),
        pytest.param("localhost.example.com", False, id="a name is not resolved"),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


WARNING = (
    "--insecure-serving: 0.0.0.0 is not loopback: /metrics is served over plain HTTP "
    "without authentication to anyone who can reach the port"
)


@pytest.mark.parametrize(
    ("host", "files", "insecure", "expected"),
    [
        pytest.param("0.0.0.0", False, False, Plan(secure=True), id="default: TLS self-signed"),
        pytest.param("10.0.0.7", True, False, Plan(secure=True), id="files: TLS"),
        pytest.param("127.0.0.1", True, False, Plan(secure=True), id="files on loopback: TLS"),
        pytest.param("127.0.0.1", False, False, Plan(secure=False), id="loopback: plain"),
        pytest.param("::1", False, True, Plan(secure=False), id="loopback, asked: plain"),
        pytest.param(
            "0.0.0.0", False, True, Plan(secure=False, warning=WARNING), id="asked: plain, warned"
        ),
        pytest.param(
            "",
            False,
            True,
            Plan(secure=False, warning=WARNING.replace("0.0.0.0", "every address")),
            id="asked on every address: warned",
        ),
    ],
)
def test_plan(host: str, files: bool, insecure: bool, expected: Plan) -> None:
    cert, key = ("tls.crt", "tls.key") if files else (None, None)
    assert plan(host, cert_file=cert, key_file=key, insecure=insecure) == expected


@pytest.mark.parametrize(
    ("cert", "key"),
    [
        pytest.param("tls.crt", "tls.key", id="both files"),
        pytest.param("tls.crt", None, id="a certificate"),
        pytest.param(None, "tls.key", id="a key"),
    ],
)
def test_insecure_serving_excludes_certificate_files(cert: str | None, key: str | None) -> None:
    with pytest.raises(InputError) as raised:
        plan("0.0.0.0", cert_file=cert, key_file=key, insecure=True)
    assert str(raised.value) == (
        "--insecure-serving: cannot be used with --tls-cert-file or --tls-private-key-file"
    )
