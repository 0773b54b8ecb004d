"""NanoVer recordings as MDAnalysis Universes, one per simulation session.

    >>> import recfmt.nanover
    >>> u = recfmt.nanover.universe("17-ala-recording-multiple.traj")              # doctest: +SKIP
    >>> [len(u.trajectory) for u in recfmt.nanover.universes("17-ala-recording-multiple.traj")]  # doctest: +SKIP
    [252, 115, 29, 31]

The same rules as NanoVer's own ``nanover.mdanalysis.universes_from_recording``, without the
NanoVer server package:

- a session starts where ``frame_index`` resets to 0 (the ``frames`` stream's ``session``);
- the topology is the first frame with positions (aggregated, as recfmt's ``frames`` rows
  are): names trimmed, element symbols, residue names and ids, segids from chain names,
  bonds; frames before it are not in the trajectory; a session without positions gives no
  Universe (a warning says so);
- when the particle count changes inside a session, the frames from there on are left out
  with a warning (NanoVer keeps only the first topology's frames too);
- positions and box in Å, velocities in Å/ps, forces in kJ/(mol Å) (NanoVer stores nm, nm/ps,
  kJ/(mol nm); ``convert_units=False`` keeps those); ``ts.time`` is
  ``system.simulation.time`` (ps), else the recording's clock (``t_us``) in ps;
- ``ts.data`` holds every scalar frame value (``energy.kinetic``, ...), ``elapsed`` (``t_us``,
  µs since the recorder started), ``frame_index``, and ``user_forces`` (the sparse iMD force
  made dense) when recorded.

The trajectory is read from the file in batches as it is iterated, never held whole: going
forward reads on, going back reopens the recording and reads up to the frame again.
Needs ``MDAnalysis`` (``pip install recfmt[mdanalysis]``).
"""

from __future__ import annotations

import json
import warnings
from os import PathLike
from typing import Any, Dict, List, Optional, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import recfmt

__all__ = ["universes", "universe"]

_Path = Union[str, "PathLike[str]"]
_POSITIONS = "particle.positions"
_TOPOLOGY = [
    "particle.names",
    "particle.elements",
    "particle.residues",
    "residue.names",
    "residue.ids",
    "residue.chains",
    "chain.names",
    "bond.pairs",
]
_BATCH_ROWS = 256


def universes(path: _Path, *, convert_units: bool = True) -> List[Any]:
    """One MDAnalysis Universe per session of the NanoVer recording at `path` (``.traj``,
    ``.state`` beside its ``.traj``, or ``.nanover.zip``), sessions without positions left
    out (with a warning)."""
    recording = recfmt.open(path)
    return [
        _universe(recording, s, convert_units)
        for s in _sessions(recording)
    ]


def universe(path: _Path, session: int = 0, *, convert_units: bool = True) -> Any:
    """The Universe of one session (`session` counts the sessions that have positions, in
    order, as the list :func:`universes` returns; ``u.trajectory.session`` is its number in
    the recording, the ``session_<n>`` of ``recfmt convert --to pdb``)."""
    recording = recfmt.open(path)
    found = _sessions(recording)
    if not 0 <= session < len(found):
        raise IndexError(
            f"{path}: session {session} asked for, the recording has {len(found)} with positions"
        )
    return _universe(recording, found[session], convert_units)


class _Session:
    """Where a session's frames are in the ``frames`` stream, and its topology row."""

    def __init__(self, number: int, first_row: int, atoms: int, topology: Dict[str, Any]):
        self.number = number
        self.first_row = first_row
        self.frames = 0
        self.dropped = 0
        self.atoms = atoms
        self.topology = topology


def _sessions(recording: Any) -> List[_Session]:
    """One pass over the small columns: each session's frame range and topology."""
    names = set(recording.schema("frames").names)
    columns = ["session", _POSITIONS] + [c for c in _TOPOLOGY if c in names]
    found: List[_Session] = []
    seen: set = set()
    stopped: set = set()
    row = 0
    if _POSITIONS not in names:
        columns.remove(_POSITIONS)
    for batch in recording.batches("frames", columns, batch_rows=_BATCH_ROWS, on_loss="warn"):
        sessions = batch.column("session").to_numpy()
        seen.update(np.unique(sessions).tolist())
        if _POSITIONS in names:
            counts = pc.list_value_length(batch.column(_POSITIONS)).fill_null(0).to_numpy() // 3
        else:
            counts = np.zeros(len(sessions), dtype=np.int64)
        for i in range(batch.num_rows):
            number, count = int(sessions[i]), int(counts[i])
            current = found[-1] if found and found[-1].number == number else None
            if count == 0 or number in stopped:
                if current is not None and number in stopped:
                    current.dropped += 1
                continue
            if current is None:
                topology = {c: batch.column(c)[i].as_py() for c in columns[2:]}
                current = _Session(number, row + i, count, topology)
                found.append(current)
            elif count != current.atoms:
                stopped.add(number)
                current.dropped += 1
                continue
            current.frames += 1
        row += batch.num_rows
    empty = sorted(seen - {s.number for s in found})
    if empty:
        warnings.warn(f"sessions without positions, no Universe made: {empty}")
    for s in found:
        if s.dropped:
            warnings.warn(
                f"session {s.number}: the particle count changes inside the session; only the "
                f"frames with the initial topology are in the Universe, {s.dropped} frames "
                f"are left out"
            )
    return found


def _json_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return json.loads(value)
    return list(value)


def _universe(recording: Any, session: _Session, convert_units: bool) -> Any:
    import MDAnalysis as mda

    try:
        from MDAnalysis.guesser.tables import Z2SYMB
    except ImportError:  # MDAnalysis before 2.8
        from MDAnalysis.topology.tables import Z2SYMB

    n = session.atoms
    top = session.topology
    names = [str(x).strip() for x in _json_list(top.get("particle.names"))]
    elements = _json_list(top.get("particle.elements"))
    residues = _json_list(top.get("particle.residues"))
    resnames = [str(x).strip() for x in _json_list(top.get("residue.names"))]
    resids = _json_list(top.get("residue.ids"))
    chains = _json_list(top.get("residue.chains"))
    chain_names = [str(x).strip() for x in _json_list(top.get("chain.names"))]

    n_residues = max(len(resnames), len(resids), len(chains), (max(residues) + 1) if residues else 1)
    atom_resindex = np.array(
        [residues[i] if i < len(residues) else 0 for i in range(n)], dtype=np.int64
    )
    n_segments = max(len(chain_names), (max(chains) + 1) if chains else 1)
    residue_segindex = np.array(
        [chains[r] if r < len(chains) else 0 for r in range(n_residues)], dtype=np.int64
    )
    u = mda.Universe.empty(
        n,
        n_residues=n_residues,
        n_segments=n_segments,
        atom_resindex=atom_resindex,
        residue_segindex=residue_segindex,
        trajectory=False,
    )
    symbols = [Z2SYMB.get(int(elements[i]), "X") if i < len(elements) else "X" for i in range(n)]
    u.add_TopologyAttr("names", [names[i] if i < len(names) and names[i] else symbols[i] for i in range(n)])
    u.add_TopologyAttr("elements", symbols)
    u.add_TopologyAttr("types", symbols)

    def resid(r: int) -> int:
        try:
            return int(float(resids[r]))
        except (IndexError, ValueError, TypeError):
            return r + 1

    u.add_TopologyAttr("resnames", [resnames[r] if r < len(resnames) else "UNK" for r in range(n_residues)])
    u.add_TopologyAttr("resids", [resid(r) for r in range(n_residues)])
    segids = [chain_names[c] if c < len(chain_names) else "" for c in range(n_segments)]
    u.add_TopologyAttr("segids", segids)
    u.add_TopologyAttr("chainIDs", [segids[residue_segindex[atom_resindex[i]]] for i in range(n)])
    pairs = _json_list(top.get("bond.pairs"))
    bonds = [
        (int(a), int(b))
        for a, b in zip(pairs[0::2], pairs[1::2])
        if 0 <= int(a) < n and 0 <= int(b) < n
    ]
    u.add_TopologyAttr("bonds", bonds)
    u.trajectory = _reader_class()(recording, session, convert_units)
    return u


def _reader_class() -> type:
    """The MDAnalysis reader, built on first use so that importing this module needs no
    MDAnalysis."""
    global _READER
    if _READER is None:
        _READER = _make_reader()
    return _READER


_READER: Optional[type] = None


def _make_reader() -> type:
    from MDAnalysis.coordinates.base import ProtoReader
    from MDAnalysis.coordinates.timestep import Timestep

    class NanoverReader(ProtoReader):
        """A session of a NanoVer recording, read through recfmt in batches."""

        format = "RECFMT-NANOVER"
        units = {"time": "ps", "length": "nm", "velocity": "nm/ps", "force": "kJ/(mol*nm)"}

        def __init__(self, recording: Any, session: _Session, convert_units: bool = True):
            super().__init__()
            self.filename = str(recording.path)
            self.convert_units = convert_units
            self._recording = recording
            self._session = session
            #: The session's number in the recording (the `frames` stream's `session`, and
            #: the `session_<n>` of `recfmt convert --to pdb|xyz|dcd`).
            self.session = session.number
            self.n_atoms = session.atoms
            schema = recording.schema("frames")
            self._scalars = [
                f.name
                for f in schema
                if (pa.types.is_floating(f.type) or pa.types.is_integer(f.type) or pa.types.is_boolean(f.type))
                and f.name not in ("t_us", "frame_index", "session")
            ]
            arrays = [
                "particle.velocities",
                "particle.forces",
                "particle.forces.system",
                "system.box.vectors",
                "forces.user.index",
                "forces.user.sparse",
            ]
            self._columns = ["t_us", "frame_index", _POSITIONS] + [
                c for c in arrays if c in schema.names
            ] + self._scalars
            self._batches: Any = None
            self._batch: Optional[pa.RecordBatch] = None
            self._batch_start = 0
            self._next_row = 0
            self._current_frame_index: Optional[int] = None
            self.ts = Timestep(self.n_atoms)
            self._read_frame(0)

        @property
        def n_frames(self) -> int:
            return self._session.frames

        def _row(self, row: int) -> Dict[str, Any]:
            """Row `row` of the frames stream: reads on from the current batch, or reopens."""
            if self._batches is None or row < self._batch_start:
                self._batches = iter(
                    self._recording.batches(
                        "frames", self._columns, batch_rows=_BATCH_ROWS, on_loss="ignore"
                    )
                )
                self._batch, self._batch_start, self._next_row = None, 0, 0
            while self._batch is None or row >= self._batch_start + self._batch.num_rows:
                try:
                    batch = next(self._batches)
                except StopIteration:
                    raise EOFError(f"row {row} is past the end of {self.filename}") from None
                self._batch, self._batch_start = batch, self._next_row
                self._next_row += batch.num_rows
            i = row - self._batch_start
            return {name: self._batch.column(name)[i].as_py() for name in self._batch.schema.names}

        def _read_frame(self, frame: int) -> Any:
            if not 0 <= frame < self.n_frames:
                raise EOFError(f"frame {frame} of {self.n_frames}")
            self._current_frame_index = frame
            row = self._row(self._session.first_row + frame)
            n = self.n_atoms
            ts = Timestep(n)
            ts.frame = frame

            def per_atom(key: str) -> Optional[np.ndarray]:
                value = row.get(key)
                if not value or len(value) != 3 * n:
                    return None
                return np.asarray(value, dtype=np.float32).reshape(n, 3)

            ts.positions = per_atom(_POSITIONS)
            box = row.get("system.box.vectors")
            if box and len(box) == 9:
                ts.triclinic_dimensions = np.asarray(box, dtype=np.float32).reshape(3, 3)
            velocities = per_atom("particle.velocities")
            if velocities is not None:
                ts.velocities = velocities
            forces = per_atom("particle.forces")
            if forces is None:
                forces = per_atom("particle.forces.system")
            if forces is not None:
                ts.forces = forces
            sim_time = row.get("system.simulation.time")
            ts.time = sim_time if sim_time is not None else row["t_us"] * 1e6
            ts.data.update({k: row[k] for k in self._scalars if row.get(k) is not None})
            ts.data["elapsed"] = row["t_us"]
            ts.data["frame_index"] = row["frame_index"]
            index, sparse = row.get("forces.user.index"), row.get("forces.user.sparse")
            user = None
            if index is not None and sparse is not None and len(sparse) == 3 * len(index):
                user = np.zeros((n, 3), dtype=np.float32)
                for k, atom in enumerate(index):
                    if 0 <= atom < n:
                        user[atom] = sparse[3 * k : 3 * k + 3]
            if self.convert_units:
                self.convert_pos_from_native(ts._pos)
                if ts.dimensions is not None:
                    dims = ts.dimensions
                    self.convert_pos_from_native(dims[:3])
                    ts.dimensions = dims
                if ts.has_velocities:
                    self.convert_velocities_from_native(ts._velocities)
                if ts.has_forces:
                    self.convert_forces_from_native(ts._forces)
                if user is not None:
                    self.convert_forces_from_native(user)
            if user is not None:
                ts.data["user_forces"] = user
            self.ts = ts
            return ts

        def _read_next_timestep(self, ts: Any = None) -> Any:
            frame = 0 if self._current_frame_index is None else self._current_frame_index + 1
            return self._read_frame(frame)

        def _reopen(self) -> None:
            self._current_frame_index = None

        def close(self) -> None:
            self._batches = None
            self._batch = None

    return NanoverReader
