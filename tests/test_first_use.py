"""What users meet first (issue 27): the edges of inputs, errors and the CLI."""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kschedlib import FakeClock, Pod, Scheduler
from kschedlib.api import load_cluster, load_objects
from kschedlib.cli.simulate import main as simulate_main
from kschedlib.cli.simulate import simulate
from kschedlib.errors import InvalidObjectError
from kschedlib.results import Outcome
from tests.builders import node, node_dict, pod, pod_dict

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cluster.json"


def need(module: str) -> ModuleType:
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} (a kschedlib test extra) not installed")


def _write(tmp_path: Path, name: str, objs: list[dict[str, Any]]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    return str(path)


# ------------------------------------------------------------------ inputs


def test_pods_bound_to_nodes_not_in_the_input_are_reported(tmp_path: Path) -> None:
    ghost = pod_dict("ghosted", nodeName="ghost")
    ghost["status"] = {"phase": "Running"}
    other = pod_dict("elsewhere", nodeName="gone")
    other["status"] = {"phase": "Running"}
    path = _write(tmp_path, "dump.json", [node_dict("n1"), ghost, other, pod_dict("new")])
    cluster = load_cluster(path)
    assert [p.key for p in cluster.orphans] == ["default/ghosted", "default/elsewhere"]
    assert "ignored: 2 pods bound to nodes not in the input (ghost, gone)" in cluster.notes()
    out, err = io.StringIO(), io.StringIO()
    assert simulate_main([path, "--quiet"], out, err) == 0
    assert "kschedlib simulate: ignored: 2 pods bound to nodes not in the input" in err.getvalue()
    assert load_cluster(_write(tmp_path, "ok.json", [node_dict("n1")])).notes() == []


def _v1(k: ModuleType, name: str, cpu: str = "1") -> Any:
    m = k.client
    return m.V1Pod(
        metadata=m.V1ObjectMeta(name=name, namespace="default", uid=f"uid-{name}"),
        spec=m.V1PodSpec(containers=[m.V1Container(
            name="c", resources=m.V1ResourceRequirements(requests={"cpu": cpu}))]),
    )


def _v1_node(k: ModuleType, name: str, cpu: str = "4") -> Any:
    m = k.client
    return m.V1Node(
        metadata=m.V1ObjectMeta(name=name, labels={"kubernetes.io/hostname": name}),
        status=m.V1NodeStatus(allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"}),
    )


def test_scheduler_takes_official_client_objects_everywhere() -> None:
    k = need("kubernetes")
    m = k.client
    s = Scheduler(clock=FakeClock(), deterministic=True)
    s.add_node(_v1_node(k, "n1", cpu="1"))
    s.update_node(_v1_node(k, "n1", cpu="2"))
    s.add_pod(_v1(k, "a"))
    s.update_pod(_v1(k, "a", cpu="2"))
    [r] = s.run()
    assert r.outcome == Outcome.Scheduled and r.node == "n1"
    assert r.pod.spec.containers[0].resources.requests["cpu"].milli_value() == 2000
    s.delete_pod(_v1(k, "a"))
    assert s.bound_pods() == []
    ns = m.V1Namespace(metadata=m.V1ObjectMeta(name="team", labels={"x": "y"}))
    s.add_object(ns)
    assert s.objects.get_namespace("team") is not None
    s.delete_object(ns)
    assert s.objects.get_namespace("team") is None
    s.apply([_v1_node(k, "n2"), m.V1Namespace(metadata=m.V1ObjectMeta(name="default")),
             _v1(k, "b")])
    assert [r.node for r in s.run()] == ["n2"]  # the emptier node
    s.delete_node(_v1_node(k, "n2"))
    assert s.cache.node_names() == ["n1"]
    with pytest.raises(InvalidObjectError, match="ConfigMap: kind: not a kind kschedlib decodes"):
        s.add_object(m.V1ConfigMap(metadata=m.V1ObjectMeta(name="c")))


def test_list_items_to_dict_get_the_snake_case_explanation() -> None:
    k = need("kubernetes")
    item = _v1_node(k, "n1").to_dict()  # items of list_node() carry kind None
    assert item["kind"] is None
    with pytest.raises(InvalidObjectError, match="snake_case keys") as err:
        load_objects([item])
    assert "kind: missing" not in str(err.value)
    # Without snake_case keys a missing kind is still reported as such.
    with pytest.raises(InvalidObjectError, match="kind: missing"):
        load_objects([{"metadata": {"name": "n1"}}])


# ------------------------------------------------------------------ schedulerName


def test_unknown_scheduler_name_gets_a_reason_and_a_cli_note(tmp_path: Path) -> None:
    s = Scheduler(clock=FakeClock())
    s.add_node(node("n1"))
    s.add_pod(pod_dict("mine"))
    s.add_pod(pod_dict("theirs", schedulerName="other-scheduler"))
    assert [r.key for r in s.run()] == ["default/mine"]
    assert s.why_pending("default/theirs") == 'no profile for schedulerName "other-scheduler"'
    assert [p.key for p in s.foreign_pods()] == ["default/theirs"]
    # The other scheduler binds it: it is a bound pod like any other.
    s.update_pod(pod_dict("theirs", schedulerName="other-scheduler", nodeName="n1"))
    assert s.foreign_pods() == [] and s.why_pending("default/theirs") is None
    assert {p.key for p in s.bound_pods()} == {"default/mine", "default/theirs"}
    s.add_pod(pod_dict("gone", schedulerName="x"))
    s.delete_pod("default/gone")
    assert s.foreign_pods() == []

    path = _write(tmp_path, "c.json", [node_dict("n1"), pod_dict("p", schedulerName="x"),
                                       pod_dict("q", schedulerName="x")])
    out, err = io.StringIO(), io.StringIO()
    assert simulate_main([path, "--quiet"], out, err) == 0
    assert 'not scheduled: 2 pods with no profile for their schedulerName ("x": 2)' in err.getvalue()
    assert 'default/p: never attempted: no profile for schedulerName "x"' in out.getvalue()


def test_empty_scheduler_name_defaults_as_the_api_server_does(tmp_path: Path) -> None:
    p = Pod.from_dict(pod_dict("p", schedulerName=""))
    assert p.spec.scheduler_name == "default-scheduler"
    s = Scheduler(clock=FakeClock())
    s.add_node(node("n1"))
    s.add_pod(pod_dict("p", schedulerName=""))
    assert [r.outcome for r in s.run()] == [Outcome.Scheduled]


# ------------------------------------------------------------------ CLI


def test_explain_of_a_missing_pod_fails_before_the_run(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedlib.cli import simulate as mod

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the simulation must not run")

    monkeypatch.setattr(mod, "simulate", boom)
    out, err = io.StringIO(), io.StringIO()
    assert simulate_main([str(EXAMPLE), "--explain", "shop/nope"], out, err) == 2
    assert "--explain shop/nope: no such pod in the input" in err.getvalue()
    assert out.getvalue() == ""


def _sts(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                                  "requests": {"cpu": "1"}}}]}}},
    }


def test_library_and_simulate_agree_on_statefulset_ordering(tmp_path: Path) -> None:
    """db-1 exists only once db-0 is bound: the bare pod ``other`` comes before it."""
    path = _write(tmp_path, "c.json", [node_dict("n1", cpu="2"), _sts(2), pod_dict("other", cpu="1")])
    cluster = load_cluster(path)
    sim = simulate(cluster.config, cluster.initial_objects(), held=cluster.held_pods())
    expected = sorted(p.key for p in sim.scheduler.bound_pods())
    assert expected == ["default/db-0", "default/other"]
    sched = cluster.scheduler(clock=FakeClock(), seed=0)
    assert [p.key for p in sched.held_pods()] == ["default/db-1"]
    assert "created once default/db-0 is bound" in (sched.why_pending("default/db-1") or "")
    sched.run()
    assert sorted(p.key for p in sched.bound_pods()) == expected
    assert [p.key for p in sched.pending_pods()] == ["default/db-1"]


class _Gate:
    """A Permit plugin that makes every pod wait."""

    name = "Gate"

    def permit(self, state: Any, p: Any, node_name: str) -> tuple[Any, float]:
        from kschedlib.framework.status import Code, Status

        return Status(Code.Wait, ("wait",)), 10.0


def test_pods_held_at_permit_are_assumed_not_bound() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"permit": {"enabled": [{"name": "Gate"}]}}}],
    }
    s = Scheduler(config, clock=FakeClock(), plugins={"Gate": lambda args, h: _Gate()})
    s.add_node(node("n1"))
    s.add_pod(pod("bound", nodeName="n1"))
    s.add_pod(pod("w"))
    assert [r.outcome for r in s.run()] == [Outcome.Waiting]
    assert [p.key for p in s.bound_pods()] == ["default/bound"]
    assert [p.key for p in s.assumed_pods()] == ["default/w"]
    assert [p.key for p in s.waiting_pods()] == ["default/w"]
    s.frameworks["default-scheduler"].get_waiting_pod("uid-default-w").allow("Gate")  # type: ignore[union-attr]
    assert [r.outcome for r in s.run()] == [Outcome.Scheduled]
    assert sorted(p.key for p in s.bound_pods()) == ["default/bound", "default/w"]
    assert s.assumed_pods() == [] and s.waiting_pods() == []


def test_sched_tick_runs_the_eviction_parts_periodic_work() -> None:
    clock = FakeClock()
    s = Scheduler(clock=clock)
    s.add_node(node("n1"))
    s.add_pod(pod("p", nodeName="n1"))
    ev = s.eviction
    ev.evict("default/p")  # graceful deletion: gone once its grace period ends
    clock.advance(31)
    s.tick()
    assert s.bound_pods() == []
    # Taint-based eviction runs from sched.tick() too.
    s.add_pod(pod("q", nodeName="n1"))
    tainted = node_dict("n1")
    tainted["spec"] = {"taints": [{"key": "k", "effect": "NoExecute"}]}
    s.update_node(tainted)
    clock.advance(1)
    s.tick()
    clock.advance(31)
    s.tick()
    assert s.bound_pods() == []
    assert any(e.reason == "TaintManagerEviction" for e in ev.events)


def test_lease_lock_example_without_kubeconfig_is_one_line(tmp_path: Path) -> None:
    need("kubernetes")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "none"),
           "PYTHONPATH": str(ROOT)}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "leader_election_lease_lock.py")],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "no usable kubeconfig" in done.stderr
