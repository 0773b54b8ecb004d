"""Reads recfmt's HDF5 output with h5py and checks it against the same rows as NDJSON.

usage: check_hdf5.py FILE.h5 NDJSON_FILE

NDJSON_FILE holds one row per line, `{"stream": NAME, "<signal>": value, ...}`, as
`recfmt cat --output ndjson` prints them: non-finite floats as the strings "NaN", "inf" and
"-inf", fixed shapes as flat row-major (or nested) lists, null for a missing value.

Every group of the file is matched to its stream through the `recfmt.stream` attribute and
every dataset to its signal through `original_name`; then for each dataset:

* the row count and the shape (`(rows,)` for scalars, `(rows, *shape)` for fixed shapes, both
  as the dataset's shape and as the values read);
* the numpy type: floats, integers and booleans must keep their exact recfmt dtype
  (an `f32` signal reads as float32, a `bool` as numpy bool), strings are fixed-width bytes;
* every value: floats exactly after rounding the JSON number to the dataset's type (NaN
  matching NaN, and a null float matching NaN, which is how the export writes it); integers
  and booleans exactly; strings after decoding UTF-8 (a null string is written as the empty
  string);
* every attribute is a `str` (not bytes), and so is the `unit` attribute where present.

Signals of the NDJSON without a dataset must be listed in the group's
`recfmt.omitted_columns` and be null in every row. Streams of the NDJSON that the file lacks
are an error. Prints `ok <group>: N rows` per group; exits 1 on the first mismatch.
"""
import json
import math
import sys
from collections import defaultdict

import h5py
import numpy as np

NUMPY_TYPES = {
    "bool": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f32": np.float32,
    "f64": np.float64,
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_str_attrs(where, attrs):
    for key, value in attrs.items():
        if key == "recfmt.omitted_columns":
            if not all(isinstance(v, str) for v in value):
                fail(f"{where}: attribute {key} holds {value!r}, expected str elements")
        elif not isinstance(value, str):
            fail(f"{where}: attribute {key} is {type(value).__name__} {value!r}, expected str")


def float_value(value, dims):
    """A JSON value of one float row as numbers: the strings "NaN", "inf" and "-inf" (how
    recfmt's NDJSON writes non-finite floats) become floats, and null becomes NaN, which is
    how the HDF5 export writes a null float (a null fixed-shape row becomes all NaN)."""
    if value is None:
        return [math.nan] * math.prod(dims) if dims else math.nan
    if isinstance(value, list):
        return [float_value(v, ()) for v in value]
    if isinstance(value, str):
        if value not in ("NaN", "inf", "-inf"):
            raise ValueError(f"unexpected text {value!r} for a float")
        return float(value)
    return value


def expected_array(where, want_json, dtype, rows, dims):
    """The NDJSON values as an array of shape (rows, *dims); fixed shapes may be given flat
    (row-major, as `recfmt cat` prints them) or nested."""
    try:
        return np.array(want_json, dtype=dtype).reshape((rows,) + dims)
    except ValueError as e:
        fail(f"{where}: NDJSON values do not form shape {(rows,) + dims}: {e}")


def compare_floats(where, got, want_json, dtype, dims):
    rows = len(want_json)
    try:
        numbers = [float_value(v, dims) for v in want_json]
    except ValueError as e:
        fail(f"{where}: {e}")
    want = expected_array(where, numbers, dtype, rows, dims)
    if want.shape != got.shape:
        fail(f"{where}: shape {got.shape}, expected {want.shape}")
    equal = (got == want) | (np.isnan(got) & np.isnan(want))
    if not equal.all():
        bad = tuple(int(i) for i in np.argwhere(~equal)[0])
        fail(f"{where}: at {bad}: {got[bad]!r}, expected {want[bad]!r}")


def has_null(value):
    if isinstance(value, list):
        return any(has_null(v) for v in value)
    return value is None


def compare_exact(where, got, want_json, dtype, dims):
    if any(has_null(v) for v in want_json):
        fail(f"{where}: the NDJSON holds a null in a {np.dtype(dtype)} column")
    want = expected_array(where, want_json, dtype, len(want_json), dims)
    if want.shape != got.shape:
        fail(f"{where}: shape {got.shape}, expected {want.shape}")
    if not np.array_equal(got, want):
        bad = tuple(int(i) for i in np.argwhere(got != want)[0])
        fail(f"{where}: at {bad}: {got[bad]!r}, expected {want[bad]!r}")


def check_dataset(where, ds, want_json):
    rows = len(want_json)
    check_str_attrs(where, ds.attrs)
    unit = ds.attrs.get("unit")
    if unit is not None and not isinstance(unit, str):
        fail(f"{where}: unit attribute is {type(unit).__name__}, expected str")
    dtype_name = ds.attrs.get("dtype")
    shape_text = ds.attrs.get("shape")
    dims = tuple(int(d) for d in shape_text.split("x")) if shape_text else ()
    # A fixed shape is trailing dataset axes, except one with an axis over 65 535 (or 31
    # axes), which stays an array element type on a 1-D dataset.
    nd = len(dims) < 32 and all(d <= 65535 for d in dims)
    want_shape = (rows,) + dims if nd else (rows,)
    if ds.shape != want_shape:
        fail(f"{where}: dataset shape {ds.shape}, expected {want_shape}")
    if nd and dims and ds.maxshape != (None,) + dims:
        fail(f"{where}: maxshape {ds.maxshape}, expected {(None,) + dims}")
    if dtype_name == "str":
        if ds.dtype.kind != "S" and ds.dtype.base.kind != "S":
            fail(f"{where}: dtype {ds.dtype}, expected fixed-width bytes")
        got = ds.asstr()[()] if rows else np.array([], dtype=object)
        got = np.array(got, dtype=object).reshape((rows,) + dims)
        want = np.array(
            ["" if v is None else v for v in want_json], dtype=object
        ).reshape((rows,) + dims)
        if not (got == want).all():
            bad = tuple(int(i) for i in np.argwhere(got != want)[0])
            fail(f"{where}: at {bad}: {got[bad]!r}, expected {want[bad]!r}")
        return
    if dtype_name not in NUMPY_TYPES:
        fail(f"{where}: unexpected dtype attribute {dtype_name!r}")
    expected_type = NUMPY_TYPES[dtype_name]
    got = ds[()]
    if got.dtype != np.dtype(expected_type):
        fail(f"{where}: reads as {got.dtype}, expected {np.dtype(expected_type)} ({dtype_name})")
    if got.shape != (rows,) + dims:
        fail(f"{where}: values of shape {got.shape}, expected {(rows,) + dims}")
    if dtype_name in ("f32", "f64"):
        compare_floats(where, got, want_json, expected_type, dims)
    else:
        compare_exact(where, got, want_json, expected_type, dims)


def main():
    h5_path, ndjson_path = sys.argv[1:3]
    rows_by_stream = defaultdict(list)
    with open(ndjson_path, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            rows_by_stream[row.pop("stream")].append(row)

    with h5py.File(h5_path, "r") as f:
        check_str_attrs("/", f.attrs)
        for key in ("recfmt.format", "recfmt.version"):
            if key not in f.attrs:
                fail(f"/: no {key} attribute")
        for group_name in sorted(f):
            group = f[group_name]
            if not isinstance(group, h5py.Group):
                fail(f"/{group_name} is not a group")
            check_str_attrs(f"/{group_name}", group.attrs)
            stream = group.attrs.get("recfmt.stream")
            if stream is None:
                fail(f"/{group_name}: no recfmt.stream attribute")
            reference = rows_by_stream.pop(stream, [])
            omitted = set(group.attrs.get("recfmt.omitted_columns", []))
            time_column = group.attrs.get("recfmt.time_column")
            if time_column not in group:
                fail(f"/{group_name}: time column {time_column!r} is not a dataset")
            seen = set()
            for dataset_name, ds in group.items():
                where = f"/{group_name}/{dataset_name}"
                if not isinstance(ds, h5py.Dataset):
                    fail(f"{where} is not a dataset")
                signal = ds.attrs.get("original_name")
                if signal is None:
                    fail(f"{where}: no original_name attribute")
                seen.add(signal)
                if any(signal not in row for row in reference):
                    fail(f"{where}: signal {signal!r} is missing from NDJSON rows of {stream!r}")
                check_dataset(where, ds, [row[signal] for row in reference])
            for signal in sorted({key for row in reference for key in row} - seen):
                if signal not in omitted:
                    fail(f"/{group_name}: signal {signal!r} has no dataset and is not omitted")
                if any(row.get(signal) is not None for row in reference):
                    fail(f"/{group_name}: omitted signal {signal!r} holds values")
            print(f"ok {group_name}: {len(reference)} rows")
    if rows_by_stream:
        fail(f"streams of the NDJSON missing from the file: {sorted(rows_by_stream)}")


if __name__ == "__main__":
    main()
