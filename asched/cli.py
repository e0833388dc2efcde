"""The ``asched`` command line: argument parsing, logging setup and exit codes.

Each subcommand lives in its own module exposing ``configure(parser)`` and
``run(args) -> int`` (and optionally ``EPILOG``, shown at the end of its ``--help``); this
module only wires them together. Help text is written for users here and in
:data:`COMMANDS`, never taken from module docstrings (those are for developers). It is the one place that
turns exceptions into exit codes: an :class:`~asched.errors.InputError` is a one-line
message and exit status 2, anything else propagates as a traceback (a bug).

A command whose pip extra is not installed (:data:`NEEDS_EXTRA`) is still listed; using it
prints one line naming the extra to install (``asched bench: needs the 'bench' extra: pip
install 'asched[bench]'``) and exits 2, so a scheduler-only install never imports them.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final, Protocol, cast

from asched import __version__
from asched.errors import InputError
from asched.extras import MissingExtra, missing

logger = logging.getLogger(__name__)

#: subcommand -> (module, one-line help). A module that is not installed is skipped.
COMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("asched.explain.command", "explain where a pod would go, or why nowhere"),
    "sim": ("asched.tools.sim.command", "serve a simulated Kubernetes API (hollow nodes)"),
    "kube-apiserver": (
        "asched.tools.backends.command",
        "build, start or stop a genuine kube-apiserver v1.37 for tests and benchmarks",
    ),
    "run": ("asched.scheduler.command", "schedule pods in a cluster"),
    "bench": ("asched.tools.bench.command", "run benchmarks (core, workloads)"),
    "tune": ("asched.tools.bench.tune_command", "tune percentageOfNodesToScore on a workload"),
    "plugins": ("asched.plugin.command", "list the in-tree and installed plugins"),
}

#: subcommand -> the pip extra it needs (:data:`asched.extras.EXTRAS`). Without it the command
#: is still listed, and using it says what to install instead of failing on an import.
NEEDS_EXTRA: dict[str, str] = {"bench": "bench", "tune": "bench"}


DESCRIPTION: Final = "asched: an asyncio Kubernetes scheduler with a vectorised NumPy core."
EPILOG: Final = """\
examples:
  asched run --config config.yaml       schedule pods (kubeconfig: --kubeconfig,
                                        in-cluster, $KUBECONFIG or ~/.kube/config)
  asched explain -n shop web-7d9f       where would this pod go, and why (also
                                        `kubectl asched explain`, or --snapshot FILE)
  asched sim --nodes 1000 --kubeconfig-out sim.kubeconfig
                                        a simulated API server to try it on
  asched bench run scheduling-basic-500n --plot basic-500.png
                                        a scheduler_perf-style benchmark

`asched COMMAND --help` describes a command's options.
exit status: 0 success, 1 failure, 2 bad input (one line naming the file or flag).
"""


class Command(Protocol):
    """What a subcommand module provides."""

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _available(module_name: str) -> bool:
    try:
        return importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:  # the parent package is not there yet
        return False


class _CommandParser(argparse.ArgumentParser):
    """A subcommand's parser; one standing in for a command whose extra is missing
    (``needs``) accepts any arguments and makes the command say what to install."""

    def __init__(self, *args: Any, needs: str | None = None, **kwargs: Any) -> None:
        if needs is not None:
            kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        self.needs = needs

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.needs is None:
            return super().parse_known_args(args, namespace)
        namespace = namespace if namespace is not None else argparse.Namespace()
        namespace._run = self._refuse
        namespace._prog = self.prog
        return namespace, []

    def _refuse(self, _args: argparse.Namespace) -> int:
        assert self.needs is not None
        raise MissingExtra(self.needs)


def build_parser(
    *,
    prog: str = "asched",
    description: str = DESCRIPTION,
    epilog: str = EPILOG,
    commands: Sequence[str] | None = None,
) -> argparse.ArgumentParser:
    """Return the top-level parser with every available subcommand registered
    (``commands``: only these; another front end, such as the kubectl plugin, passes its
    own ``prog``, texts and commands)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"asched {__version__}")
    parser.add_argument(
        "--log-level", default="WARNING", help="DEBUG, INFO, WARNING or ERROR (default WARNING)"
    )
    parser.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="log line format"
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_CommandParser
    )
    for name, (module_name, help_text) in COMMANDS.items():
        if commands is not None and name not in commands:
            continue
        if not _available(module_name):
            continue
        extra = NEEDS_EXTRA.get(name)
        if extra is not None and missing(extra):
            subparsers.add_parser(name, help=help_text, needs=extra)
            continue
        module = cast("Command", importlib.import_module(module_name))
        sub = subparsers.add_parser(
            name,
            help=help_text,
            description=f"{prog} {name}: {help_text}.",
            epilog=getattr(module, "EPILOG", None),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure(sub)
        sub.set_defaults(_run=module.run)
        _name_errors_after(sub)
    return parser


def _name_errors_after(parser: argparse.ArgumentParser) -> None:
    """Make errors start with the innermost command used (``asched bench run: error:``)."""
    parser.set_defaults(_prog=parser.prog)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for nested in action.choices.values():
                _name_errors_after(nested)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    return dispatch(build_parser(), argv)


def dispatch(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` with ``parser`` and run the chosen command; return the exit status
    (the one mapping of exceptions to exit statuses, for every front end)."""
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2
    from asched import logs

    logs.configure(level=args.log_level, fmt=args.log_format)
    try:
        return int(args._run(args))
    except MissingExtra as exc:
        print(f"{args._prog}: {exc}", file=sys.stderr)
        return 2
    except InputError as exc:
        print(f"{args._prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
