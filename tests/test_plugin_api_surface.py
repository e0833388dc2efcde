"""The plugin API (``asched.plugin``) is pinned: every exported name, and the signature of
every function, method and field it promises, must equal ``tests/data/plugin-api.txt``.

A change there is a decision about the plugin API: an addition is a minor version, a
removal or a changed signature a major one (``asched.plugin.API_VERSION``). Regenerate
the file with ``python -m tests.test_plugin_api_surface`` after deciding, and bump the
version in the same commit.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import sys
from pathlib import Path

import asched.errors
import asched.plugin

PINNED = Path(__file__).parent / "data" / "plugin-api.txt"


def _members(obj: type) -> list[str]:
    lines = []
    if dataclasses.is_dataclass(obj):
        lines += [f"  field {f.name}: {f.type}" for f in dataclasses.fields(obj)]
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        return [f"  member {m.name} = {m.value!r}" for m in obj]
    for name, value in sorted(vars(obj).items()):
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            lines.append(f"  property {name}{inspect.signature(value.fget)}")
        elif isinstance(value, classmethod | staticmethod):
            kind = type(value).__name__
            lines.append(f"  {kind} {name}{inspect.signature(value.__func__)}")
        elif callable(value):
            lines.append(f"  def {name}{inspect.signature(value)}")
    for name, annotation in sorted(getattr(obj, "__annotations__", {}).items()):
        if not dataclasses.is_dataclass(obj) and not name.startswith("_"):
            lines.append(f"  attribute {name}: {annotation}")
    return lines


def describe() -> str:
    lines = []
    for name in sorted(asched.plugin.__all__):
        obj = getattr(asched.plugin, name)
        if isinstance(obj, type):
            lines.append(f"class {name}")
            lines += _members(obj)
        elif inspect.isfunction(obj):
            lines.append(f"def {name}{inspect.signature(obj)}")
        elif isinstance(obj, str | int):
            lines.append(f"{name} = {obj!r}")
        else:  # a type alias (its repr depends on the numpy version)
            lines.append(f"alias {name}")
    return "\n".join(lines) + "\n"


def test_the_plugin_api_is_pinned() -> None:
    assert describe() == PINNED.read_text(), (
        "asched.plugin changed: if that is intended, regenerate tests/data/plugin-api.txt "
        "(python -m tests.test_plugin_api_surface) and bump API_VERSION"
    )


def test_every_exported_name_exists() -> None:
    assert len(set(asched.plugin.__all__)) == len(asched.plugin.__all__)
    for name in asched.plugin.__all__:
        assert hasattr(asched.plugin, name), name


def test_the_errors_a_plugin_author_meets_are_exported() -> None:
    """The test kit raises ConfigError (bad args) and PluginContractError (a wrong answer):
    a plugin's tests catch them from ``asched.plugin``, the one import they may use."""
    assert asched.plugin.ConfigError is asched.errors.ConfigError
    assert asched.plugin.PluginContractError is asched.errors.PluginContractError
    assert {"ConfigError", "PluginContractError"} <= set(asched.plugin.__all__)


if __name__ == "__main__":
    PINNED.write_text(describe())
    sys.stdout.write(f"wrote {PINNED}\n")
