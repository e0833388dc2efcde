"""The house's figures (issue 29): module sizes, the hub modules' imports, one pod's call
path, and the duplicates, for the product and for the tooling.

Usage::

    PYTHONPATH=. python bench/house.py [--json OUT]

* **Lines per module**: physical lines of each ``.py`` file, median, p90 and max, apart for
  the product (what ``asched run``, ``explain`` and ``plugins`` import) and the tooling
  (:data:`TOOLING`: the simulator, the benchmarks, the backends, the scalar reference);
  modules over 500 lines; functions over 60 lines (by ``ast``: ``end_lineno - lineno + 1``).
* **Internal imports** of the cycle and the app: the distinct ``asched`` modules each
  imports (module-level and in functions, by ``ast``).
* **One plain pod's call path** from ``Scheduler.schedule_one`` to the bind job it returns:
  the real Scheduler and default profile over 50 nodes, one pod of scheduler_perf's default
  shape (after a warm-up pod of the same shape), traced with ``sys.setprofile``. The path
  is the sequence of ``asched`` modules the running frame belongs to (calls and returns,
  consecutive repeats collapsed). *modules*: how many distinct ones take part. The
  *engine's path*: the callee of every call from one engine module into another (an
  engine module calls into others and is not a plugin: one call per plugin is the
  extension points' design; leaves, values and helpers that call nothing, are left out),
  consecutive repeats collapsed; *engine modules*: how many it visits; *climbs*: how many
  times it comes back to a module it had left.
* **duplicates**: the pairs the ``duplicates`` command lists over the product's files.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "asched"
#: package folders (relative to asched/) that are tooling, not the product
TOOLING = ("tools", "sim", "benchmark", "backends", "reference")
#: the hub modules whose imports are counted (the first that exists of each)
HUBS = {
    "cycle": ("scheduler/cycle.py",),
    "app": ("scheduler/app.py",),
}


def _is_tooling(path: Path) -> bool:
    return path.relative_to(PACKAGE).parts[0] in TOOLING


def _stats(lines: list[int]) -> dict[str, Any]:
    ordered = sorted(lines)
    p90 = ordered[max(0, round(0.9 * len(ordered)) - 1)] if ordered else 0
    return {
        "modules": len(ordered),
        "lines": sum(ordered),
        "median": statistics.median(ordered) if ordered else 0,
        "p90": p90,
        "max": ordered[-1] if ordered else 0,
        "over_500": sum(1 for n in ordered if n > 500),
    }


def _long_functions(path: Path, limit: int = 60) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length})")
    return out


def sizes() -> dict[str, Any]:
    files = sorted(PACKAGE.rglob("*.py"))
    product = [p for p in files if not _is_tooling(p)]
    tooling = [p for p in files if _is_tooling(p)]

    def count(paths: list[Path]) -> dict[str, Any]:
        stats = _stats([len(p.read_text().splitlines()) for p in paths])
        stats["largest"] = [
            f"{p.relative_to(ROOT)} ({n})"
            for n, p in sorted(((len(p.read_text().splitlines()), p) for p in paths), reverse=True)[
                :5
            ]
        ]
        stats["functions_over_60"] = [f for p in paths for f in _long_functions(p)]
        return stats

    return {"product": count(product), "tooling": count(tooling)}


def _imports(path: Path) -> set[str]:
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("asched"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if base.startswith("asched"):
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    exists = (ROOT / Path(*candidate.split("."))).with_suffix(".py").exists() or (
                        ROOT / Path(*candidate.split(".")) / "__init__.py"
                    ).exists()
                    found.add(candidate if exists else base)
    found.discard(module)
    return found


def hub_imports() -> dict[str, int]:
    out = {}
    for name, candidates in HUBS.items():
        for candidate in candidates:
            path = PACKAGE / candidate
            if path.exists():
                out[name] = len(_imports(path))
                break
    return out


def call_path(nodes: int = 50) -> dict[str, Any]:
    """Trace one plain pod through the real cycle (see the module docstring)."""
    sys.path.insert(0, str(ROOT))
    from bench import house_scene

    scheduler, pod = house_scene.build(nodes)
    stack: list[str] = []  # the module of every asched frame on the stack, outermost first
    calls: list[tuple[str, str]] = []  # (caller module, callee module) of each cross-module call

    def profile(frame: Any, event: str, arg: Any) -> None:
        name = str(frame.f_globals.get("__name__", ""))
        if not name.startswith("asched."):
            return
        if event == "call":
            if stack and name != stack[-1]:
                calls.append((stack[-1], name))
            stack.append(name)
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profile)
    try:
        job = scheduler.schedule_one(pod)
    finally:
        sys.setprofile(None)
    assert job is not None, "the plain pod was not assumed"
    callers = {a for a, _ in calls}

    def engine(module: str) -> bool:  # not a plugin, and calls into other modules
        return module in callers and ".plugins." not in module and ".builtin." not in module

    # the engine's path: the callee of each cross-module call between engine modules
    path = [b for a, b in calls if engine(a) and engine(b)]
    collapsed = [m for i, m in enumerate(path) if i == 0 or path[i - 1] != m]
    seen: list[str] = [type(scheduler).__module__]  # the path starts in the cycle
    climbs = 0
    for module in collapsed:
        if module in seen:
            climbs += 1
        else:
            seen.append(module)
    return {
        "modules": len({m for pair in calls for m in pair}),
        "engine_modules": len(seen),
        "climbs": climbs,
        "path": collapsed,
    }


def duplicate_pairs() -> dict[str, Any]:
    if shutil.which("duplicates") is None:
        return {"pairs": None, "note": "the duplicates command is not installed"}
    with tempfile.TemporaryDirectory() as scratch:
        for path in PACKAGE.rglob("*.py"):
            if _is_tooling(path):
                continue
            target = Path(scratch) / path.relative_to(PACKAGE)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        out = subprocess.run(
            ["duplicates", "--repo", scratch, "--seconds", "120", "--most", "1"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    first = out.splitlines()[0] if out else ""
    words = first.split()
    pairs = int(words[0]) if words and words[0].isdigit() else 0
    return {"pairs": pairs, "summary": first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-trace", action="store_true")
    args = parser.parse_args()
    figures: dict[str, Any] = {"sizes": sizes(), "hub_imports": hub_imports()}
    if not args.no_trace:
        figures["call_path"] = call_path()
    figures["duplicates"] = duplicate_pairs()
    for side in ("product", "tooling"):
        s = figures["sizes"][side]
        print(
            f"{side}: {s['modules']} modules, {s['lines']:,} lines; per module median "
            f"{s['median']:g}, p90 {s['p90']}, max {s['max']}; {s['over_500']} over 500; "
            f"{len(s['functions_over_60'])} functions over 60 lines"
        )
    print(f"internal imports: {figures['hub_imports']}")
    if "call_path" in figures:
        trace = figures["call_path"]
        print(
            f"one plain pod: {trace['modules']} modules; engine path: "
            f"{trace['engine_modules']} modules, {trace['climbs']} climbs"
        )
        print("  " + " > ".join(m.removeprefix("asched.") for m in trace["path"]))
    print(f"duplicates over the product: {figures['duplicates']}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
