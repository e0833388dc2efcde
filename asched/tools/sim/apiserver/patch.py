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
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

JSON = dict[str, Any]

MERGE_PATCH: Final = "application/merge-patch+json"
JSON_PATCH: Final = "application/json-patch+json"
STRATEGIC_PATCH: Final = "application/strategic-merge-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"

_ORDER: Final = "$setElementOrder/"
_INDEX: Final = re.compile(r"0|[1-9][0-9]*")
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
    # ASCII digits, no leading zero; 18 digits at most (an int on any platform, and far
    # below Python's int/str digit limit)
    if not _INDEX.fullmatch(token) or len(token) > 18:
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
    orders = {
        key[len(_ORDER) :]: value
        for key, value in patch.items()
        if key.startswith(_ORDER) and isinstance(value, list)
    }
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith(_ORDER):
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
            base = current if isinstance(current, list) else []
            result[key] = _merge_list(base, value, node, orders.pop(key, None))
        else:
            result[key] = _clean(value, node)
    for name, order in orders.items():  # an order for a list the patch does not touch
        node = schema.fields.get(name)
        current = result.get(name)
        if isinstance(current, list):
            result[name] = _merge_list(
                current, [], node if isinstance(node, MergeList) else MergeList(None), order
            )
    return result


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | None) else repr(value)


def _merge_list(
    original: list[Any], patch: list[Any], schema: MergeList, order: list[Any] | None = None
) -> list[Any]:
    """Merge a list, then order it as Go's ``normalizeElementOrder`` does.

    Items named by the patch (or by its ``$setElementOrder``) keep the patch's order; the
    others keep the original's; the two sequences are interleaved by ``mergeSortedSlice``:
    a server-only item goes first only if it preceded the patch item in the original.
    """
    replace = any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch)
    if replace:
        return [
            _clean(item, schema.item)
            for item in patch
            if not (isinstance(item, dict) and "$patch" in item and len(item) == 1)
        ]
    key = schema.key

    def ident(item: Any) -> Any:
        if key is not None and isinstance(item, dict):
            return _hashable(item.get(key))
        return _hashable(item)

    merged = list(original)
    mentioned: list[Any] = []
    for item in patch:
        if key is None:
            if item not in merged:
                merged.append(item)
            mentioned.append(ident(item))
            continue
        if not isinstance(item, dict):
            raise PatchError(f"merging list item {item!r}: expected an object", malformed=False)
        if key not in item:
            raise PatchError(
                f"map: {item} does not contain declared merge key: {key}", malformed=False
            )
        wanted = ident(item)
        if item.get("$patch") == "delete":
            merged = [old for old in merged if ident(old) != wanted]
            continue
        mentioned.append(wanted)
        position = next((i for i, old in enumerate(merged) if ident(old) == wanted), -1)
        if position >= 0:
            combined = _merge_map(merged[position], item, schema.item)
            if combined is None:
                del merged[position]
            else:
                merged[position] = combined
        else:
            merged.append(_clean(item, schema.item))
    reference = [ident(entry) for entry in order] if order is not None else mentioned
    rank = {value: position for position, value in reversed(list(enumerate(reference)))}
    patched = sorted((m for m in merged if ident(m) in rank), key=lambda m: rank[ident(m)])
    server_only = [m for m in merged if ident(m) not in rank]
    return _interleave(server_only, patched, [ident(item) for item in original], ident)


def _interleave(left: list[Any], right: list[Any], server: list[Any], ident: Any) -> list[Any]:
    """Go's ``mergeSortedSlice``: insert server-only items (left) among patch items (right)."""
    position = {value: index for index, value in reversed(list(enumerate(server)))}
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li, ri = position.get(ident(left[i])), position.get(ident(right[j]))
            if li is not None and ri is not None and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
