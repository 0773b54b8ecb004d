# %% [markdown]
# # recfmt from Python: a notebook-style tour
#
# Each `# %%` cell runs as it stands (Jupyter, VS Code and `jupytext` read this layout; CI runs
# the file with `python docs/python_example.py`, from `python/tests/test_docs.py`). It uses the
# USVLOG session that `cargo xtask fixtures` generates; pass another recording as the first
# argument to explore your own.

# %%
import sys
import tempfile
from pathlib import Path

import pyarrow.dataset as ds

import recfmt

root = Path(__file__).resolve().parents[1]
path = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "tests/fixtures/generated/usvlog/all_types"

rec = recfmt.open(path)
print(rec)
print("format:", rec.format, rec.version, "-", rec.format_name)
print("streams:", rec.streams)

# %% [markdown]
# ## A stream as an Arrow table
# Types follow the recording (a `f32` signal is a `float` column), units sit in the field
# metadata, provenance in the schema metadata.

# %%
stream = rec.streams[0]
schema = rec.schema(stream)
units = {f.name: (f.metadata or {}).get(b"unit", b"").decode() for f in schema}
print(stream, units)

table = rec.read(stream)
print(table.num_rows, "rows;", table.column_names)
assert table.num_rows > 0

# %% [markdown]
# ## Only some columns, only a time window
# `start`/`end` are seconds on the recording's axis, or text such as `"+0.5s"` (after the first
# row). The time column always comes along.

# %%
time_column = schema.metadata[b"recfmt.time_column"].decode()
value = [n for n in table.column_names if n != time_column][0]
window = rec.read(stream, columns=[value], start="+0.5s", end="+1s")
print(window.column_names, window.num_rows, "rows in the window")
assert window.column_names == [time_column, value]
assert 0 < window.num_rows < table.num_rows

# %% [markdown]
# ## pandas, and a bounded-memory stream of batches

# %%
frame = rec.to_pandas(stream)
print(frame.describe().loc[["mean", "min", "max"]])

rows = 0
for batch in rec.batches(stream, batch_rows=64):
    rows += batch.num_rows  # each batch is a pyarrow.RecordBatch of at most 64 rows
assert rows == table.num_rows

# %% [markdown]
# ## A fleet as one dataset
# `convert(..., partition=True)` adds each recording to a Hive-partitioned Parquet dataset
# (`<out>/<stream>/source=<recording>/part-0.parquet`); pyarrow.dataset, DuckDB and Spark read a
# stream of every recording as one table.

# %%
with tempfile.TemporaryDirectory() as out:
    recfmt.convert([path], out=out, partition=True, source="boat-1")
    recfmt.convert([path], out=out, partition=True, source="boat-2")
    fleet = ds.dataset(f"{out}/{stream}", format="parquet", partitioning="hive").to_table()
    per_source = fleet.group_by("source").aggregate([(time_column, "count")])
    print(per_source.to_pydict())
    assert fleet.num_rows == 2 * table.num_rows

# %% [markdown]
# ## Errors
# Every error is a `recfmt.RecfmtError` with the command line's message; a read that lost data
# raises `recfmt.DataLostError` with the integrity report and the complete rows.

# %%
try:
    recfmt.open(root / "Cargo.toml")
except recfmt.UnknownFormatError as error:
    print("refused:", error)
