"""Read simulation and vehicle recordings as Arrow tables.

recfmt reads USVLOG sessions, ICAREC recordings and Icarus HDF5 files, CARLA recorder logs,
FlightGear flight recorder tapes and NanoVer trajectories. Each recording is a set of streams;
each stream reads as a ``pyarrow.Table`` (or a stream of record batches) whose types follow the
source types, with units in the field metadata and provenance in the schema metadata.

    >>> import recfmt
    >>> rec = recfmt.open("session/")                  # doctest: +SKIP
    >>> rec.format, rec.streams                         # doctest: +SKIP
    ('usvlog', ['REC_NAV_SOLUTION', ...])
    >>> table = rec.read("REC_NAV_SOLUTION", columns=["lat", "lon"], start="+10s")  # doctest: +SKIP
    >>> for batch in rec.batches("REC_NAV_SOLUTION"):  # bounded memory  # doctest: +SKIP
    ...     ...

The data is decoded in Rust with the GIL released and handed to pyarrow through the Arrow C
data interface: no value becomes a Python object and no buffer is copied. ``polars.from_arrow``,
DuckDB and pandas (``to_pandas``) take the tables directly.

Errors are :class:`RecfmtError` (subclasses say what kind), and also the built-in a Python user
expects: a missing recording is a ``FileNotFoundError``, a missing stream or column a
``KeyError``, a bad argument a ``ValueError``. They pickle, so they cross process pools. A read that finishes but lost input
data (a truncated or corrupt file) raises :class:`DataLostError` carrying the integrity report
and the complete rows that were read, unless ``on_loss="warn"`` or ``"ignore"`` is given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from .errors import (
    DataLostError,
    DataLostWarning,
    InvalidArgumentError,
    LimitError,
    MalformedError,
    NoSuchColumnError,
    NoSuchStreamError,
    OutputExistsError,
    RecfmtError,
    RecordingNotFoundError,
    UnknownFormatError,
    UnsupportedError,
)
from ._recfmt import (
    BatchStream,
    Recording,
    __version__,
    carla_query,
    formats,
    source_name,
    state_at,
)
from ._recfmt import open as _open
from ._recfmt import convert as _convert
from ._recfmt import validate as _validate

__all__ = [
    "BatchStream",
    "DataLostError",
    "DataLostWarning",
    "InvalidArgumentError",
    "LimitError",
    "MalformedError",
    "NoSuchColumnError",
    "NoSuchStreamError",
    "OutputExistsError",
    "RecfmtError",
    "RecordingNotFoundError",
    "Recording",
    "UnknownFormatError",
    "UnsupportedError",
    "__version__",
    "carla_query",
    "convert",
    "formats",
    "open",
    "source_name",
    "state_at",
    "validate",
]

PathLike = Union[str, "os.PathLike[str]"]


def open(  # noqa: A001 - mirrors the command line and builtins.open on purpose
    path: PathLike,
    format: Optional[str] = None,
    strict: bool = False,
    layouts: Sequence[PathLike] = (),
    *,
    resync: bool = False,
) -> Recording:
    """Open a recording (a file, or a folder such as a USVLOG session or an ICAREC recording).

    :param path: the recording.
    :param format: a format id (see :func:`formats`) instead of detecting it from the first bytes.
    :param strict: turn tolerated deviations (a torn last record, a wrong payload length) into
        errors, as ``--strict`` does.
    :param layouts: user-defined record layout files (USVLOG), as ``--layout``.
    :param resync: scan past a corrupt length field instead of stopping, as ``--resync``.
    :raises UnknownFormatError: no format recognised the input.
    :raises RecfmtError: the recording cannot be opened (the message names file and offset).
    """
    return _open(os.fspath(path), format, strict, [os.fspath(p) for p in layouts], resync=resync)


def _expand(paths: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [os.fspath(p) for p in paths]


def convert(
    paths: Union[PathLike, Iterable[PathLike]],
    to: str = "parquet",
    out: Optional[PathLike] = None,
    *,
    partition: bool = False,
    source: Optional[str] = None,
    format: Optional[str] = None,
    strict: bool = False,
    layouts: Sequence[PathLike] = (),
    batch_rows: int = 65536,
    compression: str = "zstd",
    force: bool = False,
    **options: Any,
) -> List[dict]:
    """Convert recordings, exactly as ``recfmt convert`` does (the same library call).

    :param to: any target ``recfmt convert --to`` takes (see ``recfmt convert --help`` or
        :func:`formats`): ``parquet``, ``csv``, ``arrow``, ``ndjson``, ``hdf5``, ``mcap``, a
        format id such as ``usvlog`` or ``nanover``, or a format's own output such as ``kml``.
    :param out: the output. One input: the folder (tables) or file (``hdf5``, ``mcap``, …) to
        write. Several inputs: a folder, each output named after its input, as on the command
        line.
    :param options: the other ``convert`` flags, with ``_`` for ``-``: ``streams``,
        ``exclude_streams``, ``signals``, ``exclude_signals`` (a text or a list), ``start``,
        ``end`` (seconds, or text such as ``"+12.5s"``), ``carry_last``, ``merge``,
        ``max_rows``, ``upcast_f64``, ``time_column`` (``utc``/``tai``/``gps``),
        ``string_width``, ``delimiter``, ``units_row``, ``jobs``, ``threads`` (threads
        sharing the work on one input, ``--threads``), ``resync``,
        ``row_group_rows`` and ``row_group_bytes`` (Parquet row groups: 1 Mi rows and 64 MiB
        by default, as pyarrow), ``row_group_memory`` (bytes of finished Parquet pages kept
        in memory, 8 MiB; the rest wait in a temporary file beside the output, same bytes
        either way), ``byte_stream_split`` (Parquet float columns in the ``BYTE_STREAM_SPLIT``
        encoding: much smaller files on smooth signals; pyarrow, DuckDB, Spark and polars read
        it, older readers do not), and ``opt``
        (format options as ``--opt`` takes them: ``{"carla.build": "0.9.10"}``).

    With ``partition=True`` (``--partition``) every recording is added to the Hive-partitioned
    Parquet dataset under ``out``: ``<out>/<stream>/source=<recording>/part-0.parquet``, each row
    with a ``source`` column holding the recording's name (its file name without extension, or
    ``source``). Adding a recording adds files and rewrites no other; converting a recording
    again replaces its own parts (with ``force=True``). DuckDB, Spark, Trino and
    ``pyarrow.dataset`` read ``<out>/<stream>`` as one table.

    An existing output is refused (nothing is written) unless ``force=True`` (``--force``). It
    holds for this call only: conversions running at the same time in other threads keep
    their own.

    Returns one dict per file written: ``{"source", "path", "streams", "stream", "rows"}``:
    ``streams`` lists the streams the file holds (one for a table; every stream written for
    HDF5; empty for an output that holds a whole recording, such as MCAP or a recording
    format), ``stream`` is the file's only stream when it holds one (else ``None``), and
    ``rows`` counts the file's rows (``None`` where the conversion does not count them).

    :raises RecfmtError: an input could not be converted (the command line's message); the
        other inputs are still converted first.
    :raises DataLostError: a recording lost data (its complete rows are still written).
    """
    if out is None:
        raise TypeError("convert() needs out=")
    inputs = _expand(paths)
    if source is not None and len(inputs) != 1:
        raise ValueError("source= names one recording; give one path with it")
    unknown = set(options) - _CONVERT_OPTIONS
    if unknown:
        raise TypeError("convert() got unexpected options: " + ", ".join(sorted(unknown)))
    results = _convert(
        inputs,
        os.fspath(out),
        to,
        several=not isinstance(paths, (str, os.PathLike)),
        partition=partition,
        source=source,
        format=format,
        strict=strict,
        layouts=[os.fspath(p) for p in layouts],
        batch_rows=batch_rows,
        compression=compression,
        force=force,
        **{k: _as_list(v) if k in _LIST_OPTIONS else v for k, v in options.items()},
    )
    written = []
    lost = []
    failed = []
    for path, result in zip(inputs, results):
        if isinstance(result, BaseException):
            failed.append(result)
            continue
        written.extend(_files_written(path, result))
        if result["outcome"] == "data_lost":
            lost.append((path, result["integrity"]))
    if failed:
        raise failed[0]
    if lost:
        path, integrity = lost[0]
        error = DataLostError(
            f"{path}: input data lost ({integrity['status']}); every complete record was written"
        )
        error.integrity = integrity
        error.table = None
        raise error
    return written


def _files_written(source: str, result: dict) -> List[dict]:
    """One dict per file a conversion `result` wrote: the native report lists an HDF5 file
    once per stream (each with its rows), which become one file with its ``streams``."""
    files: Dict[str, dict] = {}
    for stream, path, rows in result["files"] or [(None, result["output"], None)]:
        entry = files.setdefault(
            os.fspath(path),
            {"source": source, "path": Path(path), "streams": [], "stream": None, "rows": None},
        )
        if stream is not None:
            entry["streams"].append(stream)
        if rows is not None:
            entry["rows"] = (entry["rows"] or 0) + rows
    for entry in files.values():
        if len(entry["streams"]) == 1:
            entry["stream"] = entry["streams"][0]
    return list(files.values())


_CONVERT_OPTIONS = frozenset(
    (
        "streams",
        "exclude_streams",
        "signals",
        "exclude_signals",
        "start",
        "end",
        "carry_last",
        "merge",
        "max_rows",
        "upcast_f64",
        "time_column",
        "string_width",
        "delimiter",
        "units_row",
        "jobs",
        "threads",
        "resync",
        "opt",
        "row_group_rows",
        "row_group_bytes",
        "row_group_memory",
        "byte_stream_split",
    )
)
_LIST_OPTIONS = ("streams", "exclude_streams", "signals", "exclude_signals")


def _as_list(value: Union[str, Sequence[str]]) -> List[str]:
    return [value] if isinstance(value, str) else list(value)


def validate(
    path: PathLike,
    *,
    against: Optional[PathLike] = None,
    format: Optional[str] = None,
    strict: bool = False,
    layouts: Sequence[PathLike] = (),
    resync: bool = False,
) -> dict:
    """Read a recording completely with its format's own checks: the dict of
    ``recfmt validate --json`` (``valid``, ``problems``, ``notes``, ``integrity``, ...).

    Input data lost (a truncated or corrupt file) makes the recording invalid, and is listed
    among ``problems`` as a sentence saying what and where.
    """
    report = _validate(
        os.fspath(path),
        against=None if against is None else os.fspath(against),
        format=format,
        strict=strict,
        layouts=[os.fspath(p) for p in layouts],
        resync=resync,
    )
    integrity = report.get("integrity") or {}
    if integrity.get("status", "complete") != "complete":
        report["problems"].insert(0, _loss_problem(integrity))
    return report


def _loss_problem(integrity: dict) -> str:
    """What the integrity report says was lost, as one problem line (a byte offset said
    once: the reader's own words carry it when there are any)."""
    parts = [str(integrity.get("status", "data lost"))]
    if integrity.get("bytes_lost"):
        parts.append(f"{integrity['bytes_lost']} bytes lost")
    if integrity.get("records_skipped"):
        parts.append(f"{integrity['records_skipped']} corrupt records skipped")
    warnings = integrity.get("warnings") or []
    if warnings:
        return f"input data lost ({', '.join(parts)}): {warnings[0]}"
    if integrity.get("truncated_at") is not None:
        parts.append(f"truncated at byte {integrity['truncated_at']}")
    return f"input data lost ({', '.join(parts)})"
