"""recfmt.polars, recfmt.dask (and recfmt.spark, recfmt.ray where installed) on fleets whose
recordings differ: values equal `recfmt cat --output ndjson`, missing columns null, a type
clash an error naming both files, all through the one schema unification of recfmt.fleet."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import recfmt
import recfmt.fleet
from conftest import FIXTURES, assert_table_matches, reference, samples


def traj_set() -> List[Path]:
    """NanoVer trajectories whose frames differ in columns (25 to 29) but not in types."""
    wanted = ("hello", "test_")
    return [p for p in samples("nanover/server-py", "traj") if p.name.startswith(wanted)]


def mixed_set() -> List[Path]:
    """The trajectories and the FlightGear tapes: two formats, different streams."""
    return traj_set() + samples("fgtape", "fgtape")


def needs(paths: List[Path]) -> List[Path]:
    if len(paths) < 2:
        pytest.skip("needs the NanoVer and FlightGear samples")
    return paths


def check_against_cat(table: pa.Table, paths: List[Path], stream: str) -> None:
    """`table` (one stream of `paths`, with a `source` column) holds, for each recording, the
    rows `recfmt cat` prints, its columns equal, the columns it lacks null."""
    expected_rows = 0
    for path in paths:
        rec = recfmt.open(path)
        if stream not in rec.streams:
            continue
        name = recfmt.source_name(path)
        mine = table.filter(pc.equal(table.column("source"), name))
        schema = rec.schema(stream)
        rows = reference(path)[0].get(stream, [])
        expected_rows += len(rows)
        got = mine.select(schema.names).cast(schema)
        assert_table_matches(f"{path.name} {stream}", rows, got)
        for other in table.column_names:
            if other not in schema.names and other != "source":
                assert mine.column(other).null_count == mine.num_rows, (path.name, other)
    assert table.num_rows == expected_rows


def test_unify_schemas_fills_missing_columns_and_names_both_files_on_a_clash():
    a = pa.schema([("t", pa.float64()), ("x", pa.int32())])
    b = pa.schema([("t", pa.float64()), ("y", pa.string())])
    assert recfmt.fleet.unify_schemas([("a.log", a), ("b.log", b)]).names == ["t", "x", "y"]
    c = pa.schema([("t", pa.float64()), ("x", pa.string())])
    with pytest.raises(recfmt.fleet.SchemaClashError) as caught:
        recfmt.fleet.unify_schemas([("a.log", a), ("b.log", b), ("c.log", c)])
    assert "a.log" in str(caught.value) and "c.log" in str(caught.value)
    assert isinstance(caught.value, recfmt.RecfmtError) and isinstance(caught.value, TypeError)


def test_fleet_paths_take_globs_and_folders():
    paths = needs(samples("fgtape", "fgtape"))
    folder = paths[0].parent
    assert recfmt.fleet.expand_paths(str(folder / "*.fgtape")) == [str(p) for p in paths]
    assert recfmt.fleet.expand_paths(folder) == [str(p) for p in paths]
    with pytest.raises(FileNotFoundError):
        recfmt.fleet.expand_paths(str(folder / "*.nothing"))


def test_a_type_clash_between_trajectories_names_both_files():
    every = samples("nanover/server-py", "traj")
    if len(every) < 2:
        pytest.skip("no NanoVer samples")
    with pytest.raises(recfmt.fleet.SchemaClashError, match="residue.ids") as caught:
        recfmt.fleet.Fleet(every, "frames")
    assert sum(p.name in str(caught.value) for p in every) == 2
    # Leaving the column out reads them all.
    assert "residue.ids" not in recfmt.fleet.Fleet(every, "frames", columns="energy*").schema.names


# --- polars --------------------------------------------------------------------------------

pl = pytest.importorskip("polars")


@pytest.mark.parametrize("stream", ["frames", "signals"])
def test_polars_scan_equals_cat_on_a_mixed_set(stream):
    import recfmt.polars

    paths = needs(mixed_set())
    lf = recfmt.polars.scan(paths, stream)
    first = lf.collect()
    # A scan collects any number of times.
    second = lf.collect()
    assert first.shape == second.shape and first.height > 0
    check_against_cat(first.to_arrow(), paths, stream)
    widest = max(len(recfmt.open(p).schema(stream)) for p in paths if stream in recfmt.open(p).streams)
    assert first.width > widest  # the union, plus source


def test_polars_scan_pushes_projection_time_and_limit_down():
    import recfmt.polars

    paths = needs(traj_set())
    lf = recfmt.polars.scan(paths, "frames")
    full = lf.collect()
    # Projection: only the columns asked for come back, equal to the full read's.
    picked = lf.select("source", "energy.kinetic").collect()
    assert picked.columns == ["source", "energy.kinetic"]
    assert picked.equals(full.select("source", "energy.kinetic"))
    # A time range: the same rows as filtering the full read.
    cut = 100_000
    early = lf.filter((pl.col("t_us") >= 1000) & (pl.col("t_us") < cut)).collect()
    assert early.height > 0
    assert early.equals(full.filter((pl.col("t_us") >= 1000) & (pl.col("t_us") < cut)))
    mixed = lf.filter((pl.col("t_us") < cut) & pl.col("energy.kinetic").is_not_null()).collect()
    assert mixed.equals(full.filter((pl.col("t_us") < cut) & pl.col("energy.kinetic").is_not_null()))
    # A row limit.
    assert lf.head(5).collect().equals(full.head(5))
    # The pushed-down range is what the scan reads.
    fleet = recfmt.fleet.Fleet(paths, "frames")
    bounds = recfmt.polars.time_range((pl.col("t_us") >= 1000) & (pl.col("t_us") < cut), fleet)
    assert (bounds.start, bounds.end) == (1000 * 1e-6, cut * 1e-6)
    assert recfmt.polars.time_range(pl.col("t_us") > pl.col("frame_index"), fleet).start is None


# --- Dask ----------------------------------------------------------------------------------


def test_dask_unifies_a_mixed_set_and_declares_what_it_computes():
    pytest.importorskip("dask.dataframe")
    import dask
    import pandas as pd

    import recfmt.dask

    paths = needs(mixed_set())
    with dask.config.set(scheduler="synchronous"):
        df = recfmt.dask.read(paths, "frames")
        result = df.compute()
    # The declared columns and dtypes are the computed ones (30, not the first file's 26).
    assert list(df.columns) == list(result.columns)
    assert dict(df.dtypes) == dict(result.dtypes)
    fleet = recfmt.fleet.Fleet(paths, "frames")
    assert list(df.columns) == fleet.schema.names
    # Values: each recording's rows as its own read gives them.
    for path in traj_set():
        name = recfmt.source_name(path)
        mine = result[result["source"] == name].reset_index(drop=True)
        own = recfmt.open(path).read("frames")
        for column in own.column_names:
            got = [_plain(v) for v in mine[column].tolist()]
            assert got == [_plain(v) for v in own.column(column).to_pylist()], (name, column)
        for column in set(result.columns) - set(own.column_names) - {"source"}:
            assert mine[column].isna().all(), (name, column)


def _plain(value):
    """A value as comparable text: NA, None and NaN alike (pandas holds a float null as NaN),
    arrays as lists."""
    import math

    import pandas as pd

    if hasattr(value, "tolist"):
        value = value.tolist()
    if value is None or value is pd.NA:
        return "null"
    if isinstance(value, float) and math.isnan(value):
        return "null"
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return repr(value)


# --- Spark ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark", minversion="4.0")
    import shutil as _shutil

    if _shutil.which("java") is None and "JAVA_HOME" not in __import__("os").environ:
        pytest.skip("Spark needs Java")
    import os
    import sys

    from pyspark.sql import SparkSession

    import recfmt.spark

    # The Python workers import recfmt: they run this interpreter.
    os.environ["PYSPARK_PYTHON"] = sys.executable

    session = (
        SparkSession.builder.master("local[2]")
        .appName("recfmt-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    recfmt.spark.register(session)
    yield session
    session.stop()


def _linked_folder(tmp_path, paths):
    folder = tmp_path / "fleet"
    folder.mkdir()
    for p in paths:
        (folder / p.name).symlink_to(p)
    return folder


@pytest.mark.parametrize("stream", ["frames", "signals"])
def test_spark_reads_a_mixed_folder_equal_to_cat(spark, tmp_path, stream):
    paths = needs(mixed_set())
    folder = _linked_folder(tmp_path, paths)
    df = spark.read.format("recfmt").option("stream", stream).load(str(folder))
    with_stream = [p for p in paths if stream in recfmt.open(p).streams]
    # One partition per recording with the stream.
    assert df.rdd.getNumPartitions() == len(with_stream)
    table = df.toArrow()
    linked = [folder / p.name for p in with_stream]
    check_against_cat(table, linked, stream)


def test_spark_pushes_time_and_source_filters_down(spark):
    paths = needs(traj_set())
    glob = str(paths[0].parent / "hello*.traj")
    df = spark.read.format("recfmt").option("stream", "frames").load(glob)
    full = df.toArrow()
    early = df.filter("t_us >= 1000 AND t_us < 100000").toArrow()
    import pyarrow.compute as pc

    keep = pc.and_(pc.greater_equal(full["t_us"], 1000), pc.less(full["t_us"], 100000))
    assert early.num_rows > 0 and early.equals(full.filter(keep))
    one = df.filter(df.source == "hello_vel").toArrow()
    assert one.equals(full.filter(pc.equal(full["source"], "hello_vel")))
    # The plan leaves the other recordings out.
    assert df.filter(df.source == "hello_vel").rdd.getNumPartitions() == 1
    sliced = spark.read.format("recfmt").option("stream", "frames").option("slice_seconds", "0.05").load(glob)
    assert sliced.rdd.getNumPartitions() > len(recfmt.fleet.expand_paths(glob))
    assert sliced.count() == full.num_rows


def test_spark_reader_prunes_rows_of_key_and_value_ranges():
    """Filters on columns other than time and source drop rows in the reader (checked on the
    reader itself: Spark would hide a missing pruning by filtering again)."""
    pytest.importorskip("pyspark", minversion="4.0")
    from pyspark.sql.datasource import GreaterThanOrEqual, In, IsNotNull, LessThan, StringStartsWith

    import recfmt.spark

    paths = needs(samples("fgtape", "fgtape"))
    column = "/position/altitude-ft"
    source = recfmt.spark._source_class()({"path": str(paths[0].parent / "*.fgtape"), "stream": "signals"})

    def read(filters):
        reader = source.reader(source.schema())
        handed_back = list(reader.pushFilters(filters))
        batches = [b for p in reader.partitions() for b in reader.read(p)]
        return pa.Table.from_batches(batches, schema=reader.schema), handed_back

    full, _ = read([])
    low, high = pc.quantile(full[column], q=[0.25, 0.75]).to_pylist()
    filters = [GreaterThanOrEqual((column,), low), LessThan((column,), high), IsNotNull((column,))]
    kept, handed_back = read(filters)
    expected = full.filter(pc.and_(pc.greater_equal(full[column], low), pc.less(full[column], high)))
    assert 0 < kept.num_rows < full.num_rows
    assert kept.equals(expected)
    # Spark checks them again after the scan: pruning needs only to keep what Spark keeps.
    assert handed_back == filters
    # A key set (IN) and a text prefix prune as well; an unknown column prunes nothing.
    names = [recfmt.source_name(p) for p in paths[:1]]
    some = read([In(("source",), tuple(names)), StringStartsWith(("source",), names[0][:3])])[0]
    assert set(some["source"].to_pylist()) == set(names)
    first_t = full["t"][0].as_py()
    assert read([In(("t",), (first_t,))])[0]["t"].to_pylist() == [
        t for t in full["t"].to_pylist() if t == first_t
    ]
    assert read([GreaterThanOrEqual(("no such column",), 1)])[0].num_rows == full.num_rows


def test_spark_row_filters_keep_what_spark_keeps():
    pytest.importorskip("pyspark", minversion="4.0")
    from recfmt.spark import prune, row_filter

    schema = pa.schema([("x", pa.float64()), ("k", pa.int32()), ("s", pa.string())])
    batch = pa.record_batch(
        [pa.array([1.0, float("nan"), None, 7.0]), pa.array([1, 2, 3, None], pa.int32()), pa.array(["ab", "b", None, "a"])],
        schema=schema,
    )
    keep = lambda *f: prune(batch, [row_filter(*x, schema) for x in f]).to_pydict()  # noqa: E731
    # Spark orders NaN above every number; nulls fail every comparison.
    nan, seven = keep(("GreaterThan", "x", 5.0))["x"]
    assert nan != nan and seven == 7.0
    assert keep(("LessThanOrEqual", "k", 2))["k"] == [1, 2]
    assert keep(("In", "k", (2, 3)))["k"] == [2, 3]
    assert keep(("StringStartsWith", "s", "a"))["s"] == ["ab", "a"]
    assert keep(("IsNull", "k", None))["k"] == [None]
    # What Arrow cannot decide as Spark does is left to Spark.
    assert row_filter("GreaterThan", "s", 5, schema) is None
    assert row_filter("EqualTo", "x", float("nan"), schema) is None
    assert row_filter("EqualNullSafe", "k", 1, schema) is None


def test_spark_names_both_files_on_a_type_clash(spark):
    every = samples("nanover/server-py", "traj")
    if len(every) < 2:
        pytest.skip("no NanoVer samples")
    with pytest.raises(Exception, match="residue.ids"):
        spark.read.format("recfmt").option("stream", "frames").load(str(every[0].parent / "*.traj")).schema


# --- Ray Data ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("stream", ["frames", "signals"])
def test_ray_datasource_reads_a_mixed_set_equal_to_cat(ray_session, stream):
    import recfmt.ray

    paths = needs(mixed_set())
    source = recfmt.ray.Datasource(paths, stream)
    assert len(source.get_read_tasks(4)) == sum(stream in recfmt.open(p).streams for p in paths)
    ds = ray_session.data.read_datasource(source)
    table = pa.concat_tables(ray_session.get(ds.to_arrow_refs()))
    check_against_cat(table, paths, stream)
    assert ds.schema().names == recfmt.fleet.Fleet(paths, stream).schema.names
