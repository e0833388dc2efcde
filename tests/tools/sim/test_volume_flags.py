"""``asched sim``'s volume binding flags reach the faults the PV controller reads."""

from __future__ import annotations

import argparse

import pytest

from asched.tools.sim import command
from asched.tools.sim.server import SimServer


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param(
            [], {"volumeBindingPaused": False, "volumeBindingDelaySeconds": 0.0}, id="defaults"
        ),
        pytest.param(
            ["--volume-binding-paused", "--volume-binding-delay", "0.5"],
            {"volumeBindingPaused": True, "volumeBindingDelaySeconds": 0.5},
            id="paused and slowed",
        ),
    ],
)
def test_flags_set_the_volume_faults(flags, expected):
    parser = argparse.ArgumentParser()
    command.configure(parser)
    server = SimServer(command.config_from(parser.parse_args(flags)))
    shown = server.faults.as_json()
    assert {key: shown[key] for key in expected} == expected


def test_a_negative_delay_is_refused(capsys):
    parser = argparse.ArgumentParser()
    command.configure(parser)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--volume-binding-delay", "-1"])
    assert exited.value.code == 2
    assert "--volume-binding-delay: must be >= 0, got -1.0" in capsys.readouterr().err
