"""PodDisruptionBudgets, as preemption reads them (policy/v1 and policy/v1beta1 alike).

Preemption prefers victims whose eviction keeps every budget within its
``status.disruptionsAllowed`` (upstream: filterPodsWithPDBViolation in
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go). A budget's
selector is decoded once, when the object arrives; a nil, empty or malformed selector
matches no pod (upstream skips such budgets: upstream's ``LabelSelectorAsSelector`` fails
and the budget is skipped), and a malformed one is reported, not raised, so a bad object
never stops the scheduler.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asched.cluster.labelselector import NOTHING, LabelSelector, decode_label_selector
from asched.errors import DecodeError

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    """What preemption needs of one budget."""

    namespace: str
    name: str
    selector: LabelSelector
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @property
    def selects_nothing(self) -> bool:
        return self.selector.nothing or self.selector.empty


def decode_budget(obj: Mapping[str, Any]) -> DisruptionBudget:
    """Decode a raw PodDisruptionBudget (missing namespace: ``default``)."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    status = obj.get("status")
    status = status if isinstance(status, Mapping) else {}
    name = str(meta.get("name") or "")
    namespace = str(meta.get("namespace") or "default")
    try:
        selector = decode_label_selector(
            spec.get("selector"),
            obj=f"PodDisruptionBudget {namespace}/{name}",
            path="spec.selector",
        )
    except DecodeError as exc:
        logger.warning("%s (it selects no pod)", exc)
        selector = NOTHING
    allowed = status.get("disruptionsAllowed")
    disrupted = status.get("disruptedPods")
    return DisruptionBudget(
        namespace=namespace,
        name=name,
        selector=selector,
        disruptions_allowed=allowed
        if isinstance(allowed, int) and not isinstance(allowed, bool)
        else 0,
        disrupted_pods=frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset(),
    )
