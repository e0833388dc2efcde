"""The JSON of the objects scheduler extenders are sent, kept only while extenders need it.

asched decodes every object it watches into compact records and drops the JSON. An
extender is sent the pod as the API server has it, and (unless it is
``nodeCacheCapable``) full Node objects. :class:`RawObjects` keeps exactly that much: the
pending pods of our profiles, and the nodes only when some extender wants them. The
ingest (the single writer) fills it; the JSON is the watch's own decoded dict, not a
copy, so keeping it costs a reference per object.
"""

from __future__ import annotations

from asched.cluster.records import PodInfo
from asched.extenders.preemption import summary
from asched.extenders.protocol import RawObject


class RawObjects:
    """Pending pods' and (with ``nodes``) nodes' JSON, by pod key and node name."""

    def __init__(self, *, nodes: bool) -> None:
        #: whether nodes are kept (some extender is not nodeCacheCapable)
        self.keep_nodes = nodes
        self.pods: dict[str, RawObject] = {}
        self.nodes: dict[str, RawObject] = {}

    def pod(self, pod: PodInfo) -> RawObject:
        """``pod``'s JSON as last seen pending; its :func:`summary` for a pod this store
        never saw (only a test builds such a scheduler)."""
        found = self.pods.get(pod.key)
        return found if found is not None else summary(pod)

    def node(self, name: str) -> RawObject:
        """The node's JSON (its name alone when this store does not keep nodes)."""
        found = self.nodes.get(name)
        return found if found is not None else {"metadata": {"name": name}}
