"""The decoding context: the object being decoded and the type checks of its fields.

Every decoder (pods and nodes in :mod:`asched.cluster.decode`, volumes, CSI objects,
config args) reads raw JSON through a :class:`DecodeContext`, so that a problem raises
:class:`~asched.errors.DecodeError` naming the object (``Pod default/web-1``), the field
path and the value, worded the same way whatever decodes it. Held apart from the
decoders of particular fields because they all share it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from asched.cluster import bounds, quantity
from asched.cluster.records import OwnerReference
from asched.errors import DecodeError

#: JSON of any shape (the decoders' parameters name the shape they expect, and accept any
#: mapping: every field is checked here, whatever its declared type)
Raw = Mapping[str, Any]

#: owner uid -> the one-reference tuple last decoded with it: the pods of a workload share
#: their owner, so the next ones compare four fields instead of building a record (past
#: the limit the cache starts over)
_OWNERS: dict[str, tuple[OwnerReference]] = {}
_OWNERS_LIMIT: Final = 4096


def _described(value: Any) -> str:
    """A wrong value for a message: a scalar as written, a container by its kind (an
    annotation may hold kilobytes)."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)


class DecodeContext:
    """The object being decoded, for error messages, and the checks of its fields: each
    returns the value in the type asked for or raises a :class:`DecodeError` naming the
    object and the field path."""

    def __init__(self, kind: str, raw: Any) -> None:
        meta = raw.get("metadata") if isinstance(raw, Mapping) else None
        meta = meta if isinstance(meta, Mapping) else {}
        name = meta.get("name") or meta.get("generateName") or "<unnamed>"
        namespace = meta.get("namespace")
        self.obj = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        #: the first amount beyond asched's range, as a message naming its field
        self.out_of_range = ""

    def fail(self, path: str, message: str) -> DecodeError:
        return DecodeError(self.obj, path, message)

    # The checks below test the exact JSON types first: objects parsed from JSON are
    # dicts, lists and strs, and the ABC's isinstance costs several times more.
    def mapping(self, value: Any, path: str) -> Raw:
        if type(value) is dict:
            return value
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be an object, got {type(value).__name__}")
        return value

    def items(self, value: Any, path: str) -> list[Any]:
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list, got {type(value).__name__}")
        return value

    def string(self, value: Any, path: str, default: str = "") -> str:
        if type(value) is str:
            return value
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {value!r}")
        return value

    def integer(self, value: Any, path: str, default: int = 0) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"must be an integer, got {value!r}")
        return value

    def labels(self, value: Any, path: str) -> dict[str, str]:
        labels = self.mapping(value, path)
        for key, val in labels.items():
            if not isinstance(val, str):
                raise self.fail(f"{path}.{key}", f"label values must be strings, got {val!r}")
        return dict(labels)

    def annotations(self, value: Any, path: str) -> dict[str, str]:
        """A map of string to string, as :meth:`labels`, an entry's path written
        ``metadata.annotations[KEY]`` (keys hold dots and slashes)."""
        annotations = self.mapping(value, path)
        for key, val in annotations.items():
            if type(key) is not str:
                raise self.fail(path, f"annotation keys must be strings, got {key!r}")
            if type(val) is not str:
                raise self.fail(
                    f"{path}[{key}]", f"annotation values must be strings, got {_described(val)}"
                )
        return dict(annotations)

    def owner_references(self, value: Any) -> tuple[OwnerReference, ...]:
        """``metadata.ownerReferences``: each an object whose ``apiVersion``, ``kind``,
        ``name`` and ``uid`` are strings and ``controller`` a boolean (absent: "" and
        False). The usual entry (a dict of such values) takes the fast path."""
        if value is None:
            return ()
        if type(value) is list and len(value) == 1 and type(value[0]) is dict:
            # the usual pod: one owner its siblings share, decoded already
            get = value[0].get
            uid = get("uid")
            known = _OWNERS.get(uid) if type(uid) is str else None
            if known is not None:
                ref = known[0]
                controller = get("controller")
                if (
                    get("name") == ref.name
                    and get("kind") == ref.kind
                    and get("apiVersion") == ref.api_version
                    and (
                        controller is True
                        if ref.controller
                        else (controller is None or controller is False)
                    )
                ):
                    return known
        out = []
        for index, item in enumerate(self.items(value, "metadata.ownerReferences")):
            if type(item) is dict:
                get = item.get
                version, kind, name, uid = get("apiVersion"), get("kind"), get("name"), get("uid")
                controller = get("controller")
                if (
                    type(version) is str
                    and type(kind) is str
                    and type(name) is str
                    and type(uid) is str
                    and (controller is None or type(controller) is bool)
                ):
                    out.append(OwnerReference(version, kind, name, uid, controller is True))
                    continue
            out.append(self._owner_reference(item, f"metadata.ownerReferences[{index}]"))
        refs = tuple(out)
        if len(refs) == 1:
            if len(_OWNERS) >= _OWNERS_LIMIT:
                _OWNERS.clear()
            _OWNERS[refs[0].uid] = refs
        return refs

    def _owner_reference(self, value: Any, path: str) -> OwnerReference:
        item = self.mapping(value, path)
        strings = [
            self.string(item.get(key), f"{path}.{key}") for key in ("apiVersion", "kind", "name")
        ]
        uid = self.string(item.get("uid"), f"{path}.uid")
        controller = item.get("controller")
        if controller is not None and not isinstance(controller, bool):
            raise self.fail(f"{path}.controller", f"must be a boolean, got {controller!r}")
        return OwnerReference(strings[0], strings[1], strings[2], uid, controller is True)

    def int32(self, value: Any, path: str, default: int = 0) -> int:
        number = self.integer(value, path, default)
        if not -(2**31) <= number < 2**31:
            raise self.fail(path, f"must be a 32-bit integer, got {number}")
        return number

    def quantities(self, value: Any, path: str) -> dict[str, int]:
        """Quantities in canonical units, as the API server parses them (capped at
        int64). Amounts beyond :data:`~asched.cluster.bounds.MAX_AMOUNT` are clamped to
        it and recorded in :attr:`out_of_range` (the first one, naming its field)."""
        out: dict[str, int] = {}
        for name, text in self.mapping(value, path).items():
            if type(text) is not str:
                if isinstance(text, int | float) and not isinstance(text, bool):
                    text = str(text)
                if not isinstance(text, str):
                    raise self.fail(f"{path}.{name}", f"must be a quantity string, got {text!r}")
            try:
                amount = quantity.canonical(name, text)
            except quantity.QuantityError as exc:
                raise self.fail(f"{path}.{name}", str(exc)) from None
            if amount < 0:
                raise self.fail(
                    f"{path}.{name}", f"must be greater than or equal to 0, got {text!r}"
                )
            if amount > bounds.MAX_AMOUNT and not self.out_of_range:
                self.out_of_range = bounds.too_large(f"{path}.{name}", text, amount, name)
            out[name] = bounds.clamp(amount)
        return out


def object_context(kind: str, raw: Any) -> DecodeContext:
    """A decoding context for another decoder (e.g. config args reusing node affinity)."""
    return DecodeContext(kind, raw)
