"""Run by `cargo xtask bench python`: the recfmt Python package reading a recording.

    bench_python.py read PATH LAYOUT RUNS     best of RUNS: every stream into a pyarrow.Table
    bench_python.py batches PATH LAYOUT       every stream through Recording.batches()
    bench_python.py onepass PATH LAYOUT RUNS  best of RUNS: read_all() (every stream, one pass)
                                              against read() of the largest stream alone
    bench_python.py scans PATH LAYOUT STREAM PARQUET   best of 3: recfmt.polars.scan(...).collect()
                                              and (with pyspark) the Spark data source's
                                              toArrow(), against pyarrow.parquet.read_table

Prints one JSON line: {"seconds": S, "rows": {stream: rows}}. The time covers the reads only
(after `import recfmt` and `recfmt.open`), as the Rust example's does.
"""

import json
import sys
import time

import recfmt


def read(path, layout, runs):
    rec = recfmt.open(path, layouts=[layout])
    best = None
    for _ in range(runs):
        started = time.perf_counter()
        tables = {stream: rec.read(stream) for stream in rec.streams}
        seconds = time.perf_counter() - started
        rows = {stream: table.num_rows for stream, table in tables.items()}
        del tables
        best = seconds if best is None else min(best, seconds)
    return best, rows


def batches(path, layout):
    rec = recfmt.open(path, layouts=[layout])
    started = time.perf_counter()
    rows = {}
    for stream in rec.streams:
        rows[stream] = sum(batch.num_rows for batch in rec.batches(stream))
    return time.perf_counter() - started, rows


def best_of(runs, work):
    best = None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        seconds = time.perf_counter() - started
        best = seconds if best is None else min(best, seconds)
    return best, result


def onepass(path, layout, runs):
    rec = recfmt.open(path, layouts=[layout])
    seconds, tables = best_of(runs, rec.read_all)
    rows = {stream: table.num_rows for stream, table in tables.items()}
    del tables
    largest = max(rows, key=rows.get)
    one, _ = best_of(runs, lambda: rec.read(largest).num_rows)
    return {"seconds": seconds, "one_stream_seconds": one, "one_stream": largest, "rows": rows}


def scans(path, layout, stream, parquet):
    import pyarrow.parquet as pq

    import recfmt.polars

    out = {}
    out["parquet_seconds"], table = best_of(3, lambda: pq.read_table(parquet))
    rows = table.num_rows
    del table
    lf = recfmt.polars.scan(path, stream, layouts=[layout])
    out["polars_seconds"], frame = best_of(3, lf.collect)
    assert frame.height == rows, (frame.height, rows)
    del frame
    try:
        import os

        from pyspark.sql import SparkSession

        import recfmt.spark
    except ImportError:
        out["spark_seconds"] = None
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        recfmt.spark.register(spark)
        df = spark.read.format("recfmt").option("stream", stream).load(path)
        out["spark_seconds"], count = best_of(3, lambda: df.toArrow().num_rows)
        assert count == rows, (count, rows)
        spark.stop()
    out["rows"] = rows
    return out


def main():
    mode, path, layout = sys.argv[1:4]
    if mode == "read":
        seconds, rows = read(path, layout, int(sys.argv[4]))
    elif mode == "onepass":
        print(json.dumps(onepass(path, layout, int(sys.argv[4]))))
        return
    elif mode == "scans":
        print(json.dumps(scans(path, layout, sys.argv[4], sys.argv[5])))
        return
    else:
        seconds, rows = batches(path, layout)
    print(json.dumps({"seconds": seconds, "rows": rows}))


if __name__ == "__main__":
    main()
