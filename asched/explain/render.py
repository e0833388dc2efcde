"""The human-readable face of an :class:`~asched.engine.result.Evaluation`: rich tables.

Feasible nodes come first, best total first, with one column per score plugin (its
normalized score, and its weight in the header); the chosen node is marked. Infeasible
nodes are summarised by the plugin and reason that rejected them, with counts, so a
5,000-node cluster still fits on a screen (``limit`` rows of each kind; 0 = all).

With extenders, a prioritizer is one more score column (its score x10, under its weight),
a node an extender rejected names it as the plugin, and a table says what each extender
was asked and how that went (an ignorable extender that failed is said to be skipped).
Without extenders the output is what it always was.

``wide`` (``-o wide``) shows more: every row (no limit), a column for every weighted
plugin (``-`` where a plugin gave a node no score, e.g. a PreScore that skipped), and one
row per infeasible node instead of groups. ``configuration``, when given, is a line above
the tables naming the KubeSchedulerConfiguration used. A gang member's gang is a line
above the tables (:func:`gang_line`): its key, the members placed of ``minMember``, and
whether the scheduler would go on with this member (admitted) or why not.
"""

from __future__ import annotations

import re
from collections import Counter

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from asched.engine.result import Evaluation, ExtenderCall, GangVerdict, NodeVerdict
from asched.framework.builtin.default_preemption import PREFIX as PREEMPTION_PREFIX


def render(
    evaluation: Evaluation,
    console: Console,
    *,
    limit: int = 20,
    wide: bool = False,
    configuration: str | None = None,
    notes: tuple[str, ...] = (),
) -> None:
    """Print the evaluation as tables and a one-line verdict (``wide``: see the module
    docstring; ``limit`` is then ignored). ``notes`` are lines said before the tables
    (that the pod is bound already, and what the answer then means)."""
    if wide:
        limit = 0
    feasible = [(n, v) for n, v in evaluation.nodes.items() if v.feasible]
    infeasible = [(n, v) for n, v in evaluation.nodes.items() if not v.feasible]
    if configuration is not None:
        console.print(f"configuration: {configuration}", markup=False, highlight=False)
    for note in notes:
        console.print(f"[yellow]note:[/yellow] {note}", highlight=False)
    if evaluation.gang is not None:
        _render_gang(evaluation.gang, console)
    console.print(
        f"[bold]{evaluation.pod}[/bold] with profile [bold]{evaluation.profile}[/bold]: "
        f"{len(feasible)} of {len(evaluation.nodes)} nodes feasible"
    )
    if feasible:
        _render_feasible(evaluation, feasible, console, limit=limit, wide=wide)
    if infeasible and wide:
        _render_each_infeasible(infeasible, console)
    elif infeasible:
        _render_infeasible_groups(infeasible, console, limit=limit)
    if evaluation.extenders:
        _render_extenders(evaluation, console)
    if evaluation.preemption is not None:
        _render_preemption(evaluation, console)
    if evaluation.selected is not None:
        tied = f" (tied with {len(evaluation.top) - 1} others)" if len(evaluation.top) > 1 else ""
        console.print(f"[green]selected:[/green] {evaluation.selected}{tied}")
    else:
        console.print(f"[red]unschedulable:[/red] {evaluation.message}")


def gang_line(gang: GangVerdict) -> str:
    """``pod group ns/job: 0 of 3 members placed (3 pods name it): admitted``, or
    ``...: refused: <the reason>``, the reason without the gang and count it repeats (the
    JSON keeps it whole); a gang of no PodGroup or Workload known has no count."""
    if gang.min_member:
        count = f"{gang.placed} of {gang.min_member} members placed"
    else:
        count = f"{gang.placed} members placed"
    head = f"pod group {gang.key}: {count} ({gang.members} pods name it)"
    if gang.admitted:
        return f"{head}: admitted"
    reason = gang.reason or ""
    repeated = re.match(
        rf"pod group {re.escape(gang.key)}( has \d+ of \d+ members( placed)?)?: ", reason
    )
    return f"{head}: refused: {reason[repeated.end() :] if repeated else reason}"


def _render_gang(gang: GangVerdict, console: Console) -> None:
    colour = "green" if gang.admitted else "red"
    console.print(f"[{colour}]gang:[/{colour}] {escape(gang_line(gang))}", highlight=False)


def _render_feasible(
    evaluation: Evaluation,
    feasible: list[tuple[str, NodeVerdict]],
    console: Console,
    *,
    limit: int,
    wide: bool,
) -> None:
    """The feasible nodes, best total first, one column per score plugin (every weighted
    plugin when ``wide``); at most ``limit`` rows (0: all)."""
    plugins = [p for p in evaluation.weights if wide or any(p in v.scores for _, v in feasible)]
    table = Table(box=box.SIMPLE_HEAVY, title="Feasible nodes (normalized score per plugin)")
    table.add_column("node")
    for plugin in plugins:
        table.add_column(f"{plugin}\nx{evaluation.weights[plugin]}", justify="right")
    table.add_column("total", justify="right", style="bold")
    ranked = sorted(feasible, key=lambda item: (-item[1].total, item[0]))
    shown = ranked if limit <= 0 else ranked[:limit]
    for name, verdict in shown:
        marker = " [green]<- selected[/green]" if name == evaluation.selected else ""
        top = " *" if name in evaluation.top and name != evaluation.selected else ""
        cells = [str(verdict.scores[p]) if p in verdict.scores else "-" for p in plugins]
        table.add_row(f"{name}{top}{marker}", *cells, str(verdict.total))
    if len(ranked) > len(shown):
        table.caption = (
            f"{len(ranked) - len(shown)} more feasible nodes not shown (--limit 0 shows all)"
        )
    console.print(table)


def _render_infeasible_groups(
    infeasible: list[tuple[str, NodeVerdict]], console: Console, *, limit: int
) -> None:
    """The infeasible nodes grouped by plugin, code and reasons, most common first, with a
    few example names; at most ``limit`` groups (0: all)."""
    table = Table(box=box.SIMPLE_HEAVY, title="Infeasible nodes")
    table.add_column("nodes", justify="right")
    table.add_column("plugin")
    table.add_column("code")
    table.add_column("reasons")
    table.add_column("examples")
    groups: Counter[tuple[str, str, str]] = Counter()
    examples: dict[tuple[str, str, str], list[str]] = {}
    for name, verdict in infeasible:
        code = verdict.code.upstream_name if verdict.code is not None else ""
        key = (verdict.plugin or "", code, "; ".join(verdict.reasons))
        groups[key] += 1
        examples.setdefault(key, []).append(name)
    for key, count in groups.most_common(limit if limit > 0 else None):
        names = examples[key]
        sample = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        table.add_row(str(count), *key, sample)
    console.print(table)


def _render_each_infeasible(infeasible: list[tuple[str, NodeVerdict]], console: Console) -> None:
    """One row per infeasible node, by plugin then node name (``-o wide``)."""
    table = Table(box=box.SIMPLE_HEAVY, title="Infeasible nodes")
    table.add_column("node")
    table.add_column("plugin")
    table.add_column("code")
    table.add_column("reasons")
    for name, verdict in sorted(infeasible, key=lambda item: (item[1].plugin or "", item[0])):
        code = verdict.code.upstream_name if verdict.code is not None else ""
        table.add_row(name, verdict.plugin or "", code, "; ".join(verdict.reasons))
    console.print(table)


def _render_preemption(evaluation: Evaluation, console: Console) -> None:
    preemption = evaluation.preemption
    assert preemption is not None
    if preemption.node is None:
        # the message carries upstream's own "preemption: " prefix: said once
        reason = preemption.message.removeprefix(PREEMPTION_PREFIX)
        console.print(f"[yellow]preemption would not help:[/yellow] {reason}")
        return
    console.print(
        f"[yellow]preemption:[/yellow] would nominate {preemption.node}, "
        f"evicting {len(preemption.victims)} pod(s)"
    )
    table = Table(box=box.SIMPLE_HEAVY)
    table.add_column("victim")
    table.add_column("node")
    table.add_column("priority", justify="right")
    for victim in preemption.victims:
        table.add_row(victim.pod, victim.node, str(victim.priority))
    if preemption.num_pdb_violations:
        table.caption = (
            f"{preemption.num_pdb_violations} of them violate a PodDisruptionBudget "
            "(no candidate without violations was found)"
        )
    console.print(table)


def _call(call: ExtenderCall, *, ignorable: bool) -> str:
    """One cell of the extenders table: what became of one call."""
    sent = f"{call.sent} node{'s' if call.sent != 1 else ''}"
    if call.outcome == "called":
        return f"called with {sent}"
    if call.outcome == "skipped":
        return f"skipped (ignorable, failed): {call.error}"
    if call.outcome == "error":
        return f"error (not ignorable): {call.error}"
    if call.outcome == "failed":
        kind = "ignorable" if ignorable else "not ignorable"
        return f"failed ({kind}), adds nothing: {call.error}"
    return call.outcome.replace("-", " ")


def _render_extenders(evaluation: Evaluation, console: Console) -> None:
    reports = evaluation.extenders or ()
    table = Table(box=box.SIMPLE_HEAVY, title="Extenders (in call order)")
    table.add_column("extender")
    table.add_column("weight", justify="right")
    table.add_column("filter")
    table.add_column("prioritize")
    for report in reports:
        table.add_row(
            report.name,
            str(report.weight),
            _call(report.filter, ignorable=report.ignorable),
            _call(report.prioritize, ignorable=report.ignorable),
        )
    table.caption = (
        "each extender is sent every node still feasible (explain does not sample); "
        "an extender's score column is its score x10 (the plugins' 0..100 scale)"
    )
    console.print(table)
