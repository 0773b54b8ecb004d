"""Reads every table recfmt wrote for one recording, with real clients, and compares each value
with `recfmt cat --output ndjson` (the reference).

usage: interop.py REFERENCE_NDJSON OUTPUTS_DIR
OUTPUTS_DIR holds parquet/, csv/, arrow/, ndjson/ (one file per stream each) and optionally
recording.h5. Readers: pyarrow (Parquet, Arrow IPC), duckdb (Parquet), pandas (CSV),
json (NDJSON), h5py (HDF5, when the file and the module are there).
Prints one line per table checked; exits 1 on the first mismatch.
"""
import json
import math
import os
import sys
from collections import defaultdict

import numpy as np

ref_path, out_dir = sys.argv[1:3]
reference = defaultdict(list)
with open(ref_path) as f:
    for line in f:
        row = json.loads(line)
        reference[row.pop("stream")].append(row)

checked = 0


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def stem(stream):
    return "".join("_" if c in '/\\:*?"<>|' or ord(c) < 32 else c for c in stream) or "_"


def same_float(a, b, f32):
    if a is None or b is None:
        return (a is None or (isinstance(a, float) and math.isnan(a))) and (
            b is None or (isinstance(b, float) and math.isnan(b)))
    if isinstance(a, str) or isinstance(b, str):
        return str(a).lower().strip("+") == str(b).lower().strip("+")
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if f32:
        return np.float32(a) == np.float32(b)
    return float(a) == float(b)


def same(want, got, kind):
    """kind: 'f32', 'f64', 'int', 'bool', 'str', 'bytes', 'list:<kind>'"""
    if kind.startswith("list:"):
        if want is None or got is None:
            return want is None and got is None
        got = list(got)
        return len(want) == len(got) and all(same(w, g, kind[5:]) for w, g in zip(want, got))
    if kind in ("f32", "f64"):
        return same_float(want, got, kind == "f32")
    if want is None or got is None:
        return want is None and (got is None or (isinstance(got, float) and math.isnan(got)))
    if kind == "bytes":
        got = got.hex() if isinstance(got, (bytes, bytearray)) else got
        return want == got
    if kind == "bool":
        return bool(want) == (got in (True, 1, "true", "True", np.True_))
    if kind == "int":
        return int(want) == int(got)
    return want == got


def kind_of(dtype_name, shape):
    base = {"f32": "f32", "f64": "f64", "bool": "bool", "str": "str", "bytes": "bytes"}.get(dtype_name, "int")
    return f"list:{base}" if shape else base


reference_columns = {}


def column_agrees(rows, name, got, kind):
    """A whole column at once, for speed: True only where `same` would accept every value
    (equal lists, or float columns equal as float32/float64 with NaN equal to NaN); False
    sends the column to the value-by-value comparison, which names the first mismatch."""
    key = (id(rows), name)
    if key not in reference_columns:
        # `rows` is kept with its column so that its id is not reused while cached.
        reference_columns[key] = (rows, [r.get(name) for r in rows])
    want = reference_columns[key][1]
    if want == got:
        return True
    base = kind[5:] if kind.startswith("list:") else kind
    if base not in ("f32", "f64"):
        return False
    try:
        a, b = np.asarray(want), np.asarray(got)
    except (TypeError, ValueError):
        return False  # ragged lists: value by value
    # Nulls or text make object or string arrays: value by value.
    if a.shape != b.shape or a.dtype.kind not in "fiu" or b.dtype.kind not in "fiu":
        return False
    a, b = a.astype(np.float64), b.astype(np.float64)
    if base == "f32":
        with np.errstate(over="ignore", invalid="ignore"):
            a, b = a.astype(np.float32), b.astype(np.float32)
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def compare_columns(label, rows, columns, kinds):
    """columns: name -> list of values read by the client."""
    global checked
    for name, kind in kinds.items():
        if name not in columns:
            fail(f"{label}: column {name} missing (has {sorted(columns)[:8]}...)")
        got = columns[name]
        if len(got) != len(rows):
            fail(f"{label}: {name} has {len(got)} rows, reference {len(rows)}")
        if column_agrees(rows, name, got, kind):
            continue
        for i, (r, g) in enumerate(zip(rows, got)):
            if not same(r.get(name), g, kind):
                fail(f"{label}: {name} row {i}: reference {r.get(name)!r}, read {g!r}")
    checked += 1
    print(f"ok {label}: {len(rows)} rows x {len(kinds)} columns")


def kinds_from_arrow(schema):
    out = {}
    for field in schema:
        md = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
        out[field.name] = kind_of(md.get("recfmt.dtype", ""), md.get("recfmt.shape") or
                                  ("var" if str(field.type).startswith("list") else None))
    return out


import pyarrow.parquet as pq  # noqa: E402
import pyarrow.ipc as ipc  # noqa: E402

for stream, rows in sorted(reference.items()):
    s = stem(stream)
    # Parquet with pyarrow: native types and units come along.
    p = os.path.join(out_dir, "parquet", s + ".parquet")
    table = pq.read_table(p)
    kinds = kinds_from_arrow(table.schema)
    for field in table.schema:
        md = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
        if md.get("recfmt.dtype") == "f32" and str(field.type) not in ("float", "list<item: float>", "fixed_size_list<item: float>[3]") and not str(field.type).startswith(("fixed_size_list<item: float>", "list<item: float>")):
            fail(f"parquet {stream}.{field.name}: f32 stored as {field.type}")
    compare_columns(f"pyarrow parquet {stream}", rows, {c: table.column(c).to_pylist() for c in table.column_names}, kinds)

    # Arrow IPC with pyarrow.
    with ipc.open_file(os.path.join(out_dir, "arrow", s + ".arrow")) as reader:
        t = reader.read_all()
    compare_columns(f"pyarrow arrow {stream}", rows, {c: t.column(c).to_pylist() for c in t.column_names}, kinds)

    # Parquet with duckdb.
    try:
        import duckdb
    except ImportError:
        duckdb = None
    if duckdb is not None:
        con = duckdb.connect()
        res = con.execute(f"SELECT * FROM read_parquet('{p}')")
        names = [d[0] for d in res.description]
        data = res.fetchall()
        cols = {n: [row[i] for row in data] for i, n in enumerate(names)}
        compare_columns(f"duckdb parquet {stream}", rows, cols, kinds)

    # CSV with pandas: fixed arrays are flattened into name[i] columns.
    import pandas as pd
    c = os.path.join(out_dir, "csv", s + ".csv")
    df = pd.read_csv(c, keep_default_na=False, na_values=[""], dtype=str)
    # Fixed-shape columns are flattened row-major into name[i] or name[i][j] columns.
    flat_names = {name: [c for c in df.columns if c.startswith(name + "[")] for name in kinds}
    flat_rows, flat_kinds = [], {}
    for name, kind in kinds.items():
        if kind.startswith("list:") and flat_names[name]:
            for col in flat_names[name]:
                flat_kinds[col] = kind[5:]
        else:
            flat_kinds[name] = "str" if kind.startswith("list:") else kind
    for r in rows:
        fr = {}
        for name, kind in kinds.items():
            v = r.get(name)
            if kind.startswith("list:") and flat_names[name]:
                for i, col in enumerate(flat_names[name]):
                    fr[col] = None if v is None else v[i]
            elif kind.startswith("list:"):
                fr[name] = None if v is None else v
            elif kind in ("str", "bytes") and v == "":
                fr[name] = None  # CSV cannot tell an empty string from a missing value
            else:
                fr[name] = v
        flat_rows.append(fr)

    def parse(cell, kind):
        if cell is None or (isinstance(cell, float) and math.isnan(cell)):
            return None
        if kind in ("f32", "f64"):
            return float(cell)
        if kind == "int":
            return int(cell)
        return cell

    cols = {}
    for name, kind in flat_kinds.items():
        if name not in df.columns:
            fail(f"pandas csv {stream}: column {name} missing")
        values = [parse(v, kind) for v in df[name].tolist()]
        if kinds.get(name, "").startswith("list:"):
            values = [None if v is None else json.loads(v) for v in values]
            flat_kinds[name] = kinds[name]
        cols[name] = values
    compare_columns(f"pandas csv {stream}", flat_rows, cols, flat_kinds)

    # NDJSON with the json module.
    with open(os.path.join(out_dir, "ndjson", s + ".ndjson")) as f:
        nd = [json.loads(line) for line in f]
    compare_columns(f"json ndjson {stream}", rows, {k: [r.get(k) for r in nd] for k in kinds}, kinds)

h5 = os.path.join(out_dir, "recording.h5")
if os.path.exists(h5):
    import h5py

    def text(v):
        return v.decode() if isinstance(v, bytes) else v

    with h5py.File(h5, "r") as f:
        groups = {text(g.attrs.get("recfmt.stream", k)): g for k, g in f.items()}
        for stream, rows in sorted(reference.items()):
            if stream not in groups:
                fail(f"h5py: no group for stream {stream} (groups: {sorted(groups)})")
            group = groups[stream]
            omitted = [text(x) for x in group.attrs.get("recfmt.omitted_columns", [])]
            kinds, cols = {}, {}
            for key in group:
                ds = group[key]
                name = text(ds.attrs.get("original_name", key))
                dtype = text(ds.attrs.get("dtype", ""))
                if dtype == "str" and not isinstance(ds.attrs.get("unit", ""), (str, type(None))):
                    fail(f"h5py {stream}.{name}: unit attribute is not str")
                values = ds[()]
                if dtype == "str":
                    values = [text(v).rstrip("\0") for v in values]
                    values = [None if v == "" else v for v in values]
                else:
                    values = values.tolist()
                kind = kind_of(dtype, ds.attrs.get("shape"))
                if kind.startswith("list:"):
                    # Fixed shapes come back as nested lists; the reference is flat, row-major.
                    # HDF5 has no null array: a missing one is stored as NaNs.
                    flat = [np.asarray(v, dtype=float).ravel().tolist() for v in values]
                    values = [None if all(math.isnan(x) for x in v) else v for v in flat]
                kinds[name] = kind
                cols[name] = values
            # Columns HDF5 cannot hold are listed, never silently missing.
            for name in list(rows[0].keys()) if rows else []:
                if name not in cols and not any(o.split(":")[0].strip() == name or o.startswith(name) for o in omitted):
                    fail(f"h5py {stream}: column {name} neither stored nor listed as omitted ({omitted})")
            h5_rows = [{k: (None if v == "" and kinds.get(k) == "str" else v) for k, v in r.items()} for r in rows]
            compare_columns(f"h5py hdf5 {stream}", h5_rows, cols, kinds)

print(f"{checked} tables checked")
