"""Example: kschedlib as a real scheduler for pods with ``schedulerName: my-scheduler``.

The host lists and watches a cluster with the official client (``pip install
'kschedlib[kubernetes]'``), feeds every event to a ``Scheduler``, binds through the API with
a ``Binding``, and runs only while it holds a Lease (leader election, so several replicas can
run). kschedlib does no I/O: everything talking to the cluster is here. The translation layer
(``apply_event``, ``binding_for``, ``ApiBinder``) is tested with the client's real model
classes in tests/examples/test_kube_host.py.

Run: ``python examples/kube_host.py --scheduler-name my-scheduler`` with a kubeconfig, or in
a pod with RBAC to watch pods, nodes and the other kinds below, create ``pods/binding`` and
get/create/update ``coordination.k8s.io`` leases.
"""

from __future__ import annotations

import argparse
import logging
import os
import queue
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from kschedlib import RealClock, Scheduler
from kschedlib.api import Node, Pod, load_objects
from kschedlib.errors import CacheError, KSchedError

log = logging.getLogger("kube-host")

Event = tuple[str, Any]  # ("ADDED" | "MODIFIED" | "DELETED", client model object)


# ------------------------------------------------------------------ translation layer


def scheduler_config(scheduler_name: str) -> dict[str, Any]:
    """One default profile under our scheduler name: pods of other schedulers are only
    accounted for (when bound), never scheduled by us."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": scheduler_name}],
    }


def to_kschedlib(obj: Any) -> Any:
    """A client model object (V1Pod, V1Node, ...) as the kschedlib object, or None for a kind
    kschedlib does not use."""
    objs = load_objects(obj)
    return objs[0] if objs else None


def apply_event(sched: Scheduler, event_type: str, obj: Any) -> None:
    """Deliver one watch event to the scheduler, as kube-scheduler's informers do."""
    o = to_kschedlib(obj)
    if o is None:
        return
    if isinstance(o, Pod):
        if event_type == "DELETED":
            sched.delete_pod(o)
        elif event_type == "MODIFIED":
            sched.update_pod(o)
        else:
            sched.update_pod(o)  # ADDED after a re-list may repeat a known pod
    elif isinstance(o, Node):
        if event_type == "DELETED":
            sched.delete_node(o)
        else:
            try:
                sched.update_node(o)
            except CacheError:
                sched.add_node(o)
    elif event_type == "DELETED":
        sched.delete_object(o)
    else:
        sched.add_object(o)


def binding_for(pod: Pod, node_name: str) -> Any:
    """The ``Binding`` that assigns ``pod`` to ``node_name`` (POST pods/<name>/binding)."""
    from kubernetes import client

    return client.V1Binding(
        api_version="v1",
        kind="Binding",
        metadata=client.V1ObjectMeta(
            name=pod.metadata.name, namespace=pod.metadata.namespace, uid=pod.metadata.uid
        ),
        target=client.V1ObjectReference(api_version="v1", kind="Node", name=node_name),
    )


class ApiBinder:
    """kschedlib's binder: create the Binding; an API error fails the bind (the scheduler
    then forgets the assumed pod and retries it, as kube-scheduler does)."""

    def __init__(self, core_v1: Any) -> None:
        self.core_v1 = core_v1

    def bind(self, pod: Pod, node_name: str) -> None:
        self.core_v1.create_namespaced_binding(
            pod.metadata.namespace, binding_for(pod, node_name), _preload_content=False
        )


# ------------------------------------------------------------------ talking to the cluster


def watch_kinds(core_v1: Any, others: list[tuple[str, Callable[..., Any]]]) -> list[tuple[str, Callable[..., Any]]]:
    return [("pods", core_v1.list_pod_for_all_namespaces), ("nodes", core_v1.list_node), *others]


def watch_forever(name: str, list_fn: Callable[..., Any], events: queue.Queue[Event],
                  stop: threading.Event) -> None:
    """List and watch one kind, putting events on ``events``; restart on errors."""
    from kubernetes import watch

    while not stop.is_set():
        try:
            for ev in watch.Watch().stream(list_fn, timeout_seconds=300):
                events.put((ev["type"], ev["object"]))
                if stop.is_set():
                    return
        except Exception as exc:  # a watch that breaks is restarted, as informers do
            log.warning("watch %s: %s; restarting", name, exc)
            time.sleep(1.0)


def drain(events: queue.Queue[Event], timeout: float) -> Iterator[Event]:
    try:
        yield events.get(timeout=timeout)
        while True:
            yield events.get_nowait()
    except queue.Empty:
        return


def run_scheduler(scheduler_name: str, stop: threading.Event) -> None:
    from kubernetes import client

    core = client.CoreV1Api()
    others = [
        ("namespaces", core.list_namespace),
        ("pvcs", core.list_persistent_volume_claim_for_all_namespaces),
        ("pvs", core.list_persistent_volume),
        ("services", core.list_service_for_all_namespaces),
        ("pdbs", client.PolicyV1Api().list_pod_disruption_budget_for_all_namespaces),
        ("storageclasses", client.StorageV1Api().list_storage_class),
        ("csinodes", client.StorageV1Api().list_csi_node),
        ("replicasets", client.AppsV1Api().list_replica_set_for_all_namespaces),
        ("statefulsets", client.AppsV1Api().list_stateful_set_for_all_namespaces),
    ]
    sched = Scheduler(scheduler_config(scheduler_name), binder=ApiBinder(core),
                      clock=RealClock())
    events: queue.Queue[Event] = queue.Queue()
    for name, fn in watch_kinds(core, others):
        threading.Thread(target=watch_forever, args=(name, fn, events, stop), daemon=True).start()
    while not stop.is_set():
        for event_type, obj in drain(events, timeout=0.5):
            try:
                apply_event(sched, event_type, obj)
            except KSchedError as exc:  # a bad object is logged, never fatal
                log.warning("%s event not applied: %s", event_type, exc)
        sched.tick()
        for r in sched.run():
            log.info("%s: %s %s", r.key, r.outcome.value, r.node or r.message)


def main(argv: list[str] | None = None) -> None:
    from kubernetes import client, config
    from leader_election_lease_lock import LeaseLock

    from kschedlib.leaderelection import LeaderCallbacks, LeaderElectionConfig, LeaderElector

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scheduler-name", default="my-scheduler")
    ap.add_argument("--lease-namespace", default="kube-system")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    identity = f"{socket.gethostname()}_{uuid.uuid4()}"
    lock = LeaseLock(client.CoordinationV1Api(), args.lease_namespace, args.scheduler_name,
                     identity)
    stop = threading.Event()
    elector = LeaderElector(LeaderElectionConfig(
        lock=lock,
        callbacks=LeaderCallbacks(
            on_started_leading=lambda: threading.Thread(
                target=run_scheduler, args=(args.scheduler_name, stop), daemon=True).start(),
            on_stopped_leading=lambda: sys.exit(0 if stop.is_set() else 1),
            on_new_leader=lambda leader: log.info("leader: %s", leader),
        ),
        lease_duration=15.0, renew_deadline=10.0, retry_period=2.0,
        release_on_cancel=True, name=args.scheduler_name,
    ))
    elector.run(stop)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
