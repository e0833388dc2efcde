"""Differential: a label selector's column form agrees with its scalar matcher.

The vectorised plugins (InterPodAffinity, PodTopologySpread, preemption's budgets)
evaluate :attr:`LabelSelector.column_requirements` over the pod label columns; the
references call :meth:`LabelSelector.matches` per pod. For random pods' labels and
random valid selectors, both must pick the same pods.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings, strategies as st

from asched.cluster.labels import LabelColumns
from asched.cluster.labelselector import decode_label_selector

KEYS = ("app", "tier", "example.com/team")
VALUES = ("", "web", "db", "a")

labels_strategy = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


@st.composite
def expressions(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")))
    raw: dict[str, Any] = {"key": draw(st.sampled_from((*KEYS, "absent"))), "operator": operator}
    if operator in ("In", "NotIn"):
        raw["values"] = draw(st.lists(st.sampled_from((*VALUES, "b")), min_size=1, max_size=3))
    return raw


selectors = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "matchLabels": st.dictionaries(
                st.sampled_from((*KEYS, "absent")), st.sampled_from(VALUES), max_size=2
            ),
            "matchExpressions": st.lists(expressions(), max_size=3),
        },
    ),
)


@settings(max_examples=300, deadline=None)
@given(pods=st.lists(labels_strategy, min_size=1, max_size=12), raw=selectors)
def test_column_form_matches_the_scalar_matcher(
    pods: list[dict[str, str]], raw: dict[str, Any] | None
) -> None:
    selector = decode_label_selector(raw, obj="Pod default/p", path="spec.x")
    columns = LabelColumns(len(pods))
    for row, labels in enumerate(pods):
        columns.set_row(row, labels)
    rows = slice(0, len(pods))
    # the plugins skip the nil selector (it matches nothing) before reaching the columns
    mask = np.full(len(pods), not selector.nothing, dtype=np.bool_)
    for req in selector.column_requirements:
        mask &= columns.requirement(req.key, req.operator, req.values, rows)
    assert mask.tolist() == [selector.matches(labels) for labels in pods]
