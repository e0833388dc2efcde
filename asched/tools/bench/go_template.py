"""The subset of Go's ``text/template`` that scheduler_perf's templates use, rendered as Go does.

scheduler_perf renders every object file it creates or updates (``createPods`` pod
templates, ``createNodes`` node templates, ``createAny``/``updateAny`` templates) with
``text/template`` before the YAML is parsed, once per object: ``.Index`` is the object's
index in ``[0, Count)``, ``.Count`` the op's count, and every other ``.name`` comes from the
op's ``templateParams`` (upstream's ``getSpecFromTextTemplateFile``). This module renders
the part of that language upstream's templates use:

* text, and actions ``{{ EXPR }}`` printing a value (ints in decimal; float64 as Go's
  ``%v`` prints them: ``1000``, ``1.5``, ``1e+06``; a missing key prints ``<no value>``);
* ``{{if EXPR}}...{{else if EXPR}}...{{else}}...{{end}}`` with Go's truthiness (false, 0,
  0.0, "", nil, an empty list or map are false);
* expressions: a field ``.Name`` of the data (a missing key is nil), an integer, float or
  string literal, ``(EXPR)``, or a call ``FUNC ARG...`` of :data:`FUNCTIONS` (Go's
  builtins ``eq ne lt le gt ge and or not``; ``div`` and ``mod`` on ints, truncating as Go
  does; upstream's ``AddInt SubtractInt MultiplyInt DivideInt Mod`` and their ``Float``
  forms, which convert numbers and numeric strings to float64 and truncate the ``Int``
  results toward zero);
* trim markers ``{{- `` and `` -}}`` (the whitespace before or after the action is dropped)
  and comments ``{{/* ... */}}``.

Data follows Go's types: ``Index`` and ``Count`` are ints; template parameters come from
YAML through JSON, so a number is a float64 (``{{ .priority }}`` of 1000000 prints
``1e+06``, which is why upstream's templates write ``{{ AddInt 0 .priority }}``).

Anything else (``range``, ``with``, ``define``, ``template``, ``block``, variables ``$x``,
pipelines ``|``, chained fields ``.a.b``, an unknown function) raises
:class:`TemplateUnsupported` naming the file and the expression; a template that is not
well formed or fails while executing (a division by zero, a comparison of incompatible
types) raises :class:`TemplateError`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from asched import textfile
from asched.errors import InputError
from asched.tools.bench.go_template_funcs import FUNCTIONS, MISSING, printed, truth

__all__ = [
    "FUNCTIONS",
    "MISSING",
    "Template",
    "TemplateError",
    "TemplateUnsupported",
    "go_params",
    "load",
    "parse",
    "printed",
    "truth",
]


class TemplateError(InputError):
    """A template that is not well formed, or that fails while it executes."""


class TemplateUnsupported(TemplateError):
    """A template using Go ``text/template`` beyond the subset this module renders."""


@dataclass(frozen=True, slots=True)
class _Field:
    name: str


@dataclass(frozen=True, slots=True)
class _Const:
    value: Any


@dataclass(frozen=True, slots=True)
class _Call:
    function: str
    args: tuple[_Expr, ...]


_Expr = _Field | _Const | _Call


@dataclass(frozen=True, slots=True)
class _Text:
    text: str


@dataclass(frozen=True, slots=True)
class _Print:
    expr: _Expr
    source: str


@dataclass(frozen=True, slots=True)
class _If:
    #: (condition, body) pairs: ``if`` then each ``else if``
    branches: tuple[tuple[_Expr, tuple[_Node, ...]], ...]
    otherwise: tuple[_Node, ...]
    source: str


_Node = _Text | _Print | _If


_KEYWORDS: Final = frozenset({"range", "with", "define", "template", "block", "break", "continue"})


_ACTION: Final = re.compile(r"\{\{(-[ \t\r\n])?(.*?)([ \t\r\n]-)?\}\}", re.DOTALL)
_TOKEN: Final = re.compile(
    r"""\s*(?:
        (?P<field>\.[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
      | (?P<dot>\.)
      | (?P<number>[-+]?(?:0[xX][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?))
      | (?P<string>"(?:[^"\\]|\\.)*"|`[^`]*`)
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<paren>[()])
      | (?P<other>\S)
    )""",
    re.VERBOSE,
)
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str


def _tokens(body: str, where: str) -> list[_Token]:
    out: list[_Token] = []
    position = 0
    while position < len(body):
        if body[position:].strip() == "":
            break
        match = _TOKEN.match(body, position)
        if match is None:  # pragma: no cover (the last branch matches any character)
            raise TemplateError(f"{where}: cannot read {body[position:]!r}")
        kind = match.lastgroup or "other"
        out.append(_Token(kind, match.group(kind)))
        position = match.end()
    return out


def _string(text: str, where: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    out: list[str] = []
    chars = iter(text[1:-1])
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        escaped = next(chars, "")
        if escaped not in _ESCAPES:
            raise TemplateUnsupported(f"{where}: the string escape \\{escaped} in {text}")
        out.append(_ESCAPES[escaped])
    return "".join(out)


def _constant(text: str, where: str) -> int | float:
    cleaned = text.replace("_", "")
    try:
        if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F]+", cleaned):
            return int(cleaned, 16)
        if re.fullmatch(r"[-+]?[0-9]+", cleaned):
            return int(cleaned, 10)
        return float(cleaned)
    except ValueError:
        raise TemplateError(f"{where}: bad number syntax: {text!r}") from None


class _Parser:
    """Expressions of one action's tokens."""

    def __init__(self, tokens: list[_Token], where: str, source: str) -> None:
        self.tokens = tokens
        self.at = 0
        self.where = where
        self.source = source

    def unsupported(self, what: str) -> TemplateUnsupported:
        return TemplateUnsupported(
            f"{self.where}: {what} in {self.source} (asched renders text/template's fields, "
            "literals, if/else and the functions upstream registers, no more)"
        )

    def peek(self) -> _Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def command(self, closing: str | None = None) -> _Expr:
        """A whole command: an operand, or a function and its arguments."""
        first = self.peek()
        if first is None:
            raise TemplateError(f"{self.where}: missing value in {self.source}")
        if first.kind == "word" and first.text not in ("true", "false", "nil"):
            self.take()
            name = first.text
            if name not in FUNCTIONS:
                raise self.unsupported(f"the function {name!r}")
            args: list[_Expr] = []
            while (token := self.peek()) is not None and token.text != closing:
                args.append(self.operand())
            self._check_arity(name, len(args))
            return _Call(name, tuple(args))
        value = self.operand()
        following = self.peek()
        if following is not None and following.text != closing:
            if following.text == "|":
                raise self.unsupported("a pipeline '|'")
            raise TemplateError(
                f"{self.where}: can't give argument to non-function in {self.source}"
            )
        return value

    def _check_arity(self, name: str, count: int) -> None:
        wanted = FUNCTIONS[name][1]
        if (wanted >= 0 and count != wanted) or (wanted == -1 and count < 1):
            need = f"{wanted}" if wanted >= 0 else "at least 1"
            raise TemplateError(
                f"{self.where}: wrong number of args for {name}: want {need} got {count} "
                f"in {self.source}"
            )

    def operand(self) -> _Expr:
        token = self.take()
        if token.kind == "field":
            if token.text.count(".") > 1:
                raise self.unsupported(f"the chained field {token.text}")
            return _Field(token.text[1:])
        if token.kind == "dot":
            raise self.unsupported("the dot '.' itself")
        if token.kind == "number":
            return _Const(_constant(token.text, self.where))
        if token.kind == "string":
            return _Const(_string(token.text, self.where))
        if token.kind == "word":
            if token.text in ("true", "false"):
                return _Const(token.text == "true")
            if token.text == "nil":
                raise TemplateError(f"{self.where}: nil is not a command in {self.source}")
            if token.text in FUNCTIONS:
                return _Call(token.text, ())  # a niladic call as an argument: Go checks arity
            raise self.unsupported(f"the function {token.text!r}")
        if token.text == "(":
            inner = self.command(closing=")")
            if self.peek() is None or self.take().text != ")":
                raise TemplateError(f"{self.where}: unclosed '(' in {self.source}")
            return inner
        if token.text == "$":
            raise self.unsupported("a variable '$'")
        if token.text == "|":
            raise self.unsupported("a pipeline '|'")
        raise TemplateError(f"{self.where}: unexpected {token.text!r} in {self.source}")


def _expression(body: str, where: str, shown: str) -> _Expr:
    """The expression ``body`` of the action ``shown`` (as written, for errors)."""
    tokens = _tokens(body, where)
    parser = _Parser(tokens, where, shown)
    if any(t.text in ("$", ":=", "=") for t in tokens) or any(
        t.kind == "other" and t.text.startswith("$") for t in tokens
    ):
        raise parser.unsupported("a variable '$'")
    if any(t.text == "|" for t in tokens):
        raise parser.unsupported("a pipeline '|'")
    expr = parser.command()
    if parser.peek() is not None:
        raise TemplateError(f"{where}: unexpected {parser.peek()!r} in {shown}")
    return expr


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: render it with :meth:`render`; ``source`` names it in errors."""

    source: str
    nodes: tuple[_Node, ...]
    #: the fields it reads (``Index``, ``Count``, template parameters)
    fields: frozenset[str]

    def render(self, data: Mapping[str, Any]) -> str:
        """The text with ``data`` (``Index``, ``Count``, the parameters) filled in.

        Raises
        ------
        TemplateError
            A function failed (``div`` by zero, a comparison of incompatible types).
        """
        out: list[str] = []
        _execute(self.nodes, data, out, self.source)
        return "".join(out)

    @property
    def per_index(self) -> bool:
        """True when the text may differ between objects of one op (it reads ``.Index``)."""
        return "Index" in self.fields


def _fields(expr: _Expr) -> set[str]:
    if isinstance(expr, _Field):
        return {expr.name}
    if isinstance(expr, _Call):
        return set().union(*(_fields(a) for a in expr.args)) if expr.args else set()
    return set()


def _node_fields(nodes: Sequence[_Node]) -> set[str]:
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, _Print):
            found |= _fields(node.expr)
        elif isinstance(node, _If):
            for condition, body in node.branches:
                found |= _fields(condition) | _node_fields(body)
            found |= _node_fields(node.otherwise)
    return found


def parse(text: str, source: str = "template") -> Template:
    """Parse ``text`` (named ``source`` in errors, with the line of the action).

    Raises
    ------
    TemplateUnsupported
        An action outside the subset (see the module docstring).
    TemplateError
        The template is not well formed (an unclosed action or ``if``, an ``else`` or
        ``end`` with no ``if``).
    """
    # the stack of open ifs: (branches, current body, otherwise or None, source)
    root: list[_Node] = []
    stack: list[tuple[list[tuple[_Expr, tuple[_Node, ...]]], list[_Node], _Expr, str, bool]] = []
    # each frame: branches so far, the body being filled, its condition, the if's source,
    # whether the body being filled is the else body
    body = root
    position = 0
    pending_trim = False
    matches = list(_ACTION.finditer(text))
    unclosed = text.find("{{", matches[-1].end() if matches else 0)
    if unclosed >= 0:
        raise TemplateError(f"{source}:{_line(text, unclosed)}: unclosed action")
    for match in matches:
        chunk = text[position : match.start()]
        if pending_trim:
            chunk = chunk.lstrip(" \t\r\n")
        if match.group(1):
            chunk = chunk.rstrip(" \t\r\n")
        if chunk:
            body.append(_Text(chunk))
        position = match.end()
        pending_trim = bool(match.group(3))
        action = match.group(2).strip()
        shown = match.group(0)
        where = f"{source}:{_line(text, match.start())}"
        if action.startswith("/*"):
            if not action.endswith("*/"):
                raise TemplateError(f"{where}: unclosed comment")
            continue
        keyword = action.split(None, 1)[0] if action else ""
        rest = action[len(keyword) :].strip()
        if keyword in _KEYWORDS:
            raise _Parser([], where, shown).unsupported(f"the action {keyword!r}")
        if keyword == "if":
            stack.append(([], [], _expression(rest, where, shown), shown, False))
            body = stack[-1][1]
        elif keyword == "else":
            if not stack or stack[-1][4]:
                raise TemplateError(f"{where}: unexpected {{{{else}}}}")
            branches, filled, condition, if_source, _ = stack.pop()
            branches.append((condition, tuple(filled)))
            if rest.startswith("if ") or rest == "if":
                stack.append(
                    (branches, [], _expression(rest[2:].strip(), where, shown), if_source, False)
                )
            elif rest:
                raise _Parser([], where, shown).unsupported(f"'else {rest}'")
            else:
                stack.append((branches, [], _Const(value=True), if_source, True))
            body = stack[-1][1]
        elif keyword == "end":
            if not stack:
                raise TemplateError(f"{where}: unexpected {{{{end}}}}")
            branches, filled, condition, if_source, is_else = stack.pop()
            if is_else:
                node = _If(tuple(branches), tuple(filled), if_source)
            else:
                node = _If((*branches, (condition, tuple(filled))), (), if_source)
            body = stack[-1][1] if stack else root
            body.append(node)
        elif not action:
            raise TemplateError(f"{where}: missing value for command")
        else:
            body.append(_Print(_expression(action, where, shown), shown))
    chunk = text[position:]
    if pending_trim:
        chunk = chunk.lstrip(" \t\r\n")
    if chunk:
        body.append(_Text(chunk))
    if stack:
        raise TemplateError(f"{source}: unexpected EOF: {stack[-1][3]} has no {{{{end}}}}")
    nodes = tuple(root)
    return Template(source=source, nodes=nodes, fields=frozenset(_node_fields(nodes)))


def _evaluate(expr: _Expr, data: Mapping[str, Any], where: str) -> Any:
    if isinstance(expr, _Const):
        return expr.value
    if isinstance(expr, _Field):
        return data.get(expr.name, MISSING)
    function, _ = FUNCTIONS[expr.function]
    if expr.function in ("and", "or"):
        # Go evaluates and/or lazily, left to right
        value: Any = None
        for arg in expr.args:
            value = _evaluate(arg, data, where)
            if truth(value) == (expr.function == "or"):
                return value
        return value
    args = [_evaluate(a, data, where) for a in expr.args]
    try:
        return function(*args)
    except (ValueError, TypeError) as exc:
        raise TemplateError(f"{where}: executing: {exc}") from None


def _execute(nodes: Sequence[_Node], data: Mapping[str, Any], out: list[str], where: str) -> None:
    for node in nodes:
        if isinstance(node, _Text):
            out.append(node.text)
        elif isinstance(node, _Print):
            out.append(printed(_evaluate(node.expr, data, f"{where}: {node.source}")))
        else:
            for condition, body in node.branches:
                if truth(_evaluate(condition, data, f"{where}: {node.source}")):
                    _execute(body, data, out, where)
                    break
            else:
                _execute(node.otherwise, data, out, where)


def go_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Template parameters as Go sees them after YAML -> JSON: numbers are float64."""
    out: dict[str, Any] = {}
    for key, value in (params or {}).items():
        if isinstance(value, int) and not isinstance(value, bool):
            out[str(key)] = float(value)
        else:
            out[str(key)] = value
    return out


@functools.lru_cache(maxsize=256)
def _load(path: str, mtime_ns: int) -> Template:
    del mtime_ns  # (part of the cache key only)
    return parse(textfile.read_text(path, "the template"), Path(path).name)


def load(path: str | Path) -> Template:
    """The parsed template file ``path`` (cached while the file is unchanged).

    Raises
    ------
    InputError
        The file cannot be read.
    TemplateError
        It does not parse (:class:`TemplateUnsupported`: beyond the subset).
    """
    name = str(path)
    try:
        mtime = Path(name).stat().st_mtime_ns
    except OSError:
        mtime = -1  # read_text reports it
    return _load(name, mtime)
