"""``asched bench run --profile``'s summaries and where py-spy is found."""

from __future__ import annotations

import cProfile
import stat
import sys
from pathlib import Path

import pytest

from asched.tools.bench import profiles, schedulers


def _busy() -> int:
    return sum(i * i for i in range(20_000))


def test_a_cprofile_file_is_read_as_one_whatever_its_name(tmp_path: Path) -> None:
    # --profile-out chooses the name: "prof.out" is no ".prof", yet it is cProfile's
    out = tmp_path / "prof.out"
    profiler = cProfile.Profile()
    profiler.runcall(_busy)
    profiler.dump_stats(str(out))
    text = profiles.summary(out, kind="cprofile")
    assert text.startswith("cProfile: ")
    assert "_busy" in text


def test_a_py_spy_file_is_read_as_collapsed_stacks(tmp_path: Path) -> None:
    out = tmp_path / "spy.txt"
    # two samples in main;cycle, one in main;bind: main is in all 3, cycle in 2 of 3
    out.write_text("main (a.py:1);cycle (a.py:2) 2\nmain (a.py:1);bind (a.py:3) 1\n")
    text = profiles.summary(out, kind="py-spy")
    assert text.startswith("py-spy: 3 samples")
    assert " 66.7%" in text.split("by inclusive share:")[1]


def test_py_spy_is_found_beside_this_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    assert schedulers.py_spy() is None  # not on PATH, none beside
    spy = bin_dir / "py-spy"
    spy.write_text("#!/bin/sh\n")
    spy.chmod(spy.stat().st_mode | stat.S_IXUSR)
    assert schedulers.py_spy() == str(spy)
