"""recfmt.convert: the command line's conversion (the same library call), into the same tables
the package reads and into every other target, with the command line's options."""

from __future__ import annotations

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import recfmt
from conftest import FIXTURES, bitwise_equal, recfmt_bin


def test_convert_to_parquet_and_csv_matches_read(tmp_path):
    path = FIXTURES / "usvlog" / "all_types"
    rec = recfmt.open(path)
    written = recfmt.convert(path, to="parquet", out=tmp_path / "pq")
    by_stream = {w["stream"]: w for w in written}
    assert set(by_stream) <= set(rec.streams)
    for stream, w in by_stream.items():
        table = rec.read(stream)
        got = pq.read_table(w["path"])
        assert got.num_rows == w["rows"] == table.num_rows
        assert bitwise_equal(got, table), stream
        assert got.schema.metadata[b"source.format"] == b"usvlog"
        # The provenance digest the command line writes, of the input's files.
        assert len(got.schema.metadata[b"source.sha256"]) == 64

    # An existing table is refused unless force=True.
    with pytest.raises(recfmt.RecfmtError, match="already exists"):
        recfmt.convert(path, to="parquet", out=tmp_path / "pq")
    assert recfmt.convert(path, to="parquet", out=tmp_path / "pq", force=True) == written

    nav = "REC_NAV_SOLUTION"
    csv = recfmt.convert(
        path, to="csv", out=tmp_path / "csv", streams=nav, signals=["x"], start="+0.5s"
    )
    assert [w["stream"] for w in csv] == [nav]
    text = pacsv.read_csv(csv[0]["path"])
    assert text.column_names == ["t_us", "x"]
    want = rec.read(nav, columns=["x"], start="+0.5s")
    assert text.column("t_us").to_pylist() == want.column("t_us").to_pylist()


def test_parquet_pages_on_disk_give_the_same_tables(tmp_path):
    """row_group_memory=0 puts every finished page in the temporary file beside the output
    (``--row-group-memory 0``): the tables are the same bytes, and nothing else is left."""
    path = FIXTURES / "usvlog" / "all_types"
    memory = recfmt.convert(path, to="parquet", out=tmp_path / "memory", row_group_rows=16)
    disk = recfmt.convert(
        path, to="parquet", out=tmp_path / "disk", row_group_rows=16, row_group_memory=0
    )
    assert [w["path"].name for w in disk] == [w["path"].name for w in memory]
    for a, b in zip(memory, disk):
        assert a["path"].read_bytes() == b["path"].read_bytes(), a["path"].name
    assert sorted(p.name for p in (tmp_path / "disk").iterdir()) == sorted(
        w["path"].name for w in disk
    )


def test_byte_stream_split_float_columns_hold_the_same_values(tmp_path):
    """byte_stream_split=True (``--byte-stream-split``): float columns in that encoding, the
    others as before, every value the same."""
    path = FIXTURES / "usvlog" / "all_types"
    plain = recfmt.convert(path, to="parquet", out=tmp_path / "plain")
    split = recfmt.convert(path, to="parquet", out=tmp_path / "split", byte_stream_split=True)
    floats = 0
    for a, b in zip(plain, split):
        assert pq.read_table(a["path"]).equals(pq.read_table(b["path"])), a["path"].name
        group = pq.ParquetFile(b["path"]).metadata.row_group(0)
        for i in range(group.num_columns):
            column = group.column(i)
            is_float = column.physical_type in ("FLOAT", "DOUBLE")
            assert ("BYTE_STREAM_SPLIT" in column.encodings) == is_float, column
            floats += is_float
    assert floats > 0


def test_convert_several_inputs_and_lost_data(tmp_path):
    paths = [FIXTURES / "usvlog" / "all_types", FIXTURES / "usvlog" / "unknown_types"]
    written = recfmt.convert(paths, to="arrow", out=tmp_path)
    assert {w["path"].parent.name for w in written} == {"all_types", "unknown_types"}
    # A target the input cannot go to fails with the command line's message, naming both.
    with pytest.raises(recfmt.RecfmtError, match="no track in this usvlog recording"):
        recfmt.convert(paths[0], to="kml", out=tmp_path / "x")


def test_convert_matches_the_command_line_byte_for_byte(tmp_path):
    """Python and the CLI make the same files: tables, HDF5, MCAP and a recording format."""
    import subprocess

    path = FIXTURES / "usvlog" / "all_types"
    cli = str(recfmt_bin())
    for to, name in [("csv", "csv"), ("hdf5", "rec.h5"), ("mcap", "rec.mcap"), ("usvlog", "copy")]:
        py_out = tmp_path / "py" / name
        cli_out = tmp_path / "cli" / name
        py_out.parent.mkdir(exist_ok=True)
        cli_out.parent.mkdir(exist_ok=True)
        # A recording format takes every stream (a faithful copy); the others take a selection.
        selection = [] if to == "usvlog" else ["REC_NAV_SOLUTION.*"]
        written = recfmt.convert(path, to=to, out=py_out, signals=selection)
        subprocess.run(
            [cli, "convert", str(path), "--to", to, "-o", str(cli_out)]
            + [a for s in selection for a in ("--signal", s)],
            check=True,
            capture_output=True,
        )
        assert written, to
        for w in written:
            assert w["source"] == str(path)
            mine = w["path"]
            theirs = cli_out / mine.relative_to(py_out) if mine != py_out else cli_out
            if mine.is_dir():
                files = sorted(p.relative_to(mine) for p in mine.rglob("*") if p.is_file())
                assert files == sorted(p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file())
                pairs = [(mine / f, theirs / f) for f in files]
            else:
                pairs = [(mine, theirs)]
            for a, b in pairs:
                if to == "csv":
                    assert a.read_bytes() == b.read_bytes(), (to, a)
                else:
                    # HDF5 and MCAP carry the output path in their provenance; sizes agree.
                    assert abs(a.stat().st_size - b.stat().st_size) < 256, (to, a)
        if to == "hdf5":
            import h5py

            with h5py.File(py_out) as h5, h5py.File(cli_out) as other:
                assert sorted(h5.keys()) == sorted(other.keys())
                for key in h5:
                    for name in h5[key]:
                        a, b = h5[key][name], other[key][name]
                        if isinstance(a, h5py.Dataset):
                            assert a[()].tobytes() == b[()].tobytes(), (key, name)


def test_convert_keeps_going_past_a_failed_input(tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"not a recording" * 10)
    good = FIXTURES / "usvlog" / "all_types"
    with pytest.raises(recfmt.UnknownFormatError):
        recfmt.convert([garbage, good], to="parquet", out=tmp_path / "out")
    # The good input was still converted, into its own folder.
    assert any((tmp_path / "out" / "all_types").glob("*.parquet"))


def test_convert_options_are_checked(tmp_path):
    path = FIXTURES / "usvlog" / "all_types"
    with pytest.raises(TypeError, match="colour"):
        recfmt.convert(path, to="parquet", out=tmp_path / "x", colour="red")
    with pytest.raises(ValueError, match="time_column"):
        recfmt.convert(path, to="parquet", out=tmp_path / "x", time_column="mars")


def test_convert_reports_lost_data(tmp_path):
    import shutil

    session = tmp_path / "cut"
    shutil.copytree(FIXTURES / "usvlog" / "all_types", session)
    data = (session / "timeseries.bin").read_bytes()
    (session / "timeseries.bin").write_bytes(data[: len(data) // 2 + 3])
    with pytest.raises(recfmt.DataLostError) as caught:
        recfmt.convert(session, to="parquet", out=tmp_path / "out")
    assert caught.value.integrity["status"] == "truncated"
    assert any((tmp_path / "out").glob("*.parquet"))


def test_hdf5_convert_reports_one_file_with_its_streams(tmp_path):
    import h5py

    path = FIXTURES / "usvlog" / "all_types"
    out = tmp_path / "rec.h5"
    written = recfmt.convert(path, to="hdf5", out=out)
    assert len(written) == 1, written
    (result,) = written
    assert result["path"] == out and result["source"] == str(path)
    rec = recfmt.open(path)
    with h5py.File(out) as h5:
        assert sorted(result["streams"]) == sorted(h5.keys())
    assert len(result["streams"]) > 1 and set(result["streams"]) <= set(rec.streams)
    assert result["rows"] == sum(rec.read(s).num_rows for s in result["streams"])
    # A table file holds one stream, named both ways.
    tables = recfmt.convert(path, to="parquet", out=tmp_path / "tables")
    assert all(t["streams"] == [t["stream"]] for t in tables)
    assert {t["stream"] for t in tables} <= set(rec.streams) and len(tables) > 1


def test_threads_change_who_works_not_what_is_written(tmp_path):
    path = FIXTURES / "usvlog" / "all_types"
    one = recfmt.convert(path, to="csv", out=tmp_path / "one", threads=1)
    several = recfmt.convert(path, to="csv", out=tmp_path / "several", threads=4)
    assert [w["stream"] for w in one] == [w["stream"] for w in several]
    for a, b in zip(one, several):
        assert open(a["path"], "rb").read() == open(b["path"], "rb").read(), a["stream"]
    with pytest.raises(ValueError, match="threads must be at least 1"):
        recfmt.convert(path, to="csv", out=tmp_path / "none", threads=0)
