"""Per-pod copies of a workload's template (objects.json_copy): fast for JSON, exact for
anything else a YAML file can hold."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from asched.tools.bench import objects


@pytest.mark.parametrize(
    "template",
    [
        pytest.param(
            {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}},
            id="plain JSON",
        ),
        pytest.param({"spec": {"ports": (80, 443)}}, id="a tuple stays a tuple"),
        pytest.param({"metadata": {"since": dt.date(2020, 1, 2)}}, id="a YAML date"),
        pytest.param({"spec": {1: "one"}}, id="a non-string key"),
        pytest.param({"spec": {"big": 2**70}}, id="an integer past 64 bits"),
        pytest.param({"spec": {"ratio": 0.5, "on": True, "none": None}}, id="scalars"),
    ],
)
def test_a_copy_is_equal_and_independent(template: dict[str, Any]) -> None:
    copied = objects.json_copy(template)

    assert copied == template
    assert type(copied) is dict
    section = "spec" if "spec" in template else "metadata"
    copied[section]["added"] = "only in the copy"
    assert "added" not in template[section]


def test_pods_of_a_template_group_do_not_share_their_parts() -> None:
    from asched.tools.bench.workload import PodGroup

    base = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c"}]}}
    group = PodGroup(count=2, namespace="ns", base=base)

    first = objects.pod(group, "p-0", scheduler_name="s")
    second = objects.pod(group, "p-1", scheduler_name="s")
    first["spec"]["containers"][0]["image"] = "changed"

    assert "image" not in second["spec"]["containers"][0]
    assert "image" not in base["spec"]["containers"][0]
    assert (first["metadata"]["name"], second["metadata"]["name"]) == ("p-0", "p-1")
