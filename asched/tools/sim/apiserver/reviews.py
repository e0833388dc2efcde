"""TokenReview and SubjectAccessReview, as a kube-apiserver with one user answers them.

Why: ``asched run`` serves ``/metrics`` over HTTPS to bearer tokens the API server vouches
for (delegated authentication and authorization, :mod:`asched.serving.reviews`). Against
a simulator without these two kinds every scrape was 401, and asched logged an error for
each; with them the secure-serving path can be tried on a laptop.

The simulator knows one token, its kubeconfig's, which is the user ``admin`` in the group
``system:masters`` (as the genuine backend's static token file makes it):

* ``POST /apis/authentication.k8s.io/v1/tokenreviews``: that token is authenticated as
  that user (with ``system:authenticated``); any other is not (``authenticated: false``,
  as a token authenticator that does not know it answers, 201 all the same);
* ``POST /apis/authorization.k8s.io/v1/subjectaccessreviews``: a user in
  ``system:masters`` is allowed anything (RBAC's superuser group); anyone else is denied,
  with no RBAC objects consulted (the simulator serves no RBAC).

Both are create-only and stored nowhere, as upstream's. A body that is not the kind is a
400 naming it.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors

JSON = dict[str, Any]

TOKEN_REVIEWS: Final = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS: Final = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
PATHS: Final = frozenset({TOKEN_REVIEWS, ACCESS_REVIEWS})
USER: Final = "admin"
GROUPS: Final = ("system:masters", "system:authenticated")
SUPERUSERS: Final = "system:masters"


def answer(path: str, body: Any, token: str) -> JSON:
    """The review of ``body`` posted to ``path`` (one of :data:`PATHS`), with its status."""
    kind, api_version = (
        ("TokenReview", "authentication.k8s.io/v1")
        if path == TOKEN_REVIEWS
        else ("SubjectAccessReview", "authorization.k8s.io/v1")
    )
    if not isinstance(body, dict) or body.get("kind") not in (None, kind):
        got = body.get("kind") if isinstance(body, dict) else type(body).__name__
        raise apierrors.bad_request(f"the body must be a {kind}, got {got!r}")
    spec = body.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    review: JSON = {
        "kind": kind,
        "apiVersion": api_version,
        "metadata": {"creationTimestamp": None},
        "spec": copy.deepcopy(spec),
    }
    if kind == "TokenReview":
        if spec.get("token") == token:
            review["status"] = {
                "authenticated": True,
                "user": {"username": USER, "groups": list(GROUPS)},
                "audiences": list(spec.get("audiences") or []),
            }
        else:
            review["status"] = {"user": {}}
        return review
    groups = spec.get("groups")
    if isinstance(groups, list) and SUPERUSERS in groups:
        review["status"] = {"allowed": True}
    else:
        review["status"] = {
            "allowed": False,
            "reason": "the simulator allows only the system:masters group (it serves no RBAC)",
        }
    return review
