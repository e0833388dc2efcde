"""Optional features and the pip extras that install their libraries.

The scheduler (``asched run``, ``asched explain``) and the simulator need only the core
dependencies of pyproject.toml; ``cryptography`` is one of them since ``asched run`` serves
its metrics port over TLS with a certificate it makes (it was the ``sim`` extra, which stays,
empty, so ``pip install 'asched[sim]'`` keeps working). The benchmarks and the tuner need the
``bench`` extra (``matplotlib`` for the plots). Its libraries are imported only inside the
modules of their feature, and a feature whose extra is missing says what to install
(:class:`MissingExtra`) instead of failing on an import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Final

from asched.errors import InputError

#: extra -> the top-level modules it provides (keep in step with pyproject.toml).
EXTRAS: Final[Mapping[str, tuple[str, ...]]] = {
    "sim": (),
    "bench": ("matplotlib",),
}


class MissingExtra(InputError):
    """A feature was used whose pip extra is not installed; the message says what to run."""

    def __init__(self, extra: str, what: str = "") -> None:
        self.extra = extra
        self.what = what
        prefix = f"{what} " if what else ""
        super().__init__(f"{prefix}needs the '{extra}' extra: pip install 'asched[{extra}]'")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package that is missing, or an import hook saying no
        return False


def missing(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` that cannot be imported (empty when it is installed)."""
    return tuple(module for module in EXTRAS[extra] if not _importable(module))


def require(extra: str, what: str = "") -> None:
    """Raise :class:`MissingExtra` unless every module of ``extra`` is importable."""
    if missing(extra):
        raise MissingExtra(extra, what)
