"""Fleets: the Hive-partitioned dataset (read back by DuckDB and pyarrow.dataset) and
recfmt.dask.read on a distributed.LocalCluster with 2 workers."""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

import recfmt
from conftest import FIXTURES, bitwise_equal, samples


def fleet():
    """Recordings of one format with a common stream: the CARLA samples (two builds), else
    copies of the USVLOG fixture."""
    logs = samples("carla", "log")
    if len(logs) >= 2:
        return logs[:3], "position"
    return [FIXTURES / "usvlog" / "all_types"], "REC_NAV_SOLUTION"


def hive(root, stream):
    partitioning = ds.partitioning(pa.schema([("source", pa.string())]), flavor="hive")
    return ds.dataset(os.path.join(root, stream), format="parquet", partitioning=partitioning)


def test_partitioned_dataset_reads_back_with_duckdb_and_pyarrow(tmp_path):
    paths, stream = fleet()
    out = tmp_path / "fleet"
    written = recfmt.convert(paths[:-1], to="parquet", out=out, partition=True)
    assert {w["stream"] for w in written} >= {stream}
    first_parts = {w["path"]: w["path"].stat().st_mtime_ns for w in written}
    # Adding a recording adds files and rewrites none.
    recfmt.convert(paths[-1], out=out, partition=True, source="last one")
    for part, mtime in first_parts.items():
        assert part.stat().st_mtime_ns == mtime
    assert (out / stream / "source=last one" / "part-0.parquet").is_file()

    names = [recfmt.source_name(p) for p in paths[:-1]] + ["last one"]
    expected = {}
    for path, name in zip(paths, names):
        table = recfmt.open(path).read(stream)
        expected[name] = table

    dataset = hive(out, stream).to_table()
    for name, table in expected.items():
        rows = dataset.filter(ds.field("source") == name)
        assert rows.num_rows == table.num_rows, name
        got = rows.select(table.column_names).cast(table.schema)
        assert bitwise_equal(got.replace_schema_metadata(table.schema.metadata), table), name
    assert dataset.num_rows == sum(t.num_rows for t in expected.values())

    duckdb = pytest.importorskip("duckdb")
    glob = os.path.join(out, stream, "*", "*.parquet")
    counts = dict(
        duckdb.sql(
            f"SELECT source, count(*) FROM read_parquet('{glob}', hive_partitioning = true) GROUP BY source"
        ).fetchall()
    )
    assert counts == {name: t.num_rows for name, t in expected.items()}
    time_column = next(iter(expected.values())).schema.metadata[b"recfmt.time_column"].decode()
    for name, table in expected.items():
        times = [
            r[0]
            for r in duckdb.sql(
                f"SELECT \"{time_column}\" FROM read_parquet('{glob}', hive_partitioning = true) "
                f"WHERE source = '{name}'"
            ).fetchall()
        ]
        assert sorted(times) == sorted(table.column(time_column).to_pylist())

    # Converting a recording again is refused, or replaces only its own parts with force.
    with pytest.raises(recfmt.RecfmtError, match="already exists"):
        recfmt.convert(paths[-1], out=out, partition=True, source="last one")
    again = recfmt.convert(paths[-1], out=out, partition=True, source="last one", force=True)
    assert hive(out, stream).to_table().num_rows == dataset.num_rows
    assert all(w["path"].name == "part-0.parquet" for w in again)


def test_partition_refuses_other_formats(tmp_path):
    with pytest.raises(recfmt.RecfmtError, match="written as Parquet, not csv"):
        recfmt.convert(FIXTURES / "usvlog" / "all_types", to="csv", out=tmp_path, partition=True)


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local, distributed.Client(local) as client:
        yield client


def test_dask_reads_a_fleet_on_two_workers(cluster):
    import pandas as pd

    import recfmt.dask

    paths, stream = fleet()
    df = recfmt.dask.read(paths, stream)
    assert df.npartitions == len(paths)
    first = recfmt.open(paths[0]).read(stream)
    assert list(df.columns) == first.column_names + ["source"]
    # The meta has the dtypes the partitions have.
    assert dict(df.dtypes) == dict(df.get_partition(0).compute().dtypes)

    result = df.compute()
    expected = pd.concat(
        [
            recfmt.open(p).to_pandas(stream).assign(source=recfmt.source_name(p))
            for p in paths
        ],
        ignore_index=True,
    )
    expected["source"] = expected["source"].astype("string")
    pd.testing.assert_frame_equal(result.reset_index(drop=True), expected)
    # Both workers did work.
    workers = cluster.run(lambda: True)
    assert len(workers) == 2

    # Per-source aggregates run on the cluster.
    counts = df.groupby("source").size().compute().to_dict()
    assert counts == expected.groupby("source").size().to_dict()


def test_dask_time_slices_cover_every_row_once(cluster):
    import recfmt.dask

    paths, stream = fleet()
    whole = recfmt.dask.read(paths[:1], stream).compute()
    sliced = recfmt.dask.read(paths[:1], stream, slice_seconds=2.0)
    assert sliced.npartitions > 1
    got = sliced.compute().reset_index(drop=True)
    assert len(got) == len(whole)
    time_column = recfmt.open(paths[0]).schema(stream).metadata[b"recfmt.time_column"].decode()
    assert got[time_column].tolist() == whole[time_column].tolist()
