"""``extenders``: upstream's fields and defaults, validateExtenders' rules, and asched's stricter ones.

Valid documents check the typed result field by field; invalid ones check the complete
list of errors (path as the user wrote it, and the message), as test_config_errors does.
"""

from __future__ import annotations

import base64

import pytest

from asched.config.types import (
    ExtenderConfig,
    ExtenderTLSConfig,
    ManagedResource,
    NodeResourcesFitArgs,
)
from asched.errors import ConfigError
from tests.configs import load_config

TYPE_META = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
URL = "http://127.0.0.1:8888/scheduler"
PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def doc(*extenders, **fields):
    return {**TYPE_META, "extenders": list(extenders), **fields}


def errors_of(data) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(data)
    return [str(error) for error in caught.value.errors]


VALID = [
    pytest.param(
        {"urlPrefix": URL},
        ExtenderConfig(url_prefix=URL),
        # upstream's v1 defaults set nothing for an extender: weight 0, no verbs, and
        # NewHTTPExtender's DefaultExtenderTimeout of 5s
        id="only urlPrefix: every default",
    ),
    pytest.param(
        {
            "urlPrefix": URL,
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "preemptVerb": "preempt",
            "bindVerb": "bind",
            "weight": 5,
            "enableHTTPS": True,
            "httpTimeout": "1m30s",
            "nodeCacheCapable": True,
            "ignorable": True,
            "managedResources": [
                {"name": "example.com/gpu", "ignoredByScheduler": True},
                {"name": "example.com/fpga"},
            ],
        },
        ExtenderConfig(
            url_prefix=URL,
            filter_verb="filter",
            preempt_verb="preempt",
            prioritize_verb="prioritize",
            bind_verb="bind",
            weight=5,
            enable_https=True,
            http_timeout_seconds=90.0,  # 1m30s = 60 + 30
            node_cache_capable=True,
            managed_resources=(
                ManagedResource("example.com/gpu", ignored_by_scheduler=True),
                ManagedResource("example.com/fpga"),
            ),
            ignorable=True,
        ),
        id="every field",
    ),
    pytest.param(
        {"urlPrefix": URL, "httpTimeout": "0"},
        ExtenderConfig(url_prefix=URL, http_timeout_seconds=5.0),
        id="httpTimeout 0 means the 5s default",
    ),
    pytest.param(
        {"urlPrefix": URL, "httpTimeout": "250ms"},
        ExtenderConfig(url_prefix=URL, http_timeout_seconds=0.25),
        id="httpTimeout in milliseconds",
    ),
    pytest.param(
        {"urlPrefix": URL, "weight": -3},
        ExtenderConfig(url_prefix=URL, weight=-3),
        id="a weight is only checked with a prioritizeVerb",
    ),
    pytest.param(
        {
            "urlPrefix": "https://ext.example.com",
            "tlsConfig": {
                "serverName": "ext.internal",
                "certFile": "/etc/ext/tls.crt",
                "keyFile": "/etc/ext/tls.key",
                "caData": base64.b64encode(PEM).decode(),
            },
        },
        ExtenderConfig(
            url_prefix="https://ext.example.com",
            tls_config=ExtenderTLSConfig(
                server_name="ext.internal",
                cert_file="/etc/ext/tls.crt",
                key_file="/etc/ext/tls.key",
                ca_data=PEM,
            ),
        ),
        id="tlsConfig: data fields are base64 as JSON writes []byte",
    ),
    pytest.param(
        {
            "urlPrefix": "https://ext.example.com",
            "tlsConfig": {
                "certData": base64.encodebytes(PEM).decode(),  # wrapped at 76 columns
                "keyData": base64.b64encode(b"key").decode(),
            },
        },
        ExtenderConfig(
            url_prefix="https://ext.example.com",
            tls_config=ExtenderTLSConfig(cert_data=PEM, key_data=b"key"),
        ),
        id="tlsConfig: base64 with line breaks, as Go's decoder skips them",
    ),
    pytest.param(
        {"urlPrefix": URL, "tlsConfig": {"insecure": True}},
        ExtenderConfig(url_prefix=URL, tls_config=ExtenderTLSConfig(insecure=True)),
        id="tlsConfig: insecure alone",
    ),
]


@pytest.mark.parametrize(("extender", "expected"), VALID)
def test_valid_extender(extender, expected) -> None:
    assert load_config(doc(extender)).extenders == (expected,)


def test_extenders_keep_their_written_order() -> None:
    # the config keeps what the user wrote; build_extenders reorders for calling
    config = load_config(
        doc(
            {"urlPrefix": "http://a", "ignorable": True},
            {"urlPrefix": "http://b"},
            {"urlPrefix": "http://c", "bindVerb": "bind"},
        )
    )
    assert [e.url_prefix for e in config.extenders] == ["http://a", "http://b", "http://c"]


def test_no_extenders_is_the_default() -> None:
    assert load_config(TYPE_META).extenders == ()
    assert load_config(doc()).extenders == ()


INVALID = [
    pytest.param(
        doc({"filterVerb": "filter"}), ["extenders[0].urlPrefix: required"], id="no urlPrefix"
    ),
    pytest.param(
        doc({"urlPrefix": ""}), ["extenders[0].urlPrefix: required"], id="empty urlPrefix"
    ),
    pytest.param(
        doc({"urlPrefix": "127.0.0.1:8888"}),
        [
            'extenders[0].urlPrefix: must be an "http://" or "https://" URL with a host, '
            'got "127.0.0.1:8888"'
        ],
        id="urlPrefix without a scheme",
    ),
    pytest.param(
        doc({"urlPrefix": "http:///filter"}),
        [
            'extenders[0].urlPrefix: must be an "http://" or "https://" URL with a host, '
            'got "http:///filter"'
        ],
        id="urlPrefix without a host",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "prioritizeVerb": "prioritize"}),
        ["extenders[0].weight: must be greater than 0 when prioritizeVerb is set, got 0"],
        id="prioritizer without a weight (upstream: must have a positive weight)",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "prioritizeVerb": "prioritize", "weight": -1}),
        ["extenders[0].weight: must be greater than 0 when prioritizeVerb is set, got -1"],
        id="prioritizer with a negative weight",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "weight": 1.5}),
        ["extenders[0].weight: must be an integer, got 1.5"],
        id="fractional weight",
    ),
    pytest.param(
        doc(
            {"urlPrefix": "http://a", "bindVerb": "bind"},
            {"urlPrefix": "http://b"},
            {"urlPrefix": "http://c", "bindVerb": "bind"},
        ),
        ["extenders: only one extender can implement bind, found 2 (extenders[0], extenders[2])"],
        id="two binders",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "managedResources": [{"name": "memory"}]}),
        [
            "extenders[0].managedResources[0].name: must be an extended resource name (a "
            'qualified name with a domain outside kubernetes.io, e.g. "example.com/gpu"), '
            'got "memory"'
        ],
        id="managed resource: a native resource",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "managedResources": [{"name": "kubernetes.io/gpu"}]}),
        [
            "extenders[0].managedResources[0].name: must be an extended resource name (a "
            'qualified name with a domain outside kubernetes.io, e.g. "example.com/gpu"), '
            'got "kubernetes.io/gpu"'
        ],
        id="managed resource: in the kubernetes.io namespace",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "managedResources": [{"name": "example.com/a b"}]}),
        [
            "extenders[0].managedResources[0].name: must be an extended resource name (a "
            'qualified name with a domain outside kubernetes.io, e.g. "example.com/gpu"), '
            'got "example.com/a b"'
        ],
        id="managed resource: not a qualified name",
    ),
    pytest.param(
        doc(
            {"urlPrefix": "http://a", "managedResources": [{"name": "example.com/gpu"}]},
            {"urlPrefix": "http://b", "managedResources": [{"name": "example.com/gpu"}]},
        ),
        [
            'extenders[1].managedResources[0].name: duplicate extender managed resource name "example.com/gpu" '
            "(first at extenders[0].managedResources[0].name)"
        ],
        id="managed resource named by two extenders",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "managedResources": [{"ignoredByScheduler": True}]}),
        ["extenders[0].managedResources[0].name: required"],
        id="managed resource without a name",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "httpTimeout": "30"}),
        ['extenders[0].httpTimeout: invalid duration "30": expected e.g. "15s", "1m30s", "100ms"'],
        id="httpTimeout without a unit",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "httpTimeout": 30}),
        ['extenders[0].httpTimeout: must be a duration string like "5s", got 30'],
        id="httpTimeout as a number",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "httpTimeout": "-1s"}),
        ['extenders[0].httpTimeout: must not be negative, got "-1s"'],
        id="negative httpTimeout",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "ignorable": "yes", "nodeCacheCapable": 1}),
        [
            "extenders[0].nodeCacheCapable: must be a boolean, got 1",
            "extenders[0].ignorable: must be a boolean, got 'yes'",
        ],
        id="flags that are not booleans",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "filterVerbs": "filter"}),
        ["extenders[0].filterVerbs: unknown field"],
        id="unknown field",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "tlsConfig": {"caFile": "/ca.pem", "cafile": "/x"}}),
        ["extenders[0].tlsConfig.cafile: unknown field"],
        id="unknown tlsConfig field (field names are case-sensitive)",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "managedResources": [{"name": "example.com/x", "ignored": True}]}),
        ["extenders[0].managedResources[0].ignored: unknown field"],
        id="unknown managedResources field",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "tlsConfig": {"caData": "not base64!"}}),
        [
            "extenders[0].tlsConfig.caData: must be base64-encoded data "
            "(Only base64 data is allowed)"
        ],
        id="caData not base64",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "tlsConfig": {"certData": ["a"]}}),
        ["extenders[0].tlsConfig.certData: must be a base64 string, got a list"],
        id="certData not a string",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "tlsConfig": {"insecure": True, "caFile": "/ca.pem"}}),
        [
            "extenders[0].tlsConfig.insecure: cannot be combined with caFile or caData "
            "(a CA to verify with)"
        ],
        id="insecure with a CA (client-go refuses the transport)",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "tlsConfig": {"certFile": "/tls.crt"}}),
        ["extenders[0].tlsConfig.keyFile: required with a client certificate"],
        id="client certificate without a key",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "tlsConfig": {"keyData": base64.b64encode(b"k").decode()}}),
        ["extenders[0].tlsConfig.certFile: required with a client key"],
        id="client key without a certificate",
    ),
    pytest.param(
        doc({"urlPrefix": URL, "tlsConfig": "insecure"}),
        ["extenders[0].tlsConfig: must be an object, got 'insecure'"],
        id="tlsConfig not an object",
    ),
    pytest.param(
        doc("http://x"),
        ["extenders[0]: must be an object, got 'http://x'", "extenders[0].urlPrefix: required"],
        id="an extender that is not an object",
    ),
    pytest.param(
        {**TYPE_META, "extenders": {"urlPrefix": URL}},
        ["extenders: must be a list, got an object"],
        id="extenders not a list",
    ),
]


@pytest.mark.parametrize(("data", "expected"), INVALID)
def test_invalid_extenders(data, expected) -> None:
    assert errors_of(data) == expected


FIT = "NodeResourcesFit"
TWO_PROFILES = [
    {
        "schedulerName": "a",
        "pluginConfig": [{"name": FIT, "args": {"ignoredResources": ["example.com/user"]}}],
    },
    {"schedulerName": "b", "plugins": {"multiPoint": {"disabled": [{"name": FIT}]}}},
]


@pytest.mark.parametrize(
    ("managed", "expected_a"),
    [
        pytest.param(
            [{"name": "example.com/gpu", "ignoredByScheduler": True}, {"name": "example.com/fpga"}],
            ("example.com/gpu",),
            # upstream's buildExtenders *replaces* ignoredResources with the extenders' list
            id="ignoredByScheduler replaces NodeResourcesFit's ignoredResources",
        ),
        pytest.param(
            [{"name": "example.com/gpu"}],
            ("example.com/user",),
            id="no ignoredByScheduler: the profile's args stay",
        ),
    ],
)
def test_ignored_by_scheduler_reaches_node_resources_fit(managed, expected_a) -> None:
    config = load_config(
        doc({"urlPrefix": URL, "managedResources": managed}, profiles=TWO_PROFILES)
    )
    fit_args = config.profiles[0].plugin_args[FIT]
    assert isinstance(fit_args, NodeResourcesFitArgs)
    assert fit_args.ignored_resources == expected_a
    # profile b does not run NodeResourcesFit: nothing to ignore, left exactly as loaded
    # without extenders
    assert config.profiles[1] == load_config(doc(profiles=TWO_PROFILES)).profiles[1]
