"""What engines see in recfmt's Parquet (tests/tests/parquet_engines.rs).

    check_engines.py stats DIR
        Every column chunk of every .parquet file under DIR has min/max statistics that pyarrow
        reads (floats included), and they are the chunk's own min and max (NaN left out).
        Prints `ok <file> <row groups> <columns>` per file.

    check_engines.py window FILE START_US END_US
        DuckDB reads FILE for rows with START_US <= t_us < END_US; prints one JSON object with
        the rows found, the row groups scanned out of all, the bytes DuckDB read and the file
        size, from DuckDB's own profile (EXPLAIN (ANALYZE, FORMAT JSON)).

    check_engines.py split PLAIN_DIR SPLIT_DIR
        Every .parquet file of PLAIN_DIR has a twin in SPLIT_DIR (`--byte-stream-split`) that
        pyarrow reads with the same values, whose float columns (array elements included) are
        BYTE_STREAM_SPLIT-encoded in every row group, which polars reads equal to the twin,
        and whose float columns DuckDB sums to the same as the twin's. Prints
        `ok <file> <float columns>` per file, then `bytes <PLAIN_DIR total> <SPLIT_DIR total>`.
"""

import json
import math
import os
import pathlib
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def leaf_values(column):
    """The leaf values of a (possibly list-typed) column, as one flat array."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    while pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type) \
            or pa.types.is_large_list(column.type):
        column = column.flatten()
    return column


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def check_stats(root):
    files = sorted(pathlib.Path(root).rglob("*.parquet"))
    if not files:
        sys.exit(f"no .parquet files under {root}")
    for path in files:
        pf = pq.ParquetFile(path)
        md = pf.metadata
        for g in range(md.num_row_groups):
            group = md.row_group(g)
            table = pf.read_row_group(g)
            for i in range(group.num_columns):
                chunk = group.column(i)
                stats = chunk.statistics
                name = chunk.path_in_schema
                where = f"{path.name} row group {g} column {name} ({chunk.physical_type})"
                if stats is None or not stats.has_min_max:
                    sys.exit(f"{where}: no min/max statistics pyarrow can read")
                top = name.split(".")[0]
                values = leaf_values(table.column(top))
                if pa.types.is_floating(values.type):
                    values = pc.filter(values, pc.invert(pc.is_nan(values)))
                if pa.types.is_string(values.type) or pa.types.is_binary(values.type):
                    continue  # byte order, which pyarrow may truncate; numbers are what filters use
                expected = pc.min_max(values).as_py()
                got = {"min": stats.min, "max": stats.max}
                if not (same(got["min"], expected["min"]) and same(got["max"], expected["max"])):
                    sys.exit(f"{where}: statistics {got}, values {expected}")
        print(f"ok {path.name} {md.num_row_groups} {md.num_columns}")


def window(path, start, end):
    import duckdb

    con = duckdb.connect()
    query = (f"SELECT count(*) AS n, sum(t_us) AS s FROM read_parquet('{path}') "
             f"WHERE t_us >= {start} AND t_us < {end}")
    rows = con.execute(query).fetchall()[0][0]
    plan = con.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query).fetchall()[0][1]
    profile = json.loads(plan)
    if "query" not in profile:
        sys.exit(f"DuckDB gave no profile: {plan[:400]}")
    print(json.dumps({
        "rows": rows,
        "row_groups_scanned": profile["query"]["total_row_groups_scanned"],
        "row_groups": profile["query"]["total_row_groups_to_scan"],
        "bytes_read": profile["io"]["total_bytes_read"],
        "file_bytes": os.path.getsize(path),
        "row_groups_in_file": pq.ParquetFile(path).metadata.num_row_groups,
    }))


def check_split(plain_dir, split_dir):
    import duckdb
    import polars as pl

    plain_dir, split_dir = pathlib.Path(plain_dir), pathlib.Path(split_dir)
    sizes = [0, 0]
    files = sorted(plain_dir.glob("*.parquet"))
    assert files, plain_dir
    for plain in files:
        split = split_dir / plain.name
        a, b = pq.read_table(plain), pq.read_table(split)
        assert a.equals(b), plain.name
        assert pl.read_parquet(plain).equals(pl.read_parquet(split)), plain.name
        metadata = pq.ParquetFile(split).metadata
        floats = set()
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                column = group.column(c)
                if column.physical_type in ("FLOAT", "DOUBLE"):
                    assert "BYTE_STREAM_SPLIT" in column.encodings, (plain.name, column)
                    floats.add(column.path_in_schema)
                else:
                    assert "BYTE_STREAM_SPLIT" not in column.encodings, (plain.name, column)
        scalar = [f.name for f in a.schema if pa.types.is_floating(f.type)]
        if scalar:
            sums = ", ".join(f'sum("{name}")' for name in scalar)
            got = [
                duckdb.sql(f"SELECT {sums} FROM read_parquet('{path}')").fetchall()[0]
                for path in (plain, split)
            ]
            assert got[0] == got[1], (plain.name, got)
        sizes[0] += plain.stat().st_size
        sizes[1] += split.stat().st_size
        print(f"ok {plain.name} {len(floats)}")
    print(f"bytes {sizes[0]} {sizes[1]}")


def main():
    if sys.argv[1:2] == ["split"]:
        check_split(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["stats"]:
        check_stats(sys.argv[2])
    elif sys.argv[1:2] == ["window"]:
        window(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
