"""recfmt.convert into tables: the same tables the package reads, with the command line's
selection and time options."""

from __future__ import annotations

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import recfmt
from conftest import FIXTURES, bitwise_equal


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


def test_convert_several_inputs_and_lost_data(tmp_path):
    paths = [FIXTURES / "usvlog" / "all_types", FIXTURES / "usvlog" / "unknown_types"]
    written = recfmt.convert(paths, to="arrow", out=tmp_path)
    assert {w["path"].parent.name for w in written} == {"all_types", "unknown_types"}
    with pytest.raises(ValueError):
        recfmt.convert(paths[0], to="kml", out=tmp_path / "x")


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
