"""The Python side of `cargo xtask bench compare` (issue 11).

Loads the Parquet tables recfmt wrote (one file per stream) into memory as already-decoded
Arrow / numpy columns (not timed), then times only the writing of the same tables with
pyarrow.parquet (zstd, dictionary on and off, row groups of 1 Mi rows as recfmt and pyarrow
write them by default), pyarrow.csv and h5py (gzip level 1 + shuffle, chunks of 65,535 rows),
best of --runs each; with --no-hdf5, pyarrow.parquet and pyarrow.csv alone. Prints one JSON object of
timings on stdout: the best wall time of each writer, and under `<name>_cpu` the least CPU
time (user + sys, all threads) of its runs; progress goes to stderr.

    python compare.py --tables DIR --out DIR [--runs 3] [--no-hdf5]
"""

import argparse
import json
import pathlib
import shutil
import sys
import time

import h5py
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 1024 * 1024
HDF5_CHUNK_ROWS = 65535


def log(msg):
    print(f"compare.py: {msg}", file=sys.stderr, flush=True)


def load(tables_dir):
    """{stream: pyarrow.Table}, each column one contiguous chunk."""
    tables = {}
    for path in sorted(pathlib.Path(tables_dir).glob("*.parquet")):
        tables[path.stem] = pq.read_table(path).combine_chunks()
    if not tables:
        raise SystemExit(f"no .parquet files in {tables_dir}")
    return tables


def csv_table(table):
    """Fixed-size arrays flattened into contiguous `name[0]`, `name[1]`, ... columns, as
    recfmt's CSV does (pyarrow.csv cannot write list columns)."""
    names, columns = [], []
    for field, column in zip(table.schema, table.columns):
        if pa.types.is_fixed_size_list(field.type):
            n = field.type.list_size
            values = column.combine_chunks().flatten().to_numpy(zero_copy_only=False)
            values = values.reshape(-1, n)
            for i in range(n):
                names.append(f"{field.name}[{i}]")
                columns.append(pa.array(np.ascontiguousarray(values[:, i])))
        else:
            names.append(field.name)
            columns.append(column)
    return pa.table(columns, names=names)


def numpy_columns(table):
    """[(name, numpy array)]: numbers as 1-D arrays, fixed-size arrays as (rows, n), text as
    fixed-width bytes sized to the longest value (what recfmt's HDF5 writer does)."""
    out = []
    for field, column in zip(table.schema, table.columns):
        column = column.combine_chunks()
        t = field.type
        if pa.types.is_fixed_size_list(t):
            values = column.flatten().to_numpy(zero_copy_only=False)
            out.append((field.name, np.ascontiguousarray(values.reshape(-1, t.list_size))))
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            values = column.to_pylist()
            width = max((len(v.encode()) for v in values if v is not None), default=1) or 1
            out.append((field.name, np.array([(v or "").encode() for v in values],
                                             dtype=f"S{width}")))
        elif pa.types.is_boolean(t):
            out.append((field.name, column.to_numpy(zero_copy_only=False).astype(np.uint8)))
        elif pa.types.is_timestamp(t) or pa.types.is_duration(t):
            out.append((field.name, column.cast(pa.int64()).to_numpy()))
        elif pa.types.is_integer(t) or pa.types.is_floating(t):
            out.append((field.name, np.ascontiguousarray(column.to_numpy(zero_copy_only=False))))
        else:
            log(f"hdf5: column {field.name} of type {t} left out (recfmt leaves it out too)")
    return out


def best_of(runs, out_root, label, write):
    """Best wall time and least CPU time (user + sys of every thread) of `runs` calls of
    write(fresh_dir); each output is removed after."""
    times, cpus = [], []
    for i in range(runs):
        target = out_root / f"{label}-{i}"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        cpu = time.process_time()
        started = time.perf_counter()
        write(target)
        times.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
        shutil.rmtree(target)
    log(f"{label}: " + ", ".join(f"{t:.2f} s" for t in times)
        + "; CPU " + ", ".join(f"{c:.2f} s" for c in cpus))
    return min(times), min(cpus)


def write_parquet(tables, use_dictionary):
    def write(target):
        for name, table in tables.items():
            pq.write_table(table, target / f"{name}.parquet", compression="zstd",
                           use_dictionary=use_dictionary, row_group_size=ROW_GROUP_ROWS)
    return write


def write_csv(tables):
    def write(target):
        for name, table in tables.items():
            pacsv.write_csv(table, target / f"{name}.csv")
    return write


def write_hdf5(arrays):
    def write(target):
        with h5py.File(target / "recording.h5", "w") as f:
            for stream, columns in arrays.items():
                group = f.create_group(stream)
                for name, values in columns:
                    chunks = (HDF5_CHUNK_ROWS,) + values.shape[1:]
                    group.create_dataset(name, data=values, chunks=chunks,
                                         maxshape=(None,) + values.shape[1:],
                                         compression="gzip", compression_opts=1,
                                         shuffle=True)
    return write


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", required=True, help="recfmt's Parquet output folder")
    parser.add_argument("--out", required=True, help="scratch folder for the outputs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-hdf5", action="store_true")
    args = parser.parse_args()
    out_root = pathlib.Path(args.out)
    shutil.rmtree(out_root, ignore_errors=True)
    out_root.mkdir(parents=True)

    started = time.perf_counter()
    tables = load(args.tables)
    rows = sum(t.num_rows for t in tables.values())
    log(f"loaded {len(tables)} streams, {rows} rows in {time.perf_counter() - started:.1f} s "
        "(not timed)")

    result = {
        "pyarrow_version": pa.__version__,
        "h5py_version": h5py.__version__,
        "hdf5_version": h5py.version.hdf5_version,
        "numpy_version": np.__version__,
        "streams": len(tables),
        "rows": rows,
        "runs": args.runs,
    }
    writers = [("parquet_dict", lambda: write_parquet(tables, True)),
               ("parquet_nodict", lambda: write_parquet(tables, False)),
               ("csv", lambda: write_csv({name: csv_table(t) for name, t in tables.items()}))]
    if not args.no_hdf5:
        writers.append(
            ("hdf5", lambda: write_hdf5({name: numpy_columns(t) for name, t in tables.items()})))
    for name, make in writers:
        write = make()  # preparing the columns is not timed
        result[name], result[name + "_cpu"] = best_of(args.runs, out_root,
                                                      name.replace("_", "-"), write)
    shutil.rmtree(out_root, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
