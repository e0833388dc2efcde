"""YAML as plain JSON values: the simulator's input files, and YAML request bodies.

Every failure is an :class:`~asched.errors.InputError` of one line that names the file,
as for every file a user names (reading and YAML errors are :mod:`asched.textfile`'s): a
missing file or a directory, a binary or non-UTF-8 file, a control character the YAML
reader refuses, malformed YAML (with ``FILE:LINE:COLUMN``), or a value JSON cannot hold
(``!!binary``, nesting deeper than the JSON encoder allows). Documents come back as plain
JSON values: YAML timestamps become RFC 3339 strings and non-string keys become strings,
so the registry downstream sees what a client would have sent. :func:`yaml_body` does the
same for a request body and raises :class:`ValueError` with a one-line reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import orjson
import yaml

from asched import textfile
from asched.errors import InputError

_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _plain(value: Any) -> Any:
    """``value`` with JSON types only; orjson.JSONEncodeError when it holds something else."""
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z))


def yaml_documents(path: Path, what: str) -> list[Any]:
    """Every non-empty YAML document of ``path`` as JSON values (see the module doc).

    A file that is one JSON document (``kubectl get ... -o json``; JSON is YAML) is read
    by the JSON parser, which takes seconds where the YAML reader takes minutes for an
    export of a large cluster; a file that is not valid JSON is read as YAML.
    """
    text = textfile.read_text(path, f"the {what}")
    if text.lstrip()[:1] in ("{", "["):
        try:
            return [orjson.loads(text)]
        except orjson.JSONDecodeError:
            pass  # YAML's flow style also starts so: the YAML reader says what is wrong
    documents = [doc for doc in textfile.parse_yaml_all(text, str(path)) if doc is not None]
    try:
        plain: list[Any] = _plain(documents)
    except orjson.JSONEncodeError as exc:
        raise InputError(f"{path}: the {what} holds a value JSON cannot hold: {exc}") from None
    return plain


def yaml_body(raw: bytes) -> Any:
    """One YAML document (a request body) as JSON values; ValueError says why it is not one."""
    try:
        return _plain(yaml.load(raw, Loader=_LOADER))
    except yaml.YAMLError as exc:
        raise ValueError(f"yaml parse error: {_one_line(str(exc))}") from None
    except RecursionError:
        raise ValueError("yaml parse error: nested too deeply") from None
    except orjson.JSONEncodeError as exc:
        raise ValueError(f"a value JSON cannot hold: {exc}") from None
