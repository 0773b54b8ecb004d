"""recfmt.nanover: MDAnalysis Universes of every NanoVer sample, checked against the `frames`
stream read with pyarrow: session splits, frame counts, positions x 10, units, topology,
`ts.data`, and random access."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from conftest import samples

mda = pytest.importorskip("MDAnalysis")
import recfmt  # noqa: E402
import recfmt.nanover  # noqa: E402

SAMPLES = samples("nanover/server-py", "traj") + samples("nanover/converted", "zip")


def expected_sessions(path):
    """By NanoVer's rules, from the frames table: per session with positions, its rows from
    the first with positions up to a particle-count change."""
    table = recfmt.open(path).read("frames", on_loss="ignore")
    rows = table.to_pylist()
    sessions = {}
    stopped = set()
    for row in rows:
        positions = row.get("particle.positions") or []
        s = row["session"]
        if not positions or s in stopped:
            continue
        if s in sessions and len(positions) != len(sessions[s][0]["particle.positions"]):
            stopped.add(s)
            continue
        sessions.setdefault(s, []).append(row)
    return [sessions[k] for k in sorted(sessions)]


def angstrom(values):
    return (np.asarray(values, dtype=np.float32).astype(np.float64) * 10).astype(np.float32)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_universes_match_the_frames_stream(path):
    expected = expected_sessions(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        universes = recfmt.nanover.universes(path)
    assert len(universes) == len(expected)
    assert [u.trajectory.session for u in universes] == [rows[0]["session"] for rows in expected]
    for u, rows in zip(universes, expected):
        first = rows[0]
        n = len(first["particle.positions"]) // 3
        assert u.atoms.n_atoms == n
        assert len(u.trajectory) == len(rows)
        if first.get("particle.names"):
            assert list(u.atoms.names) == [x.strip() for x in json.loads(first["particle.names"])]
        if first.get("residue.names"):
            assert list(u.residues.resnames) == json.loads(first["residue.names"])
        if first.get("bond.pairs"):
            pairs = first["bond.pairs"]
            assert len(u.bonds) == len({tuple(sorted(pairs[i : i + 2])) for i in range(0, len(pairs), 2)})
        for ts, row in zip(u.trajectory, rows):
            np.testing.assert_allclose(
                ts.positions, angstrom(row["particle.positions"]).reshape(n, 3), rtol=1.2e-7, atol=1e-6
            )
            if row.get("system.simulation.time") is not None:
                assert ts.time == pytest.approx(row["system.simulation.time"])
            assert ts.data["elapsed"] == row["t_us"]
            for key in ("energy.kinetic", "energy.potential"):
                if row.get(key) is not None:
                    assert ts.data[key] == row[key]
            box = row.get("system.box.vectors")
            if box:
                lengths = np.linalg.norm(angstrom(box).reshape(3, 3), axis=1)
                np.testing.assert_allclose(ts.dimensions[:3], lengths, rtol=1e-6)


def test_velocities_and_forces_in_mdanalysis_units():
    path = next((p for p in SAMPLES if p.name == "hello_vel_force.traj"), None)
    if path is None:
        pytest.skip("no hello_vel_force sample")
    rows = expected_sessions(path)[0]
    u = recfmt.nanover.universe(path)
    ts = u.trajectory[3]
    n = u.atoms.n_atoms
    np.testing.assert_allclose(ts.velocities, angstrom(rows[3]["particle.velocities"]).reshape(n, 3), rtol=1e-6)
    forces = np.asarray(rows[3]["particle.forces"], dtype=np.float32).reshape(n, 3) / 10
    np.testing.assert_allclose(ts.forces, forces, rtol=1e-6)
    raw = recfmt.nanover.universe(path, convert_units=False).trajectory[3]
    np.testing.assert_allclose(raw.positions.ravel(), rows[3]["particle.positions"], rtol=1e-7)


def test_universe_picks_a_session_and_seeks_both_ways():
    path = next((p for p in SAMPLES if p.name == "17-ala-recording-multiple.traj"), None)
    if path is None:
        pytest.skip("no multi-session sample")
    all_of_them = recfmt.nanover.universes(path)
    assert len(all_of_them) == 4
    second = recfmt.nanover.universe(path, session=1)
    assert len(second.trajectory) == len(all_of_them[1].trajectory)
    last = second.trajectory[-1].positions.copy()
    early = second.trajectory[2].positions.copy()  # back: the recording is reopened
    assert not np.array_equal(last, early)
    np.testing.assert_array_equal(second.trajectory[-1].positions, last)
    np.testing.assert_array_equal(all_of_them[1].trajectory[2].positions, early)
    with pytest.raises(IndexError):
        recfmt.nanover.universe(path, session=4)


def test_mdanalysis_writes_what_it_reads(tmp_path):
    path = next((p for p in SAMPLES if p.name == "17-ala-recording-multiple.traj"), None)
    if path is None:
        pytest.skip("no multi-session sample")
    u = recfmt.nanover.universe(path, session=2)
    out = tmp_path / "s2.dcd"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u.atoms.write(out, frames="all")
        back = mda.Universe.empty(u.atoms.n_atoms, trajectory=False)
        back.load_new(str(out))
    assert len(back.trajectory) == len(u.trajectory)
    np.testing.assert_allclose(back.trajectory[-1].positions, u.trajectory[-1].positions, atol=1e-4)


def test_the_docs_example_runs(tmp_path, capsys):
    """docs/PYTHON.md's Universe example, on the sample it names."""
    import re
    from pathlib import Path

    path = next((p for p in SAMPLES if p.name == "17-ala-recording-multiple.traj"), None)
    if path is None:
        pytest.skip("no multi-session sample")
    text = (Path(__file__).resolve().parents[2] / "docs" / "PYTHON.md").read_text()
    section = text[text.index("## NanoVer recordings as MDAnalysis Universes") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace('"17-ala-recording-multiple.traj"', repr(str(path)))
    code = code.replace('"session1.dcd"', repr(str(tmp_path / "session1.dcd")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "PYTHON.md", "exec"), {})
    assert capsys.readouterr().out.splitlines()[0] == "[252, 115, 29, 31]"
    assert (tmp_path / "session1.dcd").stat().st_size > 0
