"""``--help`` is written for users: a one-line description and a useful epilog, never a
module docstring; ``bench run --help`` lists the workloads that really ship, and a short
workload name works from any directory of an installed copy."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import asched as package

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.stem for p in (REPO / "asched" / "tools" / "bench" / "workloads").glob("*.yaml"))


def asched(*args: str, cwd: Path | None = None, pythonpath: Path | None = None):
    env = None
    if pythonpath is not None:
        env = {"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "asched", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env=env,
    )


def first_line_of_doc(module: str) -> str:
    doc = importlib.import_module(module).__doc__
    assert doc
    return doc.strip().splitlines()[0]


@pytest.mark.parametrize(
    ("command", "module", "description"),
    [
        pytest.param((), "asched.cli", "asched: an asyncio Kubernetes scheduler", id="asched"),
        pytest.param(("run",), "asched.scheduler.command", "asched run: schedule pods", id="run"),
        pytest.param(
            ("explain",), "asched.explain.command", "asched explain: explain where", id="explain"
        ),
        pytest.param(("bench",), "asched.tools.bench.command", "asched bench: run", id="bench"),
        pytest.param(
            ("bench", "run"),
            "asched.tools.bench.run_command",
            "asched bench run: build a workload's cluster",
            id="bench run",
        ),
        pytest.param(("sim",), "asched.tools.sim.command", "asched sim: serve", id="sim"),
        pytest.param(("tune",), "asched.tools.bench.tune_command", "asched tune: tune", id="tune"),
        pytest.param(
            ("kube-apiserver",),
            "asched.tools.backends.command",
            "asched kube-apiserver: build, start",
            id="kube-apiserver",
        ),
    ],
)
def test_help_is_a_description_not_a_docstring(
    command: tuple[str, ...], module: str, description: str
) -> None:
    result = asched(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert description in result.stdout
    assert first_line_of_doc(module) not in result.stdout
    assert "``" not in result.stdout  # reStructuredText belongs to docstrings


def test_bench_run_help_has_no_developer_notes() -> None:
    result = asched("bench", "run", "--help")
    assert "This module only parses arguments" not in result.stdout


def test_bench_run_help_lists_exactly_the_shipped_workloads() -> None:
    result = asched("bench", "run", "--help")
    section = result.stdout.split("shipped workloads", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"[a-z0-9][a-z0-9-]*[a-z0-9]", section.split(":", 1)[1])
    assert listed == SHIPPED
    assert "scheduling-basic-500n" in listed


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A copy of the package alone, as pip installs it: no bench/ directory beside it."""
    site = tmp_path / "site-packages"
    shutil.copytree(
        Path(package.__file__).resolve().parent,
        site / "asched",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return site


def test_short_name_resolves_from_any_directory(installed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from asched.tools.bench.workload_files import load_workload_file, resolve; "
            "path = resolve('scheduling-basic-500n'); "
            "print(path); print(load_workload_file(path).n_nodes)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=elsewhere,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    path, nodes = result.stdout.split()
    assert (
        Path(path)
        == installed / "asched" / "tools" / "bench" / "workloads" / "scheduling-basic-500n.yaml"
    )
    assert nodes == "500"


def test_unknown_workload_lists_the_choices(installed: Path, tmp_path: Path) -> None:
    result = asched("bench", "run", "scheduling-basic-500", cwd=tmp_path, pythonpath=installed)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(
        "asched bench run: error: scheduling-basic-500: no such workload file or name (workloads: "
    )
    for name in SHIPPED:
        assert name in result.stderr


def test_readme_path_still_works() -> None:
    # README: asched bench run bench/workloads/scheduling-basic-500n.yaml (bench/workloads
    # links to the shipped files)
    from asched.tools.bench.workload_files import resolve

    path = REPO / "bench" / "workloads" / "scheduling-basic-500n.yaml"
    assert resolve(str(path)) == path
    assert path.resolve() == REPO / "asched" / "tools" / "bench" / "workloads" / path.name
