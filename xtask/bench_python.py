"""Run by `cargo xtask bench python`: the recfmt Python package reading a recording.

    bench_python.py read PATH LAYOUT RUNS     best of RUNS: every stream into a pyarrow.Table
    bench_python.py batches PATH LAYOUT       every stream through Recording.batches()

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


def main():
    mode, path, layout = sys.argv[1:4]
    if mode == "read":
        seconds, rows = read(path, layout, int(sys.argv[4]))
    else:
        seconds, rows = batches(path, layout)
    print(json.dumps({"seconds": seconds, "rows": rows}))


if __name__ == "__main__":
    main()
