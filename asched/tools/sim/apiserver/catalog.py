"""What the server serves right now: the built-in rows plus the established custom resources.

Routing (:func:`asched.tools.sim.apiserver.routing.parse`) and discovery read the catalog on every request;
the CRD controller (:mod:`asched.tools.sim.apiserver.crds`) installs a CRD's views when it is established and
removes them when it is deleted. Each change rebuilds the lookups and the discovery documents
as new objects and swaps them in, so readers never see half a change, and the built-in hot
paths cost what they cost before custom resources (plain dict lookups).

Custom groups come after the built-in ones in ``/apis`` (sorted by name), each listing its
versions in Kubernetes' version order (``v1`` > ``v1beta1`` > ``v1alpha1``), the first
preferred, as a real server's discovery does. A custom resource never shadows a built-in one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

from asched.tools.sim.apiserver import discovery
from asched.tools.sim.apiserver.resources import (
    BY_GVR,
    GROUP_VERSIONS,
    SPECS,
    STORAGE,
    ResourceSpec,
)

_KUBE_VERSION: Final = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")
_LEVELS: Final = {None: 0, "beta": 1, "alpha": 2}


def version_order(version: str) -> tuple[int, int, int, str]:
    """Sort key of Kubernetes' version priority: GA, then beta, then alpha, newest first;
    versions of another shape last, alphabetically."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, level, minor = match.groups()
    return (_LEVELS[level], -int(major), -int(minor or 0), "")


class Catalog:
    """The served resources (see the module docstring)."""

    def __init__(self) -> None:
        self.by_gvr: Mapping[tuple[str, str, str], ResourceSpec] = BY_GVR
        self.group_versions: Mapping[str, tuple[str, ...]] = GROUP_VERSIONS
        self.discovery: Mapping[str, bytes] = discovery.build()
        self._custom: dict[str, tuple[ResourceSpec, ...]] = {}

    def install(self, storage: str, specs: tuple[ResourceSpec, ...]) -> None:
        """Serve ``specs`` (one custom resource's versions), replacing what it served."""
        if self._custom.get(storage) != specs:
            self._custom[storage] = specs
            self._rebuild()

    def uninstall(self, storage: str) -> None:
        """Stop serving a custom resource (its routes and discovery entries go)."""
        if self._custom.pop(storage, None) is not None:
            self._rebuild()

    def custom_specs(self) -> Iterator[ResourceSpec]:
        """Every served view of every custom resource."""
        for specs in self._custom.values():
            yield from specs

    def storages(self) -> dict[str, ResourceSpec]:
        """Storage name -> a spec of it, built-in and custom (for sweeps such as a
        namespace's deletion)."""
        out = dict(STORAGE)
        for storage, specs in self._custom.items():
            if specs:
                out.setdefault(storage, specs[0])
        return out

    def _rebuild(self) -> None:
        custom = [spec for spec in self.custom_specs() if spec.group not in GROUP_VERSIONS]
        by_gvr = dict(BY_GVR)
        versions: dict[str, set[str]] = {}
        for spec in custom:
            by_gvr.setdefault((spec.group, spec.version, spec.resource), spec)
            versions.setdefault(spec.group, set()).add(spec.version)
        group_versions = dict(GROUP_VERSIONS)
        for group in sorted(versions):
            group_versions[group] = tuple(sorted(versions[group], key=version_order))
        self.discovery = discovery.build((*SPECS, *custom), group_versions)
        self.by_gvr = by_gvr
        self.group_versions = group_versions
