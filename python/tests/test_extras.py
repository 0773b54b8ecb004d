"""Format-specific extras against the command line: CARLA's queries and ICAREC's state at t."""

from __future__ import annotations

import json
import subprocess

import pytest

import recfmt
from conftest import FIXTURES, recfmt_bin, samples


def cli_json(*args):
    done = subprocess.run([str(recfmt_bin()), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("query", ["info", "collisions", "blocked"])
def test_carla_queries_match_the_cli(query):
    logs = samples("carla", "log")
    if not logs:
        pytest.skip("no CARLA samples")
    for log in logs:
        got = recfmt.carla_query(log, query)
        want = json.loads(cli_json("carla", query, log, "--json"))
        assert got == want, f"{log.name} {query}"


def test_carla_query_refuses_unknown_queries_and_other_files():
    with pytest.raises(ValueError):
        recfmt.carla_query(FIXTURES / "usvlog" / "all_types" / "timeseries.bin", "speeding")
    with pytest.raises(recfmt.RecfmtError):
        recfmt.carla_query(FIXTURES / "usvlog" / "all_types" / "timeseries.bin", "info")


def _as_cli_text(value):
    """`recfmt cat --at` prints each value as text: numbers, `true`, `[a, b, c]`."""
    def number(x):
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, float) and x.is_integer():
            return str(int(x))
        return str(x)

    if isinstance(value, list):
        return "[" + ", ".join(number(v) for v in value) + "]"
    return number(value)


@pytest.mark.parametrize("t", [0.0, 0.5, 1.0])
def test_state_at_matches_cat_at(t):
    path = FIXTURES / "icarec" / "all_types.icarec"
    want = json.loads(cli_json("cat", path, "--at", t, "--output", "ndjson"))
    got = recfmt.state_at(path, t)
    assert got["t"] == want["t"] and got["frame"] == want["frame"]
    assert sorted(got["values"]) == sorted(want["values"])
    for name, value in got["values"].items():
        text = want["values"][name]
        if isinstance(value, float) or (isinstance(value, list) and any(isinstance(v, float) for v in value)):
            parsed = json.loads(text)
            assert parsed == value, name
        else:
            assert _as_cli_text(value) == text, name


def test_state_at_before_the_first_frame_is_an_error():
    with pytest.raises(recfmt.RecfmtError, match="no frame"):
        recfmt.state_at(FIXTURES / "icarec" / "all_types.icarec", -1e9)


def test_info_and_validate_are_the_cli_reports(all_recordings):
    for path in all_recordings:
        rec = recfmt.open(path)
        info = subprocess.run([str(recfmt_bin()), "info", str(path), "--json"], capture_output=True, text=True)
        assert info.returncode in (0, 3), info.stderr
        assert rec.info() == json.loads(info.stdout), path
        check = subprocess.run([str(recfmt_bin()), "validate", str(path), "--json"], capture_output=True, text=True)
        assert check.returncode in (0, 1, 3), check.stderr
        got, want = recfmt.validate(path), json.loads(check.stdout)
        if want["integrity"]["status"] != "complete":
            # Python lists the loss among the problems; the command line reports it apart.
            lost = got["problems"].pop(0)
            assert lost.startswith("input data lost (") and want["integrity"]["status"] in lost, lost
            assert not got["valid"]
        assert got == want, path


def test_carla_logs_take_absolute_times_from_their_header_date(tmp_path):
    """RFC 3339 start/end on a CARLA log count from the header's date (when the recorder
    started), in read and convert alike."""
    from datetime import datetime, timedelta

    logs = samples("carla", "log")
    if not logs:
        pytest.skip("no CARLA samples")
    rec = recfmt.open(logs[0])
    stream = rec.streams[0]
    full = rec.read(stream)
    time = next(s["time_column"] for s in rec.info()["streams"] if s["name"] == stream)
    t = full[time].to_pylist()
    # Bounds between two rows (to the microsecond an RFC 3339 text carries), so that the
    # rounding of an instant to seconds cannot move a row across them.
    u = sorted(set(t))
    assert len(u) > 4
    a, b = len(u) // 4, 3 * len(u) // 4
    lo, hi = round((u[a] + u[a + 1]) / 2, 6), round((u[b] + u[b + 1]) / 2, 6)
    date = datetime.fromisoformat(rec.metadata["date"].replace("Z", "+00:00"))
    instant = lambda s: (date + timedelta(seconds=s)).isoformat().replace("+00:00", "Z")  # noqa: E731
    by_instant = rec.read(stream, start=instant(lo), end=instant(hi))
    assert 0 < by_instant.num_rows < full.num_rows
    assert by_instant.equals(rec.read(stream, start=lo, end=hi))
    written = recfmt.convert(logs[0], to="parquet", out=tmp_path / "out", streams=stream, start=instant(lo), end=instant(hi))
    import pyarrow.parquet as pq

    assert pq.read_table(written[0]["path"]).num_rows == by_instant.num_rows
    assert rec.info()["time"]["epoch"] is not None
