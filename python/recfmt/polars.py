"""One stream of many recordings as a lazy polars scan.

    >>> import polars as pl
    >>> import recfmt.polars
    >>> lf = recfmt.polars.scan("runs/*.traj", "frames")                       # doctest: +SKIP
    >>> lf.filter(pl.col("t_us") < 5_000_000).select("source", "energy.kinetic").collect()  # doctest: +SKIP

The scan is a polars IO plugin: polars tells it which columns the query uses (only those are
decoded), the query's filter (a range of the time column narrows what each recording reads;
the whole filter is applied to every batch), and a row limit (`head`, `limit`: reading stops
there). Nothing is read until `collect`, and every `collect` reads again, so a scan collects
any number of times. Recordings with differing columns unify as :mod:`recfmt.fleet` says
(missing columns null; a type clash is an error naming both files).
"""

from __future__ import annotations

import json
from typing import Any, Iterator, List, Optional, Sequence, Union

import pyarrow as pa

from recfmt.fleet import Fleet, Paths, TimeRange, finite, widen

__all__ = ["scan"]


def scan(
    paths: Paths,
    stream: str,
    columns: Optional[Union[str, Sequence[str]]] = None,
    *,
    source_column: Optional[str] = "source",
    sources: Optional[Sequence[str]] = None,
    on_loss: str = "raise",
    **open_kwargs: Any,
) -> Any:
    """One stream of `paths` (recordings, folders of them, globs) as a ``polars.LazyFrame``.

    :param columns: columns to offer (default: all); the time column always comes along.
    :param source_column: name of the column holding each row's recording name (``None``: no
        such column).
    :param sources: the recording names (default: file name without extension).
    :param on_loss: as :meth:`recfmt.Recording.read`, for each recording read.
    :param open_kwargs: passed to :func:`recfmt.open` (``format``, ``strict``, ``layouts``).
    """
    import polars as pl
    from polars.io.plugins import register_io_source

    fleet = Fleet(
        paths, stream, columns, source_column=source_column, sources=sources, **open_kwargs
    )
    polars_schema = pl.from_arrow(fleet.schema.empty_table()).schema

    def source(
        with_columns: Optional[List[str]],
        predicate: Optional["pl.Expr"],
        n_rows: Optional[int],
        batch_size: Optional[int],
    ) -> Iterator["pl.DataFrame"]:
        schema = fleet.schema
        wanted = with_columns
        if wanted is not None and predicate is not None:
            # The filter may use columns the output does not keep.
            needed = set(wanted) | set(predicate.meta.root_names())
            wanted = [name for name in schema.names if name in needed]
        if wanted is not None:
            schema = pa.schema([schema.field(name) for name in wanted])
        time = TimeRange()
        if predicate is not None and fleet.time_column is not None:
            time = widen(time_range(predicate, fleet))
        left = n_rows
        for part in fleet.parts(columns=wanted, time=time):
            for batch in fleet.read_part(
                part, schema, batch_rows=batch_size or 65536, on_loss=on_loss
            ):
                frame = pl.from_arrow(batch)
                if predicate is not None:
                    frame = frame.filter(predicate)
                if with_columns is not None:
                    frame = frame.select(with_columns)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                yield frame
                if left is not None and left <= 0:
                    return

    return register_io_source(
        source,
        schema=polars_schema,
        explain_name="recfmt",
        explain_detail=f"stream {stream!r} of {len(fleet.paths)} recordings",
    )


_FLIP = {"Gt": "Lt", "GtEq": "LtEq", "Lt": "Gt", "LtEq": "GtEq", "Eq": "Eq"}


def time_range(predicate: Any, fleet: Fleet) -> TimeRange:
    """The range of the time column (in seconds) every row `predicate` keeps lies in, from
    comparisons of the time column with numbers joined by `&` (anything else: no bound)."""
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:  # an expression polars cannot write as JSON: no pushdown
        return TimeRange()
    return _range_of(tree, fleet)


def _range_of(node: Any, fleet: Fleet) -> TimeRange:
    binary = node.get("BinaryExpr") if isinstance(node, dict) else None
    if binary is None:
        return TimeRange()
    op = binary.get("op")
    if op in ("And", "LogicalAnd"):
        return _range_of(binary["left"], fleet).intersect(_range_of(binary["right"], fleet))
    left, right = binary.get("left"), binary.get("right")
    if _column(left) == fleet.time_column and _number(right) is not None:
        value = _number(right)
    elif _column(right) == fleet.time_column and _number(left) is not None:
        value, op = _number(left), _FLIP.get(op)
    else:
        return TimeRange()
    seconds = fleet.seconds_of(value)
    if op in ("Gt", "GtEq"):
        return TimeRange(start=seconds)
    if op in ("Lt", "LtEq"):
        return TimeRange(end=seconds)
    if op == "Eq":
        return TimeRange(start=seconds, end=seconds)
    return TimeRange()


def _column(node: Any) -> Optional[str]:
    if isinstance(node, dict) and isinstance(node.get("Column"), str):
        return node["Column"]
    return None


def _number(node: Any) -> Optional[float]:
    """The number a literal node holds, found wherever this polars version keeps it."""
    if not isinstance(node, dict) or "Literal" not in node:
        return None
    found: List[float] = []

    def walk(value: Any) -> None:
        if finite(value):
            found.append(value)
        elif isinstance(value, dict):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(node["Literal"])
    return found[0] if len(found) == 1 else None
