"""Report data: what a scheduling run did, aggregated into compact, JSON-ready tables.

The HTML page is rendered from this data alone, so the numbers a test reads from
``Report.summary`` are the numbers the page shows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kschedlib.api.pod import Pod
from kschedlib.backend.cache.node_tree import get_zone_key
from kschedlib.explain import ScoreRow, feasible_count, score_rows
from kschedlib.results import Explanation, Outcome, SchedulingResult

#: Score breakdowns kept per pod: the selected node and the best others.
TOP_NODES = 5
#: Node names listed per (plugin, reason) group of a pod's rejections.
SAMPLE_NODES = 8

_AVAILABLE = re.compile(r"^0/(\d+) nodes are available:\s*")
_COUNTED = re.compile(r"^(\d+) (.+)$")
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
_BASE_RESOURCES = ("cpu", "memory", "pods")


def split_reasons(message: str) -> tuple[list[tuple[str, int]], str]:
    """The ``(reason, node count)`` parts of a FailedScheduling message and its PostFilter
    part, e.g. ``0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated
    taint {a: b}. preemption: ...`` gives the two reasons and ``preemption: ...``."""
    m = _AVAILABLE.match(message)
    if m is None:
        return ([(message, 0)] if message else []), ""
    total = int(m.group(1))
    rest = message[m.end():]
    post = ""
    idx = rest.find(". ")
    if idx >= 0:
        rest, post = rest[:idx], rest[idx + 2:]
    rest = rest.strip()
    if rest.endswith("."):
        rest = rest[:-1]
    parts: list[tuple[str, int]] = []
    for piece in rest.split(", ") if rest else []:
        cm = _COUNTED.match(piece)
        if cm is not None:
            parts.append((cm.group(2), int(cm.group(1))))
        elif parts:  # a reason that itself contains ", "
            reason, n = parts[-1]
            parts[-1] = (f"{reason}, {piece}", n)
        else:  # a PreFilter message: it stands for every node
            parts.append((piece, total))
    return parts, post


def _zone_of(labels: Mapping[str, str]) -> str:
    for key in _ZONE_LABELS:
        if key in labels:
            return labels[key]
    return ""


def _top_scores(exp: Explanation) -> list[ScoreRow]:
    """The best-scored nodes (ties by name), the selected node always among them."""
    rows = score_rows(exp)
    ranked = sorted(rows, key=lambda r: (-r[1], r[0]))
    top = ranked[:TOP_NODES]
    if exp.selected and all(r[0] != exp.selected for r in top):
        sel = [r for r in rows if r[0] == exp.selected]
        if sel:
            top = [*top[: TOP_NODES - 1], sel[0]]
    return top


def _explanation_data(exp: Explanation, plugin_index: dict[str, int]) -> dict[str, Any]:
    """One pod's explanation, aggregated: rejections grouped by (plugin, code, reason) with
    node counts and sample names, and the score breakdown of the top nodes."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for node, verdict in exp.rejected.items():
        for reason in verdict.reasons or ("",):
            groups.setdefault((verdict.plugin or "", verdict.code, reason), []).append(node)
    rejected = [
        [plugin, code, reason, len(nodes), sorted(nodes)[:SAMPLE_NODES]]
        for (plugin, code, reason), nodes in sorted(
            groups.items(), key=lambda kv: (-len(kv[1]), kv[0])
        )
    ]
    scores = []
    for node, total, plugins, extenders in _top_scores(exp):
        parts: list[list[int]] = []
        for plugin, raw, normalized, weight in plugins:
            idx = plugin_index.setdefault(plugin, len(plugin_index))
            parts.append([idx, raw, normalized, weight])
        for e, val in extenders.items():
            idx = plugin_index.setdefault(f"extender:{e}", len(plugin_index))
            parts.append([idx, val, val, 1])
        scores.append([node, total, parts])
    feasible = feasible_count(exp)
    out: dict[str, Any] = {
        "profile": exp.profile,
        "feasible": feasible,
        # Every feasible node is scored unless only one is (kube-scheduler skips scoring then);
        # counted this way, trimmed explanations give the same figure.
        "scored": feasible if exp.scores else 0,
        "rejected": rejected,
        "scores": scores,
    }
    if exp.pre_filter is not None:
        pf = exp.pre_filter
        out["preFilter"] = [pf.plugin or "", pf.code, ", ".join(pf.reasons)]
    if exp.post_filter_message:
        out["postFilter"] = exp.post_filter_message
    if exp.nominated_fast_path:
        out["fastPath"] = True
    return out


def _plain(obj: Any) -> Any:
    """An object as plain JSON data (``to_dict()`` for kschedlib objects)."""
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return obj


def _device_rows(claims: Iterable[Any]) -> list[dict[str, Any]]:
    """Allocated devices of ResourceClaims (resource.k8s.io), one row per device result."""
    rows: list[dict[str, Any]] = []
    for claim in claims:
        d = _plain(claim)
        if not isinstance(d, Mapping):
            continue
        meta = d.get("metadata") or {}
        status = d.get("status") or {}
        alloc = status.get("allocation") or {}
        results = (alloc.get("devices") or {}).get("results") or []
        if not results:
            continue
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}".lstrip("/")
        ns = meta.get("namespace", "")
        reserved = [
            f"{ns}/{r.get('name', '')}" if ns and r.get("resource", "pods") == "pods"
            else str(r.get("name", ""))
            for r in status.get("reservedFor") or []
            if isinstance(r, Mapping)
        ]
        node = ""
        terms = ((alloc.get("nodeSelector") or {}).get("nodeSelectorTerms")) or []
        for term in terms:
            for f in term.get("matchFields") or []:
                if f.get("key") == "metadata.name" and f.get("values"):
                    node = f["values"][0]
        for r in results:
            rows.append({
                "claim": key,
                "request": r.get("request", ""),
                "driver": r.get("driver", ""),
                "pool": r.get("pool", ""),
                "device": r.get("device", ""),
                "node": node,
                "reservedFor": reserved,
            })
    return rows


def build_report_data(
    scheduler: Any,
    results: Iterable[SchedulingResult],
    *,
    order: Sequence[str] | None = None,
    preemptions: Iterable[SchedulingResult] | None = None,
    title: str = "kschedlib scheduling report",
    claims: Iterable[Any] | None = None,
) -> dict[str, Any]:
    """Aggregate a run into the report's data (see ``Report``)."""
    last: dict[str, SchedulingResult] = {}
    seen_preemptions: list[SchedulingResult] = []
    for res in results:
        last[res.key] = res
        if res.victims and preemptions is None:
            seen_preemptions.append(res)
    preempting = list(preemptions) if preemptions is not None else seen_preemptions
    keys = list(order) if order is not None else list(last)

    # Nodes and utilization from the scheduler's cache.
    sched = scheduler
    sched.cache.update_snapshot(sched.snapshot)
    infos = sorted(sched.snapshot.list(), key=lambda ni: ni.name)
    extra: set[str] = set()
    ephemeral = False
    for ni in infos:
        extra.update(k for k, v in ni.allocatable.scalar_resources.items() if v)
        ephemeral = ephemeral or ni.requested.ephemeral_storage > 0
    resources = [*_BASE_RESOURCES, *(["ephemeral-storage"] if ephemeral else []), *sorted(extra)]
    zones: list[str] = []
    zone_index: dict[str, int] = {}
    nodes: dict[str, list[Any]] = {"name": [], "zone": [], "alloc": [], "req": []}
    for ni in infos:
        node = ni.node
        zone = _zone_of(node.metadata.labels) if node is not None else ""
        if not zone and node is not None and get_zone_key(node):
            zone = get_zone_key(node)
        if zone not in zone_index:
            zone_index[zone] = len(zones)
            zones.append(zone)
        alloc: list[int] = []
        req: list[int] = []
        for rname in resources:
            if rname == "pods":
                alloc.append(ni.allocatable.allowed_pod_number)
                req.append(len(ni.pods))
            else:
                alloc.append(ni.allocatable.get(rname))
                req.append(ni.requested.get(rname))
        nodes["name"].append(ni.name)
        nodes["zone"].append(zone_index[zone])
        nodes["alloc"].append(alloc)
        nodes["req"].append(req)

    # Pods: outcome, node, message (messages interned: thousands of pods share a few).
    messages: list[str] = []
    message_index: dict[str, int] = {}
    outcomes: Counter[str] = Counter()
    reasons_pods: Counter[str] = Counter()
    reasons_nodes: Counter[str] = Counter()
    message_pods: Counter[str] = Counter()
    plugin_index: dict[str, int] = {}
    pods: dict[str, list[Any]] = {
        "name": [], "outcome": [], "node": [], "message": [], "nominated": [],
    }
    explanations: list[Any] = []
    explain = getattr(sched, "explain", None)
    for key in keys:
        r = last.get(key)
        outcome = r.outcome.value if r is not None else "NotAttempted"
        outcomes[outcome] += 1
        msg = "" if r is None or r.outcome == Outcome.Scheduled else r.message
        if r is None:
            msg = "never attempted"
        if msg not in message_index:
            message_index[msg] = len(messages)
            messages.append(msg)
        if r is not None and r.outcome == Outcome.Unschedulable:
            message_pods[msg] += 1
            parts, _ = split_reasons(msg)
            for reason, n in parts:
                reasons_pods[reason] += 1
                reasons_nodes[reason] += n
        pods["name"].append(key)
        pods["outcome"].append(outcome)
        pods["node"].append(r.node if r is not None and r.outcome == Outcome.Scheduled else "")
        pods["message"].append(message_index[msg])
        pods["nominated"].append((r.nominated_node or "") if r is not None else "")
        exp = r.explanation if r is not None else None
        if exp is None and callable(explain):
            exp = explain(key)
        explanations.append(None if exp is None else _explanation_data(exp, plugin_index))

    victims: set[str] = set()
    preemption_rows = []
    for r in preempting:
        names = sorted(v.key for v in r.victims)
        victims.update(names)
        if r.message not in message_index:
            message_index[r.message] = len(messages)
            messages.append(r.message)
        preemption_rows.append({
            "pod": r.key, "node": r.nominated_node or "", "victims": names,
            "message": message_index[r.message],
        })

    claim_objs = claims
    objects = getattr(sched, "objects", None)
    if claim_objs is None:
        claim_objs = objects.list_objects("ResourceClaim") if objects is not None else []
    devices = _device_rows(claim_objs)
    device_use: list[Any] = []
    if objects is not None and devices:
        from kschedlib.report.dra import device_utilization

        device_use = device_utilization(objects)

    summary = {
        "pods": len(keys),
        "scheduled": outcomes.get(Outcome.Scheduled.value, 0),
        "unschedulable": outcomes.get(Outcome.Unschedulable.value, 0),
        "error": outcomes.get(Outcome.Error.value, 0),
        "waiting": outcomes.get(Outcome.Waiting.value, 0),
        "bindFailed": outcomes.get(Outcome.BindFailed.value, 0),
        "notAttempted": outcomes.get("NotAttempted", 0),
        "preempted": len(victims),
        "preemptors": len(preemption_rows),
        "nodes": len(infos),
        "zones": len(zones),
    }
    return {
        "title": title,
        "summary": summary,
        "reasons": [
            [reason, reasons_pods[reason], reasons_nodes[reason]]
            for reason in sorted(reasons_pods, key=lambda x: (-reasons_pods[x], x))
        ],
        "messages": messages,
        "failedMessages": [
            [message_index[m], n] for m, n in sorted(message_pods.items(), key=lambda kv: -kv[1])
        ],
        "resources": resources,
        "zones": zones,
        "nodes": nodes,
        "pods": pods,
        "plugins": [p for p, _ in sorted(plugin_index.items(), key=lambda kv: kv[1])],
        "explanations": explanations,
        "preemptions": preemption_rows,
        "devices": devices,
        "deviceUtilization": device_use,
    }


def pending_order(objects: Iterable[Any]) -> list[str]:
    """Keys of the pods without a node, in input order (the pods a run schedules)."""
    return [o.key for o in objects if isinstance(o, Pod) and not o.spec.node_name]
