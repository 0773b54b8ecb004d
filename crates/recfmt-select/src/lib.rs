//! Which streams, signals and rows of a recording to read, and several streams merged into
//! one table: in front of any [`RecordingReader`](recfmt_core::RecordingReader), without Arrow.
//!
//! * [`SelectedReader`] wraps a reader and is one itself: streams and signals chosen by name
//!   patterns ([`Pattern`], [`Selection`]), a [`TimeRange`], carrying the last value, upcasting
//!   and an absolute time column ([`Pipeline`]).
//! * [`MergedReader`] lines several streams up into one wide table ([`Alignment`]: union of
//!   timestamps, as-of a base stream, or a fixed raster).
//! * [`StreamBatchReader`] is the one loop that reads a recording batch by batch.
//!
//! The Arrow and table outputs (`recfmt-export`) and the plots (`recfmt-plot`) read through
//! these; `recfmt-export` re-exports them, so `recfmt_export::SelectedReader` names the same
//! type.

mod merge;
mod reading;
mod select;

/// The core this crate is built on, so one dependency is enough.
pub use recfmt_core as core;

pub use merge::{
    Alignment, MERGED_STREAM, MergedReader, OpenReader, RASTER_DEFAULT_MAX_ROWS, check_raster_rows,
    count_rows, raster_rows,
};
pub use reading::StreamBatchReader;
pub use select::{Pattern, Pipeline, SelectedReader, Selection, TimeBound, TimeRange};
