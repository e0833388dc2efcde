"""``asched plugins``: the plugins a configuration may name, what each implements, and
where each comes from; installed plugins that cannot be loaded, and why."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Final

import orjson
from rich.console import Console
from rich.table import Table

from asched import terminal
from asched.config.catalogue import POINTS
from asched.framework.registry import GROUP, Registry, installed
from asched.framework.spec import API_VERSION, PluginSpec

EPILOG: Final = f"""\
Installed plugins are found through the entry-point group {GROUP!r} (see docs/plugins.md).
This asched provides plugin API {API_VERSION}.

exit status: 0 when every installed plugin loads, 1 when one cannot be loaded.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")


def _points(spec: PluginSpec) -> list[str]:
    return [point for point in POINTS if point in spec.points]


def _row(spec: PluginSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "extensionPoints": _points(spec),
        "argsKind": None if spec.args is None else spec.args.kind,
        "apiVersion": spec.api_version,
        "form": "per-node" if spec.per_node else "vectorised",
        "origin": spec.origin,
        "source": spec.source or spec.plugin_type.__module__,
    }


def as_json(registry: Registry) -> dict[str, Any]:
    """The listing as JSON: plugins (in-tree first, then installed, by name) and broken ones."""
    specs = sorted(registry.specs.values(), key=lambda s: (s.origin != "in-tree", s.name))
    return {
        "apiVersion": API_VERSION,
        "plugins": [_row(spec) for spec in specs],
        "broken": [{"name": name, "problem": why} for name, why in sorted(registry.broken.items())],
    }


def render(listing: dict[str, Any], console: Console) -> None:
    table = Table(title=f"asched plugins (plugin API {listing['apiVersion']})")
    for column in ("plugin", "extension points", "args kind", "API", "form", "from"):
        table.add_column(column)
    for row in listing["plugins"]:
        origin = (
            row["origin"] if row["origin"] == "in-tree" else f"{row['origin']} ({row['source']})"
        )
        table.add_row(
            row["name"],
            ", ".join(row["extensionPoints"]),
            row["argsKind"] or "-",
            row["apiVersion"],
            row["form"],
            origin,
        )
    console.print(table)
    if listing["broken"]:
        broken = Table(title="installed but cannot be loaded", title_style="bold red")
        broken.add_column("plugin")
        broken.add_column("problem")
        for row in listing["broken"]:
            broken.add_row(row["name"], row["problem"])
        console.print(broken)


def run(args: argparse.Namespace) -> int:
    registry = installed()
    listing = as_json(registry)
    if args.output == "json":
        sys.stdout.buffer.write(orjson.dumps(listing, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        render(listing, terminal.console())
    return 1 if registry.broken else 0
