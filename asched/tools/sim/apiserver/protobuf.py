"""Just enough of the Kubernetes protobuf encoding to accept ``kubectl create namespace``.

kubectl's typed generators (``create namespace``, ``create deployment``, ``run``...)
POST ``application/vnd.kubernetes.protobuf`` bodies: the magic ``k8s\\0`` followed by a
``runtime.Unknown`` envelope (``typeMeta``, ``raw``). Decoding every kind would need
every generated schema; the simulator decodes the envelope and a Namespace (ObjectMeta
name, generateName, labels, annotations, finalizers) and answers 415 for anything
else, so clients that can fall back to JSON do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

JSON = dict[str, Any]

MAGIC: Final = b"k8s\x00"
MEDIA_TYPE: Final = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """A body that is not (supported) Kubernetes protobuf."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, value
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ProtobufError("truncated field")
            yield number, data[pos : pos + length]
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a string field")
    return value.decode()


def _entry(value: int | bytes) -> tuple[str, str]:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a map entry")
    parts = dict(_fields(value))
    return _text(parts.get(1, b"")), _text(parts.get(2, b""))


def _meta(data: bytes) -> JSON:
    meta: JSON = {}
    for number, value in _fields(data):
        if number in (1, 2, 3):
            meta[("name", "generateName", "namespace")[number - 1]] = _text(value)
        elif number in (11, 12):
            key, text = _entry(value)
            meta.setdefault("labels" if number == 11 else "annotations", {})[key] = text
        elif number == 14:
            meta.setdefault("finalizers", []).append(_text(value))
    return meta


def _namespace(data: bytes) -> JSON:
    obj: JSON = {"apiVersion": "v1", "kind": "Namespace", "metadata": {}}
    for number, value in _fields(data):
        if number == 1 and isinstance(value, bytes):
            obj["metadata"] = _meta(value)
        elif number == 2 and isinstance(value, bytes):
            finalizers = [_text(v) for n, v in _fields(value) if n == 1]
            if finalizers:
                obj["spec"] = {"finalizers": finalizers}
    return obj


def decode(body: bytes) -> JSON:
    """Decode a protobuf request body into its JSON shape, or raise ProtobufError."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf magic prefix")
    type_meta: dict[int, int | bytes] = {}
    raw = b""
    for number, value in _fields(body[len(MAGIC) :]):
        if number == 1 and isinstance(value, bytes):
            type_meta = dict(_fields(value))
        elif number == 2 and isinstance(value, bytes):
            raw = value
    kind = _text(type_meta.get(2, b""))
    if kind != "Namespace":
        raise ProtobufError(
            f"protobuf bodies of kind {kind or '?'} are not supported by the simulator"
        )
    return _namespace(raw)
