"""Example: a Kubernetes ``Lease`` as the ResourceLock of a kschedlib LeaderElector.

Needs the official client (``pip install kubernetes``) and RBAC to get/create/update
``coordination.k8s.io`` leases. kschedlib never imports this file; run it as a script.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import sys
import threading
import uuid
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kschedlib.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LockConflictError,
    LockNotFoundError,
)

log = logging.getLogger("lease-lock-example")


def record_to_spec(record: LeaderElectionRecord) -> dict[str, Any]:
    """LeaseSpec fields for a record; times are already MicroTime (6 fraction digits, Z)."""
    data = record.to_dict()
    spec = {
        "holderIdentity": data["holderIdentity"],
        "leaseDurationSeconds": data["leaseDurationSeconds"],
        "acquireTime": data["acquireTime"],
        "renewTime": data["renewTime"],
        "leaseTransitions": data["leaderTransitions"],
    }
    return {key: value for key, value in spec.items() if value is not None}


def spec_to_record(spec: dict[str, Any]) -> LeaderElectionRecord:
    """A record from a LeaseSpec (Lease calls the counter leaseTransitions)."""
    return LeaderElectionRecord.from_dict(
        {
            "holderIdentity": spec.get("holderIdentity"),
            "leaseDurationSeconds": spec.get("leaseDurationSeconds"),
            "acquireTime": spec.get("acquireTime"),
            "renewTime": spec.get("renewTime"),
            "leaderTransitions": spec.get("leaseTransitions"),
        }
    )


class LeaseLock:
    """Stores the record in a Lease; the opaque version is metadata.resourceVersion.

    Raw JSON is used both ways so the client's datetime (de)serialisation is bypassed.
    """

    def __init__(
        self, api: client.CoordinationV1Api, namespace: str, name: str, identity: str
    ) -> None:
        self._api = api
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self._lease: dict[str, Any] | None = None  # last object seen, to keep its metadata

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self) -> tuple[LeaderElectionRecord, object]:
        try:
            resp = self._api.read_namespaced_lease(
                self.name, self.namespace, _preload_content=False
            )
        except ApiException as exc:
            if exc.status == 404:
                raise LockNotFoundError(f"lease {self.describe()} not found") from None
            raise
        return self._remember(resp)

    def create(self, record: LeaderElectionRecord) -> object:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record_to_spec(record),
        }
        try:
            resp = self._api.create_namespaced_lease(self.namespace, body, _preload_content=False)
        except ApiException as exc:
            if exc.status == 409:
                raise LockConflictError(f"lease {self.describe()} already exists") from None
            raise
        return self._remember(resp)[1]

    def update(self, record: LeaderElectionRecord, version: object) -> object:
        if self._lease is None:
            self.get()
        assert self._lease is not None
        body = dict(self._lease)
        body["metadata"] = dict(body["metadata"], resourceVersion=version)
        body["spec"] = record_to_spec(record)
        try:
            resp = self._api.replace_namespaced_lease(
                self.name, self.namespace, body, _preload_content=False
            )
        except ApiException as exc:
            if exc.status == 409:
                raise LockConflictError(f"lease {self.describe()} changed") from None
            if exc.status == 404:
                raise LockNotFoundError(f"lease {self.describe()} not found") from None
            raise
        return self._remember(resp)[1]

    def _remember(self, resp: Any) -> tuple[LeaderElectionRecord, object]:
        lease = json.loads(resp.data)
        self._lease = lease
        return spec_to_record(lease.get("spec") or {}), lease["metadata"]["resourceVersion"]


def main() -> int:
    logging.basicConfig(level=logging.INFO)
    try:
        config.load_incluster_config()
    except config.ConfigException:
        try:
            config.load_kube_config()
        except (config.ConfigException, OSError) as exc:
            sys.stderr.write(
                f"leader_election_lease_lock: no cluster to talk to (not in a pod, and no "
                f"usable kubeconfig: {exc}); set KUBECONFIG or run it in a cluster\n"
            )
            return 2

    identity = f"{socket.gethostname()}_{uuid.uuid4()}"  # kube-scheduler's identity shape
    lock = LeaseLock(client.CoordinationV1Api(), "kube-system", "my-scheduler", identity)
    stop = threading.Event()

    def on_stopped_leading() -> None:
        if stop.is_set():
            log.info("requested to terminate, exiting")
            sys.exit(0)
        log.error("leader election lost")
        sys.exit(1)

    elector = LeaderElector(
        LeaderElectionConfig(
            lock=lock,
            callbacks=LeaderCallbacks(
                on_started_leading=lambda: log.info("%s started leading", identity),
                on_stopped_leading=on_stopped_leading,
                on_new_leader=lambda leader: log.info("new leader: %s", leader),
            ),
            lease_duration=15.0,
            renew_deadline=10.0,
            retry_period=2.0,
            release_on_cancel=True,
            name="my-scheduler",
        )
    )
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    elector.run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
