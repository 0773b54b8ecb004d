"""One stream of many recordings as one table: the paths, the unified schema, the reads.

Every engine (:mod:`recfmt.polars`, :mod:`recfmt.dask`, :mod:`recfmt.spark`,
:mod:`recfmt.ray`) reads a fleet through this module, so they agree on what a fleet is:

- **Paths**: a path, a folder of recordings, a glob (``runs/*.log``), or a list of them.
- **Schema**: the union of the recordings' schemas of the stream, columns in order of first
  appearance. A column a recording lacks is null in its rows; a recording without the stream
  adds no rows. The same column with two types is an error naming both files.
- **Rows**: each recording read with the stream's columns, cast to the unified schema, and a
  ``source`` column (the recording's name, as in a partitioned dataset) added.

    >>> fleet = recfmt.fleet.Fleet(["a.traj", "b.traj"], "frames")   # doctest: +SKIP
    >>> fleet.schema                                                   # doctest: +SKIP
"""

from __future__ import annotations

import glob as _glob
import math
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

import recfmt
from recfmt.errors import InvalidArgumentError, NoSuchStreamError, RecfmtError

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Iterable[PathLike]]

__all__ = ["Fleet", "SchemaClashError", "expand_paths", "unify_schemas"]


class SchemaClashError(RecfmtError, TypeError):
    """Two recordings of a fleet give one column two different types."""


SchemaClashError.__module__ = "recfmt.fleet"


def expand_paths(paths: Paths) -> List[str]:
    """The recordings `paths` names: each a recording (file or folder such as a USVLOG
    session), a glob, or a folder holding recordings (its entries, sorted)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: List[str] = []
    for path in paths:
        text = os.fspath(path)
        if any(c in text for c in "*?["):
            matched = sorted(_glob.glob(text))
            if not matched:
                raise recfmt.RecordingNotFoundError(2, f"{text}: no recording matches this pattern")
            out.extend(matched)
        elif os.path.isdir(text) and not _is_recording(text):
            entries = sorted(
                os.path.join(text, name) for name in os.listdir(text) if not name.startswith(".")
            )
            out.extend(e for e in entries if _is_recording(e))
        else:
            out.append(text)
    if not out:
        raise InvalidArgumentError("no recordings given")
    return out


def _is_recording(path: str) -> bool:
    """Whether recfmt opens `path` as a recording (a folder may be one, or hold some)."""
    try:
        recfmt.open(path)
    except RecfmtError:
        return False
    return True


def unify_schemas(schemas: Sequence[Tuple[str, pa.Schema]]) -> pa.Schema:
    """The union of `(path, schema)`s: columns in order of first appearance, each with the
    type (and field metadata) of the first recording that has it. A column typed differently
    by two recordings raises :class:`SchemaClashError` naming both files."""
    fields: Dict[str, pa.Field] = {}
    owner: Dict[str, str] = {}
    for path, schema in schemas:
        for f in schema:
            seen = fields.get(f.name)
            if seen is None:
                fields[f.name] = f.with_nullable(True)
                owner[f.name] = path
            elif seen.type == pa.null():
                fields[f.name] = f.with_nullable(True)
            elif f.type != seen.type and f.type != pa.null():
                raise SchemaClashError(
                    f"column {f.name!r} is {seen.type} in {owner[f.name]} but {f.type} in {path}: "
                    "read them separately or select columns that agree"
                )
    return pa.schema(list(fields.values()))


def conform(data: Union[pa.RecordBatch, pa.Table], schema: pa.Schema, extra: Optional[Dict[str, Any]] = None) -> pa.RecordBatch:
    """`data` with the columns of `schema`, in its order: the ones it lacks all null, or, for
    a name in `extra`, that value on every row."""
    rows = data.num_rows
    columns = []
    for f in schema:
        index = data.schema.get_field_index(f.name)
        if extra is not None and f.name in extra:
            columns.append(pa.array([extra[f.name]] * rows, f.type))
        elif index < 0:
            columns.append(pa.nulls(rows, f.type))
        else:
            column = data.column(index)
            if isinstance(column, pa.ChunkedArray):
                column = column.combine_chunks()
            columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=schema)


@dataclass
class TimeRange:
    """Rows with ``start <= t < end`` in seconds on the recordings' axis; None: open."""

    start: Optional[float] = None
    end: Optional[float] = None

    def intersect(self, other: "TimeRange") -> "TimeRange":
        start = max((t for t in (self.start, other.start) if t is not None), default=None)
        end = min((t for t in (self.end, other.end) if t is not None), default=None)
        return TimeRange(start, end)


@dataclass
class Part:
    """One piece of work: one recording, or one time slice of it."""

    path: str
    source: str
    columns: Optional[List[str]]
    range: TimeRange = field(default_factory=TimeRange)


class Fleet:
    """One stream of many recordings.

    :param paths: recordings, folders of recordings or globs (see :func:`expand_paths`).
    :param stream: the stream to read from each recording.
    :param columns: the columns to keep (names as :meth:`recfmt.Recording.read` takes them;
        the time column always comes along).
    :param source_column: the name of the column holding each row's recording name (None:
        no such column).
    :param sources: the recording names (default: file name without extension).
    :param open_kwargs: passed to :func:`recfmt.open` (``format``, ``strict``, ``layouts``).
    """

    def __init__(
        self,
        paths: Paths,
        stream: str,
        columns: Optional[Union[str, Sequence[str]]] = None,
        *,
        source_column: Optional[str] = "source",
        sources: Optional[Sequence[str]] = None,
        **open_kwargs: Any,
    ) -> None:
        self.paths = expand_paths(paths)
        self.stream = stream
        self.columns = [columns] if isinstance(columns, str) else (list(columns) if columns else None)
        self.source_column = source_column
        if sources is None:
            self.sources = [recfmt.source_name(p) for p in self.paths]
        elif len(sources) != len(self.paths):
            raise InvalidArgumentError("sources= needs one name per recording")
        else:
            self.sources = list(sources)
        layouts = [os.fspath(p) for p in open_kwargs.pop("layouts", ())]
        if layouts:
            open_kwargs["layouts"] = layouts
        self.open_kwargs = open_kwargs
        self.schemas: Dict[str, pa.Schema] = {}
        for path in self.paths:
            recording = recfmt.open(path, **open_kwargs)
            if stream not in recording.streams:
                continue
            # Opening a batch stream reads nothing: its schema is the selected columns'.
            cols = self._columns_in(recording, self.columns)
            self.schemas[path] = recording.batches(stream, columns=cols).schema
        if not self.schemas:
            raise NoSuchStreamError(
                f"no stream {stream!r} in any of {len(self.paths)} recordings "
                f"(first: {self.paths[0]})"
            )
        data = unify_schemas(list(self.schemas.items()))
        if source_column is not None:
            if source_column in data.names:
                raise InvalidArgumentError(
                    f"the stream has a column {source_column!r}: give source_column= another name"
                )
            data = data.append(pa.field(source_column, pa.string()))
        self.schema: pa.Schema = data
        first = next(iter(self.schemas.values()))
        meta = {k.decode(): v.decode() for k, v in (first.metadata or {}).items()}
        self.time_column: Optional[str] = meta.get("recfmt.time_column")
        numer, _, denom = meta.get("recfmt.time_base", "1/1").partition("/")
        self.time_scale = float(numer) / float(denom or 1)

    def _columns_in(self, recording: "recfmt.Recording", wanted: Optional[List[str]]) -> Optional[List[str]]:
        """The names of `wanted` that `recording`'s stream has (patterns kept when they match)."""
        if wanted is None:
            return None
        try:
            recording.batches(self.stream, columns=wanted)
            return wanted
        except KeyError:
            pass
        kept = []
        for name in wanted:
            try:
                recording.batches(self.stream, columns=[name])
            except KeyError:
                continue
            kept.append(name)
        return kept

    def columns_lacking_somewhere(self) -> List[str]:
        """Columns some recording with the stream lacks (all null in its rows)."""
        return [
            name
            for name in self.schema.names
            if name != self.source_column
            and any(name not in schema.names for schema in self.schemas.values())
        ]

    def parts(
        self,
        columns: Optional[Sequence[str]] = None,
        time: Optional[TimeRange] = None,
        slice_seconds: Optional[float] = None,
    ) -> List[Part]:
        """The pieces to read: one per recording with the stream, or with `slice_seconds`, one
        per slice of that many seconds of each. `columns` (names of the unified schema) narrows
        the columns read."""
        time = time or TimeRange()
        out = []
        for path, source in zip(self.paths, self.sources):
            schema = self.schemas.get(path)
            if schema is None:
                continue
            if columns is not None:
                cols: Optional[List[str]] = [c for c in columns if c in schema.names]
            elif self.columns is not None:
                cols = list(schema.names)  # what the fleet's columns matched here
            else:
                cols = None
            if cols == [] and self.time_column is not None:
                # Nothing but columns this recording lacks: its time column (always read).
                cols = [self.time_column]
            elif cols == []:
                cols = None
            if slice_seconds is None:
                out.append(Part(path, source, cols, time))
                continue
            if slice_seconds <= 0:
                raise InvalidArgumentError("slice_seconds must be positive")
            span = self.time_span(path)
            if span is None:
                continue
            lo = span[0] if time.start is None else max(span[0], time.start)
            hi = span[1] if time.end is None else min(span[1], time.end)
            t = lo
            while t <= hi:
                upper = t + slice_seconds
                # The last slice runs to the end asked for (or past the last row).
                end = time.end if upper > hi else upper
                out.append(Part(path, source, cols, TimeRange(t, end)))
                t = upper
        return out

    def time_span(self, path: str) -> Optional[Tuple[float, float]]:
        """First and last time of the stream in `path`, in seconds (reads the time column)."""
        if self.time_column is None:
            return None
        recording = recfmt.open(path, **self.open_kwargs)
        times = recording.read(self.stream, columns=[self.time_column], on_loss="ignore")
        times = times.column(self.time_column)
        if len(times) == 0:
            return None
        import pyarrow.compute as pc

        bounds = pc.min_max(times.cast(pa.float64()))
        return bounds["min"].as_py() * self.time_scale, bounds["max"].as_py() * self.time_scale

    def read_part(
        self,
        part: Part,
        schema: Optional[pa.Schema] = None,
        *,
        batch_rows: int = 65536,
        on_loss: str = "raise",
    ) -> Iterator[pa.RecordBatch]:
        """The batches of `part`, each with `schema` (default: the fleet's)."""
        schema = self.schema if schema is None else schema
        recording = recfmt.open(part.path, **self.open_kwargs)
        extra = None
        if self.source_column is not None and self.source_column in schema.names:
            extra = {self.source_column: part.source}
        for batch in recording.batches(
            self.stream,
            columns=part.columns,
            start=part.range.start,
            end=part.range.end,
            batch_rows=batch_rows,
            on_loss=on_loss,
        ):
            yield conform(batch, schema, extra)

    def read_table(self, part: Part, schema: Optional[pa.Schema] = None, **kwargs: Any) -> pa.Table:
        """`read_part` as one table."""
        schema = self.schema if schema is None else schema
        return pa.Table.from_batches(list(self.read_part(part, schema, **kwargs)), schema=schema)

    def seconds_of(self, value: float) -> float:
        """A value of the time column in seconds."""
        return float(value) * self.time_scale

    def __repr__(self) -> str:
        return f"<recfmt.fleet.Fleet {self.stream!r} of {len(self.paths)} recordings>"


def widen(range_: TimeRange) -> TimeRange:
    """`range_` a little wider, for a pushed-down range the exact filter then trims (a time
    converted to seconds may round either way)."""

    def pad(t: Optional[float], sign: int) -> Optional[float]:
        if t is None:
            return None
        return t + sign * (abs(t) * 1e-9 + 1e-9)

    return TimeRange(pad(range_.start, -1), pad(range_.end, +1))


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
