"""load_config_file: YAML and JSON files, and the errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from asched.errors import ConfigError, InputError
from tests.configs import default_config, load_config_file

VALID_YAML = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: asched
    plugins:
      score:
        disabled:
          - name: "*"
        enabled:
          - name: NodeResourcesFit
            weight: 2
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
"""

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_file(tmp_path) -> None:
    config = load_config_file(write(tmp_path, "scheduler.yaml", VALID_YAML))
    assert config.percentage_of_nodes_to_score == 50
    assert config.leader_election.leader_elect is False
    assert config.profiles[0].scheduler_name == "asched"
    assert config.profiles[0].resolved.score == (("NodeResourcesFit", 2),)


def test_json_file(tmp_path) -> None:

    data = yaml.safe_load(VALID_YAML)
    path = write(tmp_path, "scheduler.json", json.dumps(data, indent="\t"))
    assert load_config_file(str(path)) == load_config_file(write(tmp_path, "s.yaml", VALID_YAML))


@pytest.mark.parametrize(
    "text", [pytest.param("", id="empty"), pytest.param("# nothing\n", id="comment only")]
)
def test_empty_file_means_defaults(tmp_path, text) -> None:
    assert load_config_file(write(tmp_path, "empty.yaml", text)) == default_config()


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        pytest.param(
            "bad.yaml",
            "apiVersion: kubescheduler.config.k8s.io/v1\nprofiles:\n  - schedulerName: [unclosed\n",
            r"bad\.yaml:4:1: malformed YAML: ",
            id="unclosed flow sequence",
        ),
        pytest.param(
            "tabs.yaml",
            "profiles:\n\t- schedulerName: x\n",
            r"tabs\.yaml:2:1: malformed YAML: found character '\\t'",
            id="tab indentation",
        ),
        pytest.param(
            "dup.yaml",
            "kind: KubeSchedulerConfiguration\nparallelism: 4\nparallelism: 8\n",
            r"dup\.yaml:3:1: malformed YAML: duplicate key 'parallelism'",
            id="duplicate key",
        ),
        pytest.param(
            "bad.json",
            '{"parallelism": 4,}',
            r"bad\.json:1:19: malformed JSON: ",
            id="trailing comma in JSON",
        ),
        pytest.param(
            "list.yaml",
            "- a\n- b\n",
            r"list\.yaml: a KubeSchedulerConfiguration must be an object, got a list",
            id="not an object",
        ),
    ],
)
def test_malformed_file(tmp_path, name, text, expected) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(InputError, match=expected) as caught:
        load_config_file(path)
    assert str(path) in str(caught.value)
    assert not isinstance(caught.value, ConfigError)


def test_missing_file(tmp_path) -> None:
    path = tmp_path / "absent.yaml"
    with pytest.raises(InputError, match=r"absent\.yaml: cannot read the configuration file: "):
        load_config_file(path)


def test_invalid_document_names_the_file(tmp_path) -> None:
    path = write(tmp_path, "invalid.yaml", VALID_YAML.replace("weight: 2", "weight: 200"))
    with pytest.raises(ConfigError) as caught:
        load_config_file(path)
    assert caught.value.source == str(path)
    assert [str(e) for e in caught.value.errors] == [
        "profiles[0].plugins.score.enabled[0].weight: must be in 0..100, got 200"
    ]
