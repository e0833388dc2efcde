"""Plugin answers as statuses: where a status is tagged with its plugin, and where a
plugin's exception becomes an Error status instead of a crash.

One home for the rule, used by every extension point the runtime runs
(:class:`~asched.framework.runtime.Framework`) and by the cycle for its own phases:

* an answer without a plugin name gets the name of the plugin that gave it;
* an exception (any :class:`Exception`, never ``CancelledError``) is logged once with the
  pod's key, the extension point, the plugin and the traceback, counted in
  ``asched_internal_errors_total{phase}``, and returned as
  ``Status.error("internal error in <point> of plugin <name>: <Type>: <text>", name)``.

The pod then takes the Error path: reported (reason ``SchedulerError``) and retried with
backoff, and the scheduler goes on. A plugin that breaks the array contract raises
:class:`~asched.errors.PluginContractError`, which names the plugin and is contained the
same way; so does a Filter whose ``explain`` (or ``explain_rows``) answers anything but
:class:`~asched.framework.status.Status` values (:func:`explained`, :func:`explained_rows`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sized
from typing import TypeVar

from asched import metrics
from asched.cluster.records import PodInfo
from asched.errors import PluginContractError
from asched.framework.status import Status

logger = logging.getLogger(__name__)

T = TypeVar("T")


class PluginFailure(Exception):
    """A plugin raised at an extension point whose answer is an array, not a status
    (Filter, Score, NormalizeScore, explaining a rejection): carries the point and the
    plugin up to the decision's guard, which reports them (:func:`failed`)."""

    def __init__(self, point: str, plugin: str, cause: Exception) -> None:
        super().__init__(f"{point} of plugin {plugin}: {type(cause).__name__}: {cause}")
        self.point = point
        self.plugin = plugin
        self.cause = cause


def explained(plugin: str, answer: object) -> Status:
    """A Filter's ``explain`` answer for one rejected row, checked and tagged with
    ``plugin``; anything but a :class:`Status` raises a contract error saying so."""
    if not isinstance(answer, Status):
        raise PluginContractError(
            plugin,
            f"explain returned {type(answer).__name__}, expected Status "
            "(e.g. Status.unschedulable(reason))",
        )
    return answer.with_plugin(plugin)


def explained_rows(plugin: str, answers: object, count: int) -> list[Status]:
    """``explain_rows``' answer for ``count`` rows, checked: a list (or tuple) of exactly
    ``count`` :class:`Status` values (untagged: the caller tags them)."""
    if not isinstance(answers, list | tuple) or len(answers) != count:
        got = f"{len(answers)} values" if isinstance(answers, Sized) else "no list"
        raise PluginContractError(
            plugin,
            f"explain_rows returned {type(answers).__name__} ({got}), "
            f"expected a list of {count} Status",
        )
    for answer in answers:
        if not isinstance(answer, Status):
            raise PluginContractError(
                plugin,
                f"explain_rows returned a {type(answer).__name__} among its answers, "
                "expected Status",
            )
    return list(answers)


def tagged(status: Status, plugin: str) -> Status:
    """``status`` with ``plugin`` as its plugin unless it names one already."""
    return status if status.plugin or not plugin else status.with_plugin(plugin)


def failed(pod: PodInfo, point: str, exc: Exception, plugin: str = "") -> Status:
    """The Error status for ``exc`` raised at ``point`` (by ``plugin``) for ``pod``."""
    if isinstance(exc, PluginFailure):  # the plugin and its point, not the caller's phase
        point, plugin, exc = exc.point, exc.plugin, exc.cause
    elif isinstance(exc, PluginContractError):
        plugin = plugin or exc.plugin
    metrics.count_internal_error(point)
    where = f"{point} of plugin {plugin}" if plugin else point
    logger.error(
        "pod %s: internal error in %s: %s: %s",
        pod.key,
        where,
        type(exc).__name__,
        exc,
        exc_info=exc,
        extra={"pod": pod.key, "plugin": plugin, "extension_point": point},
    )
    return Status.error(f"internal error in {where}: {type(exc).__name__}: {exc}", plugin)


def guarded(pod: PodInfo, point: str, call: Callable[[], T], plugin: str = "") -> T | Status:
    """``call()``, or :func:`failed`'s status when it raises (for the cycle's own phases;
    the runtime's per-plugin calls use an inline ``try`` around :func:`failed`)."""
    try:
        return call()
    except Exception as exc:
        return failed(pod, point, exc, plugin)
