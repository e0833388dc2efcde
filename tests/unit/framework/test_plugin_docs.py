"""docs/plugins.md works as written: its code defines every name it uses (issue 30).

The tutorial's plugin module is the price-score example's, character for character, so
the tutorial can no longer name a ``PriceArgs`` or ``read_args`` it never defines; run as
written, it scores as the tutorial says. The annotation Filter of docs/plugins.md's tutorial runs as
written too, and the Status constructors and ArgsSection readers the reference tables
list are the ones asched has.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from asched import plugin as ap
from asched.plugin import testing

REPO = Path(__file__).resolve().parents[3]
DOC = (REPO / "docs" / "plugins.md").read_text()
PRICE_MODULE = REPO / "examples" / "price-score" / "src" / "asched_price_score" / "plugin.py"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, flags=re.DOTALL)


def _block(containing: str) -> str:
    found = [block for block in BLOCKS if containing in block]
    assert len(found) == 1, f"{len(found)} python blocks of docs/plugins.md hold {containing!r}"
    return found[0]


def _run(code: str) -> dict[str, Any]:
    """``code`` run as a module of its own (dataclasses look their module up)."""
    module = types.ModuleType("plugins_md_tutorial")
    sys.modules[module.__name__] = module
    try:
        exec(compile(code, "docs/plugins.md", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def _written(method: Any) -> str:
    """A method's parameters as the docs write them: ``(key, *, default=None)``."""
    written: list[str] = []
    for parameter in list(inspect.signature(method).parameters.values()):
        if parameter.name in ("self", "cls"):
            continue
        star = "*" if parameter.kind is parameter.VAR_POSITIONAL else ""
        if parameter.kind is parameter.KEYWORD_ONLY and not any(w[0] == "*" for w in written):
            written.append("*")
        default = "" if parameter.default is parameter.empty else f"={parameter.default!r}"
        written.append(f"{star}{parameter.name}{default}".replace("'", '"'))
    return f"({', '.join(written)})"


def test_the_tutorial_module_is_the_example_module() -> None:
    assert _block("class PreferCheaperNodes") == PRICE_MODULE.read_text()


def test_the_tutorial_module_runs_as_written() -> None:
    tutorial = _run(_block("class PreferCheaperNodes"))
    cluster = testing.cluster(
        testing.node("a", labels={"example.com/price-per-hour": "0.10"}),
        testing.node("b", labels={"example.com/price-per-hour": "0.30"}),
        testing.node("c", labels={"example.com/price-per-hour": "0.50"}),
    )
    result = testing.evaluate(tutorial["PLUGIN"], testing.pod("web"), cluster)
    # (0.50 - p) * 100 // 0.40 -> 100, 50, 0, as the test-kit section says
    assert {n: v.scores["PreferCheaperNodes"] for n, v in result.nodes.items()} == {
        "a": 100,
        "b": 50,
        "c": 0,
    }


@pytest.mark.parametrize(
    ("annotations", "rejected"),
    [
        pytest.param({}, {"down": "node(s) are in maintenance"}, id="kept off"),
        pytest.param({"example.com/ignore-maintenance": "true"}, {}, id="ignores it"),
    ],
)
def test_the_annotation_filter_runs_as_written(
    annotations: dict[str, str], rejected: dict[str, str]
) -> None:
    snippet = _run("import numpy as np\nfrom asched import plugin as ap\n" + _block("Maintenance"))
    cluster = testing.cluster(
        testing.node("down", annotations={"example.com/maintenance": "true"}),
        testing.node("up", annotations={"example.com/maintenance": "false"}),
    )
    pod = testing.pod("web", annotations=annotations)
    result = testing.evaluate(snippet["PLUGIN"], pod, cluster)
    assert {n: "; ".join(v.reasons) for n, v in result.nodes.items() if not v.feasible} == rejected


def _table_rows(heading: str) -> list[str]:
    """The first cell of each row of the first table after ``heading``."""
    section = DOC[DOC.index(heading) :]
    table = re.search(r"\n(\|.*\|\n)+", section)
    assert table is not None
    cells = [line.split("|")[1].strip() for line in table.group(0).strip().splitlines()[2:]]
    return [cell.strip("`") for cell in cells]


def test_every_status_constructor_is_listed_with_its_signature() -> None:
    listed = {row.split("(")[0]: row for row in _table_rows("### Statuses")}
    constructors = {
        f"Status.{name}": getattr(ap.Status, name)
        for name, value in vars(ap.Status).items()
        if isinstance(value, classmethod) and not name.startswith("_")
    }
    assert sorted(listed) == sorted(constructors)
    for name, method in constructors.items():
        assert listed[name] == f"{name}{_written(method)}", name


def test_every_args_reader_is_listed_with_its_signature() -> None:
    listed = {row.split("(")[0]: row for row in _table_rows("### Args")}
    public = {
        name: value
        for name, value in vars(ap.ArgsSection).items()
        if callable(value) and not name.startswith("_")
    }
    assert sorted(listed) == sorted(public)
    for name, method in public.items():
        assert listed[name] == f"{name}{_written(method)}", name
