"""Preemption and binding by several extenders, combined as kube-scheduler combines them.

* :func:`run_preemption` (``callExtenders`` of the preemption evaluator): extenders that
  support preemption and are interested, in order, each narrowing the victims map; a node
  answered with no victims is an error, or dropped when the extender is ignorable.
* :func:`run_bind` (``extendersBinding``): the first interested binder binds instead of
  the Bind plugins; when it fails and is ignorable the next one (in practice: the Bind
  plugins) gets the pod.

Both are pure apart from the extenders' calls (:class:`~asched.extenders.extender.Extender`):
the callers (the scheduling cycle, explain) decide where these awaits happen. They come
once a pod's fate is known (no node fits, or a node was chosen), apart from the filters
and prioritizers every consulted pod goes through (:mod:`asched.extenders.filter_score`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from asched.cluster.records import PodInfo
from asched.errors import ExtenderError
from asched.extenders.extender import Extender, PodsOnNode
from asched.extenders.protocol import NodeVictims, RawObject
from asched.framework.status import Status

logger = logging.getLogger(__name__)


async def run_preemption(
    extenders: Sequence[Extender],
    pod: PodInfo,
    pod_json: RawObject,
    victims: Mapping[str, NodeVictims],
    pods_on_node: PodsOnNode,
) -> dict[str, NodeVictims]:
    """The preemption candidates (node -> victims) once every preempting extender had its say.

    Raises
    ------
    ExtenderError
        From a non-ignorable extender whose call failed or that left a node with no
        victims (``expected at least one victim pod on node "<name>"``).
    """
    current = dict(victims)
    for extender in extenders:
        if not current:
            break
        if not extender.supports_preemption or not extender.is_interested(pod_json):
            continue
        try:
            answer = await extender.process_preemption(pod_json, current, pods_on_node)
        except ExtenderError as exc:
            if not extender.is_ignorable:
                raise
            logger.info(
                "skipping ignorable extender %s in preemption for pod %s: %s",
                extender.name,
                pod.key,
                exc,
            )
            continue
        kept: dict[str, NodeVictims] = {}
        for node, found in answer.items():
            if found.pods:
                kept[node] = found
            elif extender.is_ignorable:
                logger.info(
                    "ignoring node %s: extender %s reported no victims on it", node, extender.name
                )
            else:
                raise ExtenderError(
                    extender.transport.url(extender.config.preempt_verb),
                    extender.config.preempt_verb,
                    f'expected at least one victim pod on node "{node}"',
                )
        current = kept
    return current


async def run_bind(
    extenders: Sequence[Extender], pod: PodInfo, pod_json: RawObject, node: str
) -> Status | None:
    """Let the first interested binder bind ``pod`` to ``node``.

    Returns
    -------
    Status or None
        The binder's outcome (success, or an Error status with the call's message);
        None when no extender bound the pod and the Bind plugins must.
    """
    for extender in extenders:
        if not extender.is_binder or not extender.is_interested(pod_json):
            continue
        status = await extender.bind(pod, node)
        if not status.ok and extender.is_ignorable:
            logger.info(
                "skipping ignorable extender %s in bind for pod %s: %s",
                extender.name,
                pod.key,
                status.message,
            )
            continue
        return status
    return None
