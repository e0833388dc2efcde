"""Workload files, in either format: the shipped ones found by name, any one loaded.

Upstream's scheduler_perf format is the native one: a file holding a YAML list of test
cases (``performance-config.yaml``) is read by :mod:`asched.tools.bench.perf_config` and
its one workload (or the one ``--workload TestCase/Workload`` names) translated by
:mod:`asched.tools.bench.perf_translate`. Most shipped workloads (in
``asched/tools/bench/workloads/``) are such files. A file holding a mapping is the
home-grown format (:mod:`asched.tools.bench.workload_format`).

Loading a file is the one thing that needs both readers; it lives above them so that
neither imports the other, nor the workload types either of them builds on.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from asched import textfile
from asched.errors import InputError
from asched.tools.bench import perf_config, perf_translate
from asched.tools.bench.workload import Workload
from asched.tools.bench.workload_format import FORMAT, load_workload


def load_workload_file(path: str | Path, *, perf_workload: str | None = None) -> Workload:
    """Read and validate a workload file, in either format (YAML or JSON).

    A list of test cases is upstream's scheduler_perf format: its one workload is run,
    or, when it has several, the one ``perf_workload`` (``TestCase/Workload``) names. A
    mapping is the home-grown ``asched.bench/v1`` format (:func:`load_workload`).
    ``source`` of the result is ``path`` either way.

    Raises
    ------
    InputError
        The file cannot be read or parsed; an upstream config with several workloads and
        no ``perf_workload``, or without that workload; an upstream workload asched
        cannot run (the message gives the reason); ``perf_workload`` for a home-grown
        file.
    WorkloadError
        A home-grown document with field errors.
    """
    name = str(path)
    data = textfile.parse_yaml(textfile.read_text(name, "the workload"), name)
    if isinstance(data, list):
        return _load_upstream(data, Path(path), perf_workload)
    if perf_workload is not None:
        raise InputError(
            f"{name}: --workload {perf_workload}: only an upstream scheduler_perf config "
            f"(a list of test cases) has workloads to choose from; this file is one {FORMAT} "
            "workload"
        )
    return load_workload(data, source=name)


def _load_upstream(data: list[Any], path: Path, perf_workload: str | None) -> Workload:
    """One workload of an upstream config document, translated (its folder resolves the
    template paths, as upstream's do)."""
    name = str(path)
    config = perf_config.load_config(data, source=name, folder=path.resolve().parent)
    if perf_workload is not None:
        case, chosen = config.find(perf_workload)
    else:
        every = config.all()
        if len(every) != 1:
            raise InputError(
                f"{name}: a scheduler_perf config with {len(every)} workloads; name one "
                "workload with --workload 'TestCase/Workload' (or run them all with "
                "`asched bench suite`)"
            )
        [(case, chosen)] = every
    try:
        translated = perf_translate.translate(case, chosen)
    except perf_translate.Unsupported as exc:
        full = perf_config.full_name(case, chosen)
        raise InputError(f"{name}: {full}: unsupported: {exc.reason}") from exc
    return replace(translated, source=name)


#: The workload files shipped inside the package (``bench/workloads`` links here).
SHIPPED: Final = Path(__file__).resolve().parent / "workloads"


def shipped_workloads(directory: Path = SHIPPED) -> list[str]:
    """The short names (file stems) of the workloads in ``directory``, sorted."""
    return sorted(p.stem for p in directory.glob("*.yaml")) if directory.is_dir() else []


def resolve(name_or_path: str, directory: Path | None = None) -> Path:
    """A workload argument as a file: a path, else a short name of a shipped workload.

    ``scheduling-basic-500n`` finds ``scheduling-basic-500n.yaml`` among the workloads
    shipped with the package, whatever the current directory. ``directory`` replaces the
    shipped ones (tests).

    Raises
    ------
    InputError
        Neither a file nor a shipped name; the message lists the shipped names.
    """
    candidate = Path(name_or_path)
    if candidate.is_file():
        return candidate
    folder = SHIPPED if directory is None else directory
    for option in (folder / name_or_path, folder / f"{name_or_path}.yaml"):
        if option.is_file():
            return option
    names = ", ".join(shipped_workloads(folder)) or f"none in {folder}"
    raise InputError(f"{name_or_path}: no such workload file or name (workloads: {names})")
