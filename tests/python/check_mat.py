"""Checks a MAT-file written by `recfmt convert --to mat` against `recfmt cat --output ndjson`.

usage: check_mat.py MAT VERSION ROWS.ndjson LAYOUT.json [OCTAVE_DUMP]

VERSION is 7.3 (read with mat73 and h5py) or 5 (read with scipy.io.loadmat, and, when given,
the values GNU Octave printed after `load`). LAYOUT.json lists the variables and fields
(`recfmt::icarec::mat::variables`): [{stream, variable, fields: [{signal, index, field, class,
unit}]}].
Every field must hold every row of its stream, in order, value for value; a missing value is
NaN (floating point) or 0 (integer, logical). Prints one line per file checked; exits non-zero
with the first difference.
"""

import json
import sys
from collections import defaultdict

import numpy as np

NUMPY = {
    "double": np.float64,
    "single": np.float32,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "logical": np.uint8,
}


def expected_columns(ndjson_path, layout):
    """{variable: {field: np.array}} from the rows `recfmt cat` printed."""
    rows = defaultdict(list)
    with open(ndjson_path) as f:
        for line in f:
            row = json.loads(line)
            rows[row["stream"]].append(row)
    out = {}
    for var in layout:
        cols = {}
        for field in var["fields"]:
            dtype = NUMPY[field["class"]]
            floating = field["class"] in ("double", "single")
            values = []
            for row in rows[var["stream"]]:
                # By position: `cat` numbers repeated names (`t`, `t_2`), in signal order.
                v = list(row.values())[1 + field["index"]]
                if v is None:
                    v = float("nan") if floating else 0
                values.append(int(v) if isinstance(v, bool) else v)
            cols[field["field"]] = np.array(values, dtype=np.float64 if floating else object).astype(dtype)
        out[var["variable"]] = cols
    return out


def same(name, expected, actual):
    if actual is None and expected.size == 0:
        return  # mat73 gives None for MATLAB's empty marker
    actual = np.asarray(actual)
    if actual.dtype == np.bool_:
        actual = actual.astype(np.uint8)
    actual = actual.reshape(-1)
    if expected.size == 1 and actual.size == 1:
        pass
    elif actual.shape != expected.shape:
        sys.exit(f"{name}: {actual.size} values, expected {expected.size}")
    a = actual.astype(expected.dtype)
    if np.issubdtype(expected.dtype, np.floating):
        equal = (a == expected) | (np.isnan(a) & np.isnan(expected))
    else:
        equal = a == expected
    if not equal.all():
        i = int(np.argmin(equal))
        sys.exit(f"{name}[{i}]: {actual[i]!r}, expected {expected[i]!r}")


def text(value):
    """A MAT char value as str ('' for the empty ones readers return as arrays or None)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    value = np.asarray(value)
    return "" if value.size == 0 else "".join(str(c) for c in value.reshape(-1))


def check_v73(path, layout, expected):
    import h5py
    import mat73

    with open(path, "rb") as f:
        head = f.read(128)
    if not head.startswith(b"MATLAB 7.3 MAT-file") or head[124:128] != b"\x00\x02IM":
        sys.exit(f"{path}: no MATLAB 7.3 header: {head!r}")
    data = mat73.loadmat(path)
    with h5py.File(path, "r") as h5:
        for var in layout:
            group = h5[var["variable"]]
            if group.attrs["MATLAB_class"] != b"struct":
                sys.exit(f"{var['variable']}: MATLAB_class {group.attrs['MATLAB_class']!r}")
            for field in var["fields"]:
                name = f"{var['variable']}.{field['field']}"
                ds = group[field["field"]]
                if ds.attrs["MATLAB_class"].decode() != field["class"]:
                    sys.exit(f"{name}: MATLAB_class {ds.attrs['MATLAB_class']!r}, expected {field['class']}")
                col = expected[var["variable"]][field["field"]]
                if "MATLAB_empty" in ds.attrs:
                    # MATLAB's empty marker: the dimensions as data.
                    if col.size != 0 or list(ds[()]) != [1, 0]:
                        sys.exit(f"h5py {name}: empty marker {ds[()]!r}, expected {col.size} values")
                else:
                    same(f"h5py {name}", col, ds[()])
                same(f"mat73 {name}", col, data[var["variable"]][field["field"]])
                unit = text(data["units"][var["variable"]][field["field"]])
                if unit != field["unit"]:
                    sys.exit(f"mat73 units.{name}: {unit!r}, expected {field['unit']!r}")
    print(f"{path}: MAT 7.3 read by mat73 and h5py, {len(layout)} variables equal")


def check_v5(path, layout, expected, octave_dump):
    import scipy.io

    data = scipy.io.loadmat(path, simplify_cells=True)
    if data["__version__"] != "1.0":
        sys.exit(f"{path}: version {data['__version__']}")
    for var in layout:
        for field in var["fields"]:
            name = f"{var['variable']}.{field['field']}"
            col = expected[var["variable"]][field["field"]]
            same(f"scipy {name}", col, data[var["variable"]][field["field"]])
            unit = text(data["units"][var["variable"]][field["field"]])
            if unit != field["unit"]:
                sys.exit(f"scipy units.{name}: {unit!r}, expected {field['unit']!r}")
    checked = "scipy"
    if octave_dump:
        printed = {}
        with open(octave_dump) as f:
            for line in f:
                parts = line.split()
                if parts:
                    printed[parts[0]] = np.array([float(x) for x in parts[1:]], dtype=np.float64)
        for var in layout:
            for field in var["fields"]:
                name = f"{var['variable']}.{field['field']}"
                if name not in printed:
                    sys.exit(f"octave printed no {name}")
                col = expected[var["variable"]][field["field"]].astype(np.float64)
                same(f"octave {name}", col, printed[name])
        checked += " and GNU Octave"
    print(f"{path}: MAT 5 read by {checked}, {len(layout)} variables equal")


def main():
    path, version, ndjson_path, layout_path = sys.argv[1:5]
    octave_dump = sys.argv[5] if len(sys.argv) > 5 else None
    with open(layout_path) as f:
        layout = json.load(f)
    if not layout:
        sys.exit("empty layout")
    expected = expected_columns(ndjson_path, layout)
    if version == "7.3":
        check_v73(path, layout, expected)
    else:
        check_v5(path, layout, expected, octave_dump)


if __name__ == "__main__":
    main()
