"""Fleets of recordings as one Dask DataFrame.

    import recfmt.dask

    if __name__ == "__main__":  # Dask's processes import this script again
        df = recfmt.dask.read("runs/*.log", "vehicle")
        print(df.groupby("source").speed.mean().compute())

Each recording is one partition (or, with ``slice_seconds``, one partition per time slice of
it), read on the workers; the graph only holds paths. The DataFrame's columns are the union of
the recordings' (see :mod:`recfmt.fleet`): a column a recording lacks is null in its rows, and
its dtype is the nullable pandas one (``Int64``, ``boolean``) when it is an integer or boolean
column, so every partition has the declared dtypes; list and struct columns are
``pandas.ArrowDtype`` columns. A ``source`` column holds each row's
recording name, as in a partitioned dataset written by ``recfmt.convert(..., partition=True)``.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from recfmt.fleet import Fleet, Part, Paths, TimeRange
from recfmt.errors import InvalidArgumentError

__all__ = ["read"]

# Nullable pandas dtypes for the Arrow types whose plain NumPy dtype cannot hold a null.
_NULLABLE = {
    pa.int8(): "Int8",
    pa.int16(): "Int16",
    pa.int32(): "Int32",
    pa.int64(): "Int64",
    pa.uint8(): "UInt8",
    pa.uint16(): "UInt16",
    pa.uint32(): "UInt32",
    pa.uint64(): "UInt64",
    pa.bool_(): "boolean",
}


def _nested_as_arrow(arrow_type: pa.DataType) -> Any:
    """Lists and structs stay Arrow data in pandas (``pd.ArrowDtype``): as NumPy objects,
    Dask would take them for text and turn them into strings."""
    import pandas as pd

    nested = (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
        or pa.types.is_struct(arrow_type)
        or pa.types.is_map(arrow_type)
    )
    return pd.ArrowDtype(arrow_type) if nested else None


def _frame(table: pa.Table, nullable: List[str], source_column: Optional[str]) -> Any:
    frame = table.to_pandas(types_mapper=_nested_as_arrow)
    for name in nullable:
        dtype = _NULLABLE.get(table.schema.field(name).type)
        if dtype is not None:
            frame[name] = frame[name].astype(dtype)
    if source_column is not None:
        frame[source_column] = frame[source_column].astype("string")
    return frame


def _load(item: Tuple[Fleet, Part, List[str], str]) -> Any:
    fleet, part, nullable, on_loss = item
    return _frame(fleet.read_table(part, on_loss=on_loss), nullable, fleet.source_column)


def read(
    paths: Paths,
    stream: str,
    columns: Optional[Union[str, Sequence[str]]] = None,
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

    :param paths: recordings (files or folders), folders of recordings, or globs; one
        partition each.
    :param stream: the stream to read from each (a recording without it adds no rows).
    :param columns: as :meth:`recfmt.Recording.read` (a name, a list, patterns).
    :param start, end: as :meth:`recfmt.Recording.read` (with ``slice_seconds``, seconds).
    :param slice_seconds: split each recording into partitions of this many seconds of its
        time axis (the span is found by reading the time column once, here).
    :param source_column: name of the column holding each row's recording name (``None``: no
        such column).
    :param sources: the recording names (default: file name without extension).
    :param on_loss: as :meth:`recfmt.Recording.read`, applied on the workers.
    :param open_kwargs: passed to :func:`recfmt.open` (``format``, ``strict``, ``layouts``).
    :raises recfmt.fleet.SchemaClashError: two recordings type a column differently.
    """
    import dask.dataframe as dd

    if slice_seconds is not None and (isinstance(start, str) or isinstance(end, str)):
        raise InvalidArgumentError("with slice_seconds, start and end are seconds (numbers)")
    fleet = Fleet(
        paths, stream, columns, source_column=source_column, sources=sources, **open_kwargs
    )
    nullable = fleet.columns_lacking_somewhere()
    meta = _frame(fleet.schema.empty_table(), nullable, source_column)
    parts = fleet.parts(time=TimeRange(start, end), slice_seconds=slice_seconds)
    if not parts:
        return dd.from_pandas(meta, npartitions=1)
    items = [(fleet, part, nullable, on_loss) for part in parts]
    return dd.from_map(_load, items, meta=meta, enforce_metadata=True)
