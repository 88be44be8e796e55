"""Run a sweep locally (no extra dependency) or on a Dask cluster (``kschedlib[dask]``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from kschedlib.errors import KSchedError
from kschedlib.sweep.cluster import BaseCluster
from kschedlib.sweep.engine import run_variant
from kschedlib.sweep.results import SweepResult
from kschedlib.sweep.variant import Variant

Progress = Callable[[int, int], None]


def text_progress(
    stream: TextIO = sys.stderr, interval: float = 5.0, label: str = "variants"
) -> Progress:
    """A one-line progress bar on ``stream`` (O(1) per update), rewritten in place on a
    terminal; elsewhere (a log, a pipe) a line every ``interval`` seconds and at the end."""
    isatty = getattr(stream, "isatty", None)
    tty = bool(callable(isatty) and isatty())
    next_line = [time.monotonic() + interval]

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // total if total else width
        bar = f"{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        if tty:
            stream.write(f"\r{bar}")
            if done == total:
                stream.write("\n")
        else:
            now = time.monotonic()
            if now < next_line[0] and done != total:
                return
            next_line[0] = now + interval
            stream.write(bar + "\n")
        stream.flush()

    return show


def _task(base: BaseCluster, variant: Variant, index: int, seed: int) -> dict[str, Any]:
    """What a worker runs for one variant; errors travel back as records, not exceptions,
    so one bad variant does not sink the sweep."""
    try:
        return run_variant(base, variant, index=index, seed=seed)
    except KSchedError as exc:
        return {"index": index, "variant": variant.name, "description": variant.description,
                "error": f"{type(exc).__name__}: {exc}"}


def run_sweep(
    base: BaseCluster,
    variants: Sequence[Variant],
    *,
    client: Any = None,
    address: str | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> SweepResult:
    """Run every variant against ``base``. Locally by default; on Dask when given a
    ``distributed.Client`` or a scheduler address (the base cluster is scattered to the
    workers once). Records come back in variant order, identical whatever the engine."""
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise KSchedError(f"sweep: duplicate variant names: {', '.join(dup)}")
    total = len(variants)
    if client is None and address is None:
        records = []
        for i, v in enumerate(variants):
            records.append(_task(base, v, i, seed))
            if progress is not None:
                progress(i + 1, total)
        return SweepResult(tuple(records))
    return _run_on_dask(base, variants, client=client, address=address, seed=seed,
                        progress=progress)


def run_tasks(
    fn: Callable[[Any], dict[str, Any]],
    items: Sequence[Any],
    *,
    client: Any = None,
    address: str | None = None,
    progress: Progress | None = None,
    name: str = "kschedlib-task",
    on_record: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """``[fn(item) for item in items]`` locally, or on Dask (a ``distributed.Client`` or a
    scheduler address); ``fn`` and the items must pickle. Records come back in item order,
    identical whatever the engine; an item whose ``fn`` raises KSchedError gives a record
    with ``error``. ``on_record(index, record)`` is called as each record arrives."""
    total = len(items)
    if client is None and address is None:
        out = []
        for i, item in enumerate(items):
            out.append(_call(fn, item))
            if on_record is not None:
                on_record(i, out[-1])
            if progress is not None:
                progress(i + 1, total)
        return out
    with _dask_client(client, address) as (dist, dask_client):
        futures = [dask_client.submit(_call, fn, item, key=f"{name}-{i}", pure=False)
                   for i, item in enumerate(items)]
        index = {f.key: i for i, f in enumerate(futures)}
        records: list[dict[str, Any] | None] = [None] * total
        for done, fut in enumerate(dist.as_completed(futures), start=1):
            i = index[fut.key]
            rec: dict[str, Any] = fut.result()
            records[i] = rec
            if on_record is not None:
                on_record(i, rec)
            if progress is not None:
                progress(done, total)
        return [r if r is not None else {"error": "lost"} for r in records]


@contextmanager
def _dask_client(client: Any, address: str | None) -> Iterator[tuple[Any, Any]]:
    """The ``distributed`` module and a client: the one given, or one to ``address`` that is
    closed on exit."""
    try:
        import distributed
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise KSchedError(
            "sweep: running on Dask needs the dask extra: pip install 'kschedlib[dask]'"
        ) from None
    dist: Any = distributed
    own = client is None
    if own:
        client = dist.Client(address)
    try:
        yield dist, client
    finally:
        if own:
            client.close()


def _call(fn: Callable[[Any], dict[str, Any]], item: Any) -> dict[str, Any]:
    try:
        return fn(item)
    except KSchedError as exc:
        return {"item": repr(item), "error": f"{type(exc).__name__}: {exc}"}


def _run_on_dask(
    base: BaseCluster,
    variants: Sequence[Variant],
    *,
    client: Any,
    address: str | None,
    seed: int,
    progress: Progress | None,
) -> SweepResult:
    with _dask_client(client, address) as (dist, dask_client):
        base_future = dask_client.scatter(base, broadcast=True)
        futures = [
            dask_client.submit(_task, base_future, v, i, seed,
                               key=f"kschedlib-variant-{i}-{v.name}", pure=False)
            for i, v in enumerate(variants)
        ]
        records: list[dict[str, Any] | None] = [None] * len(variants)
        for done, fut in enumerate(dist.as_completed(futures), start=1):
            rec = fut.result()
            records[rec["index"]] = rec
            if progress is not None:
                progress(done, len(variants))
        return SweepResult(tuple(r for r in records if r is not None))
