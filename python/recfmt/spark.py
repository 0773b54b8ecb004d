"""Recordings as a Spark 4 data source.

    from pyspark.sql import SparkSession
    import recfmt.spark

    spark = SparkSession.builder.getOrCreate()
    recfmt.spark.register(spark)
    df = spark.read.format("recfmt").option("stream", "position").load("runs/*.log")
    df.groupBy("source").count().show()

``load`` takes a recording, a folder of recordings or a glob (see :mod:`recfmt.fleet`). Each
recording is one partition (with ``.option("slice_seconds", 60)``, one per minute of it), read
on the executors, which need the ``recfmt`` package installed. Options: ``stream`` (required),
``columns`` (comma-separated names or patterns), ``source_column`` (default ``source``; empty
for none), ``slice_seconds``, ``on_loss``, ``format``, ``strict``.

The schema is the union of the recordings' (missing columns null; a type clash is an error
naming both files). Spark has no unsigned integers: ``uint8``/``uint16``/``uint32`` columns
widen to the next signed type and ``uint64`` becomes ``bigint`` (a value past 2^63 - 1 is an
error, never a wrapped number). Fixed-size lists are arrays.

Filters pushed down (``spark.sql.python.filterPushdown.enabled``, which :func:`register`
turns on): comparisons of the time column with a number narrow what each recording reads,
``source = 'x'`` / ``source IN (...)`` leave out whole recordings, and comparisons, ``IN``,
``IS [NOT] NULL`` and string prefix/suffix/contains tests on any other column (a key such
as an id, a frame number, a value range) drop the rows they reject in the reader, before
they reach Spark. Spark still applies every filter but the source ones after the scan, so
pruning only has to keep every row Spark would keep (a NaN is kept where Spark orders it
above every number).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from recfmt.errors import InvalidArgumentError
from recfmt.fleet import Fleet, Part, TimeRange, finite, widen

__all__ = ["register", "spark_arrow_schema", "row_filter"]


def register(spark: Any) -> None:
    """Registers the ``recfmt`` data source with `spark` and enables Python data source
    filter pushdown for its session."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(_source_class())


def spark_arrow_type(arrow_type: pa.DataType) -> pa.DataType:
    """`arrow_type` as a type Spark has (signed integers, variable-size lists)."""
    widened = {
        pa.uint8(): pa.int16(),
        pa.uint16(): pa.int32(),
        pa.uint32(): pa.int64(),
        pa.uint64(): pa.int64(),
        pa.float16(): pa.float32(),
        pa.large_string(): pa.string(),
        pa.large_binary(): pa.binary(),
    }
    if arrow_type in widened:
        return widened[arrow_type]
    if (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
    ):
        return pa.list_(spark_arrow_type(arrow_type.value_type))
    if pa.types.is_struct(arrow_type):
        return pa.struct(
            [pa.field(f.name, spark_arrow_type(f.type), f.nullable) for f in arrow_type]
        )
    return arrow_type


def spark_arrow_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with every type one Spark has (see :func:`spark_arrow_type`)."""
    return pa.schema([pa.field(f.name, spark_arrow_type(f.type), True) for f in schema])


#: A row filter: the mask of the rows of a batch to keep (null: drop).
RowFilter = Callable[[pa.RecordBatch], pa.Array]


def _comparable(arrow_type: pa.DataType, value: Any) -> bool:
    """Whether Arrow compares a column of `arrow_type` with `value` as Spark does."""
    if isinstance(value, bool):
        return pa.types.is_boolean(arrow_type)
    if isinstance(value, (int, float)):
        return (pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)) and finite(value)
    if isinstance(value, str):
        return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    return False


def row_filter(kind: str, column: str, value: Any, schema: pa.Schema) -> Optional[RowFilter]:
    """The rows a Spark filter keeps, computed by Arrow: `kind` is the filter's class name
    (``GreaterThan``, ``In``, ``IsNull``, ``StringStartsWith``, ...), `column` a top-level
    column of `schema` (Spark's types). ``None`` when Arrow cannot decide it exactly as Spark
    (another type, a NaN or infinite value, a filter not listed): such rows are left to Spark.
    """
    index = schema.get_field_index(column)
    if index < 0:
        return None
    arrow_type = schema.field(index).type
    floating = pa.types.is_floating(arrow_type)
    compare = {
        "EqualTo": pc.equal,
        "GreaterThan": pc.greater,
        "GreaterThanOrEqual": pc.greater_equal,
        "LessThan": pc.less,
        "LessThanOrEqual": pc.less_equal,
    }
    if kind in compare and _comparable(arrow_type, value):
        op = compare[kind]
        if floating and kind in ("GreaterThan", "GreaterThanOrEqual"):
            # Spark orders NaN above every number: `x > 5` keeps it, Arrow's comparison not.
            return lambda b: pc.or_(op(b.column(index), value), pc.is_nan(b.column(index)))
        return lambda b: op(b.column(index), value)
    if kind == "In" and value and all(_comparable(arrow_type, v) for v in value):
        try:
            allowed = pa.array(list(value)).cast(arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return None  # a value the column cannot hold: Spark decides
        return lambda b: pc.is_in(b.column(index), value_set=allowed)
    if kind == "IsNull":
        return lambda b: pc.is_null(b.column(index))
    if kind == "IsNotNull":
        return lambda b: pc.is_valid(b.column(index))
    text = {"StringStartsWith": pc.starts_with, "StringEndsWith": pc.ends_with, "StringContains": pc.match_substring}
    if kind in text and isinstance(value, str) and _comparable(arrow_type, value):
        op = text[kind]
        return lambda b: op(b.column(index), value)
    return None


def prune(batch: pa.RecordBatch, filters: Sequence[RowFilter]) -> pa.RecordBatch:
    """`batch` without the rows some of `filters` reject."""
    if not filters:
        return batch
    mask = filters[0](batch)
    for f in filters[1:]:
        mask = pc.and_(mask, f(batch))
    return batch.filter(mask)


def _option(options: Dict[str, str], name: str, default: Optional[str] = None) -> Optional[str]:
    value = options.get(name)
    return default if value is None or value == "" else value


def _fleet(options: Dict[str, str]) -> Fleet:
    path = _option(options, "path")
    stream = _option(options, "stream")
    if path is None:
        raise InvalidArgumentError("recfmt data source: give the recordings to load(...)")
    if stream is None:
        raise InvalidArgumentError('recfmt data source: give the stream, .option("stream", ...)')
    columns = _option(options, "columns")
    open_kwargs: Dict[str, Any] = {}
    if _option(options, "format"):
        open_kwargs["format"] = options["format"]
    if (_option(options, "strict") or "false").lower() == "true":
        open_kwargs["strict"] = True
    source_column = options.get("source_column", "source") or None
    return Fleet(
        path,
        stream,
        [c.strip() for c in columns.split(",")] if columns else None,
        source_column=source_column,
        **open_kwargs,
    )


def _source_class() -> type:
    """The data source classes, built on first use so that importing recfmt.spark does not
    need pyspark."""
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceReader,
        EqualTo,
        GreaterThan,
        GreaterThanOrEqual,
        In,
        InputPartition,
        LessThan,
        LessThanOrEqual,
    )
    from pyspark.sql.pandas.types import from_arrow_schema

    class RecfmtPartition(InputPartition):
        def __init__(self, part: Part) -> None:
            super().__init__(part)
            self.part = part

    class RecfmtReader(DataSourceReader):
        def __init__(self, fleet: Fleet, options: Dict[str, str]) -> None:
            self.fleet = fleet
            self.time = TimeRange()
            self.sources: Optional[set] = None
            slice_seconds = _option(options, "slice_seconds")
            self.slice_seconds = float(slice_seconds) if slice_seconds else None
            self.on_loss = _option(options, "on_loss", "raise")
            self.schema = spark_arrow_schema(fleet.schema)
            self.row_filters: List[RowFilter] = []

        def pushFilters(self, filters: List[Any]) -> Iterator[Any]:
            time_column = self.fleet.time_column
            source_column = self.fleet.source_column
            for f in filters:
                column = f.attribute[0] if len(f.attribute) == 1 else None
                if column is not None and column == source_column:
                    if isinstance(f, EqualTo) and isinstance(f.value, str):
                        self._keep_sources({f.value})
                        continue  # whole recordings left out: nothing left to check
                    if isinstance(f, In) and all(isinstance(v, str) for v in f.value):
                        self._keep_sources(set(f.value))
                        continue
                if column is not None and column == time_column and finite(getattr(f, "value", None)):
                    seconds = self.fleet.seconds_of(f.value)
                    if isinstance(f, (GreaterThan, GreaterThanOrEqual)):
                        self.time = self.time.intersect(widen(TimeRange(start=seconds)))
                    elif isinstance(f, (LessThan, LessThanOrEqual)):
                        self.time = self.time.intersect(widen(TimeRange(end=seconds)))
                    elif isinstance(f, EqualTo):
                        self.time = self.time.intersect(widen(TimeRange(seconds, seconds)))
                if column is not None:
                    rows = row_filter(type(f).__name__, column, getattr(f, "value", None), self.schema)
                    if rows is not None:
                        self.row_filters.append(rows)
                # Spark applies every filter but the source ones exactly after the scan.
                yield f

        def _keep_sources(self, names: set) -> None:
            self.sources = names if self.sources is None else self.sources & names

        def partitions(self) -> Sequence[Any]:
            parts = self.fleet.parts(time=self.time, slice_seconds=self.slice_seconds)
            if self.sources is not None:
                parts = [p for p in parts if p.source in self.sources]
            return [RecfmtPartition(p) for p in parts]

        def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
            for batch in self.fleet.read_part(partition.part, on_loss=self.on_loss):
                kept = prune(batch.cast(self.schema), self.row_filters)
                if kept.num_rows:
                    yield kept

    class RecfmtDataSource(DataSource):
        """``spark.read.format("recfmt")``: one stream of recordings (see recfmt.spark)."""

        @classmethod
        def name(cls) -> str:
            return "recfmt"

        def __init__(self, options: Dict[str, str]) -> None:
            super().__init__(options)
            self._fleet: Optional[Fleet] = None

        def fleet(self) -> Fleet:
            if self._fleet is None:
                self._fleet = _fleet(dict(self.options))
            return self._fleet

        def schema(self) -> Any:
            return from_arrow_schema(spark_arrow_schema(self.fleet().schema))

        def reader(self, schema: Any) -> Any:
            return RecfmtReader(self.fleet(), dict(self.options))

    return RecfmtDataSource
