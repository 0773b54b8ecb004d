//! Columns of many rows: the batch read path.
//!
//! [`crate::RecordingReader::read_frame`] hands out one row at a time as [`Value`]s, which is
//! simple but costs a dispatch per value. The batch path fills typed column buffers instead: a
//! [`BatchSet`] holds one [`StreamBatch`] per stream, each a [`ColumnBuf`] per signal backed by
//! a plain `Vec` of the signal's native type (`Vec<f32>` for an `f32` signal). Fixed-layout
//! readers decode straight into those vectors; every other reader gets the default
//! [`crate::RecordingReader::read_batches`], which pushes its rows through the same checks the
//! row path applies. The vectors can be handed to Arrow without a copy.
//!
//! ```
//! use recfmt_core::{BatchSet, ColumnData, DType, Schema, SignalDesc, StreamDesc, TimeBase, Value};
//! let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
//! nav.signals.push(SignalDesc::scalar("x", DType::F32));
//! let schema = Schema { streams: vec![nav] };
//!
//! let mut batches = BatchSet::new(&schema, 2);
//! let nav = batches.stream_mut(0);
//! nav.push_values(&[Value::UInt(0), Value::Float(0.5)])?;
//! nav.push_values(&[Value::UInt(10), Value::Null])?;
//! assert!(batches.is_full());
//!
//! let batch = batches.take(0);
//! assert_eq!(batch.rows(), 2);
//! assert_eq!(batch.columns()[1].data(), &ColumnData::F32(vec![0.5, 0.0]));
//! assert_eq!(batch.columns()[1].validity(), Some(&[true, false][..]));
//! assert_eq!(batches.stream(0).rows(), 0);
//! # Ok::<(), recfmt_core::BatchValueError>(())
//! ```

mod column;
mod convert;
mod data;
mod set;
mod stream;
#[cfg(test)]
mod tests;

pub use column::{ColumnBuf, NativeElement};
pub use data::{ColumnData, VarBytes};
pub use set::{BatchSet, read_batches_by_rows};
pub use stream::{BatchValueError, StreamBatch, TimeSummary};

/// Most rows a fresh column reserves room for; it grows past that as rows arrive, so a
/// recording with many small streams does not reserve a full batch for each.
pub(crate) const MAX_PREALLOCATED_ROWS: usize = 4096;
