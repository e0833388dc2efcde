"""The one reader of HTTP/1.1 header fields, for asched's three small HTTP/1.1 peers.

Three places speak HTTP/1.1 without aiohttp, each because aiohttp's per-message machinery
cost more CPU than the messages (measured where each is): the scheduler's lean client
(:mod:`asched.api.http1`, answers), the benchmark extender's server
(:mod:`asched.tools.bench.lean_http`, requests) and the simulator's front for hot requests
(:mod:`asched.tools.sim.apiserver.front`). Their first lines differ (a status line, a
request line) and so does what each does with a message it will not read (an error, a
400, a hand-over to aiohttp); the header fields are read here, once, by RFC 9112's rules:

* a field is ``name ":" OWS value OWS``; a line without a colon, an empty name, or a
  name with whitespace in or around it is malformed (RFC 9112's field line parsing asks
  servers to reject whitespace before the colon: it is how requests are smuggled past
  proxies);
* names are case-insensitive (kept lower-cased), values are stripped of spaces and tabs;
* ``Content-Length`` must be digits, given once (RFC 9112 lets a recipient refuse a
  repeated one, as aiohttp does); any other repeated field keeps its first value, as
  aiohttp's ``headers.get`` answers (the simulator's front must answer as aiohttp
  would).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

#: the field whose repetition is an error
CONTENT_LENGTH: Final = b"content-length"
_OWS: Final = b" \t"


class HeadError(ValueError):
    """A malformed header field; the message quotes it (at most 80 bytes)."""


def header_fields(lines: Sequence[bytes]) -> dict[bytes, bytes]:
    """The header field lines of a head (after its first line): lower-cased name ->
    value, stripped of spaces and tabs.

    Raises
    ------
    HeadError
        A line without a colon, an empty name or one with whitespace, or a
        ``Content-Length`` that is not digits or is repeated.
    """
    fields: dict[bytes, bytes] = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon:
            raise HeadError(f"a header line without a colon: {line[:80]!r}")
        if not name or name.strip(_OWS) != name or b" " in name or b"\t" in name:
            raise HeadError(f"a bad header name: {line[:80]!r}")
        key = name.lower()
        value = value.strip(_OWS)
        if key == CONTENT_LENGTH and (not value.isdigit() or key in fields):
            raise HeadError(f"bad Content-Length: {value[:40]!r}")
        fields.setdefault(key, value)
    return fields


def content_length(fields: Mapping[bytes, bytes]) -> int | None:
    """The body's length the fields give (None: no ``Content-Length``); already checked
    to be digits by :func:`header_fields`."""
    value = fields.get(CONTENT_LENGTH)
    return None if value is None else int(value)


def closes(version: bytes, fields: Mapping[bytes, bytes]) -> bool:
    """Whether the connection ends after this message: ``Connection: close``, or HTTP/1.0
    without ``Connection: keep-alive``."""
    connection = fields.get(b"connection")
    if connection is None:
        return version == b"HTTP/1.0"
    tokens = {token.strip() for token in connection.lower().split(b",")}
    return b"close" in tokens or (version == b"HTTP/1.0" and b"keep-alive" not in tokens)
