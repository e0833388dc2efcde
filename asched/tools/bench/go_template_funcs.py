"""The functions Go text/template templates of scheduler_perf call, and how values print.

Split from :mod:`asched.tools.bench.go_template` (the parser and executor). Each function
takes its arguments as Go would receive them (ints, float64s, strings, bools, or
:data:`MISSING` for a missing map key) and raises :class:`ValueError` with Go's message
(``error calling div: runtime error: integer divide by zero``) where Go's call fails:

* Go's builtins ``eq ne lt le gt ge`` (both operands of one basic kind: ints and floats
  do not mix; a missing key is an invalid type), ``and or not`` with :func:`truth`;
* ``div`` and ``mod`` of the current upstream (``func(a, b int) int``: int arguments
  only, truncating toward zero as Go's ``/`` and ``%`` do);
* upstream's older ``AddInt SubtractInt MultiplyInt DivideInt Mod`` and their ``Float``
  forms (``toFloat64`` of numbers and numeric strings; the ``Int`` results truncated).

:func:`printed` is fmt's ``%v``: float64 in the shortest form that round-trips, with an
exponent from 1e+06 up and below 1e-04.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

__all__ = ["FUNCTIONS", "MISSING", "printed", "truth"]


class _Missing:
    """Go's nil from a missing map key: false in ``if``, printed ``<no value>``."""

    def __repr__(self) -> str:
        return "<no value>"


MISSING: Final = _Missing()


def _number(value: Any, function: str) -> float:
    """upstream's ``toFloat64``: a number, or a string that parses as one."""
    if isinstance(value, bool) or value is MISSING:
        raise ValueError(f"error calling {function}: cannot cast {value!r} to float64")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise ValueError(f"error calling {function}: cannot cast {value!r} to float64")


def _go_int(value: Any, function: str) -> int:
    """An argument of a Go ``func(a, b int) int``: only an int is accepted."""
    if isinstance(value, bool) or not isinstance(value, int):
        got = "float64" if isinstance(value, float) else type(value).__name__
        raise ValueError(f"error calling {function}: wrong type for value; expected int; got {got}")
    return value


def _truncated_div(a: int, b: int, function: str) -> int:
    if b == 0:
        raise ValueError(f"error calling {function}: runtime error: integer divide by zero")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _div(a: Any, b: Any) -> int:
    return _truncated_div(_go_int(a, "div"), _go_int(b, "div"), "div")


def _mod(a: Any, b: Any) -> int:
    x, y = _go_int(a, "mod"), _go_int(b, "mod")
    return x - y * _truncated_div(x, y, "mod")


def _upstream_mod(a: Any, b: Any) -> int:
    x, y = int(_number(a, "Mod")), int(_number(b, "Mod"))
    return x - y * _truncated_div(x, y, "Mod")


def _add_float(*numbers: Any) -> float:
    return math.fsum(_number(n, "AddFloat") for n in numbers)


def _multiply_float(*numbers: Any) -> float:
    product = 1.0
    for n in numbers:
        product *= _number(n, "MultiplyFloat")
    return product


def _subtract_float(a: Any, b: Any) -> float:
    return _number(a, "SubtractFloat") - _number(b, "SubtractFloat")


def _divide_float(a: Any, b: Any) -> float:
    divisor = _number(b, "DivideFloat")
    if divisor == 0:
        raise ValueError("error calling DivideFloat: division by zero")
    return _number(a, "DivideFloat") / divisor


def _to_int(value: float) -> int:
    """Go's ``int(f)``: truncation toward zero."""
    return int(value)


def _basic(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "invalid"


def _compare(function: str, a: Any, b: Any) -> int:
    """-1, 0 or 1; Go's rule: both of one basic kind (ints and floats do not mix)."""
    kind_a, kind_b = _basic(a), _basic(b)
    if kind_a == "invalid" or kind_b == "invalid":
        raise ValueError(f"error calling {function}: invalid type for comparison")
    if kind_a != kind_b:
        raise ValueError(f"error calling {function}: incompatible types for comparison")
    if function not in ("eq", "ne") and kind_a == "bool":
        raise ValueError(f"error calling {function}: invalid type for comparison")
    return int(a > b) - int(a < b)


def _eq(a: Any, *others: Any) -> bool:
    if not others:
        raise ValueError("error calling eq: missing argument for comparison")
    return any(_compare("eq", a, b) == 0 for b in others)


def _ordered(function: str, test: Callable[[int], bool]) -> Callable[[Any, Any], bool]:
    def compare(a: Any, b: Any) -> bool:
        return test(_compare(function, a, b))

    return compare


def truth(value: Any) -> bool:
    """Go's ``if`` truthiness."""
    if value is MISSING or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float | str | list | tuple | dict):
        return bool(value)
    return True


def _and(*values: Any) -> Any:
    for value in values[:-1]:
        if not truth(value):
            return value
    return values[-1]


def _or(*values: Any) -> Any:
    for value in values[:-1]:
        if truth(value):
            return value
    return values[-1]


#: The functions a template may call: name -> (function, number of arguments; -1: one or
#: more, -2: two or more).
FUNCTIONS: Final[Mapping[str, tuple[Callable[..., Any], int]]] = {
    "eq": (_eq, -1),
    "ne": (_ordered("ne", lambda c: c != 0), 2),
    "lt": (_ordered("lt", lambda c: c < 0), 2),
    "le": (_ordered("le", lambda c: c <= 0), 2),
    "gt": (_ordered("gt", lambda c: c > 0), 2),
    "ge": (_ordered("ge", lambda c: c >= 0), 2),
    "not": (lambda v: not truth(v), 1),
    "and": (_and, -1),
    "or": (_or, -1),
    "div": (_div, 2),
    "mod": (_mod, 2),
    "Mod": (_upstream_mod, 2),
    "AddFloat": (_add_float, -1),
    "SubtractFloat": (_subtract_float, 2),
    "MultiplyFloat": (_multiply_float, -1),
    "DivideFloat": (_divide_float, 2),
    "AddInt": (lambda *n: _to_int(_add_float(*n)), -1),
    "SubtractInt": (lambda a, b: _to_int(_subtract_float(a, b)), 2),
    "MultiplyInt": (lambda *n: _to_int(_multiply_float(*n)), -1),
    "DivideInt": (lambda a, b: _to_int(_divide_float(a, b)), 2),
}


def _format_float(value: float) -> str:
    """Go's ``%v`` of a float64 (``strconv.FormatFloat(f, 'g', -1, 64)``): the shortest
    digits that round-trip, in exponent form (two exponent digits at least) when the
    decimal exponent is < -4 or >= 6: ``100000``, ``1e+06``, ``1.5``, ``0.0001``, ``1e-05``."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(str(d) for d in digits)
    point = len(text) + exponent  # the decimal point's position in the digits
    exp = point - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{minus}{text}{'0' * (point - len(text))}"
    return f"{minus}{text[:point]}.{text[point:]}"


def printed(value: Any) -> str:
    """``value`` as ``{{ }}`` prints it (fmt's ``%v``)."""
    if value is MISSING or value is None:
        return "<no value>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + " ".join(printed(v) for v in value) + "]"
    if isinstance(value, Mapping):
        inner = " ".join(f"{k}:{printed(v)}" for k, v in sorted(value.items()))
        return f"map[{inner}]"
    return str(value)
