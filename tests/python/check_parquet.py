"""Reads recfmt's Parquet output with pyarrow and checks it against `recfmt cat --output ndjson`.

usage: check_parquet.py OUT_DIR NDJSON_FILE EXPECTED_COUNTS_JSON
Prints one line per table; exits non-zero with a message on the first mismatch.
"""
import json
import sys
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq

out_dir, ndjson_path, counts_path = sys.argv[1:4]
expected_counts = json.load(open(counts_path))

rows_by_stream = defaultdict(list)
for line in open(ndjson_path):
    row = json.loads(line)
    rows_by_stream[row.pop("stream")].append(row)

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

for stream, expected_rows in sorted(expected_counts.items()):
    table = pq.read_table(f"{out_dir}/{stream}.parquet")
    if table.num_rows != expected_rows:
        fail(f"{stream}: {table.num_rows} rows, expected {expected_rows}")
    schema = table.schema
    if schema.field("t_us").type != pa.uint64():
        fail(f"{stream}: t_us is {schema.field('t_us').type}")
    reference = rows_by_stream[stream]
    if len(reference) != table.num_rows:
        fail(f"{stream}: ndjson has {len(reference)} rows")
    for field in schema:
        meta = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
        column = table.column(field.name).to_pylist()
        if pa.types.is_floating(field.type):
            if field.type != pa.float32():
                fail(f"{stream}.{field.name}: {field.type}, expected float32")
            if "unit" not in meta:
                fail(f"{stream}.{field.name}: no unit metadata ({meta})")
            # float32 values compare exactly after rounding the JSON text to float32.
            import numpy as np
            got = np.array(column, dtype=np.float32)
            want = np.array([r[field.name] for r in reference], dtype=np.float32)
            if not np.array_equal(got, want):
                fail(f"{stream}.{field.name}: values differ from ndjson")
        else:
            want = [r[field.name] for r in reference]
            if column != want:
                fail(f"{stream}.{field.name}: values differ from ndjson")
    units = {f.name: (f.metadata or {}).get(b"unit", b"").decode() for f in schema}
    file_meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items() if not k.startswith(b"ARROW")}
    if file_meta.get("recfmt.format") != "usvlog":
        fail(f"{stream}: schema metadata lacks recfmt.format: {sorted(file_meta)}")
    print(f"ok {stream}: {table.num_rows} rows, units {units}")
