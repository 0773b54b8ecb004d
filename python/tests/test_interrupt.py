"""Ctrl-C stops the long calls between batches (the call's cancellation token reaches every
reader it opens): a conversion leaves no output behind and raises KeyboardInterrupt; `info`
and `validate` stop their scan."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import recfmt
from conftest import FIXTURES


def big_session(folder: Path, copies: int) -> Path:
    """The all_types USVLOG session with its records repeated `copies` times (time goes back
    at each repeat, which readers tolerate and note)."""
    session = folder / "big"
    shutil.copytree(FIXTURES / "usvlog" / "all_types", session)
    data = (session / "timeseries.bin").read_bytes()
    header, records = data[:32], data[32:]
    with open(session / "timeseries.bin", "wb") as out:
        out.write(header)
        for _ in range(copies):
            out.write(records)
    return session


def test_ctrl_c_stops_convert_and_leaves_no_output(tmp_path):
    # 45 MB, 1.5 M rows in batches of 10 rows: seconds to convert (in whole batches the
    # Parquet conversion takes a fraction of a second, over before Ctrl-C is pressed).
    session = big_session(tmp_path, 1000)
    out = tmp_path / "out"
    script = textwrap.dedent(
        f"""
        import sys, recfmt
        print("converting", flush=True)
        try:
            recfmt.convert({str(session)!r}, "parquet", out={str(out)!r}, batch_rows=10)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise
        print("finished", flush=True)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "converting"
    # Wait until the conversion is writing (its temporary files exist), then press Ctrl-C.
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.02)
    time.sleep(0.3)
    started = time.monotonic()
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    stopped_after = time.monotonic() - started
    assert "interrupted" in stdout, (stdout, stderr)
    assert "KeyboardInterrupt" in stderr, stderr
    assert "panicked" not in stderr, stderr
    assert child.returncode != 0
    assert stopped_after < 5, stopped_after
    # Nothing written, nothing half-written: the folder is as the run found it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"], list(tmp_path.rglob("*"))


def test_ctrl_c_stops_a_parallel_convert_of_several_inputs(tmp_path):
    # Batches of 10 rows keep both conversions going for about a second: with whole batches
    # CSV converts the two 27 MB inputs in 0.2 s, before Ctrl-C is pressed.
    session = big_session(tmp_path, 600)
    other = tmp_path / "big2"
    shutil.copytree(session, other)
    out = tmp_path / "out"
    script = textwrap.dedent(
        f"""
        import recfmt
        print("converting", flush=True)
        recfmt.convert([{str(session)!r}, {str(other)!r}], "csv", out={str(out)!r}, jobs=2, batch_rows=10)
        print("finished", flush=True)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "converting"
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.02)
    time.sleep(0.3)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert "finished" not in stdout and "KeyboardInterrupt" in stderr, (stdout, stderr)
    assert "panicked" not in stderr, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "big2"], list(tmp_path.rglob("*"))


def test_ctrl_c_returns_from_info_and_validate(tmp_path):
    session = big_session(tmp_path, 1000)
    for call in ("recfmt.open(path).info()", "recfmt.validate(path)"):
        script = textwrap.dedent(
            f"""
            import time, recfmt
            path = {str(session)!r}
            started = time.monotonic()
            {call}
            print("full", time.monotonic() - started, flush=True)
            print("ready", flush=True)
            started = time.monotonic()
            try:
                {call}
            except KeyboardInterrupt:
                print("interrupted", time.monotonic() - started, flush=True)
            """
        )
        child = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        full = float(child.stdout.readline().split()[1])
        assert child.stdout.readline().strip() == "ready"
        time.sleep(min(0.05, full / 10))
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=60)
        assert "interrupted" in stdout, (call, stdout, stderr)
        assert float(stdout.split()[1]) < full / 2 + 0.2, (call, full, stdout)
