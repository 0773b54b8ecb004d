//! The shared vocabulary of recfmt.
//!
//! A recording has a [`Header`] (format, version, time reference, metadata) and a [`Schema`]
//! of one or more streams. A stream ([`StreamDesc`]) is a sequence of rows with a fixed set of
//! typed signals ([`SignalDesc`]: dtype, shape, unit) and one time column kept in its native
//! type. Formats whose entities come and go (vehicles, atoms) use entity-keyed streams: one
//! row per entity per tick, with an entity key column.
//!
//! Every format crate offers two levels:
//!
//! * a faithful low-level reader and writer (every record, unknown ones kept, byte-exact
//!   round trip), and
//! * an adapter implementing [`RecordingReader`] (and often [`RecordingWriter`]) over this
//!   generic model, which export and conversion use.
//!
//! Formats are found through a [`Registry`] of [`FormatDescriptor`]s; the default registry
//! lives in the `recfmt` facade crate so that core depends on no format.
//!
//! ```
//! use recfmt_core::{DType, FrameBuf, Schema, SignalDesc, StreamDesc, TimeBase, Value};
//! let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
//! nav.signals.push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
//! let schema = Schema { streams: vec![nav] };
//!
//! let mut row = FrameBuf::default();
//! row.reset(0, 2);
//! row.values[0] = Value::UInt(2_500_000);
//! row.values[1] = Value::Float(1.5);
//! assert_eq!(row.time_seconds(&schema.streams[0]), Some(2.5));
//! ```

#[cfg(feature = "atomic")]
pub mod atomic;
mod batch;
mod error;
mod in_file;
mod limits;
mod memory;
mod next_read;
mod plugin;
mod probe;
mod read;
mod rows;
mod schema;
mod time;
mod value;
mod write;

#[cfg(feature = "atomic")]
pub use atomic::{AtomicDir, AtomicFile, CreatedDirs, DirLock, TempPath, Writeback};
pub use batch::{
    BatchSet, BatchValueError, ColumnBuf, ColumnData, NativeElement, StreamBatch, TimeSummary,
    VarBytes, read_batches_by_rows,
};
pub use error::{Error, ErrorKind, Result, ResultExt};
pub use limits::Limits;
pub use memory::MemoryRecording;
pub use next_read::next_read;
pub use plugin::{
    AgainstFn, Compatibility, Copied, CopyFn, Findings, FormatOption, FormatOptions, OptionKind,
    OutputSource, Query, QueryForm, SpecialOutput, TableColumn, TableReader, Validator, Written,
};
pub use probe::{
    CreateFn, FormatDescriptor, FormatInfo, OpenFn, PROBE_LEN, Registry, Score, Tier,
    check_input_kind,
};
pub use read::{Integrity, IntegrityStatus, ProgressUnit, ReadOptions, RecordingReader};
pub use rows::{RowElement, RowWriter};
pub use schema::{DType, Header, Metadata, Schema, Shape, SignalDesc, StreamDesc};
pub use time::{
    MAX_ABSOLUTE_SECONDS, TimeBase, TimeReference, TimeSystem, civil_from_days, days_from_civil,
    now_rfc3339, unix_to_rfc3339, unix_to_rfc3339_millis,
};
pub use value::{ArrayValue, FrameBuf, Value};
pub use write::{RecordingWriter, Replace, WriteOptions};

/// An absolute instant (feature `hifitime`), re-exported so format crates and users name
/// instants with the same type.
#[cfg(feature = "hifitime")]
pub use hifitime::Epoch;
