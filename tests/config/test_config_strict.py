"""The config decoder is strict, like kube-scheduler's: unknown fields are errors with their
path, a missing file says so, and a plugin must report the name it is registered under."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kschedlib import Scheduler
from kschedlib.config import load_config
from kschedlib.errors import ConfigError


@pytest.mark.parametrize(("cfg", "path"), [
    ({"percentageOfNodes": 5}, "percentageOfNodes"),
    ({"profiles": [{"schedulerName": "a", "plugin": {}}]}, "profiles[0].plugin"),
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit",
                                                        "wieght": 2}]}}}]},
     "profiles[0].plugins.score.enabled[0].wieght"),
    ({"profiles": [{"plugins": {"scores": {}}}]}, "profiles[0].plugins.scores"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "arg": {}}]}]},
     "profiles[0].pluginConfig[0].arg"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated", "resource": []}}}]}]},
     "profiles[0].pluginConfig[0].args.scoringStrategy.resource"),
    ({"profiles": [{"pluginConfig": [{"name": "PodTopologySpread", "args": {
        "defaultingtype": "List"}}]}]},
     "profiles[0].pluginConfig[0].args.defaultingtype"),
])
def test_unknown_fields_are_errors_with_their_path(cfg: dict[str, Any], path: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(cfg)
    assert f'unknown field "{path}"' in str(exc.value)


def test_known_fields_and_typemeta_in_args_are_accepted() -> None:
    cfg = load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "parallelism": 16, "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
            "name": "NodeResourcesFit", "args": {
                "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs",
                "scoringStrategy": {"type": "MostAllocated"}}}]}],
    })
    assert cfg.profiles[0].scheduler_name == "default-scheduler"


@pytest.mark.parametrize("path", ["/nonexistent/sched.yaml", "sched-config.yaml"])
def test_missing_config_path_says_file_not_found(path: str) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        Scheduler(path)
    with pytest.raises(ConfigError, match="file not found"):
        load_config(Path(path))


def test_plugin_reporting_another_name_is_an_error() -> None:
    class Misnamed:
        name = "SomethingElse"

        def filter(self, *a: Any) -> None:
            return None

    cfg = {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Mine"}]}}}]}
    with pytest.raises(ConfigError, match='plugin "Mine" reports the name \'SomethingElse\''):
        Scheduler(cfg, plugins={"Mine": lambda a, h: Misnamed()})
