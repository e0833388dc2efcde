"""``profiles``: scheduler names, plugin sets, resolution, plugin args, and cross-profile rules.

Per profile:

* ``schedulerName``: with no profiles there is one, named ``default-scheduler``; a single
  profile without the field gets that name; otherwise every profile needs a non-empty
  name, unique across profiles;
* ``percentageOfNodesToScore``: optional 0..100 (None means "use the global value");
* ``plugins`` are read (:mod:`~asched.config.plugin_sets`) and resolved
  (:mod:`~asched.config.resolve`); after resolution a profile needs exactly one queueSort
  plugin and at least one bind plugin, and every profile must resolve to the same
  queueSort plugin (the queue is shared, so it can only have one order);
* ``pluginConfig`` is read (:mod:`~asched.config.args`), and every plugin the profile
  runs that takes args gets them, defaulted when not configured. Args configured for a
  plugin the profile does not run are validated, then dropped.
"""

from __future__ import annotations

from typing import Final

from asched.config.args import default_args, read_plugin_config
from asched.config.catalogue import Catalogue
from asched.config.plugin_sets import read_plugins
from asched.config.resolve import resolve
from asched.config.schema import Section, quote
from asched.config.types import EXTENSION_POINTS, Profile

DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
PROFILE_FIELDS: Final = frozenset(
    {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
)


def _read_profile(
    section: Section, catalogue: Catalogue, *, only_profile: bool
) -> tuple[Profile, bool]:
    """One profile, and whether its plugins resolved cleanly (for the cross-profile rules)."""
    problems = section.problems
    name = section.string("schedulerName")
    if only_profile and not section.has("schedulerName"):
        name = DEFAULT_SCHEDULER_NAME
    elif not name and section.get("schedulerName") in (None, ""):
        problems.add(
            section.at("schedulerName"),
            "required" if only_profile else "required when there are several profiles",
        )
    percentage = section.optional_integer("percentageOfNodesToScore")
    if percentage is not None:
        problems.check_range(section.at("percentageOfNodesToScore"), percentage, 0, 100)
    before = problems.count()
    plugins = section.section("plugins", EXTENSION_POINTS)
    user_sets = read_plugins(plugins, catalogue)
    resolved = resolve(user_sets, catalogue)
    clean = problems.count() == before
    if clean and len(resolved.queue_sort) != 1:
        listed = ", ".join(resolved.queue_sort) or "none"
        problems.add(
            plugins.at("queueSort"),
            f"exactly one queueSort plugin is required after defaults, got {listed}",
        )
        clean = False
    if clean and not resolved.bind:
        problems.add(plugins.at("bind"), "at least one bind plugin is required after defaults")
        clean = False
    configured = read_plugin_config(section, catalogue)
    plugin_args: dict[str, object] = {}
    for plugin in resolved.all_names():
        spec = catalogue[plugin].args
        if spec is not None:
            plugin_args[plugin] = configured[plugin] if plugin in configured else default_args(spec)
    profile = Profile(
        scheduler_name=name,
        percentage_of_nodes_to_score=percentage,
        plugins=user_sets,
        resolved=resolved,
        plugin_args=plugin_args,
    )
    return profile, clean


def read_profiles(top: Section, catalogue: Catalogue) -> tuple[Profile, ...]:
    """Every profile of the document (``top`` is the root section)."""
    entries = list(top.items("profiles"))
    if not entries:
        entries = [(top.at("profiles[0]"), None)]
    problems = top.problems
    profiles: list[Profile] = []
    first_at: dict[str, str] = {}
    queue_sort_from: tuple[str, Profile] | None = None
    for path, raw in entries:
        section = Section(problems, raw, path, PROFILE_FIELDS)
        profile, clean = _read_profile(section, catalogue, only_profile=len(entries) == 1)
        name = profile.scheduler_name
        if name and name in first_at:
            problems.add(
                section.at("schedulerName"),
                f"duplicate scheduler name {quote(name)} (first at {first_at[name]})",
            )
        first_at.setdefault(name, path)
        if clean and queue_sort_from is None:
            queue_sort_from = (path, profile)
        elif clean and queue_sort_from is not None:
            first_path, first = queue_sort_from
            if profile.resolved.queue_sort != first.resolved.queue_sort:
                problems.add(
                    section.at("plugins.queueSort"),
                    "all profiles must use the same queueSort plugin: "
                    f"{first_path} uses {first.resolved.queue_sort[0]}, "
                    f"this one {profile.resolved.queue_sort[0]}",
                )
        profiles.append(profile)
    return tuple(profiles)
