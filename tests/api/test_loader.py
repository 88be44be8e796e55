"""load_objects / load_cluster: every input form, every document shape, and nothing dropped
silently."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedlib.api import (
    KINDS,
    Deployment,
    Node,
    Pod,
    PriorityClass,
    load_cluster,
    load_objects,
    register_kind,
)
from kschedlib.api.loader import _KubeYamlLoader
from kschedlib.errors import InvalidObjectError

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": 4, "memory": "8Gi", "pods": 110}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 1}}}]}}


def _kinds(objs: list[Any]) -> list[str]:
    return [o.kind for o in objs]


def test_uses_the_c_yaml_loader_when_available() -> None:
    if yaml.__with_libyaml__:
        assert issubclass(_KubeYamlLoader, yaml.CSafeLoader)


def test_every_source_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps(POD)
    f = tmp_path / "pod.json"
    f.write_text(text)
    forms: list[Any] = [str(f), f, text, text.encode(), POD, [POD], yaml.safe_dump(POD)]
    for form in forms:
        (pod,) = load_objects(form)
        assert isinstance(pod, Pod) and pod.key == "default/p", form
        assert pod.spec.containers[0].resources.requests["cpu"].milli_value() == 1000
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    (pod,) = load_objects("-")
    assert pod.key == "default/p"
    typed = Pod.from_dict(POD)
    assert load_objects(typed) == [typed]


def test_several_sources_are_concatenated(tmp_path: Path) -> None:
    (tmp_path / "n.yaml").write_text(yaml.safe_dump(NODE))
    objs = load_objects(tmp_path / "n.yaml", POD)
    assert _kinds(objs) == ["Node", "Pod"]


def test_lists_typed_lists_multi_document_and_concatenated_json() -> None:
    text = json.dumps({"kind": "NodeList", "items": [{"metadata": {"name": "a"}}]})
    text += "\n" + json.dumps({"kind": "List", "items": [POD, NODE]})
    assert _kinds(load_objects(text)) == ["Node", "Pod", "Node"]
    multi = "---\n" + yaml.safe_dump(NODE) + "---\n---\n" + yaml.safe_dump(
        {"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "x"}}]}
    )
    assert _kinds(load_objects(multi)) == ["Node", "Pod"]


def test_directory_is_read_recursively_in_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "deep").mkdir()
    (tmp_path / "a.yml").write_text(yaml.safe_dump(NODE))
    (tmp_path / "b" / "deep" / "p.YAML").write_text(yaml.safe_dump(POD))
    (tmp_path / "b" / "notes.txt").write_text("not a manifest")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.json").write_text("{broken")
    objs = load_objects(tmp_path)
    assert _kinds(objs) == ["Node", "Pod"]
    assert objs.skipped_files == [str(tmp_path / "b" / "notes.txt")]


def test_unknown_kinds_are_summarised_not_dropped() -> None:
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}} for i in range(3)
    ]
    docs.append({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}})
    objs = load_objects([*docs, NODE])
    assert _kinds(objs) == ["Node"]
    assert objs.ignored_summary() == "ignored: 3 ConfigMap, 1 Ingress"
    assert [d["kind"] for d in objs.ignored_objects] == ["ConfigMap"] * 3 + ["Ingress"]
    assert load_cluster(docs).ignored_summary() == "ignored: 3 ConfigMap, 1 Ingress"


def test_object_without_kind_is_an_error() -> None:
    with pytest.raises(InvalidObjectError, match=r"object x: kind: missing"):
        load_objects({"metadata": {"name": "x"}})
    with pytest.raises(InvalidObjectError, match="kind: missing"):
        load_objects({"kind": "List", "items": [{"metadata": {"name": "x"}}]})


def test_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    bad = {**POD, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "x"}}}]}}
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(bad))
    with pytest.raises(InvalidObjectError) as err:
        load_objects(f)
    assert str(err.value).startswith(f"{f}: pod default/p: spec.containers[0].resources")
    g = tmp_path / "broken.json"
    g.write_text('{"kind": "Pod",')
    with pytest.raises(InvalidObjectError, match=rf"{g}: invalid JSON"):
        load_objects(g)
    h = tmp_path / "latin1.yaml"
    h.write_bytes(b"kind: Pod\nmetadata: {name: caf\xe9}\n")
    with pytest.raises(InvalidObjectError, match=rf"{h}: not UTF-8"):
        load_objects(h)
    with pytest.raises(FileNotFoundError):
        load_objects(str(tmp_path / "missing.json"))
    with pytest.raises(InvalidObjectError, match="nested too deeply"):
        load_objects("[" * 100_000 + "]" * 100_000)


def test_utf16_from_powershell_and_bom() -> None:
    text = json.dumps(POD)
    assert load_objects(text.encode("utf-16"))[0].key == "default/p"
    assert load_objects(b"\xef\xbb\xbf" + text.encode())[0].key == "default/p"


def test_yaml_as_kubectl_writes_it() -> None:
    text = """
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
  creationTimestamp: 2025-09-01T06:00:00Z
  managedFields:
  - manager: kubectl
    time: 2025-09-01T06:00:00Z
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: 1, memory: 128974848}
status:
  startTime: 2025-09-01T06:00:01Z
"""
    (pod,) = load_objects(text)
    assert pod.metadata.creation_timestamp is not None
    assert pod.metadata.creation_timestamp.isoformat() == "2025-09-01T06:00:00+00:00"
    assert pod.spec.containers[0].resources.requests["memory"].value() == 128974848


def test_kube_scheduler_configuration_is_taken_as_config() -> None:
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler"}]}
    objs = load_objects([cfg, NODE])
    assert objs.config == cfg and _kinds(objs) == ["Node"]
    assert load_cluster([cfg, NODE]).config == cfg
    with pytest.raises(InvalidObjectError, match="KubeSchedulerConfiguration: found twice"):
        load_objects([cfg], [cfg])


def test_conformance_scenario_file_is_a_cluster(tmp_path: Path) -> None:
    sc = {"name": "s", "nodes": [NODE], "pending": [{**POD, "kind": None}]}
    f = tmp_path / "s.json"
    f.write_text(json.dumps(sc))
    cluster = load_cluster(f)
    assert _kinds(cluster.objects) == ["Node", "Pod"]
    (pod,) = cluster.pending
    assert pod.spec.tolerations == ()  # taken as recorded: no admission defaults


def test_register_kind_plugs_a_new_kind_in() -> None:
    calls: list[str] = []

    def decode(d: dict[str, Any]) -> Any:
        calls.append(d["metadata"]["name"])
        return Node.from_dict({**d, "kind": "Node"})

    register_kind("WidgetNode", decode)
    try:
        objs = load_objects({"kind": "WidgetNode", "metadata": {"name": "w"}})
        assert calls == ["w"] and _kinds(objs) == ["Node"] and not objs.ignored
    finally:
        del KINDS["WidgetNode"]


def test_duplicates_keep_the_last_definition_and_are_reported() -> None:
    first = {**NODE, "metadata": {"name": "n1", "labels": {"v": "1"}}}
    second = {**NODE, "metadata": {"name": "n1", "labels": {"v": "2"}}}
    cluster = load_cluster([first, POD], [second])
    assert [n.metadata.labels["v"] for n in cluster.nodes] == ["2"]
    assert cluster.duplicates == ["Node n1"]
    assert any("defined more than once" in n for n in cluster.notes())


def test_workload_and_priority_kinds_are_typed() -> None:
    objs = load_objects([
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
         "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "high"}, "value": 1000},
    ])
    assert isinstance(objs[0], Deployment) and isinstance(objs[1], PriorityClass)
