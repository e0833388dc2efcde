"""metav1.LabelSelector for the references: :mod:`asched.cluster.labelselector`, re-exported.

The decoding and matching code lives on the engine side (topology spread constraints
need it there too); this module keeps the references' import path.
"""

from __future__ import annotations

from asched.cluster.labelselector import (
    EVERYTHING,
    NOTHING,
    OPERATORS,
    LabelSelector,
    Operator,
    Requirement,
    decode_label_selector,
    decode_or_nothing,
    selector_from_set,
)

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "OPERATORS",
    "LabelSelector",
    "Operator",
    "Requirement",
    "decode_label_selector",
    "decode_or_nothing",
    "selector_from_set",
]
