"""``python -m kschedlib.replay``: run the FGD paper's experiments and report them.

    python -m kschedlib.replay paper TRACE_DIR --seeds 42-51 --out results.jsonl
    python -m kschedlib.replay report results.jsonl --html curves.html --png curves.png
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kschedlib.errors import KSchedError


def _ints(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def _cmd_paper(args: argparse.Namespace) -> int:
    from kschedlib.replay import paper
    from kschedlib.sweep.execute import text_progress
    from kschedlib.traces.alibaba import GPU_NODE_LIST, load_nodes, task_lists

    trace_dir = Path(args.trace_dir)
    lists = task_lists(trace_dir) if args.task_lists == "all" else args.task_lists.split(",")
    policies = args.policies.split(",") if args.policies else list(paper.PAPER_POLICIES)
    node_names = None
    if args.nodes_every > 1:
        names = sorted(n.metadata.name for n in load_nodes(trace_dir / GPU_NODE_LIST))
        node_names = names[:: args.nodes_every]
    frag = [x / 100 for x in _ints(args.frag_samples)] if args.frag_samples else []
    params = paper.paper_matrix(trace_dir, task_lists=lists, policies=policies,
                                seeds=_ints(args.seeds), ratio=args.ratio,
                                node_names=node_names, limit_tasks=args.limit_tasks,
                                frag_samples=frag)
    client: Any = None
    cluster: Any = None
    if args.local_cluster:
        try:
            import distributed
        except ImportError:
            raise KSchedError("--local-cluster needs the dask extra: "
                              "pip install 'kschedlib[dask]'") from None
        dist: Any = distributed
        cluster = dist.LocalCluster(n_workers=args.local_cluster, threads_per_worker=1,
                                    processes=True, dashboard_address=None)
        client = dist.Client(cluster)
    start, cpu = time.perf_counter(), time.process_time()
    partial = Path(args.out + ".partial")  # records as they arrive, in arrival order
    partial.write_text("")

    def keep(i: int, rec: dict[str, Any]) -> None:
        with partial.open("a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")

    try:
        records = paper.run_matrix(params, client=client, address=args.dask,
                                   progress=text_progress(sys.stderr, label="experiments"),
                                   on_record=keep)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    wall = time.perf_counter() - start
    with open(args.out, "w") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    Path(args.out + ".partial").unlink(missing_ok=True)
    local = client is None and args.dask is None
    per = f"{(time.process_time() - cpu) / max(len(records), 1):.1f} s CPU" if local else "-"
    print(f"{len(records)} experiments in {wall:.1f} s wall ({per} per experiment); "
          f"records in {args.out}")
    _print_headline(records)
    _print_compare(records)
    errors = [r for r in records if "error" in r]
    for r in errors:
        print("error:", r["error"], file=sys.stderr)
    return 1 if errors else 0


def _print_headline(records: Sequence[dict[str, Any]], at: int = 100) -> None:
    from kschedlib.replay import paper

    lists = sorted({r["task_list"] for r in records if "task_list" in r},
                   key=lambda n: (n != "default", n))
    for t in lists:
        rows = paper.headline_rows(records, task_list=t, at=at)
        if not rows:
            continue
        print(f"\nGPU allocation ratio at {at}% arrived workload, task list {t}:")
        print(f"{'policy':<14} {'kschedlib':>9} {'paper':>7} {'diff':>6}  seeds")
        for r in rows:
            paper_v = "-" if r["paper"] is None else f"{r['paper']:.2f}"
            diff = "-" if r["diff"] is None else f"{r['diff']:+.2f}"
            seeds = r["seeds"]
            s = f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])
            print(f"{r['policy']:<14} {r['mean']:>9.2f} {paper_v:>7} {diff:>6}  {s} ({len(seeds)})")


def _print_compare(records: Sequence[dict[str, Any]]) -> None:
    from kschedlib.replay import paper

    rows = paper.compare_rows(records)
    if not rows:
        return
    print("\nLargest difference to the paper's mean curve (every 10% of arrived workload):")
    print(f"{'task list':<12} {'policy':<14} {'max |diff|':>10} {'at':>4}  seeds")
    for r in rows:
        flag = "" if r["within_1pt"] else "  > 1 point"
        print(f"{r['task_list']:<12} {r['policy']:<14} {r['max_abs_diff']:>10.2f} "
              f"{r['at']:>4}  {len(r['seeds'])}{flag}")


def _cmd_report(args: argparse.Namespace) -> int:
    from kschedlib.replay import paper, report

    records = [json.loads(line) for line in Path(args.records).read_text().splitlines()
               if line.strip()]
    _print_headline(records, at=args.at)
    _print_compare(records)
    curves = paper.mean_curves(records)
    lists = sorted({t for t, _ in curves}, key=lambda n: (n != "default", n))
    sections = []
    for t in lists:
        by_policy = {p: {x: v for x, v in curves[(t, p)].items() if x % args.every == 0
                         or x == max(curves[(t, p)])}
                     for p in paper.PAPER_POLICIES if (t, p) in curves}
        sections.append((f"task list {t}", by_policy))
    if args.html:
        tables: list[tuple[str, Any, list[str]]] = []
        for t in lists:
            tables.append((f"GPU allocation ratio (%) at {args.at}% arrived, task list {t}",
                           paper.headline_rows(records, task_list=t, at=args.at),
                           ["policy", "mean", "paper", "diff", "seeds"]))
            frag = paper.frag_rows(records, task_list=t, at=args.at / 100)
            if frag:
                tables.append((f"fragmentation (milli-GPU) at {args.at}% arrived, task list {t}",
                               frag, ["policy", "frag_pct", "frag_gpu_milli", "idle_gpu_milli",
                                      "frag_q1_lack_both", "frag_q2_lack_gpu",
                                      "frag_q3_satisfied", "frag_q4_lack_cpu",
                                      "frag_xl_satisfied", "frag_xr_lack_cpu",
                                      "frag_no_access"]))
        Path(args.html).write_text(report.html_report(sections, tables=tables,
                                                      title="GPU allocation ratio",
                                                      y_min=args.y_min))
        print(f"HTML report: {args.html}")
    if args.png and sections:
        report.plot_curves(sections[0][1], args.png, title=sections[0][0], y_min=args.y_min)
        print(f"figure: {args.png}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kschedlib.replay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("paper", help="run the FGD paper's experiments on the Alibaba GPU trace")
    p.add_argument("trace_dir")
    p.add_argument("--task-lists", default="default",
                   help="comma-separated task lists (default, cpu050, ...) or 'all'")
    p.add_argument("--policies", default="", help="comma-separated (default: all six)")
    p.add_argument("--seeds", default="42-51")
    p.add_argument("--ratio", type=float, default=1.3, help="inflation ratio (default 1.3)")
    p.add_argument("--out", default="replay-results.jsonl")
    p.add_argument("--dask", default=None, help="a Dask scheduler address")
    p.add_argument("--local-cluster", type=int, default=0, metavar="N",
                   help="run on a Dask LocalCluster of N worker processes")
    p.add_argument("--nodes-every", type=int, default=1, help="keep every k-th node (a cut)")
    p.add_argument("--limit-tasks", type=int, default=None, help="first N tasks only (a cut)")
    p.add_argument("--frag-samples", default="10,20,30,40,50,60,70,80,90,100,110,120,130",
                   help="arrived GPU percents at which to sample fragmentation ('' for none)")
    p.set_defaults(fn=_cmd_paper)
    r = sub.add_parser("report", help="table and curves from the paper command's records")
    r.add_argument("records")
    r.add_argument("--html", default=None)
    r.add_argument("--png", default=None, help="a matplotlib figure (kschedlib[plot])")
    r.add_argument("--at", type=int, default=100, help="arrived percent of the table")
    r.add_argument("--every", type=int, default=1, help="plot every k-th percent")
    r.add_argument("--y-min", type=float, default=None)
    r.set_defaults(fn=_cmd_report)
    args = ap.parse_args(argv)
    try:
        code: int = args.fn(args)
    except KSchedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
