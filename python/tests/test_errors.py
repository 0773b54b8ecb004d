"""Bad input becomes a Python exception with the command line's message; lost data is reported
with the integrity report attached; interrupts stop a read."""

from __future__ import annotations

import shutil
import subprocess
import warnings

import pytest

import recfmt
from conftest import FIXTURES, recfmt_bin, samples


def test_garbage_file_is_an_unknown_format(tmp_path):
    garbage = tmp_path / "noise.bin"
    garbage.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(recfmt.UnknownFormatError) as caught:
        recfmt.open(garbage)
    assert isinstance(caught.value, recfmt.RecfmtError)
    assert str(garbage) in str(caught.value)
    # The same message as the command line prints.
    cli = subprocess.run([str(recfmt_bin()), "info", str(garbage)], capture_output=True, text=True)
    assert cli.returncode == 1
    assert str(caught.value) in cli.stderr


def test_garbage_forced_into_a_format_names_the_offset(tmp_path):
    garbage = tmp_path / "noise.fgtape"
    garbage.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(recfmt.RecfmtError) as caught:
        rec = recfmt.open(garbage, format="fgtape")
        rec.read(rec.streams[0])
    assert "byte" in str(caught.value) or "expected" in str(caught.value), str(caught.value)


def test_missing_file_and_unknown_stream():
    with pytest.raises(recfmt.RecfmtError, match="no-such-recording"):
        recfmt.open("no-such-recording.log")
    rec = recfmt.open(FIXTURES / "usvlog" / "all_types")
    with pytest.raises(recfmt.RecfmtError, match="no stream"):
        rec.read("NOPE")
    with pytest.raises(ValueError):
        rec.read(rec.streams[0], on_loss="shrug")


def test_truncated_file_raises_data_lost_with_report_and_rows(tmp_path):
    # A USVLOG session whose time series is cut inside a record.
    session = tmp_path / "cut"
    shutil.copytree(FIXTURES / "usvlog" / "all_types", session)
    data = (session / "timeseries.bin").read_bytes()
    (session / "timeseries.bin").write_bytes(data[: len(data) * 2 // 3 + 3])
    rec = recfmt.open(session)
    stream = rec.streams[0]
    with pytest.raises(recfmt.DataLostError) as caught:
        rec.read(stream)
    error = caught.value
    assert isinstance(error, recfmt.RecfmtError)
    assert error.integrity["status"] == "truncated"
    assert error.integrity["truncated_at"] is not None
    assert "truncated" in str(error)
    complete = error.table
    assert 0 < complete.num_rows < 200
    # Warn and ignore return the same complete rows.
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert rec.read(stream, on_loss="warn").equals(complete)
    assert any(issubclass(w.category, recfmt.DataLostWarning) for w in seen)
    assert rec.read(stream, on_loss="ignore").equals(complete)
    # Streaming yields every complete batch, then raises at the end.
    stream_batches = rec.batches(stream, batch_rows=10)
    rows = 0
    with pytest.raises(recfmt.DataLostError):
        for batch in stream_batches:
            rows += batch.num_rows
    assert rows == complete.num_rows
    assert stream_batches.integrity["status"] == "truncated"
    # --strict turns the torn record into an error.
    with pytest.raises(recfmt.RecfmtError) as strict:
        recfmt.open(session, strict=True).read(stream)
    assert not isinstance(strict.value, recfmt.DataLostError)


def test_truncated_fixture_matches_cli_exit_code():
    path = FIXTURES / "usvlog" / "truncated"
    cli = subprocess.run([str(recfmt_bin()), "info", str(path)], capture_output=True)
    rec = recfmt.open(path)
    if cli.returncode == 3:
        with pytest.raises(recfmt.DataLostError):
            for stream in rec.streams:
                rec.read(stream)
    else:
        assert cli.returncode == 0


def test_ctrl_c_interrupts_a_long_read():
    """SIGINT arriving while the read decodes without the GIL is seen between batches and
    raised as KeyboardInterrupt long before the read would have finished."""
    import os
    import signal
    import threading
    import time

    logs = samples("carla", "log")
    if not logs:
        pytest.skip("no CARLA samples")
    path = max(logs, key=lambda p: p.stat().st_size)
    rec = recfmt.open(path)
    stream = "position"  # CARLA's per-actor positions: the largest stream
    # Tiny batches make this read take seconds.
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            rec.read(stream, batch_rows=1, on_loss="ignore")
    finally:
        timer.cancel()
    interrupted_after = time.monotonic() - started
    started = time.monotonic()
    rows = rec.read(stream, batch_rows=1, on_loss="ignore").num_rows
    full = time.monotonic() - started
    assert rows > 10_000
    assert interrupted_after < full / 2, (interrupted_after, full)
