"""Type stubs of the native module `recfmt._recfmt` (see the `recfmt` package docs)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import pandas
import pyarrow

_Path = Union[str, os.PathLike[str]]
_Time = Union[float, str, None]
_Names = Union[str, Sequence[str], None]

__version__: str

from .errors import RecfmtError

class Recording:
    """A recording opened for reading. Each read opens the file again, so reads are independent."""

    @property
    def path(self) -> Path: ...
    @property
    def format(self) -> str:
        """The format id (`usvlog`, `carla`, `fgtape`, `icarec`, `icarus-h5`, `nanover`)."""
    @property
    def format_name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def streams(self) -> List[str]:
        """Stream names in schema order."""
    @property
    def metadata(self) -> Dict[str, str]:
        """What the recording says about itself."""
    def info(self) -> Dict[str, Any]:
        """Reads the recording once: the same dict as `recfmt info --json`."""
    def schema(self, stream: str) -> pyarrow.Schema:
        """Arrow schema of `stream`: units in field metadata, provenance in schema metadata."""
    def read(
        self,
        stream: str,
        columns: _Names = None,
        start: _Time = None,
        end: _Time = None,
        *,
        batch_rows: int = 65536,
        on_loss: str = "raise",
    ) -> pyarrow.Table:
        """Read `stream` into a table.

        `columns` (a name or a list) keeps those signals: a signal or composite name (a
        composite keeps its members), `stream.signal`, or a pattern (`p*`, `re:[xy]`); the time column,
        and an entity-keyed stream's id column, are always kept; order is the recording's.
        `start` (inclusive) and `end` (exclusive) are seconds on the recording's time axis, or
        text as `convert --start` takes it (`"+12.5s"` after the first row, RFC 3339).
        `on_loss`: `"raise"` (DataLostError), `"warn"` (DataLostWarning) or `"ignore"`.
        """
    def read_all(
        self,
        streams: _Names = None,
        columns: _Names = None,
        start: _Time = None,
        end: _Time = None,
        *,
        batch_rows: int = 65536,
        on_loss: str = "raise",
    ) -> Dict[str, pyarrow.Table]:
        """Read several streams (`None`: all) in one pass over the file: tables by stream name."""
    def batches(
        self,
        stream: Optional[str] = None,
        columns: _Names = None,
        start: _Time = None,
        end: _Time = None,
        *,
        streams: _Names = None,
        batch_rows: int = 65536,
        on_loss: str = "raise",
    ) -> BatchStream:
        """Stream `stream` as record batches of at most `batch_rows` rows (bounded memory); with
        `streams=[...]` instead, several streams in one pass as `(stream, batch)` pairs."""
    def to_pandas(
        self,
        stream: str,
        columns: _Names = None,
        start: _Time = None,
        end: _Time = None,
        *,
        batch_rows: int = 65536,
        on_loss: str = "raise",
        **kwargs: Any,
    ) -> pandas.DataFrame:
        """`read(...)` then `pyarrow.Table.to_pandas(**kwargs)`."""

class BatchStream(Iterator[Any]):
    """Record batches of one stream (also an Arrow PyCapsule stream, `__arrow_c_stream__`), or
    `(stream, batch)` pairs of several (`batches(streams=[...])`)."""

    @property
    def schema(self) -> pyarrow.Schema:
        """The schema of one stream's batches (TypeError for several streams)."""
    @property
    def schemas(self) -> Dict[str, pyarrow.Schema]:
        """Each stream's schema, by name."""
    @property
    def integrity(self) -> Optional[Dict[str, Any]]:
        """The integrity report once the stream has ended, else None."""
    def __iter__(self) -> BatchStream: ...
    def __next__(self) -> Any: ...
    def to_reader(self) -> pyarrow.RecordBatchReader: ...
    def read_all(self) -> pyarrow.Table: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

def open(
    path: _Path,
    format: Optional[str] = None,
    strict: bool = False,
    layouts: Sequence[_Path] = (),
    *,
    resync: bool = False,
) -> Recording: ...
def formats() -> List[Dict[str, Any]]:
    """Every format of this build: `id`, `name`, `extensions`, `write`."""
def carla_query(
    path: _Path,
    query: str,
    *,
    type1: str = "a",
    type2: str = "a",
    min_time: float = 60.0,
    min_distance: float = 100.0,
) -> Any:
    """CARLA's own queries (`"info"`, `"collisions"`, `"blocked"`) as `recfmt carla ... --json`."""
def state_at(path: _Path, t: float, *, strict: bool = False) -> Dict[str, Any]:
    """ICAREC: every signal at time `t` (`t`, `frame`, `values`), as `recfmt cat --at T`."""
def source_name(path: _Path) -> str:
    """The name a recording gets in a partitioned dataset."""
def convert(
    paths: Sequence[_Path],
    out: _Path,
    to: str,
    *,
    several: bool = False,
    partition: bool = False,
    source: Optional[str] = None,
    format: Optional[str] = None,
    strict: bool = False,
    resync: bool = False,
    layouts: Sequence[_Path] = (),
    opt: Union[Mapping[str, Any], str, Sequence[str], None] = None,
    streams: Sequence[str] = (),
    exclude_streams: Sequence[str] = (),
    signals: Sequence[str] = (),
    exclude_signals: Sequence[str] = (),
    start: _Time = None,
    end: _Time = None,
    carry_last: bool = False,
    merge: Optional[str] = None,
    max_rows: Optional[int] = None,
    upcast_f64: bool = False,
    time_column: Optional[str] = None,
    string_width: Optional[int] = None,
    batch_rows: int = 65536,
    row_group_rows: int = 1048576,
    row_group_bytes: int = 67108864,
    row_group_memory: int = 8388608,
    byte_stream_split: bool = False,
    compression: str = "zstd",
    delimiter: str = ",",
    units_row: bool = False,
    jobs: Optional[int] = None,
    threads: Optional[int] = None,
    force: bool = False,
) -> List[Union[Dict[str, Any], RecfmtError]]:
    """`recfmt convert` through the library: per input, its report dict (`input`, `output`,
    `outcome`, `notes`, `integrity`, `files` as `(stream or None, path, rows)`) or the error that
    stopped it."""
def validate(
    path: _Path,
    *,
    against: Optional[_Path] = None,
    format: Optional[str] = None,
    strict: bool = False,
    layouts: Sequence[_Path] = (),
    resync: bool = False,
) -> Dict[str, Any]:
    """Reads a recording completely with its format's checks: the dict of `recfmt validate --json`
    (`valid`, `problems`, `notes`, `integrity`, ...)."""
