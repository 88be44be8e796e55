"""KubeSchedulerConfiguration: defaulting as v1.35 does it, merge rules, validation paths."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedlib.config import DEFAULT_MULTI_POINT, load_config
from kschedlib.config.defaults import merge_plugin_set
from kschedlib.config.types import PluginRef, PluginSet
from kschedlib.errors import ConfigError
from kschedlib.framework.registry import Registry


@attrs.define(slots=True, kw_only=True)
class FitArgs:
    ignored_resources: tuple[str, ...] = ()
    weight: int = 1

    def validate(self) -> list[tuple[str, str]]:
        if not 1 <= self.weight <= 100:
            return [("weight", f"Invalid value: {self.weight}: must be in the range [1, 100]")]
        return []


def registry() -> Registry:
    reg = Registry()
    for ref in DEFAULT_MULTI_POINT:
        reg.register(ref.name, lambda a, h: None, FitArgs if ref.name == "NodeResourcesFit" else None)
    reg.register("Custom", lambda a, h: None)
    return reg


def names(ps: PluginSet) -> list[tuple[str, int]]:
    return [(p.name, p.weight) for p in ps.enabled]


def test_defaults() -> None:
    cfg = load_config(None, registry())
    assert cfg.pod_initial_backoff_seconds == 1 and cfg.pod_max_backoff_seconds == 10
    assert cfg.percentage_of_nodes_to_score is None and cfg.parallelism == 16
    (p,) = cfg.profiles
    assert p.scheduler_name == "default-scheduler"
    mp = names(p.plugins.multi_point)
    assert mp[0] == ("SchedulingGates", 0)
    assert ("TaintToleration", 3) in mp and ("NodeAffinity", 2) in mp
    assert [n for n, _ in mp].index("DynamicResources") + 1 == [n for n, _ in mp].index("DefaultPreemption")
    assert isinstance(p.args_for("NodeResourcesFit"), FitArgs)


def test_multi_point_weight_override_keeps_order() -> None:
    cfg = load_config(
        {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 10}]}}}]},
        registry(),
    )
    mp = names(cfg.profiles[0].plugins.multi_point)
    assert mp[-2] == ("ImageLocality", 10)
    assert len(mp) == len(DEFAULT_MULTI_POINT)


def test_merge_disabled_star_and_append() -> None:
    default = PluginSet(enabled=(PluginRef(name="A"), PluginRef(name="B")))
    custom = PluginSet(enabled=(PluginRef(name="C"), PluginRef(name="A", weight=5)),
                       disabled=(PluginRef(name="B"),))
    merged = merge_plugin_set(default, custom)
    assert names(merged) == [("A", 5), ("C", 0)]
    star = merge_plugin_set(default, PluginSet(disabled=(PluginRef(name="*"),)))
    assert names(star) == [] and star.disabled_names() == {"*"}


def test_plugin_args_decoded_and_validated() -> None:
    cfg = load_config(
        {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                          "args": {"ignoredResources": ["x/y"], "weight": 3}}]}]},
        registry(),
    )
    args = cfg.profiles[0].args_for("NodeResourcesFit")
    assert args == FitArgs(ignored_resources=("x/y",), weight=3)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"percentageOfNodesToScore": 101}, "percentageOfNodesToScore: Invalid value: 101"),
        ({"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds: Invalid value: 0"),
        ({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2}, "podMaxBackoffSeconds"),
        ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
         'profiles[1].schedulerName: Duplicate value: "a"'),
        ({"profiles": [{"schedulerName": ""}]}, "profiles[0].schedulerName: Required value"),
        ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "Custom"}, {"name": "Nope"}]}}}]},
         'profiles[0].plugins.score.enabled[1].name: Invalid value: "Nope"'),
        ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "Custom", "weight": -1}]}}}]},
         "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1"),
        ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"weight": 0}}]}]},
         "profiles[0].pluginConfig[0].args.weight: Invalid value: 0"),
        ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"weight": "x"}}]}]},
         "profiles[0].pluginConfig[0].args.weight: expected integer"),
        ({"profiles": [{"pluginConfig": [{"name": "Custom"}, {"name": "Custom"}]}]},
         'profiles[0].pluginConfig[1]: Duplicate value: "Custom"'),
        ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}, "apiVersion: Unsupported value"),
        ({"profiles": [{"schedulerName": "a"},
                       {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Custom"}]}}}]},
         "profiles[1].plugins.queueSort: Invalid value"),
    ],
)
def test_validation_names_the_field(raw: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(raw, registry())
    assert fragment in str(exc.value)


def test_yaml_text_and_file(tmp_path: Any) -> None:
    text = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 40
profiles:
- schedulerName: fast
"""
    assert load_config(text, registry()).percentage_of_nodes_to_score == 40
    f = tmp_path / "cfg.yaml"
    f.write_text(text)
    assert load_config(str(f), registry()).profiles[0].scheduler_name == "fast"
    with pytest.raises(ConfigError, match="not YAML"):
        load_config("a: [", registry())
