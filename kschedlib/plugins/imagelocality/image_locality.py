"""ImageLocality Score: the sizes of the pod's images present on the node, each scaled by
the share of nodes that have it, mapped linearly from [23MB, 1000MB x containers] to [0, 100]."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from kschedlib.api.pod import Pod
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.interface import MAX_NODE_SCORE, ScoreExtensions
from kschedlib.framework.registry import PluginSpec
from kschedlib.framework.status import Status
from kschedlib.framework.types import ImageStateSummary, NodeInfo

NAME = "ImageLocality"
STATE_KEY = "PreScore" + NAME
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """The CRI name of an image: ``:latest`` added when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """The image size scaled by the fraction of nodes holding it (against node heating)."""
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp the summed image scores to [min, max threshold] and scale to [0, 100]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


@attrs.define(slots=True, frozen=True)
class _PodImages:
    """The pod's normalized image names (init containers, then containers) and the cluster
    size, computed once per cycle."""

    names: tuple[str, ...]
    total_num_nodes: int

    def clone(self) -> _PodImages:
        return self


class ImageLocality:
    """Scores nodes higher when they already hold large, not-too-widespread pod images."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def sign_pod(self, pod: Pod) -> Hashable | None:
        """SignPod: None (unsignable) when it would look beyond the node."""
        return tuple(c.image for c in pod.spec.containers) + tuple(
            c.image for c in pod.spec.init_containers
        )

    node_local = True
    """Its score reads only the NodeInfo (image summaries are refreshed with the NodeInfo, as
    in kube-scheduler's snapshot) and the number of nodes, which node_local_fragment adds."""

    def node_local_fragment(self, pod: Pod) -> Hashable:
        """The images and the cluster's node count: what a node's score depends on besides
        its NodeInfo. The count is left out (None) when no node lists any of the pod's
        images: every node then scores the same whatever the count, and results stored
        before a node came or went stay valid."""
        snap = self._handle.snapshot_shared_lister()
        present = getattr(snap, "image_names", None)
        if present is not None:
            spec = pod.spec
            if not any(
                normalized_image_name(c.image) in present
                for c in (*spec.init_containers, *spec.containers)
            ):
                return (self.sign_pod(pod), None)
        return (self.sign_pod(pod), len(snap.node_infos().list()))

    def _pod_images(self, state: CycleState, pod: Pod) -> _PodImages:
        s = state.get(STATE_KEY)
        if isinstance(s, _PodImages):
            return s
        spec = pod.spec
        names = tuple(
            normalized_image_name(c.image) for c in (*spec.init_containers, *spec.containers)
        )
        total = len(self._handle.snapshot_shared_lister().node_infos().list())
        s = _PodImages(names, total)
        state.write(STATE_KEY, s)
        return s

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = self._pod_images(state, pod)
        image_states = node_info.image_states
        total = 0
        if image_states:
            for name in s.names:
                st = image_states.get(name)
                if st is not None:
                    total += scaled_image_score(st, s.total_num_nodes)
        return calculate_priority(total, len(s.names)), None

    def score_nodes(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for every node at once (same result as ``score`` per node)."""
        s = self._pod_images(state, pod)
        names, num_nodes, count = s.names, s.total_num_nodes, len(s.names)
        none = calculate_priority(0, count)  # a node holding none of the images
        states = [ni.image_states for ni in nodes]
        if not any(states):
            return [none] * len(nodes), None
        out: list[int] = []
        append = out.append
        for ni in nodes:
            image_states = ni.image_states
            if not image_states:
                append(none)
                continue
            total = 0
            found = False
            for name in names:
                st = image_states.get(name)
                if st is not None:
                    found = True
                    total += scaled_image_score(st, num_nodes)
            append(calculate_priority(total, count) if found else none)
        return out, None

    def score_extensions(self) -> ScoreExtensions | None:
        return None


def new(args: Any, handle: Any) -> ImageLocality:
    return ImageLocality(handle)


PLUGINS: tuple[PluginSpec, ...] = (PluginSpec(NAME, new),)
