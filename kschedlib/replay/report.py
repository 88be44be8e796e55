"""Pictures and tables of replay results: allocation-ratio curves (arrived workload on x,
allocation ratio on y, one line per policy) and the fragmentation breakdown, as a
self-contained HTML page (inline SVG, no dependency) or a matplotlib figure (``kschedlib[plot]``)."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kschedlib.errors import KSchedError

COLORS = ("#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#d62728", "#8c564b",
          "#e377c2", "#17becf", "#bcbd22")
#: The FGD paper's policies keep their colour whatever subset is drawn.
POLICY_COLORS = {"Random": COLORS[0], "DotProd": COLORS[1], "GpuClustering": COLORS[2],
                 "GpuPacking": COLORS[3], "BestFit": COLORS[4], "FGD": COLORS[5]}


def _color(name: str, k: int) -> str:
    return POLICY_COLORS.get(name, COLORS[k % len(COLORS)])


def _scale(v: float, lo: float, hi: float, a: float, b: float) -> float:
    return a + (v - lo) * (b - a) / (hi - lo) if hi > lo else a


def curves_svg(
    curves: Mapping[str, Mapping[int, float]],
    *,
    title: str = "",
    x_label: str = "arrived workload (% of GPU capacity)",
    y_label: str = "GPU allocation ratio (%)",
    y_min: float | None = None,
    width: int = 640,
    height: int = 400,
) -> str:
    """One line per curve name (x: arrived %, y: allocation %), as an SVG element."""
    pts = [(x, y) for c in curves.values() for x, y in c.items()]
    if not pts:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0 = y_min if y_min is not None else min(p[1] for p in pts)
    y1 = max(max(p[1] for p in pts), y0 + 1)
    left, right, top, bottom = 60, width - 150, 30, height - 45
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
           "font-family='sans-serif' font-size='11'>"]
    if title:
        out.append(f"<text x='{left}' y='18' font-size='13'>{html.escape(title)}</text>")
    out.append(f"<rect x='{left}' y='{top}' width='{right - left}' height='{bottom - top}' "
               "fill='none' stroke='#999'/>")
    for i in range(6):
        yv = y0 + (y1 - y0) * i / 5
        yy = _scale(yv, y0, y1, bottom, top)
        out.append(f"<line x1='{left}' x2='{right}' y1='{yy:.1f}' y2='{yy:.1f}' stroke='#eee'/>")
        out.append(f"<text x='{left - 6}' y='{yy + 4:.1f}' text-anchor='end'>{yv:.1f}</text>")
        xv = x0 + (x1 - x0) * i / 5
        xx = _scale(xv, x0, x1, left, right)
        out.append(f"<text x='{xx:.1f}' y='{bottom + 15}' text-anchor='middle'>{xv:.0f}</text>")
    out.append(f"<text x='{(left + right) / 2}' y='{height - 8}' text-anchor='middle'>"
               f"{html.escape(x_label)}</text>")
    out.append(f"<text x='14' y='{(top + bottom) / 2}' text-anchor='middle' "
               f"transform='rotate(-90 14 {(top + bottom) / 2})'>{html.escape(y_label)}</text>")
    for k, (name, c) in enumerate(curves.items()):
        color = _color(name, k)
        xs = sorted(c)
        path = " ".join(
            f"{_scale(x, x0, x1, left, right):.1f},{_scale(max(c[x], y0), y0, y1, bottom, top):.1f}"
            for x in xs
        )
        out.append(f"<polyline fill='none' stroke='{color}' stroke-width='1.6' points='{path}'/>")
        ly = top + 14 + 16 * k
        last = f" {c[xs[-1]]:.1f}" if xs else ""
        out.append(f"<line x1='{right + 10}' x2='{right + 28}' y1='{ly - 4}' y2='{ly - 4}' "
                   f"stroke='{color}' stroke-width='2'/>")
        out.append(f"<text x='{right + 32}' y='{ly}'>{html.escape(name)}{last}</text>")
    out.append("</svg>")
    return "".join(out)


def table_html(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c)))}</td>" for c in columns) + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, (list, tuple)):
        return ",".join(map(str, v))
    return str(v)


def html_report(
    sections: Iterable[tuple[str, Mapping[str, Mapping[int, float]]]],
    *,
    title: str = "kschedlib replay",
    tables: Iterable[tuple[str, Sequence[Mapping[str, Any]], Sequence[str]]] = (),
    y_min: float | None = None,
) -> str:
    """A self-contained HTML page: tables, then one curve chart per section."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             "</title><style>body{font-family:sans-serif;margin:24px}table{border-collapse:"
             "collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:3px 8px;"
             "text-align:right}</style></head><body>", f"<h1>{html.escape(title)}</h1>"]
    for name, rows, cols in tables:
        parts.append(f"<h2>{html.escape(name)}</h2>{table_html(rows, cols)}")
    for name, curves in sections:
        parts.append(f"<h2>{html.escape(name)}</h2>")
        parts.append(curves_svg(curves, title=name, y_min=y_min))
    parts.append("</body></html>")
    return "".join(parts)


def plot_curves(
    curves: Mapping[str, Mapping[int, float]],
    path: str | Path | None = None,
    *,
    title: str = "",
    y_min: float | None = None,
) -> Any:
    """A matplotlib figure of the curves (saved to ``path`` when given); needs the ``plot``
    extra: ``pip install 'kschedlib[plot]'``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise KSchedError(
            "replay: drawing figures needs matplotlib: pip install 'kschedlib[plot]'"
        ) from None
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for k, (name, c) in enumerate(curves.items()):
        xs = sorted(c)
        ax.plot(xs, [c[x] for x in xs], label=name, color=_color(name, k), lw=1.5)
    ax.set_xlabel("arrived workload (% of GPU capacity)")
    ax.set_ylabel("GPU allocation ratio (%)")
    if y_min is not None:
        ax.set_ylim(bottom=y_min)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(str(path))
    return fig
