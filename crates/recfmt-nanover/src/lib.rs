//! NanoVer recordings: the `.traj` (frames) and `.state` (shared state) files written by
//! NanoVer's Python server (nanover-server-py, until it moved to `.nanover.zip` in October
//! 2025) and its Rust server (nanover-rs).
//!
//! A file is a 16-byte header (`u64` LE magic 6661355757386708963, `u64` LE version 2) and
//! records of `u128` LE timestamp (µs since the recorder started), `u64` LE payload length and
//! a protobuf payload: a `GetFrameResponse` in a `.traj`, a `StateUpdate` in a `.state`.
//! Version 1 (Rust server, 2023) has no header and bare `FrameData` frames. Research notes:
//! `shared/specs/nanover.md`.
//!
//! | | read | write |
//! |---|---|---|
//! | version 2 `.traj` / `.state` | yes | yes, strictly increasing timestamps |
//! | version 1 (headerless) | when asked, or when detection is sure | yes (low level) |
//! | round trip | equal decoded messages (map order is not kept; ours is sorted) | also from the generic model ([`NanoverWriter`]) |
//! | faithful copy | — | [`copy_recording`]: every record's bytes, byte-identical for intact files |
//! | torn last record | every complete record kept, loss reported | — |
//! | garbage between records | opt-in resync (always in [`check`] / [`repair`]) | — |
//! | writer quirks | `residue.ids` as floats or strings, empty arrays stored as index arrays, `particle.count` only in topology frames | kept |
//! | `.nanover.zip` (since Oct 2025) | yes (feature `nanover-zip`, on by default), mapped onto the same messages | [`write_zip`], as NanoVer's converter writes it |
//! | HDF5 | — | `hdf5::write_hdf5` (feature `hdf5`): positions `[frames, particles, 3]` per session |
//! | PDB / extended XYZ / DCD | — | [`molecular::write_molecular`]: a file per session, Å, for MDAnalysis, ASE, VMD |
//!
//! Levels, from the bytes up:
//!
//! * [`io::Reader`] / [`io::Writer`]: records, raw or decoded into the prost messages of
//!   this crate ([`GetFrameResponse`], [`FrameData`], [`ValueArray`], [`StateUpdate`]).
//! * [`FrameView`] / [`StateView`]: the full frame and state built from deltas (frame index 0
//!   resets; optionally a change of `system.simulation.counter` too; a null state value
//!   removes its key).
//! * [`Timeline`]: a `.traj` and its `.state` merged by timestamp; [`Splitter`],
//!   [`split_sessions`] and [`split_files`]: sessions, like NanoVer's split tool without its
//!   bugs.
//! * [`check`] and [`repair`]: what `nanover-check-recording` finds and what it misses, and a
//!   valid copy ([`RepairSummary::lost_data`] says whether anything was dropped).
//! * [`NanoverRecording`]: the [`recfmt_core::RecordingReader`] adapter (streams `frames`,
//!   one row per `.traj` record with scalar values as columns and arrays as list columns, and
//!   `state`, one row per changed key), [`NanoverWriter`] the
//!   [`recfmt_core::RecordingWriter`] back to `.traj` + `.state`, and [`FORMAT`] for the
//!   registry (which also opens `.nanover.zip`, read by `nzip` into the same messages).
//! * [`copy_recording`], [`write_zip`] and (feature `hdf5`) `hdf5::write_hdf5`: whole-file
//!   conversions.
//!
//! Low level, with the aggregate:
//!
//! ```
//! use recfmt_nanover::{FileKind, FrameView, generate, io::{Reader, Timed}};
//! let (traj, _) = generate::small_recording_bytes()?;
//! let mut reader = Reader::new(&traj[..], FileKind::Trajectory);
//! let mut view = FrameView::new();
//! let mut sessions = 0;
//! for frame in reader.frames() {
//!     let Timed { timestamp: timestamp_us, message: frame } = frame?;
//!     if view.apply(&frame) {
//!         sessions += 1;
//!     }
//!     let n = view.particle_count().unwrap_or(0);
//!     assert!(n == 3 || n == 4, "at {timestamp_us} us");
//! }
//! assert_eq!(sessions, 2);
//! # Ok::<(), recfmt_nanover::Error>(())
//! ```
//!
//! Generic adapter (what `recfmt` export and convert use):
//!
//! ```
//! use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};
//! use recfmt_nanover::{NanoverRecording, generate};
//! let (traj, state) = generate::small_recording_bytes()?;
//! let mut rec = NanoverRecording::from_bytes(Some(&traj), Some(&state), &ReadOptions::default())?;
//! let names: Vec<_> = rec.schema().streams.iter().map(|s| s.name.as_str()).collect();
//! assert_eq!(names, ["frames", "state"]);
//! let mut row = FrameBuf::default();
//! let mut rows = 0;
//! while rec.read_frame(&mut row)? {
//!     rows += 1;
//! }
//! assert_eq!(rows, 7 + 7); // one row per frame record, one per changed state key
//! assert!(!rec.integrity().lost_data());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod aggregate;
mod check;
mod checkpoint;
pub mod error;
// Fixture writers for tests, benches, fuzz seeds and `cargo xtask fixtures`, outside the
// library's API: only with the feature `generate`.
#[cfg(feature = "generate")]
#[doc(hidden)]
pub mod generate;
#[cfg(feature = "hdf5")]
pub mod hdf5;
mod header;
pub mod io;
mod json;
pub mod molecular;
#[cfg(feature = "nanover-zip")]
mod msgpack;
#[cfg(feature = "nanover-zip")]
pub mod nzip;
mod packed;
mod probe;
mod proto;
mod recording;
mod report;
mod session;
mod skim;
mod timeline;
mod wire;
mod write;
mod zipwrite;

pub use aggregate::{FrameView, SIMULATION_COUNTER, StateView};
pub use check::{
    CheckOptions, RepairOptions, RepairSummary, check, check_file, check_reader, repair,
    repair_replacing, repair_stream, repair_with, repaired_path,
};
pub use error::{Error, Result};
pub use header::{
    FORMAT_VERSION, FileKind, HEADER_LEN, MAGIC, PLAUSIBLE_TIMESTAMP, RECORD_HEADER_LEN, Version,
    VersionPolicy, header_bytes, parse_record_header, sniff_kind, sniff_v1,
};
pub use json::{json_text_to_value, struct_to_json, value_to_json, value_to_json_text};
pub use probe::{FORMAT, score};
pub use proto::{
    FloatArray, FrameData, GetFrameResponse, IndexArray, Kind, ListValue, NullValue, StateUpdate,
    StringArray, Struct, Value, ValueArray, Values, is_null, null, number,
};
pub use recording::{
    DELTA_KEYS_COLUMN, FRAMES_STREAM, INFO, META_KEY, META_MAP, META_TYPE, NanoverRecording,
    STATE_STREAM, TIME_COLUMN, is_nanover_zip, zip_head_is_nanover,
};
pub use report::{FileReport, Finding, FindingKind, NanoverVerdict, Report, Severity};
pub use session::{
    Session, SplitEvent, SplitPart, SplitRule, Splitter, split_files, split_sessions,
};
pub use timeline::{Event, RecordingPaths, Timeline, open_file, sniff_path};
pub use write::{CopiedFile, CopySummary, NanoverWriter, copy_recording, copy_recording_with};
pub use zipwrite::{ZipSummary, write_zip, write_zip_events, write_zip_events_with};

/// The shared model ([`recfmt_core`]) this crate's adapter implements, re-exported so one
/// dependency is enough.
pub use recfmt_core as core;

/// The format id used on the command line and in metadata.
pub const FORMAT_ID: &str = "nanover";

const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<NanoverRecording<std::io::BufReader<std::fs::File>>>();
};
