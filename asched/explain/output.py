"""The ``-o`` formats of ``asched explain`` (and ``kubectl asched explain``).

``table`` and ``wide`` are :func:`asched.explain.render.render`'s tables (``wide``: every
row and every plugin's column). ``json`` is the :meth:`Evaluation.to_json
<asched.framework.result.Evaluation.to_json>` contract plus a ``configuration`` field
(:meth:`~asched.explain.config_source.ConfigChoice.to_json`); ``yaml`` is the same
document as YAML, as kubectl's ``-o yaml`` mirrors its ``-o json``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Final

import orjson
import yaml

from asched import terminal
from asched.errors import InputError
from asched.explain.config_source import ConfigChoice
from asched.explain.render import render
from asched.framework.result import Evaluation

FORMATS: Final = ("table", "wide", "json", "yaml")


def document(evaluation: Evaluation, choice: ConfigChoice) -> dict[str, Any]:
    """The ``-o json`` / ``-o yaml`` document."""
    out = evaluation.to_json()
    out["configuration"] = choice.to_json()
    return out


def emit(evaluation: Evaluation, choice: ConfigChoice, fmt: str, *, limit: int) -> None:
    """Write the answer to stdout in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "json":
        text = orjson.dumps(document(evaluation, choice), option=orjson.OPT_INDENT_2).decode()
        sys.stdout.write(text + "\n")
    elif fmt == "yaml":
        sys.stdout.write(yaml.safe_dump(document(evaluation, choice), sort_keys=False))
    else:
        render(
            evaluation,
            terminal.console(),
            limit=limit,
            wide=fmt == "wide",
            configuration=choice.describe(),
        )


def save_snapshot(path: str, snapshot: dict[str, Any]) -> None:
    """Write ``snapshot`` (a ``kind: List``) to ``path``: JSON when the name ends in
    ``.json``, else YAML. Written to a temporary file then renamed, so a reader never sees
    half a snapshot. InputError naming the file when it cannot be written."""
    target = Path(path)
    if target.suffix == ".json":
        text = orjson.dumps(snapshot, option=orjson.OPT_INDENT_2).decode() + "\n"
    else:
        text = yaml.safe_dump(snapshot, sort_keys=False)
    staging = target.with_name(f".{target.name}.tmp")
    try:
        staging.write_text(text)
        staging.replace(target)
    except OSError as exc:
        staging.unlink(missing_ok=True)
        raise InputError(f"--snapshot-out {path}: cannot write it: {exc.strerror or exc}") from None
