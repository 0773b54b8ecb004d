"""Every stream of every fixture and sample, read through the package, value for value against
`recfmt cat --output ndjson` from the same build."""

from __future__ import annotations

import pyarrow as pa
import pytest

import recfmt
from conftest import FIXTURES, assert_table_matches, bitwise_equal, layouts_of, recordings, reference

RECORDINGS = recordings()


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_every_stream_matches_cat(path):
    rows_by_stream, lost = reference(path)
    rec = recfmt.open(path, layouts=layouts_of(path))
    assert set(rows_by_stream) <= set(rec.streams)
    assert rows_by_stream, f"{path}: cat printed no rows"
    for stream in rec.streams:
        rows = rows_by_stream.get(stream, [])
        table = rec.read(stream, on_loss="ignore")
        assert_table_matches(f"{path.name} {stream}", rows, table)
        # The declared schema is the one the table has (types, units, provenance).
        schema = rec.schema(stream)
        assert [(f.name, f.type, f.metadata) for f in schema] == [
            (f.name, f.type, f.metadata) for f in table.schema
        ]
        assert schema.metadata[b"source.format"] == rec.format.encode()
        # Streaming in small batches gives the same rows.
        stream_batches = rec.batches(stream, batch_rows=1000, on_loss="ignore")
        pieces = list(stream_batches)
        assert all(b.num_rows <= 1000 for b in pieces)
        joined = pa.Table.from_batches(pieces, schema=stream_batches.schema)
        assert bitwise_equal(joined, table), f"{path.name} {stream}: batches differ from read"
        assert stream_batches.integrity["status"] in ("complete", "truncated", "corrupt")
    if lost:
        with pytest.raises(recfmt.DataLostError):
            rec.read(rec.streams[0])
    else:
        rec.read(rec.streams[0])


@pytest.mark.parametrize("path", RECORDINGS[:1] + [p for p in RECORDINGS if p.suffix == ".log"][:1])
def test_columns_and_time_range_select_like_convert(path):
    rows_by_stream, _ = reference(path)
    rec = recfmt.open(path, layouts=layouts_of(path))
    stream = max(rows_by_stream, key=lambda s: len(rows_by_stream[s]))
    full = rec.read(stream)
    time_column = full.schema.metadata[b"recfmt.time_column"].decode()
    numer, denom = map(float, full.schema.metadata[b"recfmt.time_base"].decode().split("/"))
    times = [t * numer / denom for t in full.column(time_column).to_pylist()]
    lo, hi = times[len(times) // 4], times[3 * len(times) // 4]
    other = [f.name for f in full.schema if f.name != time_column][-1]

    part = rec.read(stream, columns=[other], start=lo, end=hi)
    # The time column and an entity-keyed stream's id column are always kept, as convert does.
    entity = (full.schema.metadata or {}).get(b"recfmt.entity_column", b"").decode()
    assert part.column_names == [n for n in full.column_names if n in (time_column, entity, other)]
    keep = [i for i, t in enumerate(times) if lo <= t < hi]
    assert part.num_rows == len(keep) > 0
    assert part.column(other).to_pylist() == [full.column(other)[i].as_py() for i in keep]
    # A relative start counts from the first row, as `--start +Ns` does.
    rel = rec.read(stream, start=f"+{lo - min(times)}s")
    assert rel.num_rows == sum(1 for t in times if t >= lo)


def test_pandas_polars_and_duckdb_take_the_data():
    path = RECORDINGS[0]
    rec = recfmt.open(path)
    stream = rec.streams[0]
    table = rec.read(stream)
    frame = rec.to_pandas(stream)
    assert list(frame.columns) == table.column_names
    assert frame[table.column_names[1]].tolist() == table.column(1).to_pylist()

    duckdb = pytest.importorskip("duckdb")
    stream_batches = rec.batches(stream)
    count = duckdb.sql("SELECT count(*) FROM stream_batches").fetchall()[0][0]
    assert count == table.num_rows

    pl = pytest.importorskip("polars")
    df = pl.DataFrame(rec.read(stream))
    assert df.shape == (table.num_rows, table.num_columns)
    reader = pa.RecordBatchReader.from_stream(rec.batches(stream))
    assert reader.read_all().equals(table)


def test_formats_lists_every_format():
    ids = [f["id"] for f in recfmt.formats()]
    assert ids == ["usvlog", "carla", "fgtape", "icarec", "icarus-h5", "nanover"]
    assert all(f["write"] for f in recfmt.formats())


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_read_all_is_every_stream_in_one_pass(path):
    """`read_all` and `batches(streams=...)` give each stream exactly what reading it alone
    gives, and `cat`'s values."""
    rows_by_stream, _ = reference(path)
    rec = recfmt.open(path, layouts=layouts_of(path))
    tables = rec.read_all(on_loss="ignore")
    assert list(tables) == rec.streams
    for stream, table in tables.items():
        assert_table_matches(f"{path.name} {stream}", rows_by_stream.get(stream, []), table)
        assert bitwise_equal(table, rec.read(stream, on_loss="ignore")), stream
    some = rec.streams[-2:]
    pieces = {s: [] for s in some}
    tagged = rec.batches(streams=some, batch_rows=100, on_loss="ignore")
    for stream, batch in tagged:
        assert batch.num_rows <= 100
        pieces[stream].append(batch)
    for stream in some:
        joined = pa.Table.from_batches(pieces[stream], schema=tagged.schemas[stream])
        assert bitwise_equal(joined, tables[stream]), stream


def test_read_all_takes_columns_and_times_across_streams():
    rec = recfmt.open(FIXTURES / "usvlog" / "all_types")
    nav, esc = "REC_NAV_SOLUTION", "REC_ESC_OUTPUT"
    tables = rec.read_all([nav, esc], columns=[f"{nav}.x"], start="+0.5s")
    assert list(tables) == [nav, esc]
    assert tables[nav].column_names == ["t_us", "x"]
    assert tables[nav].equals(rec.read(nav, columns="x", start="+0.5s"))
    # A column named for one stream leaves the other with its time column only.
    assert tables[esc].num_columns == 1 and tables[esc].num_rows > 0
    with pytest.raises(TypeError):
        rec.batches(streams=[nav]).schema  # several schemas: use .schemas
