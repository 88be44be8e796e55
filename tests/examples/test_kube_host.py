"""examples/kube_host.py's translation layer with the official client's real model classes:
watch events in, Binding objects out, and its Lease lock's bodies."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kschedlib import FakeClock, Scheduler
from tests.api.test_clients import need

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def host() -> ModuleType:
    need("kubernetes")
    sys.path.insert(0, str(EXAMPLES))
    try:
        import kube_host

        return kube_host
    finally:
        sys.path.remove(str(EXAMPLES))


class FakeCoreV1:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.fail = fail

    def create_namespaced_binding(self, namespace: str, body: Any, **kw: Any) -> None:
        from kubernetes.client.exceptions import ApiException

        self.calls.append((namespace, body))
        if self.fail:
            raise ApiException(status=409, reason="Conflict")


def _node(k: Any, name: str, cpu: str = "4") -> Any:
    m = k.client
    return m.V1Node(metadata=m.V1ObjectMeta(name=name, labels={"disk": "ssd" if name == "b" else "hdd"}),
                    status=m.V1NodeStatus(allocatable={"cpu": cpu, "memory": "8Gi", "pods": "10"}))


def _pod(k: Any, name: str, scheduler: str = "my-scheduler", node: str | None = None,
         cpu: str = "1") -> Any:
    m = k.client
    return m.V1Pod(
        metadata=m.V1ObjectMeta(name=name, namespace="shop", uid=f"uid-{name}"),
        spec=m.V1PodSpec(scheduler_name=scheduler, node_name=node, node_selector={"disk": "ssd"},
                         containers=[m.V1Container(name="c", resources=m.V1ResourceRequirements(
                             requests={"cpu": cpu}))]),
    )


def test_events_in_bindings_out(host: ModuleType) -> None:
    import kubernetes as k

    core = FakeCoreV1()
    sched = Scheduler(host.scheduler_config("my-scheduler"), binder=host.ApiBinder(core),
                      clock=FakeClock(), deterministic=True)
    host.apply_event(sched, "ADDED", _node(k, "a"))
    host.apply_event(sched, "ADDED", _node(k, "b"))
    host.apply_event(sched, "ADDED", _pod(k, "mine"))
    host.apply_event(sched, "ADDED", _pod(k, "theirs", scheduler="default-scheduler"))
    host.apply_event(sched, "ADDED", _pod(k, "running", scheduler="default-scheduler", node="b",
                                          cpu="2"))
    host.apply_event(sched, "ADDED", k.client.V1ConfigMap(metadata=k.client.V1ObjectMeta(name="x")))
    results = sched.run()
    assert [(r.key, r.node) for r in results] == [("shop/mine", "b")]
    ((ns, body),) = core.calls
    assert ns == "shop" and isinstance(body, k.client.V1Binding)
    wire = k.client.ApiClient().sanitize_for_serialization(body)
    assert wire == {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "mine", "namespace": "shop", "uid": "uid-mine"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "b"},
    }
    # The running pod counts on node b: a 2-CPU pod for our scheduler no longer fits there.
    host.apply_event(sched, "ADDED", _pod(k, "big", cpu="2"))
    (r,) = sched.run()
    assert r.node is None and "Insufficient cpu" in r.message
    # Deleting the running pod frees the room; the queue retries and binds.
    host.apply_event(sched, "DELETED", _pod(k, "running", scheduler="default-scheduler",
                                            node="b", cpu="2"))
    sched.clock.advance(60)
    sched.tick()
    assert [(r.key, r.node) for r in sched.run()] == [("shop/big", "b")]
    # Node updates and deletes go through.
    host.apply_event(sched, "MODIFIED", _node(k, "a", cpu="8"))
    host.apply_event(sched, "DELETED", _node(k, "a"))
    sched.cache.update_snapshot(sched.snapshot)
    assert sorted(n.name for n in sched.snapshot.list()) == ["b"]


def test_failed_binding_keeps_the_pod(host: ModuleType) -> None:
    import kubernetes as k

    sched = Scheduler(host.scheduler_config("my-scheduler"),
                      binder=host.ApiBinder(FakeCoreV1(fail=True)), clock=FakeClock())
    host.apply_event(sched, "ADDED", _node(k, "b"))
    host.apply_event(sched, "ADDED", _pod(k, "mine"))
    (r,) = sched.run()
    assert r.node is None
    assert any(p.key == "shop/mine" for p in sched.pending_pods())


def test_lease_lock_bodies(host: ModuleType) -> None:
    import kubernetes as k

    from kschedlib.leaderelection import LeaderElectionRecord, LockNotFoundError

    sys.path.insert(0, str(EXAMPLES))
    try:
        from leader_election_lease_lock import LeaseLock
    finally:
        sys.path.remove(str(EXAMPLES))

    class Resp:
        def __init__(self, obj: dict[str, Any]) -> None:
            self.data = json.dumps(obj).encode()

    class FakeCoordination:
        def __init__(self) -> None:
            self.lease: dict[str, Any] | None = None
            self.rv = 0

        def _store(self, body: dict[str, Any]) -> Resp:
            self.rv += 1
            body = {**body, "metadata": {**body["metadata"], "resourceVersion": str(self.rv)}}
            # The API server would reject what V1Lease cannot hold.
            k.client.ApiClient().sanitize_for_serialization(
                k.client.V1LeaseSpec(**{"holder_identity": body["spec"]["holderIdentity"]}))
            self.lease = body
            return Resp(body)

        def read_namespaced_lease(self, name: str, ns: str, **kw: Any) -> Resp:
            if self.lease is None:
                raise k.client.exceptions.ApiException(status=404)
            return Resp(self.lease)

        def create_namespaced_lease(self, ns: str, body: dict[str, Any], **kw: Any) -> Resp:
            return self._store(body)

        def replace_namespaced_lease(self, name: str, ns: str, body: dict[str, Any],
                                     **kw: Any) -> Resp:
            return self._store(body)

    api = FakeCoordination()
    lock = LeaseLock(api, "kube-system", "my-scheduler", "me")
    with pytest.raises(LockNotFoundError):
        lock.get()
    rec = LeaderElectionRecord.from_dict({
        "holderIdentity": "me", "leaseDurationSeconds": 15,
        "acquireTime": "2025-09-01T06:00:00.000000Z", "renewTime": "2025-09-01T06:00:00.000000Z",
        "leaderTransitions": 0})
    version = lock.create(rec)
    assert version == "1" and api.lease is not None
    assert api.lease["spec"]["holderIdentity"] == "me"
    got, v = lock.get()
    assert got.holder_identity == "me" and v == "1"
    assert lock.update(rec, v) == "2"
