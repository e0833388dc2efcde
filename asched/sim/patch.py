"""The three PATCH formats of the API server, applied to plain JSON values.

* ``application/merge-patch+json``: RFC 7386 (``null`` deletes, objects merge, anything
  else replaces).
* ``application/json-patch+json``: RFC 6902 (``add``, ``remove``, ``replace``, ``move``,
  ``copy``, ``test``) over RFC 6901 pointers.
* ``application/strategic-merge-patch+json``: Kubernetes' strategic merge. Lists whose
  schema declares a merge key (``containers`` by ``name``, ``conditions`` by ``type``...)
  merge item by item; lists declared ``merge`` without a key (``finalizers``) merge as
  sets; every other list is replaced. The directives ``$patch`` (replace/delete/merge),
  ``$retainKeys``, ``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>``
  are honoured.

Invariants: the inputs are never mutated except by :func:`json_patch`, which works on
the document it is given (callers pass a private copy); results may share unchanged
sub-values with the original, so callers must not mutate the original afterwards.
Failures raise :class:`PatchError`; ``malformed`` says whether the *patch* is unreadable
(the server's 400) or could not be applied (422).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

JSON = dict[str, Any]

MERGE_PATCH: Final = "application/merge-patch+json"
JSON_PATCH: Final = "application/json-patch+json"
STRATEGIC_PATCH: Final = "application/strategic-merge-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"

_ORDER: Final = "$setElementOrder/"
_DELETE_PRIMITIVE: Final = "$deleteFromPrimitiveList/"


class PatchError(ValueError):
    """A patch that cannot be read (``malformed``) or cannot be applied."""

    def __init__(self, message: str, *, malformed: bool) -> None:
        super().__init__(message)
        self.malformed = malformed


@dataclass(frozen=True, slots=True)
class Struct:
    """The strategic-merge schema of an object: only fields that need a strategy appear."""

    fields: Mapping[str, Struct | MergeList] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class MergeList:
    """A list that merges: by ``key`` (items are objects) or as a set (``key`` is None)."""

    key: str | None
    item: Struct = field(default_factory=Struct)


EMPTY: Final = Struct()


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply an RFC 7386 merge patch and return the result."""
    if not isinstance(patch, dict):
        return patch
    result: JSON = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"JSON pointer must start with '/': {path!r}", malformed=False)
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list[Any], token: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid array index {token!r}", malformed=False)
    index = int(token)
    if index > len(container) or (index == len(container) and not allow_end):
        raise PatchError(f"array index out of bounds: {index}", malformed=False)
    return index


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    node = doc
    for token in parts[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, allow_end=False)]
        else:
            raise PatchError(f'doc is missing path: "{path}": missing value', malformed=False)
    return node


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, allow_end=False)]
    raise PatchError(f'doc is missing path: "{path}": missing value', malformed=False)


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        raise PatchError("cannot remove the document root", malformed=False)
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, allow_end=False))
    raise PatchError(f"unable to remove nonexistent key: {last}: missing value", malformed=False)


def _add(doc: Any, path: str, value: Any, *, replace: bool) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f'doc is missing key: "{path}": missing value', malformed=False)
        parent[last] = value
    elif isinstance(parent, list):
        index = _index(parent, last, allow_end=not replace)
        if replace:
            parent[index] = value
        else:
            parent.insert(index, value)
    else:
        raise PatchError(f'doc is missing path: "{path}": missing value', malformed=False)
    return doc


def json_patch(doc: Any, operations: Any) -> Any:
    """Apply an RFC 6902 patch to ``doc`` (mutated in place) and return the result."""
    if not isinstance(operations, list):
        raise PatchError(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch", malformed=True
        )
    for operation in operations:
        if not isinstance(operation, dict) or not isinstance(operation.get("op"), str):
            raise PatchError("Unexpected kind: missing op", malformed=False)
        op = operation["op"]
        path = operation.get("path")
        if not isinstance(path, str):
            raise PatchError(f"Unexpected kind: {op} operation missing path", malformed=False)
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError(f"Unexpected kind: {op} operation missing value", malformed=False)
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(operation["value"]), replace=False)
        elif op == "replace":
            doc = _add(doc, path, copy.deepcopy(operation["value"]), replace=True)
        elif op == "remove":
            _remove(doc, path)
        elif op in ("move", "copy"):
            source = operation.get("from")
            if not isinstance(source, str):
                raise PatchError(f"Unexpected kind: {op} operation missing from", malformed=False)
            value = _remove(doc, source) if op == "move" else copy.deepcopy(_get(doc, source))
            doc = _add(doc, path, value, replace=False)
        elif op == "test":
            if _get(doc, path) != operation["value"]:
                raise PatchError(f"testing value {path} failed: test failed", malformed=False)
        else:
            raise PatchError(f"Unexpected kind: {op}", malformed=False)
    return doc


def strategic_merge(original: JSON, patch: Any, schema: Struct) -> JSON:
    """Apply a strategic merge patch to the object ``original`` and return the result."""
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object", malformed=True)
    result = _merge_map(original, patch, schema)
    return result if result is not None else {}


def _clean(value: Any, schema: Struct | MergeList | None) -> Any:
    """A patch value that lands where nothing was: strip directives and nulls."""
    if isinstance(value, dict):
        if value.get("$patch") == "delete":
            return None
        sub = schema if isinstance(schema, Struct) else EMPTY
        return _merge_map({}, value, sub)
    if isinstance(value, list) and isinstance(schema, MergeList):
        return _merge_list([], value, schema)
    return value


def _merge_map(original: JSON, patch: JSON, schema: Struct) -> JSON | None:
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {
            key: _clean(value, schema.fields.get(key))
            for key, value in patch.items()
            if key != "$patch" and value is not None
        }
    if directive not in (None, "merge"):
        raise PatchError(f"Unknown patch type: {directive}", malformed=False)
    result = dict(original)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {key: value for key, value in result.items() if key in retain}
    orders: list[tuple[str, Any]] = []
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith(_ORDER):
            orders.append((key[len(_ORDER) :], value))
            continue
        if key.startswith(_DELETE_PRIMITIVE):
            name = key[len(_DELETE_PRIMITIVE) :]
            current = result.get(name)
            if isinstance(current, list) and isinstance(value, list):
                result[name] = [item for item in current if item not in value]
            continue
        if value is None:
            result.pop(key, None)
            continue
        node = schema.fields.get(key)
        current = result.get(key)
        if isinstance(value, dict):
            sub = node if isinstance(node, Struct) else EMPTY
            merged = _merge_map(current if isinstance(current, dict) else {}, value, sub)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list) and isinstance(node, MergeList):
            result[key] = _merge_list(current if isinstance(current, list) else [], value, node)
        else:
            result[key] = _clean(value, node)
    for name, order in orders:
        node = schema.fields.get(name)
        current = result.get(name)
        if isinstance(current, list) and isinstance(order, list):
            key_field = node.key if isinstance(node, MergeList) else None
            result[name] = _reorder(current, order, key_field)
    return result


def _merge_list(original: list[Any], patch: list[Any], schema: MergeList) -> list[Any]:
    replace = any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch)
    if replace:
        return [
            _clean(item, schema.item)
            for item in patch
            if not (isinstance(item, dict) and "$patch" in item and len(item) == 1)
        ]
    key = schema.key
    if key is None:
        result = list(original)
        for item in patch:
            if item not in result:
                result.append(item)
        return result
    result = list(original)
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"merging list item {item!r}: expected an object", malformed=False)
        if key not in item:
            raise PatchError(
                f"map: {item} does not contain declared merge key: {key}", malformed=False
            )
        wanted = item[key]
        position = next(
            (i for i, old in enumerate(result) if isinstance(old, dict) and old.get(key) == wanted),
            -1,
        )
        if item.get("$patch") == "delete":
            result = [
                old for old in result if not (isinstance(old, dict) and old.get(key) == wanted)
            ]
        elif position >= 0:
            merged = _merge_map(result[position], item, schema.item)
            if merged is None:
                del result[position]
            else:
                result[position] = merged
        else:
            result.append(_clean(item, schema.item))
    return result


def _reorder(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    def ident(item: Any) -> Any:
        return item.get(key) if key is not None and isinstance(item, dict) else item

    wanted = [ident(entry) for entry in order]
    rank = {
        value: position for position, value in enumerate(wanted) if isinstance(value, str | int)
    }

    def position(item: Any) -> int | None:
        value = ident(item)
        return rank.get(value) if isinstance(value, str | int) else None

    ranked = sorted(
        (item for item in items if position(item) is not None), key=lambda item: position(item) or 0
    )
    others = [item for item in items if position(item) is None]
    return ranked + others
