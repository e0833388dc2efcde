"""Bad input never breaks the server: any JSON body gets an answer, never an exception.

Property test over arbitrary JSON documents sent as create, update and each patch format
to every served resource: the registry either stores something or raises a StatusError
(400, 404, 409, 422 ...); anything else would be a 500 from the handler.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings, strategies as st

from asched.sim import apierrors, bootstrap
from asched.sim.registry import Registry
from asched.sim.resources import SPECS, STORAGE
from asched.sim.store import Store

from .test_validation import FakeClock

KEYS = st.sampled_from(
    [
        "metadata",
        "spec",
        "status",
        "name",
        "labels",
        "containers",
        "resources",
        "requests",
        "cpu",
        "image",
        "conditions",
        "type",
        "finalizers",
        "namespace",
        "generateName",
        "capacity",
        "value",
        "selector",
        "template",
        "ports",
        "port",
        "drivers",
        "eventTime",
        "involvedObject",
        "tolerations",
        "x",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "a", "12x", "Bad Name", "1Gi", "-1"]),
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


def _registry() -> Registry:
    registry = Registry(Store(STORAGE.keys(), history_limit=50), FakeClock(), seed=3)
    bootstrap.builtins(registry)
    return registry


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec_index=st.integers(0, len(SPECS) - 1),
    body=DOCUMENTS,
    name=st.booleans(),
    verb=st.integers(0, 4),
)
def test_any_body_is_answered_with_a_status(
    spec_index: int, body: Any, name: bool, verb: int
) -> None:
    registry = _registry()
    spec = SPECS[spec_index]
    namespace = "default" if spec.namespaced else ""
    if name and isinstance(body, dict):
        body = {**body, "metadata": {"name": "o"}}
    try:
        if verb == 0:
            registry.create(spec, namespace, body)
        elif verb == 1:
            registry.update(spec, namespace, "o", body)
        else:
            content_type = (
                "application/merge-patch+json",
                "application/json-patch+json",
                "application/strategic-merge-patch+json",
            )[verb - 2]
            registry.patch(
                spec,
                namespace,
                "kubernetes" if spec.resource == "services" else "default",
                content_type,
                orjson.dumps(body),
            )
    except apierrors.StatusError as error:
        code = error.code
    else:
        code = 200
    assert 200 <= code < 600
