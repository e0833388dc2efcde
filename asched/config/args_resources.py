"""Args of the resource plugins: NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs.

Resource weights differ deliberately from upstream. Upstream defaults a weight of 0 to 1
before validating, so ``weight: 0`` silently means 1, and BalancedAllocation then
requires every weight to be exactly 1. asched treats an *absent* weight as 1 and
requires an explicit weight to be in 1..100 for both plugins, so ``weight: 0`` (almost
certainly a mistake) and ``weight: 101`` are errors.

Also stricter than upstream: a RequestedToCapacityRatio shape point must name both
``utilization`` and ``score`` (upstream reads a missing one as 0), and an empty
``scoringStrategy.type`` means LeastAllocated (upstream rejects an empty type when
``scoringStrategy`` is present at all).
"""

from __future__ import annotations

from typing import Final, get_args

from asched.config.schema import Problems, Section, is_qualified_name, quote
from asched.config.types import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    ScoringType,
    ShapePoint,
)

FIT_FIELDS: Final = frozenset({"ignoredResources", "ignoredResourceGroups", "scoringStrategy"})
BALANCED_FIELDS: Final = frozenset({"resources"})
STRATEGY_FIELDS: Final = frozenset({"type", "resources", "requestedToCapacityRatio"})
RTCR_FIELDS: Final = frozenset({"shape"})
RESOURCE_FIELDS: Final = frozenset({"name", "weight"})
SHAPE_POINT_FIELDS: Final = frozenset({"utilization", "score"})
SCORING_TYPES: Final[tuple[ScoringType, ...]] = get_args(ScoringType)
_SCORING_TYPES: Final[dict[str, ScoringType]] = {name: name for name in SCORING_TYPES}
RTCR: Final = "RequestedToCapacityRatio"
MAX_RESOURCE_WEIGHT: Final = 100
#: Upstream MaxCustomPriorityScore: shape scores are 0..10, scaled to 0..100 when scoring.
MAX_SHAPE_SCORE: Final = 10
DEFAULT_RESOURCES: Final = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def read_resources(section: Section, key: str) -> tuple[ResourceSpec, ...]:
    """A ``[{name, weight}]`` list; absent or empty means cpu and memory with weight 1."""
    problems = section.problems
    specs: list[ResourceSpec] = []
    first_at: dict[str, str] = {}
    for path, raw in section.items(key):
        entry = Section(problems, raw, path, RESOURCE_FIELDS)
        name = entry.string("name")
        weight = entry.integer("weight", 1)
        ok = problems.check_range(entry.at("weight"), weight, 1, MAX_RESOURCE_WEIGHT)
        if not name:
            problems.add(entry.at("name"), "required")
            continue
        if name in first_at:
            problems.add(
                entry.at("name"), f"duplicate resource {quote(name)} (first at {first_at[name]})"
            )
            continue
        first_at[name] = path
        if ok:
            specs.append(ResourceSpec(name, weight))
    return tuple(specs) or DEFAULT_RESOURCES


def _read_shape(problems: Problems, section: Section) -> tuple[ShapePoint, ...]:
    """``requestedToCapacityRatio.shape``: utilization 0..100 strictly increasing, score 0..10."""
    points: list[ShapePoint] = []
    for path, raw in section.items("shape"):
        entry = Section(problems, raw, path, SHAPE_POINT_FIELDS)
        values = []
        for key, high in (("utilization", 100), ("score", MAX_SHAPE_SCORE)):
            value = entry.optional_integer(key)
            if value is None:
                if not entry.has(key):
                    problems.add(entry.at(key), "required")
            elif problems.check_range(entry.at(key), value, 0, high):
                values.append(value)
        if len(values) == 2:
            point = ShapePoint(values[0], values[1])
            if points and point.utilization <= points[-1].utilization:
                problems.add(
                    entry.at("utilization"),
                    "must be sorted in increasing order, "
                    f"got {point.utilization} after {points[-1].utilization}",
                )
            points.append(point)
    raw = section.get("shape")
    if not points and (raw is None or raw == []):
        problems.add(section.at("shape"), "at least one point is required")
    return tuple(points)


def _read_strategy(section: Section) -> ScoringStrategy:
    problems = section.problems
    kind = section.string("type") or "LeastAllocated"
    scoring_type = _SCORING_TYPES.get(kind, "LeastAllocated")
    if kind not in _SCORING_TYPES:
        problems.add(
            section.at("type"),
            f"must be one of {', '.join(SCORING_TYPES)}, got {kind!r}",
        )
    resources = read_resources(section, "resources")
    shape: tuple[ShapePoint, ...] = ()
    if kind == RTCR:
        if section.has("requestedToCapacityRatio"):
            shape = _read_shape(problems, section.section("requestedToCapacityRatio", RTCR_FIELDS))
        else:
            problems.add(
                section.at("requestedToCapacityRatio"),
                "required when type is RequestedToCapacityRatio",
            )
    elif section.has("requestedToCapacityRatio"):
        problems.add(
            section.at("requestedToCapacityRatio"),
            f"only allowed when type is RequestedToCapacityRatio, not {quote(kind)}",
        )
    return ScoringStrategy(scoring_type, resources, shape)


def read_fit_args(section: Section) -> NodeResourcesFitArgs:
    """NodeResourcesFitArgs from its (already opened) args section."""
    problems = section.problems
    ignored = []
    for path, name in section.strings("ignoredResources"):
        if is_qualified_name(name):
            ignored.append(name)
        else:
            problems.add(path, f"must be a valid resource name, got {name!r}")
    groups = []
    for path, group in section.strings("ignoredResourceGroups"):
        if "/" in group:
            problems.add(path, f"a resource group name must not contain '/', got {group!r}")
        elif not is_qualified_name(group):
            problems.add(path, f"must be a valid resource group name, got {group!r}")
        else:
            groups.append(group)
    strategy = ScoringStrategy()
    if section.has("scoringStrategy"):
        strategy = _read_strategy(section.section("scoringStrategy", STRATEGY_FIELDS))
    return NodeResourcesFitArgs(tuple(ignored), tuple(groups), strategy)


def read_balanced_args(section: Section) -> NodeResourcesBalancedAllocationArgs:
    """NodeResourcesBalancedAllocationArgs from its (already opened) args section."""
    return NodeResourcesBalancedAllocationArgs(read_resources(section, "resources"))
