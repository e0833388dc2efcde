"""Every validation rule: the field path (as the user wrote it) and the message.

Each case is a document and the complete list of errors it must produce, so a case also
checks that a mistake is reported once and does not cascade into unrelated errors.
"""

from __future__ import annotations

import pytest

from asched.errors import ConfigError, InputError
from tests.configs import CATALOGUE, load_config

#: what an unknown-name error appends: every plugin a profile may name
INSTALLED = f"(installed plugins: {', '.join(sorted(CATALOGUE.plugins))})"

TYPE_META = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def doc(**fields):
    return {**TYPE_META, **fields}


def profile(**fields):
    return doc(profiles=[fields])


def plugins(**points):
    return profile(plugins=points)


def plugin_config(name, args):
    return profile(pluginConfig=[{"name": name, "args": args}])


def errors_of(data) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(data)
    return [str(error) for error in caught.value.errors]


TOP_LEVEL = [
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
        [
            "apiVersion: must be \"kubescheduler.config.k8s.io/v1\", got 'kubescheduler.config.k8s.io/v1beta3'"
        ],
        id="old apiVersion",
    ),
    pytest.param(
        {"kind": "KubeSchedulerConfiguration", "parallelism": 4},
        ['apiVersion: must be "kubescheduler.config.k8s.io/v1", it is missing'],
        id="missing apiVersion",
    ),
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeProxyConfiguration"},
        ["kind: must be \"KubeSchedulerConfiguration\", got 'KubeProxyConfiguration'"],
        id="wrong kind",
    ),
    pytest.param(doc(bogus=1), ["bogus: unknown field"], id="unknown top-level field"),
    pytest.param(
        doc(percentageOfNodesToScore=-5),
        ["percentageOfNodesToScore: must be in 0..100, got -5"],
        id="percentage below range",
    ),
    pytest.param(
        doc(percentageOfNodesToScore=101),
        ["percentageOfNodesToScore: must be in 0..100, got 101"],
        id="percentage above range",
    ),
    pytest.param(
        doc(percentageOfNodesToScore="ten"),
        ["percentageOfNodesToScore: must be an integer, got 'ten'"],
        id="percentage is a string",
    ),
    pytest.param(
        doc(percentageOfNodesToScore=True),
        ["percentageOfNodesToScore: must be an integer, got True"],
        id="percentage is a boolean",
    ),
    pytest.param(
        doc(percentageOfNodesToScore=5.5),
        ["percentageOfNodesToScore: must be an integer, got 5.5"],
        id="percentage has a fraction",
    ),
    pytest.param(
        doc(parallelism=0), ["parallelism: must be greater than 0, got 0"], id="parallelism 0"
    ),
    pytest.param(
        doc(podInitialBackoffSeconds=0),
        ["podInitialBackoffSeconds: must be greater than 0, got 0"],
        id="initial backoff 0",
    ),
    pytest.param(
        doc(podInitialBackoffSeconds=5, podMaxBackoffSeconds=2),
        [
            "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds (5), got 2"
        ],
        id="max backoff below initial",
    ),
    pytest.param(
        doc(enableProfiling="yes"),
        ["enableProfiling: must be a boolean, got 'yes'"],
        id="profiling flag is a string",
    ),
    pytest.param(
        doc(delayCacheUntilActive=1),
        ["delayCacheUntilActive: must be a boolean, got 1"],
        id="delayCacheUntilActive is an integer",
    ),
    pytest.param(
        doc(extenders=[{"urlPrefix": "http://x", "prioritizeVerb": "p"}]),
        ["extenders[0].weight: must be greater than 0 when prioritizeVerb is set, got 0"],
        id="extenders are validated (tests/unit/config/test_config_extenders.py has the rest)",
    ),
    pytest.param(
        doc(extenders="x"), ["extenders: must be a list, got 'x'"], id="extenders not a list"
    ),
    pytest.param(
        doc(profiles={}), ["profiles: must be a list, got an object"], id="profiles not a list"
    ),
    pytest.param(
        doc(profiles=[[]]),
        ["profiles[0]: must be an object, got a list"],
        id="profile not an object",
    ),
]

LEADER_ELECTION = [
    pytest.param(
        doc(leaderElection={"leaseDuration": "15"}),
        [
            'leaderElection.leaseDuration: invalid duration "15": expected e.g. '
            '"15s", "1m30s", "100ms"'
        ],
        id="duration without unit",
    ),
    pytest.param(
        doc(leaderElection={"renewDeadline": 10}),
        ['leaderElection.renewDeadline: must be a duration string like "15s", got 10'],
        id="duration as a number",
    ),
    pytest.param(
        doc(leaderElection={"leaseDuration": "10s"}),
        ["leaderElection.leaseDuration: must be greater than renewDeadline (10s <= 10s)"],
        id="lease not longer than renew deadline",
    ),
    pytest.param(
        # 1.2 x 2s = 2.4s, so a 2.4s deadline is not enough.
        doc(leaderElection={"renewDeadline": "2.4s"}),
        ["leaderElection.renewDeadline: must be greater than 1.2 x retryPeriod (2.4s <= 1.2 x 2s)"],
        id="renew deadline not above 1.2 retry periods",
    ),
    pytest.param(
        doc(leaderElection={"retryPeriod": "0s"}),
        ["leaderElection.retryPeriod: must be greater than 0, got '0s'"],
        id="zero retry period",
    ),
    pytest.param(
        doc(leaderElection={"resourceLock": "endpointsleases"}),
        ["leaderElection.resourceLock: only \"leases\" is supported, got 'endpointsleases'"],
        id="resource lock",
    ),
    pytest.param(
        doc(leaderElection={"leaderElect": "true"}),
        ["leaderElection.leaderElect: must be a boolean, got 'true'"],
        id="leaderElect as a string",
    ),
    pytest.param(
        doc(leaderElection={"leaseDurationSeconds": 15}),
        ["leaderElection.leaseDurationSeconds: unknown field"],
        id="unknown leader election field",
    ),
    pytest.param(
        doc(clientConnection={"burst": -1, "qps": "fast", "timeout": 3}),
        [
            "clientConnection.timeout: unknown field",
            "clientConnection.burst: must not be negative, got -1",
            "clientConnection.qps: must be a number, got 'fast'",
        ],
        id="client connection",
    ),
]

PROFILES = [
    pytest.param(
        profile(bogus=2), ["profiles[0].bogus: unknown field"], id="unknown profile field"
    ),
    pytest.param(
        doc(profiles=[{}, {}]),
        [
            "profiles[0].schedulerName: required when there are several profiles",
            "profiles[1].schedulerName: required when there are several profiles",
        ],
        id="several profiles without names",
    ),
    pytest.param(
        doc(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}, {"schedulerName": "a"}]),
        ['profiles[2].schedulerName: duplicate scheduler name "a" (first at profiles[0])'],
        id="duplicate scheduler names",
    ),
    pytest.param(
        profile(schedulerName=""),
        ["profiles[0].schedulerName: required"],
        id="empty name on the only profile",
    ),
    pytest.param(
        profile(schedulerName=7),
        ["profiles[0].schedulerName: must be a string, got 7"],
        id="name not a string",
    ),
    pytest.param(
        profile(percentageOfNodesToScore=101),
        ["profiles[0].percentageOfNodesToScore: must be in 0..100, got 101"],
        id="profile percentage",
    ),
    pytest.param(
        profile(plugins={"scores": {}}),
        ["profiles[0].plugins.scores: unknown field"],
        id="unknown extension point",
    ),
    pytest.param(
        plugins(
            score={
                "enabled": [{"name": "TaintToleration"}, {"name": "ImageLocality"}, {"name": "Foo"}]
            }
        ),
        [f'profiles[0].plugins.score.enabled[2].name: unknown plugin "Foo" {INSTALLED}'],
        id="unknown plugin",
    ),
    pytest.param(
        plugins(filter={"enabled": [{"name": "PrioritySort"}]}),
        [
            'profiles[0].plugins.filter.enabled[0].name: plugin "PrioritySort" does not implement filter (it implements: queueSort)'
        ],
        id="plugin at a point it does not implement",
    ),
    pytest.param(
        plugins(filter={"enabled": [{"name": "NodeName"}, {"name": "NodeName"}]}),
        [
            'profiles[0].plugins.filter.enabled[1].name: duplicate plugin "NodeName" (first at profiles[0].plugins.filter.enabled[0])'
        ],
        id="plugin twice in one enabled list",
    ),
    pytest.param(
        plugins(
            multiPoint={
                "enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality", "weight": 3}]
            }
        ),
        [
            'profiles[0].plugins.multiPoint.enabled[1].name: duplicate plugin "ImageLocality" (first at profiles[0].plugins.multiPoint.enabled[0])'
        ],
        id="plugin twice in multiPoint",
    ),
    pytest.param(
        plugins(
            score={
                "enabled": [
                    {"name": "ImageLocality", "weight": -1},
                    {"name": "NodeAffinity", "weight": 101},
                    {"name": "TaintToleration", "weight": "high"},
                ]
            }
        ),
        [
            "profiles[0].plugins.score.enabled[0].weight: must be in 0..100, got -1",
            "profiles[0].plugins.score.enabled[1].weight: must be in 0..100, got 101",
            "profiles[0].plugins.score.enabled[2].weight: must be an integer, got 'high'",
        ],
        id="plugin weights",
    ),
    pytest.param(
        plugins(score={"disabled": [{"name": "ImageLocalty"}]}),
        [f'profiles[0].plugins.score.disabled[0].name: unknown plugin "ImageLocalty" {INSTALLED}'],
        id="typo in a disabled name",
    ),
    pytest.param(
        plugins(filter={"enabled": [{"weight": 1}]}),
        ["profiles[0].plugins.filter.enabled[0].name: required"],
        id="enabled entry without a name",
    ),
    pytest.param(
        plugins(filter={"enabled": [{"name": "NodeName", "wieght": 1}]}),
        ["profiles[0].plugins.filter.enabled[0].wieght: unknown field"],
        id="unknown field in a plugin entry",
    ),
    pytest.param(
        plugins(filter={"enabled": {"name": "NodeName"}}),
        ["profiles[0].plugins.filter.enabled: must be a list, got an object"],
        id="enabled not a list",
    ),
    pytest.param(
        plugins(queueSort={"disabled": [{"name": "*"}]}),
        [
            "profiles[0].plugins.queueSort: exactly one queueSort plugin is required after defaults, got none"
        ],
        id="no queueSort plugin",
    ),
    pytest.param(
        plugins(multiPoint={"disabled": [{"name": "DefaultBinder"}]}),
        ["profiles[0].plugins.bind: at least one bind plugin is required after defaults"],
        id="no bind plugin",
    ),
]

PLUGIN_CONFIG = [
    pytest.param(
        plugin_config("Foo", {}),
        [f'profiles[0].pluginConfig[0].name: unknown plugin "Foo" {INSTALLED}'],
        id="args for an unknown plugin",
    ),
    pytest.param(
        plugin_config("PrioritySort", {}),
        ['profiles[0].pluginConfig[0].name: plugin "PrioritySort" takes no args'],
        id="args for a plugin without args",
    ),
    pytest.param(
        profile(pluginConfig=[{"name": "VolumeBinding"}, {"name": "VolumeBinding"}]),
        [
            'profiles[0].pluginConfig[1].name: duplicate config for plugin "VolumeBinding" (first at profiles[0].pluginConfig[0])'
        ],
        id="duplicate plugin config",
    ),
    pytest.param(
        profile(pluginConfig=[{"args": {}}]),
        ["profiles[0].pluginConfig[0].name: required"],
        id="plugin config without a name",
    ),
    pytest.param(
        plugin_config("NodeResourcesFit", {"kind": "NodeResourcesBalancedAllocationArgs"}),
        [
            'profiles[0].pluginConfig[0].args.kind: must be "NodeResourcesFitArgs" for plugin "NodeResourcesFit", got \'NodeResourcesBalancedAllocationArgs\''
        ],
        id="args kind mismatch",
    ),
    pytest.param(
        plugin_config("NodeResourcesFit", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}),
        [
            "profiles[0].pluginConfig[0].args.apiVersion: must be \"kubescheduler.config.k8s.io/v1\", got 'kubescheduler.config.k8s.io/v1beta3'"
        ],
        id="args apiVersion mismatch",
    ),
    pytest.param(
        plugin_config("InterPodAffinity", {"hardPodAffinityWeigth": 3}),
        ["profiles[0].pluginConfig[0].args.hardPodAffinityWeigth: unknown field"],
        id="unknown args field",
    ),
]

FIT = "profiles[0].pluginConfig[0].args"
FIT_ARGS = [
    pytest.param(
        {
            "scoringStrategy": {
                "resources": [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": 101}]
            }
        },
        [
            f"{FIT}.scoringStrategy.resources[0].weight: must be in 1..100, got 0",
            f"{FIT}.scoringStrategy.resources[1].weight: must be in 1..100, got 101",
        ],
        id="resource weights 0 and 101",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "resources": [{"name": "cpu"}, {"name": "cpu", "weight": 2}, {"weight": 1}]
            }
        },
        [
            f'{FIT}.scoringStrategy.resources[1].name: duplicate resource "cpu" (first at {FIT}.scoringStrategy.resources[0])',
            f"{FIT}.scoringStrategy.resources[2].name: required",
        ],
        id="duplicate and unnamed resources",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "LeastRequested"}},
        [
            f"{FIT}.scoringStrategy.type: must be one of LeastAllocated, MostAllocated, RequestedToCapacityRatio, got 'LeastRequested'"
        ],
        id="unknown scoring type",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
        [
            f"{FIT}.scoringStrategy.requestedToCapacityRatio: required when type is RequestedToCapacityRatio"
        ],
        id="ratio without a shape",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": []},
            }
        },
        [f"{FIT}.scoringStrategy.requestedToCapacityRatio.shape: at least one point is required"],
        id="ratio with an empty shape",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [
                        {"utilization": 0, "score": 0},
                        {"utilization": 50, "score": 5},
                        {"utilization": 50, "score": 10},
                    ]
                },
            }
        },
        [
            f"{FIT}.scoringStrategy.requestedToCapacityRatio.shape[2].utilization: must be sorted in increasing order, got 50 after 50"
        ],
        id="shape not increasing",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 101, "score": 11}, {"score": 1}]
                },
            }
        },
        [
            f"{FIT}.scoringStrategy.requestedToCapacityRatio.shape[0].utilization: must be in 0..100, got 101",
            f"{FIT}.scoringStrategy.requestedToCapacityRatio.shape[0].score: must be in 0..10, got 11",
            f"{FIT}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: required",
        ],
        id="shape point ranges",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}]},
            }
        },
        [
            f'{FIT}.scoringStrategy.requestedToCapacityRatio: only allowed when type is RequestedToCapacityRatio, not "MostAllocated"'
        ],
        id="shape with another scoring type",
    ),
    pytest.param(
        {
            "ignoredResources": ["example.com/gpu", "bad name!", 3],
            "ignoredResourceGroups": ["example.com/x", "example.com"],
        },
        [
            f"{FIT}.ignoredResources[1]: must be a valid resource name, got 'bad name!'",
            f"{FIT}.ignoredResources[2]: must be a string, got 3",
            f"{FIT}.ignoredResourceGroups[0]: a resource group name must not contain '/', got 'example.com/x'",
        ],
        id="ignored resources and groups",
    ),
]


OTHER_ARGS = [
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 0}, {"name": "memory"}]},
        ["resources[0].weight: must be in 1..100, got 0"],
        id="balanced allocation weight 0",
    ),
    pytest.param(
        "InterPodAffinity",
        {"hardPodAffinityWeight": 101, "ignorePreferredTermsOfExistingPods": "no"},
        [
            "hardPodAffinityWeight: must be in 0..100, got 101",
            "ignorePreferredTermsOfExistingPods: must be a boolean, got 'no'",
        ],
        id="inter-pod affinity",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 101, "minCandidateNodesAbsolute": -1},
        [
            "minCandidateNodesPercentage: must be in 0..100, got 101",
            "minCandidateNodesAbsolute: must not be negative, got -1",
        ],
        id="preemption ranges",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
        ["minCandidateNodesPercentage: must not be 0 while minCandidateNodesAbsolute is also 0"],
        id="preemption both zero",
    ),
    pytest.param(
        "VolumeBinding",
        {"bindTimeoutSeconds": -1, "shape": [{"utilization": 0, "score": 0}]},
        [
            "bindTimeoutSeconds: must not be negative, got -1",
            "shape: not supported: asched does not score volume capacity "
            "(upstream rejects it too unless StorageCapacityScoring is on)",
        ],
        id="volume binding",
    ),
    pytest.param(
        "PodTopologySpread",
        {
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
            ]
        },
        [
            "defaultingType: must be List when defaultConstraints are given (System uses built-in constraints)"
        ],
        id="System defaulting with constraints",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "Cluster"},
        ["defaultingType: must be System or List, got 'Cluster'"],
        id="unknown defaulting type",
    ),
    pytest.param(
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {
                    "maxSkew": 0,
                    "topologyKey": "",
                    "whenUnsatisfiable": "Never",
                    "labelSelector": {},
                },
                {"topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "nodeTaintsPolicy": "Maybe",
                },
            ],
        },
        [
            "defaultConstraints[0].maxSkew: must be greater than 0, got 0",
            "defaultConstraints[0].topologyKey: required",
            "defaultConstraints[0].whenUnsatisfiable: must be one of DoNotSchedule, ScheduleAnyway, got 'Never'",
            "defaultConstraints[0].labelSelector: must not be set: the selector is derived from each pod's owners",
            "defaultConstraints[1].maxSkew: required",
            "defaultConstraints[2].nodeTaintsPolicy: must be Honor or Ignore, got 'Maybe'",
        ],
        id="bad constraints",
    ),
    pytest.param(
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            ],
        },
        [
            'defaultConstraints[1]: duplicate constraint for topologyKey "zone" and whenUnsatisfiable '
            "DoNotSchedule (first at profiles[0].pluginConfig[0].args.defaultConstraints[0])"
        ],
        id="duplicate constraint",
    ),
    pytest.param(
        "NodeAffinity",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}
                    ]
                }
            }
        },
        [
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].operator: Unsupported value: 'Near': supported values: "
            "In, NotIn, Exists, DoesNotExist, Gt, Lt"
        ],
        id="added affinity with a bad operator",
    ),
    pytest.param(
        "NodeAffinity",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchLabels": {}}]
                }
            }
        },
        [
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchLabels: unknown field"
        ],
        id="added affinity with an unknown field",
    ),
]


@pytest.mark.parametrize(
    ("data", "expected"), TOP_LEVEL + LEADER_ELECTION + PROFILES + PLUGIN_CONFIG
)
def test_document_errors(data, expected) -> None:
    assert errors_of(data) == expected


@pytest.mark.parametrize(("args", "expected"), FIT_ARGS)
def test_node_resources_fit_args_errors(args, expected) -> None:
    assert errors_of(plugin_config("NodeResourcesFit", args)) == expected


@pytest.mark.parametrize(("plugin", "args", "expected"), OTHER_ARGS)
def test_plugin_args_errors(plugin, args, expected) -> None:
    prefix = "profiles[0].pluginConfig[0].args."
    assert errors_of(plugin_config(plugin, args)) == [prefix + line for line in expected]


def test_all_errors_are_reported_at_once() -> None:
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": -5,
        "parallelism": "ten",
        "leaderElection": {"leaseDuration": "5s"},
        "profiles": [
            {
                "schedulerName": "a",
                "bogus": True,
                "plugins": {
                    "score": {
                        "enabled": [{"name": "Foo"}, {"name": "ImageLocality", "weight": 200}]
                    }
                },
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 0}]}},
                    }
                ],
            },
            {"schedulerName": "a", "percentageOfNodesToScore": 300},
        ],
        "extenders": [{}],
    }
    with pytest.raises(ConfigError) as caught:
        load_config(data, source="scheduler.yaml")
    expected = [
        "parallelism: must be an integer, got 'ten'",
        "percentageOfNodesToScore: must be in 0..100, got -5",
        "leaderElection.leaseDuration: must be greater than renewDeadline (5s <= 10s)",
        "profiles[0].bogus: unknown field",
        f'profiles[0].plugins.score.enabled[0].name: unknown plugin "Foo" {INSTALLED}',
        "profiles[0].plugins.score.enabled[1].weight: must be in 0..100, got 200",
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: must be in 1..100, got 0",
        "profiles[1].percentageOfNodesToScore: must be in 0..100, got 300",
        'profiles[1].schedulerName: duplicate scheduler name "a" (first at profiles[0])',
        "extenders[0].urlPrefix: required",
    ]
    assert [str(error) for error in caught.value.errors] == expected
    assert caught.value.source == "scheduler.yaml"
    message = str(caught.value)
    assert message.startswith("scheduler.yaml: invalid KubeSchedulerConfiguration:\n")
    assert all(line in message for line in expected)
    assert isinstance(caught.value, InputError)


def test_disabled_leader_election_only_needs_parsable_durations() -> None:
    config = load_config(
        doc(leaderElection={"leaderElect": False, "leaseDuration": "1s", "retryPeriod": "1m"})
    )
    assert config.leader_election.leader_elect is False
    assert config.leader_election.lease_duration_seconds == 1.0
    assert config.leader_election.retry_period_seconds == 60.0
