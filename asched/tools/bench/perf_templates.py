"""The template files of a scheduler_perf workload, read or rendered as upstream does.

upstream renders pod templates of ``createPods``, node templates of ``createNodes`` and
the templates of ``createAny`` and ``updateAny`` with Go ``text/template`` once per object
(``.Index`` of ``.Count``, plus the op's ``templateParams``;
:mod:`asched.tools.bench.go_template`), and reads namespace, PV, claim and churn templates
as plain YAML. :func:`rendered_runs` and :func:`render_each` do the first (a template that
never reads ``.Index`` is rendered once), :func:`plain_template` the second (an action
there is refused: upstream would not render it).

:class:`Unsupported` (re-exported by :mod:`asched.tools.bench.perf_translate`) is raised for
a template beyond the rendered subset; a template that is missing, not an object or of the
wrong kind is an :class:`~asched.errors.InputError` naming the file.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from asched import textfile
from asched.errors import InputError
from asched.tools.bench import go_template

__all__ = [
    "OpRef",
    "TemplatedOp",
    "Unsupported",
    "op_name",
    "plain_template",
    "read_plain",
    "render_each",
    "rendered_runs",
]


class Unsupported(Exception):
    """asched cannot run this workload as upstream means it; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class OpRef(Protocol):
    """What names an op in a message: its index in ``workloadTemplate`` and its opcode (a
    parsed :class:`~asched.tools.bench.perf_config.Op` or a typed one of
    :mod:`asched.tools.bench.perf_ops`)."""

    @property
    def index(self) -> int: ...

    @property
    def opcode(self) -> str: ...


class TemplatedOp(OpRef, Protocol):
    """An op whose template is rendered: its ``templateParams`` are the template's data."""

    @property
    def template_params(self) -> Mapping[str, Any] | None: ...


def op_name(op: OpRef) -> str:
    return f"op {op.index} ({op.opcode})"


def read_plain(path: Any, op: OpRef) -> dict[str, Any]:
    """The object of a template file upstream reads as plain YAML, without text/template
    (namespace, PV, claim and churn templates)."""
    name = str(path)
    text = textfile.read_text(name, f"the template of {op_name(op)}")
    if "{{" in text:
        raise Unsupported(
            f"{op_name(op)}: {Path(name).name} has Go text/template expressions, which "
            "upstream does not render in this kind of template"
        )
    return _mapping(textfile.parse_yaml(text, name), name)


def _mapping(raw: Any, name: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise InputError(f"{name}: must be a Kubernetes object, got {type(raw).__name__}")
    return dict(raw)


def _parsed(path: Any, op: OpRef) -> go_template.Template:
    try:
        return go_template.load(str(path))
    except go_template.TemplateUnsupported as exc:
        raise Unsupported(f"{op_name(op)}: {exc}") from None


def _render(
    template: go_template.Template, path: Any, op: TemplatedOp, *, index: int, count: int
) -> dict[str, Any]:
    """One object of op ``op``'s template, as upstream renders it for object ``index`` of
    ``count`` (``.Index``, ``.Count`` and the op's ``templateParams``)."""
    data = {**go_template.go_params(op.template_params), "Index": index, "Count": count}
    text = template.render(data)
    return _mapping(textfile.parse_yaml(text, str(path)), str(path))


def render_each(path: Any, op: TemplatedOp, count: int) -> list[dict[str, Any]]:
    """Every object of the op: ``count`` renderings of its template."""
    template = _parsed(path, op)
    if not template.per_index:
        first = _render(template, path, op, index=0, count=count)
        return [copy.deepcopy(first) for _ in range(count)]
    return [_render(template, path, op, index=i, count=count) for i in range(count)]


def rendered_runs(
    path: Any, kind: str, op: TemplatedOp, count: int
) -> list[tuple[int, dict[str, Any]]]:
    """The op's ``count`` objects of ``kind`` as (run length, object): consecutive objects
    that render alike (their ``generateName`` aside: asched names them) share one run; a
    template that never reads ``.Index`` is one run."""
    template = _parsed(path, op)
    if not template.per_index:
        objects = [_render(template, path, op, index=0, count=count)]
        runs = [(count, objects[0])]
    else:
        runs = []
        for index in range(count):
            obj = _render(template, path, op, index=index, count=count)
            if runs and _alike(runs[-1][1], obj):
                runs[-1] = (runs[-1][0] + 1, runs[-1][1])
            else:
                runs.append((1, obj))
    for run, obj in runs:
        if obj.get("kind") != kind:
            raise InputError(
                f"{path}: {op_name(op)} needs a {kind}, the file has {obj.get('kind')!r}"
            )
        name = (obj.get("metadata") or {}).get("name")
        if name and run > 1 and kind == "Pod":
            raise InputError(
                f"{path}: {op_name(op)}: {run} pods from a template with the fixed name {name}"
            )
    return runs


def _alike(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    def key(obj: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "generateName"}
        return {**obj, "metadata": meta}

    return key(a) == key(b)


def plain_template(path: Any, kind: str, op: OpRef) -> dict[str, Any] | None:
    """The object of a plain template file (None: no path given), checked to be a ``kind``."""
    if path is None:
        return None
    raw = read_plain(path, op)
    if raw.get("kind") != kind:
        raise InputError(f"{path}: {op_name(op)} needs a {kind}, the file has {raw.get('kind')!r}")
    return raw
