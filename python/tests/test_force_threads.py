"""Whether an output may be replaced goes with each call: two threads converting at the same
time with different ``force`` each get what they asked (issue 22; the reproducer
py_force_race.py of round 2)."""

from __future__ import annotations

import hashlib
import json
import threading

import numpy as np
import pytest

import recfmt
from conftest import FIXTURES


def _jcs(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write_icarec(path, frames: int, signals: int) -> None:
    """An ICAREC recording of `signals` dynamic doubles over `frames` frames."""
    path.mkdir()
    dynamic = [
        {"name": f"S.sig{i}", "type": "double", "units": "m", "lifecycle": "dynamic",
         "offset": 8 * i, "size": 8}
        for i in range(signals)
    ]
    static = {"name": "Static.k", "type": "double", "units": "", "lifecycle": "static",
              "offset": 0, "size": 8}
    schema = {
        "schema_version": "2.3.1",
        "icarus_version": "1.5.0",
        "created_at": "2026-11-22T10:30:00Z",
        "signals": dynamic + [static],
        "components": [],
        "compatibility": {"min_icarus_version": "1.0.0", "warmstart_compatible": True,
                          "breaking_changes": []},
    }
    schema["checksum"] = "sha256:" + hashlib.sha256(_jcs(schema).encode()).hexdigest()
    (path / "schema.json").write_text(json.dumps(schema))
    (path / "static_signals.bin").write_bytes(np.array([1.0]).tobytes())
    rows = np.empty((frames, signals + 1), dtype="<f8")
    rows[:, 0] = np.arange(frames) * 0.01
    rows[:, 1:] = np.sin(np.arange(frames * signals).reshape(frames, signals) * 0.1)
    (path / "dynamic_signals.bin").write_bytes(rows.tobytes())


def test_two_threads_with_different_force_each_get_what_they_asked(tmp_path):
    big = tmp_path / "big.icarec"
    # Long enough that A converts several times while B works on it, however fast both are.
    write_icarec(big, frames=200_000, signals=8)
    small = FIXTURES / "usvlog" / "all_types"
    existing = tmp_path / "B" / "all_types" / "REC_NAV_SOLUTION.csv"
    existing.parent.mkdir(parents=True)
    existing.write_text("PRECIOUS\n")

    # A converts again and again with force=True while B converts once with force=False.
    stop = threading.Event()
    first_done = threading.Event()
    a_failures = []
    a_runs = []

    def a():
        while not stop.is_set():
            try:
                recfmt.convert(small, to="csv", out=tmp_path / "A", force=True, batch_rows=500)
                a_runs.append(1)
            except recfmt.RecfmtError as e:  # a run refused by another thread's policy
                a_failures.append(e)
            first_done.set()

    thread_a = threading.Thread(target=a)
    thread_a.start()
    try:
        assert first_done.wait(60), "the first conversion of thread A did not end"
        runs_before_b = len(a_runs)
        # B: the big input first, so that A converts while B comes to the existing file.
        with pytest.raises(recfmt.RecfmtError, match="already exists"):
            recfmt.convert([big, small], to="csv", out=tmp_path / "B", jobs=1, force=False,
                           batch_rows=500)
        assert len(a_runs) > runs_before_b, "A did not convert while B ran"
    finally:
        stop.set()
        thread_a.join()
    assert existing.read_text() == "PRECIOUS\n", "B replaced a file without force"
    assert not a_failures, f"A was refused although it asked for force: {a_failures[0]}"
    assert (tmp_path / "B" / "big.icarec").is_dir(), "B's first input was converted"
