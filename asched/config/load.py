"""Load a KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``) into a SchedulerConfig.

This is the validation boundary of the configuration: every field of the document is
checked here, in one pass, and all problems are raised together as one
:class:`~asched.errors.ConfigError` whose field paths are written as the user wrote them
(``profiles[0].plugins.score.enabled[2].name: unknown plugin "Foo"``). Code that receives
a :class:`~asched.config.types.SchedulerConfig` trusts it.

Public API: :func:`load_config` (a parsed mapping), :func:`load_config_file` (a YAML or
JSON file) and :func:`default_config`. ``None`` or an empty document means "all
defaults"; a non-empty document must carry ``apiVersion`` and ``kind``.

Top level, with upstream's defaults and rules: ``parallelism`` > 0 (16; accepted, unused
by asched), ``percentageOfNodesToScore`` 0..100 (0 = adaptive), ``podInitialBackoffSeconds``
> 0 (1), ``podMaxBackoffSeconds`` >= initial (10), ``enableProfiling`` and
``enableContentionProfiling`` (booleans, accepted and ignored), ``delayCacheUntilActive``,
``leaderElection`` and ``clientConnection`` (:mod:`~asched.config.component_base`),
``profiles`` (:mod:`~asched.config.profiles`) and ``extenders``
(:mod:`~asched.config.extenders`). Where asched is deliberately stricter than upstream,
the module doing the check says so in its docstring.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from asched import textfile
from asched.config.catalogue import Catalogue
from asched.config.component_base import (
    CLIENT_CONNECTION_FIELDS,
    LEADER_ELECTION_FIELDS,
    read_client_connection,
    read_leader_election,
)
from asched.config.extenders import read_extenders, with_ignored_resources
from asched.config.profiles import read_profiles
from asched.config.schema import Problems, Section, describe, quote
from asched.config.types import SchedulerConfig
from asched.errors import ConfigError, InputError

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"
TOP_LEVEL_FIELDS: Final = frozenset(
    {
        "apiVersion",
        "kind",
        "parallelism",
        "percentageOfNodesToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "enableProfiling",
        "enableContentionProfiling",
        "delayCacheUntilActive",
        "leaderElection",
        "clientConnection",
        "profiles",
        "extenders",
    }
)


def _check_type_meta(top: Section) -> None:
    for key, expected in (("apiVersion", API_VERSION), ("kind", KIND)):
        value = top.get(key)
        if value != expected:
            got = "it is missing" if value is None else f"got {describe(value)}"
            top.problems.add(key, f"must be {quote(expected)}, {got}")


def load_config(
    data: Mapping[str, Any] | None, *, catalogue: Catalogue, source: str = ""
) -> SchedulerConfig:
    """Validate a parsed KubeSchedulerConfiguration and apply every default.

    Parameters
    ----------
    data : Mapping or None
        The document as parsed from YAML or JSON; None or empty means all defaults.
    catalogue : Catalogue
        The plugins a profile may name (:func:`asched.framework.catalogue.installed`).
    source : str
        Where the document came from (a file name), for the error message.

    Raises
    ------
    ConfigError
        With one FieldError per problem found anywhere in the document.
    """
    problems = Problems()
    top = Section(problems, data, "", TOP_LEVEL_FIELDS)
    if top.raw:
        _check_type_meta(top)
    parallelism = top.integer("parallelism", 16)
    if parallelism <= 0:
        problems.add("parallelism", f"must be greater than 0, got {parallelism}")
    percentage = top.integer("percentageOfNodesToScore", 0)
    problems.check_range("percentageOfNodesToScore", percentage, 0, 100)
    initial = top.integer("podInitialBackoffSeconds", 1)
    if initial <= 0:
        problems.add("podInitialBackoffSeconds", f"must be greater than 0, got {initial}")
    maximum = top.integer("podMaxBackoffSeconds", 10)
    if maximum < initial:
        problems.add(
            "podMaxBackoffSeconds",
            f"must be greater than or equal to podInitialBackoffSeconds ({initial}), got {maximum}",
        )
    top.boolean("enableProfiling", default=True)
    top.boolean("enableContentionProfiling", default=True)
    delay_cache = top.boolean("delayCacheUntilActive", default=False)
    leader_election = read_leader_election(top.section("leaderElection", LEADER_ELECTION_FIELDS))
    client_connection = read_client_connection(
        top.section("clientConnection", CLIENT_CONNECTION_FIELDS)
    )
    profiles = read_profiles(top, catalogue)
    extenders = read_extenders(top)
    if problems.errors:
        raise ConfigError(problems.errors, source)
    return SchedulerConfig(
        profiles=with_ignored_resources(profiles, extenders),
        parallelism=parallelism,
        percentage_of_nodes_to_score=percentage,
        pod_initial_backoff_seconds=initial,
        pod_max_backoff_seconds=maximum,
        delay_cache_until_active=delay_cache,
        leader_election=leader_election,
        client_connection=client_connection,
        extenders=extenders,
    )


def default_config(catalogue: Catalogue) -> SchedulerConfig:
    """The configuration of an empty document: one ``default-scheduler`` profile, default plugins."""
    return load_config(None, catalogue=catalogue, source="<defaults>")


def load_config_file(path: str | os.PathLike[str], *, catalogue: Catalogue) -> SchedulerConfig:
    """Read a KubeSchedulerConfiguration from a YAML (or ``.json``) file.

    Raises
    ------
    InputError
        When the file cannot be read or parsed (naming the file, and the line and column
        when the parser gives them), or does not hold an object.
    ConfigError
        When the document is invalid (see :func:`load_config`); ``source`` is the file.
    """
    name = os.fspath(path)
    text = textfile.read_text(name, "the configuration file")
    if name.endswith(".json"):
        data = textfile.parse_json(text, name)
    else:
        data = textfile.parse_yaml(text, name)
    if data is not None and not isinstance(data, Mapping):
        raise InputError(
            f"{name}: a KubeSchedulerConfiguration must be an object, got {describe(data)}"
        )
    return load_config(data, catalogue=catalogue, source=name)
