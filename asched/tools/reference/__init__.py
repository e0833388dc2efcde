"""A scalar, per-node reference implementation of the default plugins.

Written straight from upstream's behaviour (docs/semantics.md), node by node, for
differential tests and for the core benchmark's vectorised-vs-scalar comparison. Never
used to schedule. :func:`evaluate` has the same signature and output contract
(:class:`asched.engine.result.Evaluation`) as the vectorised engine.
"""

from asched.tools.reference.evaluate import evaluate

__all__ = ["evaluate"]
