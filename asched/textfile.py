"""Read a text file a user names on the command line, with one-line errors naming the file.

Why one home: every file handed to asched (``--config``, ``--kubeconfig``, ``explain
--snapshot`` and ``--pod``, ``sim --snapshot``, workloads) fails in the same few ways, and
each must become one :class:`~asched.errors.InputError` line (``asched X: error: FILE:
...``, exit status 2), never a traceback:

* it is missing, a directory, unreadable (the OS reason: ``No such file or directory``,
  ``Is a directory``, ``Permission denied``) or a device (``/dev/zero`` would never end);
* it holds binary data (a NUL byte) or bytes that are not UTF-8: both are reported with
  the offset of the first bad byte, so a user who passed ``image.png`` sees why;
* it is not well-formed YAML or JSON: ``FILE:LINE:COLUMN: malformed YAML: problem``;
* it nests deeper than :data:`MAX_DEPTH` mappings and lists: refused where it crosses the
  limit, before anything recursive (PyYAML's composer, a validator) meets it, so that no
  input can raise a RecursionError anywhere downstream.

Named pipes are read (``--pod <(kubectl get pod web -o yaml)`` works); the whole file is
read into memory, as every caller parses all of it anyway.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from asched.errors import InputError

__all__ = ["MAX_DEPTH", "parse_json", "parse_yaml", "parse_yaml_all", "read_text", "yaml_error"]

#: The deepest nesting of mappings and lists read. Kubernetes objects and configurations
#: nest about 10-20 levels (a CRD's schema perhaps 50); Python's recursion limit is ~1000.
MAX_DEPTH = 100


def _refuse_devices(name: str) -> None:
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return  # reading reports it with the OS's reason
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "character" if stat.S_ISCHR(mode) else "block"
        raise OSError(0, f"not a regular file (a {kind} device)")


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in errors (``"the kubeconfig"``).

    Raises
    ------
    InputError
        ``FILE: cannot read WHAT: REASON``, for a file that is missing, a directory, not
        readable, a device, binary (a NUL byte) or not UTF-8.
    """
    name = os.fspath(path)
    try:
        _refuse_devices(name)
        data = Path(name).read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InputError(f"{name}: cannot read {what}: {reason}") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(
            f"{name}: cannot read {what}: binary data, not text (NUL byte at offset {nul})"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: cannot read {what}: not UTF-8 text "
            f"(byte 0x{data[exc.start]:02x} at offset {exc.start}; a binary file?)"
        ) from None


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys (upstream's strict decoding does too)."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
)


def parse_yaml(text: str, name: str, *, unique_keys: bool = True) -> Any:
    """One YAML document; ``name`` (the file) prefixes errors with line and column.

    ``unique_keys`` rejects a mapping that repeats a key (the later value would silently
    win otherwise). None for an empty document.

    Raises
    ------
    InputError
        ``FILE:LINE:COLUMN: malformed YAML: PROBLEM``.
    """
    loader: type[yaml.SafeLoader] = _StrictLoader if unique_keys else yaml.SafeLoader
    try:
        _check_depth(text, name, loader)
        return yaml.load(text, Loader=loader)  # both loaders are SafeLoaders
    except yaml.YAMLError as exc:
        raise yaml_error(exc, name) from None


def parse_yaml_all(text: str, name: str) -> list[Any]:
    """Every document of a YAML stream, empty ones as None (PyYAML's C loader when
    present).

    Raises
    ------
    InputError
        ``FILE:LINE:COLUMN: malformed YAML: PROBLEM``, or nesting too deep to read.
    """
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_depth(text, name, loader)
        return list(yaml.load_all(text, Loader=loader))
    except yaml.YAMLError as exc:  # malformed, or e.g. ReaderError: a control character
        raise yaml_error(exc, name) from None


_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _check_depth(text: str, name: str, loader: type[Any]) -> None:
    """Refuse YAML nested deeper than :data:`MAX_DEPTH`, from the parser's events (flat:
    no recursion, about a quarter of the load's time)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, _OPEN):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(name, event.start_mark)
            elif isinstance(event, _CLOSE):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        # libyaml stops at its own limit (1,000) before the events reach ours
        if "maximum nesting depth" in str(exc.problem):
            raise _too_deep(name, exc.problem_mark) from None
        raise


def _too_deep(name: str, mark: Any) -> InputError:
    where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark is not None else name
    return InputError(f"{where}: YAML nested more than {MAX_DEPTH} levels deep")


def yaml_error(exc: yaml.YAMLError, name: str) -> InputError:
    """A PyYAML error as one line: ``FILE:LINE:COLUMN: malformed YAML: PROBLEM``.

    For callers with their own loader (multi-document streams); PyYAML's own text spans
    several lines with a caret drawing.
    """
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        problem = exc.problem or exc.context or "invalid"
        return InputError(f"{where}: malformed YAML: {problem}")
    return InputError(f"{name}: malformed YAML: {' '.join(str(exc).split())}")


def parse_json(text: str, name: str) -> Any:
    """One JSON document; errors carry ``FILE:LINE:COLUMN: malformed JSON: PROBLEM``, and
    a document nested deeper than :data:`MAX_DEPTH` is refused."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}:{exc.lineno}:{exc.colno}: malformed JSON: {exc.msg}") from None
    except RecursionError:
        data = None
    else:
        if _depth_within(data, MAX_DEPTH):
            return data
    raise InputError(f"{name}: JSON nested more than {MAX_DEPTH} levels deep")


def _depth_within(data: Any, limit: int) -> bool:
    """Whether ``data``'s dicts and lists nest at most ``limit`` deep (iteratively)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= limit:
                return False
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return True
