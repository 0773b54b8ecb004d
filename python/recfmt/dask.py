"""Fleets of recordings as one Dask DataFrame.

    >>> import recfmt.dask
    >>> df = recfmt.dask.read(["runs/day1.log", "runs/day2.log"], "vehicle")  # doctest: +SKIP
    >>> df.groupby("source").speed.mean().compute()                          # doctest: +SKIP

Each recording is one partition (or, with ``slice_seconds``, one partition per time slice of
it), read on the workers by :meth:`recfmt.Recording.read`; the graph only holds paths. The
DataFrame's meta (column names and dtypes) comes from the stream's schema, so nothing is read
until a computation needs it. A ``source`` column holds each row's recording name, as in a
partitioned dataset written by ``recfmt.convert(..., partition=True)``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

import recfmt
from recfmt import source_name

PathLike = Union[str, "os.PathLike[str]"]


def _frame(table: pa.Table, source: str, source_column: Optional[str]) -> Any:
    frame = table.to_pandas()
    if source_column is not None:
        frame[source_column] = source
        frame[source_column] = frame[source_column].astype("string")
    return frame


def _load(item: Tuple[str, str, str, Optional[List[str]], Any, Any, Dict[str, Any], Optional[str], str]) -> Any:
    path, source, stream, columns, start, end, open_kwargs, source_column, on_loss = item
    recording = recfmt.open(path, **open_kwargs)
    table = recording.read(stream, columns=columns, start=start, end=end, on_loss=on_loss)
    return _frame(table, source, source_column)


def _time_span(recording: recfmt.Recording, stream: str) -> Optional[Tuple[float, float]]:
    """First and last time of `stream` in seconds, reading only its time column."""
    schema = recording.schema(stream)
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    time_column = meta.get("recfmt.time_column")
    if time_column is None:
        return None
    numer, _, denom = meta.get("recfmt.time_base", "1/1").partition("/")
    scale = float(numer) / float(denom or 1)
    times = recording.read(stream, columns=[time_column], on_loss="ignore").column(time_column)
    if len(times) == 0:
        return None
    import pyarrow.compute as pc

    bounds = pc.min_max(times.cast(pa.float64()))
    return bounds["min"].as_py() * scale, bounds["max"].as_py() * scale


def read(
    paths: Union[PathLike, Iterable[PathLike]],
    stream: str,
    columns: Optional[Sequence[str]] = None,
    start: Optional[Union[float, str]] = None,
    end: Optional[Union[float, str]] = None,
    *,
    slice_seconds: Optional[float] = None,
    source_column: Optional[str] = "source",
    sources: Optional[Sequence[str]] = None,
    on_loss: str = "raise",
    **open_kwargs: Any,
) -> Any:
    """One stream of many recordings as a ``dask.dataframe.DataFrame``.

    :param paths: recordings (files or folders), one partition each.
    :param stream: the stream to read from each.
    :param columns, start, end: as :meth:`recfmt.Recording.read` (with ``slice_seconds``,
        ``start`` and ``end`` must be seconds, not text).
    :param slice_seconds: split each recording into partitions of this many seconds of its
        time axis (the span is found by reading the time column once, here).
    :param source_column: name of the column holding each row's recording name (``None``: no
        such column).
    :param sources: the recording names (default: file name without extension).
    :param on_loss: as :meth:`recfmt.Recording.read`, applied on the workers.
    :param open_kwargs: passed to :func:`recfmt.open` (``format``, ``strict``, ``layouts``).
    """
    import dask.dataframe as dd

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("recfmt.dask.read needs at least one recording")
    if sources is None:
        sources = [source_name(p) for p in paths]
    elif len(sources) != len(paths):
        raise ValueError("sources= needs one name per path")
    cols = list(columns) if columns is not None else None
    layouts = [os.fspath(p) for p in open_kwargs.pop("layouts", ())]
    if layouts:
        open_kwargs["layouts"] = layouts

    first = recfmt.open(paths[0], **open_kwargs)
    # Opening a batch stream reads nothing: its schema is the selected columns'.
    meta = _frame(first.batches(stream, columns=cols).schema.empty_table(), "", source_column)

    items = []
    for path, source in zip(paths, sources):
        if slice_seconds is None:
            items.append((path, source, stream, cols, start, end, open_kwargs, source_column, on_loss))
            continue
        if slice_seconds <= 0:
            raise ValueError("slice_seconds must be positive")
        if isinstance(start, str) or isinstance(end, str):
            raise ValueError("with slice_seconds, start and end are seconds (numbers)")
        span = _time_span(recfmt.open(path, **open_kwargs), stream)
        if span is None:
            continue
        lo = span[0] if start is None else max(span[0], start)
        hi = span[1] if end is None else min(span[1], end)
        t = lo
        while t <= hi:
            upper = t + slice_seconds
            last = upper > hi
            # The last slice runs to `end` (or past the last row), so no row is left out.
            slice_end = end if last else upper
            items.append((path, source, stream, cols, t, slice_end, open_kwargs, source_column, on_loss))
            t = upper
    if not items:
        return dd.from_pandas(meta, npartitions=1)
    return dd.from_map(_load, items, meta=meta, enforce_metadata=False)

