"""The identities asched keys its state by: a pod's ``namespace/name`` and a node's name.

Both are ``NewType``s of ``str``: a :data:`PodKey` is any ``str`` to the code that reads
it, but a ``str`` is not a :data:`PodKey` until it is made one where keys are born (the
decoded record's :attr:`~asched.cluster.records.PodInfo.key`, the ingest's key of a
deleted object, the table's names column). So the type checker catches a node name
passed where a pod key belongs, at the seams that store them: the ledger, the queue, the
nominations, the reporter, a bind job.

``NodeInfo.name`` stays a ``str``: it is part of the pinned plugin API
(:mod:`asched.plugin`), which does not export these types; the table makes it a
:data:`NodeName` when the node gets its row.

Lookups (``NodeTable.row_of``, ``add_pod``, ``remove_pod``) keep taking a plain ``str``:
any string may be looked up, and the names read from a pod's JSON (``spec.nodeName``,
``status.nominatedNodeName``) or an extender's answer are looked up without being made
names first.

Making one (``PodKey(text)``) is a call that returns its argument: it costs a function
call, no copy, so it is done where a key is born, never per access or per row.
"""

from __future__ import annotations

from typing import NewType

#: ``namespace/name`` of a pod.
PodKey = NewType("PodKey", str)

#: ``metadata.name`` of a node.
NodeName = NewType("NodeName", str)
