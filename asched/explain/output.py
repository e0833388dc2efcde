"""The ``-o`` formats of ``asched explain`` (and ``kubectl asched explain``).

``table`` and ``wide`` are :func:`asched.explain.render.render`'s tables (``wide``: every
row and every plugin's column). ``json`` is the :meth:`Evaluation.to_json
<asched.engine.result.Evaluation.to_json>` contract plus a ``configuration`` field
(:meth:`~asched.explain.config_source.ConfigChoice.to_json`); ``yaml`` is the same
document as YAML, as kubectl's ``-o yaml`` mirrors its ``-o json``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson
import yaml

from asched import terminal
from asched.engine.result import Evaluation
from asched.errors import InputError
from asched.explain.config_source import ConfigChoice
from asched.explain.render import render

FORMATS: Final = ("table", "wide", "json", "yaml")


@dataclass(frozen=True, slots=True)
class Bound:
    """The pod explained is bound already: where, and what put it there.

    The evaluation is then of the pod as if it were pending (no ``spec.nodeName``, not
    counted on its node): where asched would place it now.
    """

    node: str
    #: ``the scheduler 'asched'`` (its PodScheduled condition is True) or a phrase saying
    #: that no scheduler placed it (``spec.nodeName`` set at creation)
    by: str

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "by": self.by}

    def notes(self) -> tuple[str, ...]:
        return (
            f"the pod is bound to {self.node} ({self.by})",
            "below is where asched would place it now, evaluated as if it were pending "
            "(not counted on its node)",
        )


def document(
    evaluation: Evaluation, choice: ConfigChoice, bound: Bound | None = None
) -> dict[str, Any]:
    """The ``-o json`` / ``-o yaml`` document (``bound``: where a bound pod is now)."""
    out = evaluation.to_json()
    out["configuration"] = choice.to_json()
    out["bound"] = None if bound is None else bound.to_json()
    return out


def emit(
    evaluation: Evaluation,
    choice: ConfigChoice,
    fmt: str,
    *,
    limit: int,
    bound: Bound | None = None,
) -> None:
    """Write the answer to stdout in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "json":
        text = orjson.dumps(
            document(evaluation, choice, bound), option=orjson.OPT_INDENT_2
        ).decode()
        sys.stdout.write(text + "\n")
    elif fmt == "yaml":
        sys.stdout.write(yaml.safe_dump(document(evaluation, choice, bound), sort_keys=False))
    else:
        render(
            evaluation,
            terminal.console(),
            limit=limit,
            wide=fmt == "wide",
            configuration=choice.describe(),
            notes=bound.notes() if bound is not None else (),
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
