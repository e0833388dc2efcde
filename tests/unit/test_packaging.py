"""pyproject.toml's core dependencies are exactly what the scheduler imports.

The deployed image installs the core only (``pip install .``), so a library used only by
the benchmarks, their plots or the simulator's HTTPS must stay in an extra, imported only by
the modules of its feature. A core library with one concern lives in one module too
(:data:`ONE_HOME`). This reads pyproject.toml and every module's imports (ast, no
importing) and holds both to the lists below.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from asched import cli, extras

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "asched"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

#: What `asched run` and `asched explain` (and the sim) import: the core.
CORE = {
    "aiohttp",
    "cryptography",
    "kubernetes-asyncio",
    "msgspec",
    "numpy",
    "orjson",
    "prometheus-client",
    "pyyaml",
    "rich",
    "uvloop",
}
#: Imported directly but installed by a core dependency: module -> the dependency.
VIA_CORE = {"multidict": "aiohttp"}
#: The only modules that may import an extra's library (top-level module -> files).
CONFINED = {
    "matplotlib": {"tools/bench/plot.py"},
}
#: Core libraries imported by one module only (top-level module -> files): certificates are
#: made in one place, for `asched run`'s TLS and the simulator's.
ONE_HOME = {
    "cryptography": {"serving/certificates.py"},
}


def name(requirement: str) -> str:
    """The normalized project name of a requirement string (``PyYAML>=6.0`` -> ``pyyaml``)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^]]*\])?", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def third_party_imports(path: Path) -> Iterator[str]:
    """Top-level names of the non-stdlib, non-asched modules ``path`` imports."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            tops = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops = [node.module.split(".")[0]]
        else:
            continue
        for top in tops:
            if top != "asched" and top not in sys.stdlib_module_names:
                yield top


def imports_by_file() -> dict[str, set[str]]:
    return {
        str(path.relative_to(PACKAGE)): set(third_party_imports(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def distribution(module: str) -> str:
    (dist, *_) = importlib.metadata.packages_distributions()[module]
    return name(dist)


def test_core_dependencies_are_the_pinned_list() -> None:
    assert {name(r) for r in PYPROJECT["project"]["dependencies"]} == CORE


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        pytest.param("sim", set(), id="sim (empty: cryptography is core)"),
        pytest.param("bench", {"asched[sim]", "matplotlib"}, id="bench"),
    ],
)
def test_extras_hold_the_feature_libraries(extra: str, expected: set[str]) -> None:
    assert {name(r) for r in PYPROJECT["project"]["optional-dependencies"][extra]} == expected


@pytest.mark.parametrize("extra", sorted(extras.EXTRAS))
def test_extras_module_names_what_pyproject_installs(extra: str) -> None:
    # asched.extras checks for these modules; pyproject must install them (asched[sim]: its own).
    declared: set[str] = set()
    pending = [extra]
    while pending:
        for requirement in PYPROJECT["project"]["optional-dependencies"][pending.pop()]:
            if (found := re.fullmatch(r"asched\[(\w+)\]", requirement)) is not None:
                pending.append(found.group(1))
            else:
                declared.add(name(requirement))
    assert {name(module) for module in extras.EXTRAS[extra]} == declared


def test_outside_the_feature_modules_only_core_libraries_are_imported() -> None:
    confined_files = set().union(*CONFINED.values())
    imported = set().union(
        *(tops for file, tops in imports_by_file().items() if file not in confined_files)
    )
    assert not imported & set(CONFINED)
    assert {
        distribution(module) for module in imported if module not in VIA_CORE
    } == CORE  # every core dependency is used, and nothing else


@pytest.mark.parametrize(("module", "via"), sorted(VIA_CORE.items()))
def test_indirect_imports_come_with_a_core_dependency(module: str, via: str) -> None:
    requires = importlib.metadata.requires(via) or []
    assert distribution(module) in {name(r) for r in requires if "extra ==" not in r}


@pytest.mark.parametrize(("module", "files"), sorted({**CONFINED, **ONE_HOME}.items()))
def test_extra_libraries_are_imported_only_by_their_feature_module(
    module: str, files: set[str]
) -> None:
    assert {file for file, tops in imports_by_file().items() if module in tops} == files


def test_readme_first_command_installs_what_the_main_job_needs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = readme.split("```sh\n", 1)[1].split("\n```", 1)[0]
    install, job = first.split(" && ", 1)
    assert install == "pip install '.[bench]'"
    assert job.startswith("asched bench run ")
    assert cli.NEEDS_EXTRA["bench"] == "bench"  # what `asched bench` asks for when missing
