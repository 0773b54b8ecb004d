//! ICAREC recording directories of the Icarus simulator: `schema.json`,
//! `static_signals.bin`, `dynamic_signals.bin` and `metadata.json`.
//!
//! Upstream Icarus describes `.icarec` only in its documentation; no code of its own reads or
//! writes it. This crate implements the concrete layout of `shared/specs/icarec-usvlog.md`
//! part A.4, and is the reference implementation of it; the full description is in
//! `docs/formats/icarec.md`.
//!
//! | | read | write |
//! |---|---|---|
//! | `schema.json` (semver versions, signals, components, compatibility, time, checksum) | yes, offsets and sizes checked | yes |
//! | types `double`, `int64`, `int32`, `bool`, `Vec3`/`Quat`/`Mat3<double>` | yes | yes |
//! | checksum (SHA-256 of the RFC 8785 canonical schema) | warning on mismatch, error with `verify` | computed |
//! | `metadata.json` (sizes and SHA-256 of the data files) | checked (digests with `verify`) | computed at the end |
//! | torn last frame | every complete frame kept, loss reported | reproduced by faithful copies |
//! | compatibility ([`validate_against`]), warmstart lookups ([`IcarecDir::state_at`]) | yes | — |
//! | recording policies (include/exclude globs, warmstart check) | — | [`Writer::with_policy`] |
//! | Icarus's HDF5 recordings (`/time`, `/signals/<name>`, `/metadata` schema; feature `hdf5`) | yes, into the same streams | yes |
//!
//! Levels:
//!
//! * [`IcarecDir`], [`FrameReader`], [`FrameIndex`] and [`Writer`]: the files as stored,
//!   frame by frame, byte-exact ([`copy_recording`] reproduces a recording exactly).
//! * [`IcarecRecording`] / [`IcarecWriter`]: the [`recfmt_core::RecordingReader`] and
//!   [`recfmt_core::RecordingWriter`] adapters (streams `dynamic` and `static`), and
//!   [`FORMAT`] for the registry.
//! * With the feature `hdf5`, module `h5`: the HDF5 files Icarus actually records today (spec
//!   A.5). `HDF5_FORMAT` (id `icarus-h5`) detects and opens them as `IcarusH5Recording`, whose
//!   `dynamic` and `static` streams have the same names, columns and metadata as
//!   [`IcarecRecording`]'s, so [`IcarecWriter`] converts them; `IcarusH5Writer` and
//!   `write_icarus_h5` write that layout back (ICAREC → Icarus HDF5). See
//!   `docs/formats/icarec.md` §12.
//!
//! Writing and reading back:
//!
//! ```
//! use recfmt_icarec::{IcarecDir, Lifecycle, SchemaBuilder, SignalType, SignalValue, Writer};
//! let dir = tempfile::tempdir()?;
//! let schema = SchemaBuilder::new("2.3.1", "1.5.0", "2024-12-22T10:30:00Z")?
//!     .signal("Vehicle.Nav.position", SignalType::Vec3, Lifecycle::Dynamic, "m")
//!     .signal("Vehicle.Aero.alpha", SignalType::Double, Lifecycle::Dynamic, "rad")
//!     .build()?;
//! let mut w = Writer::create(dir.path(), schema, &[], Default::default())?;
//! let mut payload = vec![0u8; 32];
//! for i in 0..100 {
//!     let t = i as f64 * 0.01;
//!     w.schema().encode(&mut payload, "Vehicle.Nav.position", SignalValue::Vec3([t, 0.0, 10.0]))?;
//!     w.schema().encode(&mut payload, "Vehicle.Aero.alpha", SignalValue::Double(0.05))?;
//!     w.append(t, &payload)?;
//! }
//! w.finish()?;
//!
//! let rec = IcarecDir::open(dir.path(), &Default::default())?;
//! assert_eq!(rec.frame_count(), 100);
//! // Warmstart: every signal at the last frame with t <= 0.505, by binary search.
//! let state = rec.state_at(0.505)?.expect("a frame");
//! assert_eq!(state.frame, 50);
//! assert_eq!(state.get("Vehicle.Nav.position.z"), Some(SignalValue::Double(10.0)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Through the generic model:
//!
//! ```
//! use recfmt_core::{FrameBuf, RecordingReader, Value};
//! let dir = tempfile::tempdir()?;
//! recfmt_icarec::generate::write_all_types(dir.path(), 3)?;
//! let mut rec = (recfmt_icarec::FORMAT.open)(dir.path(), &Default::default())?;
//! assert_eq!(rec.header().version, "1.2.0");
//! let mut row = FrameBuf::default();
//! assert!(rec.read_frame(&mut row)?); // the static row
//! assert_eq!(rec.schema().streams[row.stream].name, "static");
//! assert!(rec.read_frame(&mut row)?); // frame 0
//! let dynamic = &rec.schema().streams[row.stream];
//! let mode = dynamic.signal_index("Vehicle.GNC.mode").unwrap();
//! assert_eq!(row.values[mode], Value::Int(-1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod checksum;
mod compat;
mod dir;
pub mod error;
mod frames;
// Fixture writers for tests, benches, fuzz seeds and `cargo xtask fixtures`, outside the
// library's API: only with the feature `generate`.
#[cfg(feature = "generate")]
#[doc(hidden)]
pub mod generate;
#[cfg(feature = "hdf5")]
pub mod h5;
mod hooks;
mod json_pos;
#[cfg(feature = "hdf5")]
pub mod mat;
mod metadata;
mod policy;
mod probe;
mod recording;
mod schema;
mod time;
mod types;
mod writer;

pub use checksum::{CHECKSUM_PREFIX, canonical_json, schema_checksum};
pub use compat::{CompatIssue, CompatReport, IssueCode, Severity, validate_against};
pub use dir::{IcarecDir, OpenOptions, resolve_dir};
pub use error::{Error, Result};
pub use frames::{
    DYNAMIC_FILE, FrameIndex, FrameReader, Frames, OutOfOrder, RawFrame, STATIC_FILE, Search,
    State, state_at, state_at_checked,
};
#[cfg(feature = "hdf5")]
pub use h5::{
    DEFAULT_CHUNK_ROWS, H5_FORMAT_ID, H5_INFO, HDF5_FORMAT, HDF5_MAGIC, IcarusH5Options,
    IcarusH5Recording, IcarusH5Writer, score_h5, write_icarus_h5,
};
pub use hooks::find_state;
pub use metadata::{FileDigest, METADATA_FILE, MetadataDoc, Scenario, SelectionSpec};
pub use policy::{CompiledPolicy, RecordingPolicy, Selection};
pub use probe::{FORMAT, score, score_dir};
pub use recording::{DYNAMIC_STREAM, INFO, IcarecRecording, IcarecWriter, STATIC_STREAM};
pub use schema::{
    Column, Compatibility, ComponentSpec, Layout, Lifecycle, Lookup, Placed, SCHEMA_FILE, Schema,
    SchemaBuilder, SchemaDoc, SchemaOptions, SignalSpec,
};
pub use time::TimeSpec;
pub use types::{SignalType, SignalValue};
pub use writer::{FrameWriter, MetadataMode, Writer, WriterOptions, copy_recording, recorder};

/// The shared model ([`recfmt_core`]) this crate's adapter implements, re-exported so one
/// dependency is enough.
pub use recfmt_core as core;

/// The format id used on the command line and in metadata.
pub const FORMAT_ID: &str = "icarec";

const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<IcarecRecording>();
    #[cfg(feature = "hdf5")]
    assert_send::<IcarusH5Recording>();
};
