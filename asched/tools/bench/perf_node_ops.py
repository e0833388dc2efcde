"""scheduler_perf's ``createNodes`` op as a typed value, its node strategy validated.

Upstream's ``getNodePreparer`` applies one strategy per op, the first given of
``nodeAllocatableStrategy``, ``labelNodePrepareStrategy`` and ``uniqueNodeLabelStrategy``,
and ignores the others: only that one is read here, so a malformed strategy that upstream
would ignore is not an error either. An op of no nodes creates nothing and its strategies
are not read at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from asched.errors import InputError
from asched.tools.bench.perf_config import Op
from asched.tools.bench.perf_templates import op_name
from asched.tools.bench.volume_spec import CSINodeSpec

#: createNodes' node strategies in upstream's order of precedence
NODE_STRATEGIES: Final = (
    "nodeAllocatableStrategy",
    "labelNodePrepareStrategy",
    "uniqueNodeLabelStrategy",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelStrategy:
    """``labelNodePrepareStrategy``: node ``i`` gets ``key: values[i % len(values)]``."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class UniqueLabelStrategy:
    """``uniqueNodeLabelStrategy``: every node gets ``key: <its own name>``."""

    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocatableStrategy:
    """``nodeAllocatableStrategy``: ``allocatable`` patched into each node's
    ``status.allocatable``, and a CSINode per node (upstream creates one whenever the
    strategy is given, its drivers possibly none)."""

    allocatable: Mapping[str, str]
    csi_node: CSINodeSpec


NodeStrategy = LabelStrategy | UniqueLabelStrategy | AllocatableStrategy


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateNodesOp:
    """``count`` nodes from ``template`` (None: upstream's default node), shaped by
    ``strategy``."""

    opcode: ClassVar[str] = "createNodes"
    index: int
    count: int
    template: Path | None
    template_params: Mapping[str, Any] | None
    strategy: NodeStrategy | None


def create_nodes(op: Op, name: str) -> CreateNodesOp:
    """The createNodes op ``op`` of workload ``name``.

    Raises
    ------
    InputError
        The strategy upstream applies is malformed.
    """
    count = int(op.get("count", 0))
    return CreateNodesOp(
        index=op.index,
        count=count,
        template=op.get("nodeTemplatePath"),
        template_params=op.get("templateParams"),
        strategy=_strategy(op, name) if count else None,
    )


def _strategy(op: Op, name: str) -> NodeStrategy | None:
    chosen = next((key for key in NODE_STRATEGIES if op.get(key) is not None), None)
    if chosen == "nodeAllocatableStrategy":
        return _allocatable(op)
    if chosen == "labelNodePrepareStrategy":
        return _labels(op)
    if chosen == "uniqueNodeLabelStrategy":
        unique = op.get(chosen)
        if not isinstance(unique, Mapping) or not isinstance(unique.get("labelKey"), str):
            raise InputError(f"{name}: {op_name(op)}.uniqueNodeLabelStrategy: needs labelKey")
        return UniqueLabelStrategy(key=unique["labelKey"])
    return None


def _labels(op: Op) -> LabelStrategy:
    strategy = op.get("labelNodePrepareStrategy")
    where = f"{op_name(op)}.labelNodePrepareStrategy"
    if not isinstance(strategy, Mapping) or not isinstance(strategy.get("labelKey"), str):
        raise InputError(f"{where}: needs labelKey and labelValues")
    values = strategy.get("labelValues")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise InputError(f"{where}.labelValues: must be a non-empty list of strings")
    return LabelStrategy(key=strategy["labelKey"], values=tuple(values))


def _allocatable(op: Op) -> AllocatableStrategy:
    strategy = op.get("nodeAllocatableStrategy")
    where = f"{op_name(op)}.nodeAllocatableStrategy"
    if not isinstance(strategy, Mapping):
        raise InputError(f"{where}: must be a map")
    allocatable = strategy.get("nodeAllocatable") or {}
    if not isinstance(allocatable, Mapping):
        raise InputError(f"{where}.nodeAllocatable: must be a map of resource to quantity")
    return AllocatableStrategy(
        allocatable={str(k): str(v) for k, v in allocatable.items()},
        csi_node=_csi_node(strategy, where),
    )


def _csi_node(strategy: Mapping[str, Any], where: str) -> CSINodeSpec:
    """The CSINode of upstream's ``NodeAllocatableStrategy``: its drivers from
    ``csiNodeAllocatable`` (possibly none), the migrated-plugins annotation from
    ``migratedPlugins`` (possibly empty)."""
    raw_drivers = strategy.get("csiNodeAllocatable") or {}
    if not isinstance(raw_drivers, Mapping):
        raise InputError(f"{where}.csiNodeAllocatable: must be a map of CSI driver to {{count}}")
    drivers: dict[str, int | None] = {}
    for driver, resources in raw_drivers.items():
        count = resources.get("count") if isinstance(resources, Mapping) else None
        valid = resources is None or isinstance(resources, Mapping)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            valid = False
        if not valid or (count is not None and count < 0):
            raise InputError(
                f"{where}.csiNodeAllocatable.{driver}: must be {{count: <integer >= 0>}}, "
                f"got {resources!r}"
            )
        drivers[str(driver)] = count
    plugins = strategy.get("migratedPlugins") or []
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise InputError(f"{where}.migratedPlugins: must be a list of in-tree plugin names")
    return CSINodeSpec(drivers=drivers, migrated_plugins=tuple(plugins))
