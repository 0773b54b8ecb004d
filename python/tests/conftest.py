"""Shared test helpers: where the recordings and the `recfmt` binary of the same build are, and
how a value read through the package is compared with `recfmt cat --output ndjson`."""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "generated"
SAMPLES = Path(os.environ.get("RECFMT_SAMPLES", ROOT.parent / "shared" / "samples"))
IN_CI = os.environ.get("CI", "") not in ("", "false")


def recfmt_bin() -> Path:
    """The `recfmt` binary built alongside the package (`RECFMT_BIN`, else target/debug)."""
    explicit = os.environ.get("RECFMT_BIN")
    path = Path(explicit) if explicit else ROOT / "target" / "debug" / "recfmt"
    if not path.exists():
        subprocess.run(
            ["cargo", "build", "--quiet", "-p", "recfmt", "--bin", "recfmt", "--features", "cli"],
            cwd=ROOT,
            check=True,
        )
    return path


def samples(folder: str, extension: str) -> List[Path]:
    """Sample recordings of one format (a missing folder fails in CI, skips elsewhere)."""
    found = sorted((SAMPLES / folder).glob(f"*.{extension}")) if (SAMPLES / folder).is_dir() else []
    if not found and IN_CI:
        raise AssertionError(f"CI is set but there are no {folder} samples under {SAMPLES}")
    return found


def recordings() -> List[Path]:
    """Every generated fixture and every sample, as the interop suite checks them."""
    out = [FIXTURES / "usvlog" / n for n in ("all_types", "truncated", "unknown_types")]
    out += [FIXTURES / "icarec" / n for n in ("all_types.icarec", "empty_static.icarec", "torn.icarec")]
    out += samples("carla", "log")
    out += samples("fgtape", "fgtape")
    out += samples("nanover/server-py", "traj")
    out += samples("nanover/converted", "zip")
    return out


def layouts_of(path: Path) -> List[str]:
    """A session folder that ships a layout file for its own record types is read with it."""
    layout = path / "layouts.toml"
    return [str(layout)] if layout.is_file() else []


@functools.lru_cache(maxsize=None)
def reference(path: Path) -> Tuple[Dict[str, List[dict]], bool]:
    """`recfmt cat --output ndjson`, rows grouped by stream (file order kept), and whether
    the command reported data lost (exit 3)."""
    args = [str(recfmt_bin()), "cat", str(path), "--output", "ndjson"]
    for layout in layouts_of(path):
        args += ["--layout", layout]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode in (0, 3), done.stderr
    rows: Dict[str, List[dict]] = defaultdict(list)
    for line in done.stdout.splitlines():
        row = json.loads(line)
        rows[row.pop("stream")].append(row)
    return rows, done.returncode == 3


def _same_float(a, b, f32: bool) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str):  # cat writes non-finite floats as "inf", "-inf", "NaN"
        a = float(a)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if f32:
        return np.float32(a) == np.float32(b)
    return float(a) == float(b)


def same(want, got, kind: str) -> bool:
    """kind: 'f32', 'f64', 'int', 'bool', 'str', 'bytes', 'list:<kind>'."""
    if kind.startswith("list:"):
        if want is None or got is None:
            return want is None and got is None
        got = list(got)
        return len(want) == len(got) and all(same(w, g, kind[5:]) for w, g in zip(want, got))
    if kind in ("f32", "f64"):
        return _same_float(want, got, kind == "f32")
    if want is None or got is None:
        return want is None and got is None
    if kind == "bytes":
        return want == bytes(got).hex()
    if kind == "bool":
        return bool(want) is bool(got)
    if kind == "int":
        return int(want) == int(got) and isinstance(got, int)
    return want == got


def kind_of(field) -> str:
    md = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    dtype = md.get("recfmt.dtype", "")
    base = {"f32": "f32", "f64": "f64", "bool": "bool", "str": "str", "bytes": "bytes"}.get(dtype, "int")
    nested = md.get("recfmt.shape") or str(field.type).startswith(("list", "fixed_size_list", "large_list"))
    return f"list:{base}" if nested else base


def assert_table_matches(label: str, rows: List[dict], table, columns: Optional[List[str]] = None) -> None:
    """Every value of `table` equals the reference rows' (only `columns`, when given)."""
    assert table.num_rows == len(rows), f"{label}: {table.num_rows} rows, reference {len(rows)}"
    for field in table.schema:
        if columns is not None and field.name not in columns:
            continue
        kind = kind_of(field)
        got = table.column(field.name).to_pylist()
        for i, (row, value) in enumerate(zip(rows, got)):
            assert same(row.get(field.name), value, kind), (
                f"{label}: {field.name} row {i}: reference {row.get(field.name)!r}, read {value!r}"
            )


@pytest.fixture(scope="session")
def all_recordings() -> List[Path]:
    return recordings()


def _bits_type(t):
    """`t` with every float replaced by the unsigned integer of its width (NaN-safe equality)."""
    import pyarrow as pa

    if pa.types.is_float32(t):
        return pa.uint32()
    if pa.types.is_float64(t):
        return pa.uint64()
    if pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field(t.value_field.name, _bits_type(t.value_type)), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _bits_type(t.value_type)))
    return t


def bitwise_equal(a, b) -> bool:
    """Tables equal value for value, NaNs included (compared by their bits)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for x, y in zip(a.columns, b.columns):
        t = _bits_type(x.type)
        x, y = x.combine_chunks(), y.combine_chunks()
        if t != x.type:
            x, y = x.view(t), y.view(t)
        if not x.equals(y):
            return False
    return True
