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


# --- Exceptions that behave like Python's -------------------------------------------------

ALL_TYPES = FIXTURES / "usvlog" / "all_types"


def _raise_in_worker(kind: str):
    """Runs in a worker process: raises the error of `kind` there."""
    if kind == "missing":
        recfmt.open("no-such-recording.log")
    if kind == "stream":
        recfmt.open(ALL_TYPES).read("NOPE")
    if kind == "lost":
        recfmt.open(FIXTURES / "usvlog" / "truncated").read_all()
    raise AssertionError(f"nothing raised for {kind}")


def test_exception_classes_live_in_recfmt_and_pickle():
    import pickle

    classes = [
        recfmt.RecfmtError,
        recfmt.UnknownFormatError,
        recfmt.MalformedError,
        recfmt.UnsupportedError,
        recfmt.LimitError,
        recfmt.DataLostError,
        recfmt.DataLostWarning,
        recfmt.RecordingNotFoundError,
        recfmt.OutputExistsError,
        recfmt.NoSuchStreamError,
        recfmt.NoSuchColumnError,
        recfmt.InvalidArgumentError,
    ]
    for cls in classes:
        assert cls.__module__ == "recfmt", cls
        assert getattr(recfmt, cls.__name__) is cls
        error = cls("a.log: something")
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is cls and str(back) == str(error), cls


def test_exceptions_cross_a_process_pool():
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(FileNotFoundError) as missing:
            pool.submit(_raise_in_worker, "missing").result()
        with pytest.raises(KeyError) as stream:
            pool.submit(_raise_in_worker, "stream").result()
        with pytest.raises(recfmt.DataLostError) as lost:
            pool.submit(_raise_in_worker, "lost").result()
    assert isinstance(missing.value, recfmt.RecordingNotFoundError)
    assert "no-such-recording.log" in str(missing.value)
    assert isinstance(stream.value, recfmt.NoSuchStreamError)
    # The report and the rows read come along.
    assert lost.value.integrity["status"] == "truncated"
    assert sum(t.num_rows for t in lost.value.table.values()) > 0


def test_missing_file_is_a_file_not_found_error():
    import errno

    with pytest.raises(FileNotFoundError) as caught:
        recfmt.open("no-such-recording.log")
    error = caught.value
    assert isinstance(error, recfmt.RecfmtError) and isinstance(error, OSError)
    assert error.errno == errno.ENOENT
    assert "no-such-recording.log" in str(error) and "os error" not in str(error)


def test_missing_stream_or_column_is_a_key_error_naming_the_file():
    rec = recfmt.open(ALL_TYPES)
    for call in (
        lambda: rec.read("NOPE"),
        lambda: rec.schema("NOPE"),
        lambda: rec.batches("NOPE"),
        lambda: rec.read_all(["REC_NAV_SOLUTION", "NOPE"]),
    ):
        with pytest.raises(KeyError) as caught:
            call()
        assert isinstance(caught.value, recfmt.NoSuchStreamError)
        # The sentence as it is, not KeyError's quoted repr.
        assert str(caught.value).startswith(f"{ALL_TYPES}: no stream \"NOPE\"")
    with pytest.raises(KeyError) as caught:
        rec.read("REC_NAV_SOLUTION", columns=["x", "nope"])
    assert isinstance(caught.value, recfmt.NoSuchColumnError)
    assert str(ALL_TYPES) in str(caught.value) and "nope" in str(caught.value)
    with pytest.raises(KeyError):
        rec.read("REC_NAV_SOLUTION", columns="zz*")


def test_columns_take_one_name_stream_dot_signal_and_patterns():
    rec = recfmt.open(ALL_TYPES)
    full = rec.read("REC_NAV_SOLUTION")
    assert rec.read("REC_NAV_SOLUTION", columns="x").column_names == ["t_us", "x"]
    assert rec.read("REC_NAV_SOLUTION", columns="REC_NAV_SOLUTION.psi").column_names == ["t_us", "psi"]
    picked = rec.read("REC_NAV_SOLUTION", columns=["p*", "v"])
    assert picked.column_names == ["t_us", "psi", "v"]
    assert picked.column("psi").equals(full.column("psi"))
    assert rec.read("REC_NAV_SOLUTION", columns="re:[xy]").column_names == ["t_us", "x", "y"]


def test_wrong_arguments_are_type_and_value_errors_in_plain_words():
    rec = recfmt.open(ALL_TYPES)
    with pytest.raises(TypeError, match="columns must be a name or a list of names, not int"):
        rec.read("REC_NAV_SOLUTION", columns=5)
    with pytest.raises(ValueError, match="bad time"):
        rec.read("REC_NAV_SOLUTION", start="yesterday")
    with pytest.raises(TypeError, match="a time is seconds"):
        rec.read("REC_NAV_SOLUTION", start=[1])
    with pytest.raises(ValueError, match="finite"):
        rec.read("REC_NAV_SOLUTION", end=float("nan"))
    with pytest.raises(ValueError, match="on_loss"):
        rec.read("REC_NAV_SOLUTION", on_loss="shrug")
    with pytest.raises(TypeError, match="not both or neither"):
        rec.batches()


def test_messages_speak_python(tmp_path):
    out = tmp_path / "out"
    recfmt.convert(ALL_TYPES, "csv", out=out)
    with pytest.raises(FileExistsError) as caught:
        recfmt.convert(ALL_TYPES, "csv", out=out)
    assert isinstance(caught.value, recfmt.OutputExistsError)
    message = str(caught.value)
    assert "force=True" in message and "--force" not in message, message
    assert str(ALL_TYPES) in message


def test_a_byte_offset_is_said_once(tmp_path):
    session = tmp_path / "cut"
    shutil.copytree(FIXTURES / "usvlog" / "all_types", session)
    data = (session / "timeseries.bin").read_bytes()
    (session / "timeseries.bin").write_bytes(data[: len(data) * 2 // 3 + 3])
    with pytest.raises(recfmt.MalformedError) as caught:
        recfmt.open(session, strict=True).read_all()
    message = str(caught.value)
    assert str(session) in message
    offsets = [word for word in message.replace(":", " ").split() if word.isdigit()]
    assert message.count("at byte") == 1, message
    assert len(offsets) == len(set(offsets)), message


def test_validate_lists_lost_data_among_its_problems(tmp_path):
    report = recfmt.validate(FIXTURES / "usvlog" / "truncated")
    assert not report["valid"]
    assert report["problems"], report
    assert report["problems"][0].startswith("input data lost (truncated")
    assert "byte" in report["problems"][0]


def test_state_at_on_a_carla_log_says_what_it_reads():
    logs = samples("carla", "log")
    if not logs:
        pytest.skip("no CARLA samples")
    with pytest.raises(recfmt.UnsupportedError) as caught:
        recfmt.state_at(logs[0], 1.0)
    message = str(caught.value)
    assert "schema.json" not in message and "ICAREC" in message and str(logs[0]) in message
