"""The one reader of header fields (asched.api.http_head), as the three HTTP/1.1 peers
rely on it: what it keeps, and what it refuses."""

from __future__ import annotations

import pytest

from asched.api.http_head import HeadError, closes, content_length, header_fields


@pytest.mark.parametrize(
    ("lines", "fields"),
    [
        pytest.param([], {}, id="no fields"),
        pytest.param(
            [b"Content-Type:  application/json \t", b"HOST: x"],
            {b"content-type": b"application/json", b"host": b"x"},
            id="names lower-cased, values stripped of spaces and tabs",
        ),
        pytest.param(
            [b"Authorization: Bearer a", b"authorization: Bearer b"],
            {b"authorization": b"Bearer a"},
            id="a repeated field keeps its first value (as aiohttp's headers.get)",
        ),
        pytest.param([b"X-Empty:"], {b"x-empty": b""}, id="an empty value"),
        pytest.param([b"Content-Length: 12"], {b"content-length": b"12"}, id="a length"),
    ],
)
def test_fields(lines: list[bytes], fields: dict[bytes, bytes]) -> None:
    assert header_fields(lines) == fields


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(b"no colon", "a header line without a colon: b'no colon'", id="colon"),
        pytest.param(b": v", "a bad header name: b': v'", id="empty name"),
        pytest.param(b"Host : x", "a bad header name: b'Host : x'", id="space before colon"),
        pytest.param(b" Host: x", "a bad header name: b' Host: x'", id="leading space"),
        pytest.param(b"X Y: z", "a bad header name: b'X Y: z'", id="space inside"),
        pytest.param(b"Content-Length: 1e3", "bad Content-Length: b'1e3'", id="length digits"),
        pytest.param(b"Content-Length: -1", "bad Content-Length: b'-1'", id="negative"),
    ],
)
def test_malformed_fields_are_refused_with_the_line(line: bytes, message: str) -> None:
    with pytest.raises(HeadError) as caught:
        header_fields([b"Host: h", line])
    assert str(caught.value) == message


def test_a_repeated_length_is_refused_even_when_equal() -> None:
    # two framings of one body are how requests are smuggled; aiohttp refuses them too
    with pytest.raises(HeadError, match="bad Content-Length: b'3'"):
        header_fields([b"Content-Length: 3", b"content-length: 3"])


@pytest.mark.parametrize(
    ("fields", "length"),
    [
        pytest.param({}, None, id="none"),
        pytest.param({b"content-length": b"0"}, 0, id="zero"),
        pytest.param({b"content-length": b"0042"}, 42, id="leading zeros"),
    ],
)
def test_content_length(fields: dict[bytes, bytes], length: int | None) -> None:
    assert content_length(fields) == length


@pytest.mark.parametrize(
    ("version", "connection", "closed"),
    [
        pytest.param(b"HTTP/1.1", None, False, id="1.1 keeps alive by default"),
        pytest.param(b"HTTP/1.1", b"Close", True, id="1.1 close (any case)"),
        pytest.param(b"HTTP/1.1", b"keep-alive, Upgrade", False, id="1.1 tokens"),
        pytest.param(b"HTTP/1.0", None, True, id="1.0 closes by default"),
        pytest.param(b"HTTP/1.0", b"Keep-Alive", False, id="1.0 keep-alive"),
        pytest.param(b"HTTP/1.0", b"keep-alive , close", True, id="1.0 close wins"),
    ],
)
def test_closes(version: bytes, connection: bytes | None, closed: bool) -> None:
    fields = {} if connection is None else {b"connection": connection}
    assert closes(version, fields) is closed
