"""A scheduler-only install (no extras) runs the scheduler and says what to install for the rest.

Each case runs ``python -m asched`` in a subprocess whose import system refuses the extras'
libraries (matplotlib; cryptography is core since ``asched run`` serves TLS) as if they were
not installed: a fresh venv per test run would be slow, and this checks the same thing, that
nothing on the way to a core command imports them and that the commands needing them name
their extra in one line.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from asched import cli

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"

#: Before running asched, make the extras' top-level packages unimportable.
ABSENT = ("matplotlib",)
PREAMBLE = f"""
import runpy, sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {ABSENT!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
"""
RUN_ASCHED = (
    "sys.argv[0] = 'asched'; runpy.run_module('asched', run_name='__main__', alter_sys=True)"
)


def without_extras(*args: str, code: str = RUN_ASCHED) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PREAMBLE + code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )


@pytest.mark.parametrize("module", ABSENT)
def test_the_extras_really_are_absent(module: str) -> None:
    result = without_extras(code=f"import {module}")
    assert result.returncode == 1
    assert f"ModuleNotFoundError: No module named '{module}'" in result.stderr


def test_help_lists_every_command() -> None:
    result = without_extras("--help")
    assert result.returncode == 0, result.stderr
    commands = result.stdout.split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^    (\S+)", commands, re.MULTILINE)  # wrapped help is indented more
    assert listed == list(cli.COMMANDS)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("run", "--help"), id="run --help"),
        pytest.param(("explain", "--help"), id="explain --help"),
        pytest.param(("sim", "--help"), id="sim --help"),
        pytest.param(("kube-apiserver", "--help"), id="kube-apiserver --help"),
    ],
)
def test_core_commands_parse(args: tuple[str, ...]) -> None:
    result = without_extras(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: asched ")


EXPLAIN = ("explain", "--snapshot", str(DATA / "cluster-snapshot.yaml"))


def test_explain_works() -> None:
    result = without_extras(*EXPLAIN, "--pod", str(DATA / "pod-frontend.yaml"), "-o", "json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["pod"] == "shop/frontend-extra"
    assert any(node["feasible"] for node in answer["nodes"].values())


def test_explain_table_works() -> None:
    result = without_extras(*EXPLAIN, "--pod", str(DATA / "pod-frontend.yaml"))
    assert result.returncode == 0, result.stderr
    assert "cp-1" in result.stdout


def test_plain_http_sim_serves_and_stops() -> None:
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            PREAMBLE + RUN_ASCHED,
            "sim",
            "--nodes",
            "3",
            "--port",
            "0",
            "--plain-http",
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    ) as process:
        try:
            assert process.stderr is not None
            line = process.stderr.readline()  # blocks until it listens (or exits)
            assert line.startswith("asched sim: serving on http://"), line + process.stderr.read()
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0
        finally:
            if process.poll() is None:
                process.kill()


BENCH = "needs the 'bench' extra: pip install 'asched[bench]'\n"


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        pytest.param(("bench", "run", "tiny"), "asched bench: " + BENCH, id="bench run"),
        pytest.param(
            ("bench", "run", "scheduling-basic-500n", "--plot", "x.png"),
            "asched bench: " + BENCH,
            id="bench run with options",
        ),
        pytest.param(("bench", "--help"), "asched bench: " + BENCH, id="bench --help"),
        pytest.param(("bench",), "asched bench: " + BENCH, id="bench alone"),
        pytest.param(("tune", "scheduling-basic-500n"), "asched tune: " + BENCH, id="tune"),
    ],
)
def test_a_command_needing_an_extra_names_it_in_one_line(
    args: tuple[str, ...], stderr: str
) -> None:
    result = without_extras(*args)
    assert (result.returncode, result.stderr) == (2, stderr)
    assert result.stdout == ""
