"""URL paths of the Kubernetes REST API, parsed into a :class:`Route`.

One hand-written parser instead of a route table: every served resource shares the
same shapes, and splitting a path once is cheaper than matching it against dozens of
patterns (this runs for every binding POST). Recognised shapes, for ``/api/v1`` and
``/apis/<group>/<version>`` alike::

    .../<resource>[/<name>[/<subresource>]]                      cluster-scoped, or all namespaces
    .../namespaces/<ns>/<resource>[/<name>[/<subresource>]]      namespaced
    .../namespaces/<name>/(status|finalize)                      the namespace's own subresources
    .../watch/...                                                legacy watch paths

Anything else is a 404 ``the server could not find the requested resource``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from asched.tools.sim.apiserver import apierrors
from asched.tools.sim.apiserver.resources import BY_GVR, GROUP_VERSIONS, ResourceSpec


@dataclass(frozen=True, slots=True)
class Route:
    """A parsed resource URL.

    ``namespace`` is None for cluster-scoped resources and for lists across all
    namespaces; ``spec`` is None only for the legacy ``bindings`` collection.
    """

    spec: ResourceSpec | None
    namespace: str | None
    name: str
    subresource: str
    watch: bool


def parse(
    path: str,
    by_gvr: Mapping[tuple[str, str, str], ResourceSpec] = BY_GVR,
    group_versions: Mapping[str, tuple[str, ...]] = GROUP_VERSIONS,
) -> Route:
    """Parse ``path`` or raise a 404 StatusError.

    ``by_gvr`` and ``group_versions`` are what is served right now: the built-in rows and
    the established custom resources (:class:`asched.tools.sim.apiserver.catalog.Catalog`).
    """
    parts = path.strip("/").split("/")
    if len(parts) >= 3 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 4 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise apierrors.PageNotFound()
    if version not in group_versions.get(group, ()):
        raise apierrors.PageNotFound()
    watch = False
    if rest[0] == "watch":
        watch, rest = True, rest[1:]
    namespace: str | None = None
    if (
        len(rest) >= 3
        and rest[0] == "namespaces"
        and ((group, version, rest[2]) in by_gvr or (not group and rest[2] == "bindings"))
    ):
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3 or any(not part for part in rest):
        raise apierrors.path_not_found()
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not group and resource == "bindings":
        if namespace is None or name:
            raise apierrors.path_not_found()
        return Route(None, namespace, "", "", watch=False)
    spec = by_gvr.get((group, version, resource))
    if spec is None or (namespace is not None and not spec.namespaced):
        raise apierrors.path_not_found()
    if spec.namespaced and namespace is None and name:
        raise apierrors.path_not_found()
    if subresource and not any(sub.name == subresource for sub in spec.subresources):
        raise apierrors.path_not_found()
    return Route(spec, namespace, name, subresource, watch)
