"""A cluster read from dumps and manifests: what every command that reads input starts from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import attrs

from kschedlib.api.expand import CREATED_AFTER_ANNOTATION, expand_workloads
from kschedlib.api.loader import ignored_summary, load_objects
from kschedlib.api.node import Node
from kschedlib.api.pod import Pod

# The Scheduler lives layers above api/: kschedlib.scheduler registers its class here when
# imported (importing kschedlib does), so Cluster.scheduler() needs no upward import.
_scheduler_class: list[Callable[..., Any]] = []


def register_scheduler_class(cls: Callable[..., Any]) -> None:
    """Make ``Cluster.scheduler()`` build a ``cls(config, **kwargs)``."""
    _scheduler_class[:] = [cls]


@attrs.define(slots=True)
class Cluster:
    """Objects ready for a Scheduler, with what the input held besides them.

    ``objects``: typed objects in input order, manifests expanded (admission defaults applied,
    controllers' pods and claims created); ``config``: the KubeSchedulerConfiguration found
    in the input, or None; ``ignored``: kind -> count of objects kschedlib does not use;
    ``skipped_files``: files of a directory that are not JSON/YAML; ``duplicates``: objects
    defined more than once (``Pod default/web``), of which the last definition is kept, as
    ``kubectl apply`` of the sources in order would keep it."""

    objects: list[Any]
    config: dict[str, Any] | None = None
    ignored: Counter[str] = attrs.field(factory=Counter)
    skipped_files: list[str] = attrs.field(factory=list)
    duplicates: list[str] = attrs.field(factory=list)

    @property
    def nodes(self) -> list[Node]:
        return [o for o in self.objects if isinstance(o, Node)]

    @property
    def pods(self) -> list[Pod]:
        return [o for o in self.objects if isinstance(o, Pod)]

    @property
    def pending(self) -> list[Pod]:
        """Pods without a node, in input order: what a simulation schedules."""
        return [o for o in self.objects if isinstance(o, Pod) and not o.spec.node_name]

    @property
    def orphans(self) -> list[Pod]:
        """Pods bound to a node the input does not hold: kube-scheduler's cache keeps them
        off every node it schedules on, so they take no room anywhere."""
        names = {o.metadata.name for o in self.objects if isinstance(o, Node)}
        return [
            o for o in self.objects
            if isinstance(o, Pod) and o.spec.node_name and o.spec.node_name not in names
        ]

    def ignored_summary(self) -> str:
        """``ignored: 3 ConfigMap, 1 Ingress`` ("" when nothing was ignored)."""
        return ignored_summary(self.ignored)

    def notes(self) -> list[str]:
        """What a command should tell the user about the input: ignored kinds, pods bound
        to nodes not in the input, objects defined twice, files not read."""
        out = []
        if self.ignored:
            out.append(self.ignored_summary())
        orphans = self.orphans
        if orphans:
            nodes = sorted({p.spec.node_name for p in orphans})
            shown = ", ".join(nodes[:5]) + (", ..." if len(nodes) > 5 else "")
            out.append(
                f"ignored: {len(orphans)} pods bound to nodes not in the input ({shown})"
            )
        if self.duplicates:
            shown = ", ".join(self.duplicates[:5]) + (", ..." if len(self.duplicates) > 5 else "")
            out.append(
                f"{len(self.duplicates)} object(s) defined more than once, the last "
                f"definition kept: {shown}"
            )
        if self.skipped_files:
            out.append(f"not JSON/YAML, not read: {', '.join(self.skipped_files)}")
        return out

    def initial_objects(self) -> list[Any]:
        """Objects that exist from the start: all but the StatefulSet pods an OrderedReady
        controller creates only once their predecessor runs (see :meth:`held_pods`)."""
        return [o for o in self.objects if not _held(o)]

    def held_pods(self) -> dict[str, Pod]:
        """OrderedReady StatefulSet pods by the key of the pod that must be bound first."""
        return {
            o.metadata.annotations[CREATED_AFTER_ANNOTATION]: o
            for o in self.objects
            if _held(o)
        }

    def scheduler(self, **kwargs: Any) -> Any:
        """A :class:`kschedlib.Scheduler` with this cluster's configuration (unless
        ``config=`` is given) and every object applied; OrderedReady StatefulSet pods are held
        until their predecessor is bound (``Scheduler.hold``), as ``kschedlib simulate`` does."""
        config = kwargs.pop("config", self.config)
        sched = _scheduler_class[0](config, **kwargs)
        sched.apply(self.initial_objects())
        for after, pod in self.held_pods().items():
            sched.hold(pod, after=after)
        return sched


def _held(o: Any) -> bool:
    return isinstance(o, Pod) and CREATED_AFTER_ANNOTATION in o.metadata.annotations


def load_cluster(*sources: Any, expand: bool = True) -> Cluster:
    """Read every source (paths, ``-``, text, bytes, dicts, lists, client objects; see
    :func:`load_objects`) into one cluster. With ``expand`` (the default), manifests become
    what the API server and the controllers would create (:func:`expand_workloads`);
    objects of a kubectl dump and of conformance scenarios are taken as they are."""
    loaded = load_objects(*sources)
    objects, duplicates = _last_definitions(loaded)
    if expand:
        verbatim = loaded.verbatim
        objects = expand_workloads(objects, leave_alone=lambda o: id(o) in verbatim)
    return Cluster(
        objects=objects,
        config=loaded.config,
        ignored=loaded.ignored,
        skipped_files=loaded.skipped_files,
        duplicates=duplicates,
    )


def _last_definitions(objs: list[Any]) -> tuple[list[Any], list[str]]:
    """Objects with one definition per kind and key (the last one, at the first one's place)."""
    index: dict[tuple[str, str], int] = {}
    out: list[Any] = []
    duplicates: list[str] = []
    for o in objs:
        if not o.metadata.name:  # generateName: every definition is a new object
            out.append(o)
            continue
        ident = (o.kind, o.metadata.key)
        at = index.get(ident)
        if at is None:
            index[ident] = len(out)
            out.append(o)
        else:
            out[at] = o
            duplicates.append(f"{o.kind} {o.metadata.key}")
    return out, duplicates
