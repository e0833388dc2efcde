"""An installable plugin for the loading tests: a Filter that keeps pods off nodes labelled
``example.com/quarantine``, with args."""

from __future__ import annotations

from dataclasses import dataclass

from asched import plugin as ap


@dataclass(frozen=True)
class Args:
    label: str = "example.com/quarantine"


def read(section: ap.ArgsSection) -> Args:
    label = section.string("label", Args.label)
    if not label:
        section.report("label", "must not be empty")
    return Args(label)


class Quarantine:
    name = "Quarantine"
    row_local = True

    def __init__(self, args: Args) -> None:
        self.label = args.label

    def sign(self, pod: ap.PodInfo) -> tuple[()]:
        return ()

    def filter(self, state, pod, nodes: ap.Nodes, rows: ap.Rows) -> ap.BoolMask:
        return ~nodes.label_matches(self.label, "Exists", (), rows)

    def explain(self, state, pod, nodes, row) -> ap.Status:
        return ap.Status.unresolvable("node(s) are quarantined")


PLUGIN = ap.declare(
    Quarantine,
    api_version="1.0",
    args=ap.ArgsSpec("QuarantineArgs", frozenset({"label"}), read),
)
NOT_A_DECLARATION = Quarantine
