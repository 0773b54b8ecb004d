"""Icarus HDF5 recordings through libhdf5 (h5py), for the interop tests in tests/h5.rs.

    python icarus_h5py.py write PATH FRAMES   write a file the way Vulcan's HDF5Writer does
    python icarus_h5py.py check PATH          check a file as Vulcan's HDF5Reader reads it;
                                              print a JSON report with per-dataset sums

`write` follows HDF5Writer.hpp (HighFive) step by step: groups /signals and /metadata, /time
(0,) float64 with maxshape (None,) and chunks (1000,), one such dataset per signal (float64,
int32 or int64) with `unit` / `semantic` string attributes when set, the schema JSON as
TelemetrySchema::to_json lays it out, then every frame: resize each dataset by one and write.
"""

import json
import sys

import h5py
import numpy as np

CHUNK = 1000

# name, type, lifecycle, unit, semantic  (Vulcan: add_vec3, add_double static, add_int32 ...)
SIGNALS = [
    ("Vehicle.Nav.position.x", "double", "dynamic", "m", ""),
    ("Vehicle.Nav.position.y", "double", "dynamic", "m", ""),
    ("Vehicle.Nav.position.z", "double", "dynamic", "m", ""),
    ("Vehicle.mass", "double", "static", "kg", ""),
    ("Vehicle.GNC.phase", "int32", "dynamic", "", "enum"),
    ("Vehicle.GNC.step", "int64", "dynamic", "", ""),
    ("Vehicle.GNC.engaged", "int32", "dynamic", "", "boolean"),
]

DTYPES = {"double": np.float64, "int32": np.int32, "int64": np.int64}


def value(name, i):
    f = float(i)
    return {
        "Vehicle.Nav.position.x": f * 0.5 - 7.25,
        "Vehicle.Nav.position.y": -f,
        "Vehicle.Nav.position.z": 1000.0 + f / 8.0,
        "Vehicle.mass": 950.5,
        "Vehicle.GNC.phase": i % 5 - 2,
        "Vehicle.GNC.step": i * 1_000_000_007 - (1 << 40),
        "Vehicle.GNC.engaged": i % 2,
    }[name]


def to_json():
    """TelemetrySchema::to_json, character for character."""
    out = '{\n  "signals": [\n'
    for k, (name, ty, lc, unit, sem) in enumerate(SIGNALS):
        out += "    {\n"
        out += f'      "name": "{name}",\n'
        out += f'      "type": "{ty}",\n'
        out += f'      "lifecycle": "{lc}",\n'
        out += f'      "offset": {8 * k}'
        if unit:
            out += f',\n      "unit": "{unit}"'
        if sem:
            out += f',\n      "semantic": "{sem}"'
        out += "\n    }"
        if k + 1 < len(SIGNALS):
            out += ","
        out += "\n"
    out += "  ],\n"
    out += f'  "frame_size_bytes": {8 * len(SIGNALS)}\n'
    out += "}"
    return out


def write(path, frames):
    # HighFive's std::string attributes are variable-length strings; use both charsets.
    ascii_str = h5py.string_dtype("ascii")
    utf8_str = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as f:
        f.create_group("signals")
        f.create_group("metadata")
        time = f.create_dataset("time", shape=(0,), maxshape=(None,), chunks=(CHUNK,), dtype=np.float64)
        datasets = []
        for name, ty, _lc, unit, sem in SIGNALS:
            ds = f.create_dataset(
                "signals/" + name, shape=(0,), maxshape=(None,), chunks=(CHUNK,), dtype=DTYPES[ty]
            )
            if unit:
                ds.attrs.create("unit", unit, dtype=utf8_str)
            if sem:
                ds.attrs.create("semantic", sem, dtype=ascii_str)
            datasets.append((name, ds))
        meta = f["metadata"]
        meta.attrs.create("schema", to_json(), dtype=ascii_str)
        meta.attrs.create("created_at", "2026-03-01T08:15:00Z", dtype=ascii_str)
        for i in range(frames):
            time.resize((i + 1,))
            time[i] = i * 0.01
            for name, ds in datasets:
                ds.resize((i + 1,))
                ds[i] = value(name, i)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check(path):
    with h5py.File(path, "r") as f:
        meta = f["metadata"]
        assert isinstance(meta, h5py.Group), "/metadata must be a group (HDF5Reader: getGroup)"
        schema = json.loads(text(meta.attrs["schema"]))
        created_at = text(meta.attrs["created_at"])
        assert schema["frame_size_bytes"] == 8 * len(schema["signals"])
        time = f["time"]
        assert time.dtype == np.float64 and time.ndim == 1
        assert time.maxshape == (None,)
        n = time.shape[0]
        sums = {"time": float(np.sum(time[...]))}
        for k, s in enumerate(schema["signals"]):
            assert s["offset"] == 8 * k, s
            assert s["lifecycle"] in ("static", "dynamic"), s
            ds = f["signals/" + s["name"]]
            assert ds.shape == (n,), (s, ds.shape)
            assert ds.dtype == DTYPES[s["type"]], (s, ds.dtype)
            assert ds.chunks is not None and ds.chunks[0] <= 65535, ds.chunks
            if "unit" in s:
                assert text(ds.attrs["unit"]) == s["unit"], s
            if "semantic" in s:
                assert text(ds.attrs["semantic"]) == s["semantic"], s
            data = ds[...]
            if s["lifecycle"] == "static" and n:
                assert np.all(data == data[0]), s
            sums[s["name"]] = float(np.sum(data.astype(np.float64)))
        assert set(f["signals"].keys()) == {s["name"] for s in schema["signals"]}
        print(json.dumps({
            "frames": n,
            "created_at": created_at,
            "schema_signals": len(schema["signals"]),
            "sums": sums,
        }))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        sys.exit(f"unknown command {sys.argv[1]!r}")
