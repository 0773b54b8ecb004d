"""MDAnalysis and ASE read the PDB, XYZ and DCD files `recfmt convert --to pdb|xyz|dcd` wrote
from one NanoVer recording, and hold recfmt's positions x 10 (Å).

Usage: check_molecular.py ROWS.ndjson PDB_OUT XYZ_OUT DCD_OUT

ROWS.ndjson is `recfmt cat --stream frames --output ndjson` of the same recording: the
expectation is built from it alone, by NanoVer's rules (a session per `session` value, frames
from the first with positions, up to a particle-count change). Each *_OUT is a file when
there is one such session, else a folder of session_<n>.<ext>. Prints `ok <ext> <session>
<frames>` per file checked and `sessions <n>`.
"""

import json
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")  # MDAnalysis warns about PDB fields it guesses

import ase.io  # noqa: E402
import MDAnalysis as mda  # noqa: E402


def expected_sessions(rows_path):
    sessions = {}  # session -> dict(positions=[...], box=[...], names, bonds)
    stopped = set()
    with open(rows_path) as rows:
        for line in rows:
            row = json.loads(line)
            if row.get("stream") != "frames":
                continue
            session = row["session"]
            positions = row.get("particle.positions") or []
            if not positions or session in stopped:
                continue
            pos = np.asarray(positions, dtype=np.float32).reshape(-1, 3)
            s = sessions.get(session)
            if s is None:
                pairs = row.get("bond.pairs") or []
                names = json.loads(row["particle.names"]) if row.get("particle.names") else None
                s = sessions[session] = {
                    "positions": [],
                    "box": [],
                    "names": names,
                    # MDAnalysis keeps a bond once, whichever way round it is listed.
                    "bonds": len({tuple(sorted(pairs[i : i + 2])) for i in range(0, len(pairs) - 1, 2)}),
                }
            elif pos.shape != s["positions"][0].shape:
                stopped.add(session)
                continue
            s["positions"].append(pos)
            s["box"].append(row.get("system.box.vectors"))
    return sessions


def angstrom(nm):
    # As the writer: nm as f32, times 10 in f64, stored as f32.
    return (nm.astype(np.float64) * 10.0).astype(np.float32)


def paths(out, ext, sessions):
    if len(sessions) == 1:
        assert os.path.isfile(out), f"{out} should be one file"
        return {next(iter(sessions)): out}
    names = sorted(os.listdir(out))
    want = sorted(f"session_{s}.{ext}" for s in sessions)
    assert names == want, f"{out} holds {names}, expected {want}"
    return {s: os.path.join(out, f"session_{s}.{ext}") for s in sessions}


def check_frames(u, s, atol, what, has_box=True):
    assert len(u.trajectory) == len(s["positions"]), (
        f"{what}: {len(u.trajectory)} frames, expected {len(s['positions'])}"
    )
    for i, ts in enumerate(u.trajectory):
        want = angstrom(s["positions"][i])
        np.testing.assert_allclose(ts.positions, want, rtol=1.2e-7, atol=atol, err_msg=f"{what} frame {i}")
        box = s["box"][i]
        if box and has_box:
            lengths = np.linalg.norm(angstrom(np.asarray(box, dtype=np.float32)).reshape(3, 3), axis=1)
            np.testing.assert_allclose(ts.dimensions[:3], lengths, rtol=1e-5, atol=1e-3, err_msg=f"{what} box {i}")


def main(rows, pdb_out, xyz_out, dcd_out):
    sessions = expected_sessions(rows)
    assert sessions, "no session with positions"
    pdbs = paths(pdb_out, "pdb", sessions)
    for n, path in pdbs.items():
        s = sessions[n]
        u = mda.Universe(path)
        # PDB holds 3 decimals.
        check_frames(u, s, 0.0005 + 1e-5, f"pdb session {n}")
        if s["names"]:
            assert list(u.atoms.names) == [x.strip() for x in s["names"]]
        assert len(u.bonds) == s["bonds"], f"pdb session {n}: {len(u.bonds)} bonds, expected {s['bonds']}"
        print(f"ok pdb {n} {len(u.trajectory)}")
    for n, path in paths(dcd_out, "dcd", sessions).items():
        s = sessions[n]
        u = mda.Universe(pdbs[n], path)
        check_frames(u, s, 1e-6, f"dcd session {n}")
        print(f"ok dcd {n} {len(u.trajectory)}")
    for n, path in paths(xyz_out, "xyz", sessions).items():
        s = sessions[n]
        u = mda.Universe(path)
        check_frames(u, s, 1e-6, f"xyz session {n}", has_box=False)  # ASE checks the Lattice
        frames = ase.io.read(path, index=":", format="extxyz")
        assert len(frames) == len(s["positions"]), f"ase: {len(frames)} frames"
        for i, atoms in enumerate(frames):
            np.testing.assert_allclose(atoms.positions, angstrom(s["positions"][i]), rtol=1.2e-7, atol=1e-6)
            box = s["box"][i]
            if box:
                cell = angstrom(np.asarray(box, dtype=np.float32)).reshape(3, 3)
                np.testing.assert_allclose(atoms.cell.array, cell, rtol=1e-7, atol=1e-6)
                assert all(atoms.pbc)
        print(f"ok xyz {n} {len(u.trajectory)}")
    print(f"sessions {len(sessions)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
