//! USVLOG recordings of the usv-autopilot project: `timeseries.bin` (a 32-byte header then
//! TLV records), `meta.json` and `events.jsonl` in a session folder.
//!
//! The byte layout is the one of `tools/log_io/layout.py` in usv-autopilot, described in our
//! own words in `shared/specs/icarec-usvlog.md` (part B).
//!
//! | | read | write |
//! |---|---|---|
//! | header, records (all 13 built-in types, float32 kept) | yes | yes, byte-exact |
//! | unknown types | kept raw, skipped by length | yes |
//! | user-defined layouts (JSON/TOML) | yes | yes |
//! | torn last record | every complete record kept, loss reported | the torn bytes can be rewritten |
//! | corrupt length mid-file | opt-in resync | — |
//!
//! Two levels:
//!
//! * [`io::Reader`] / [`io::Writer`]: every record as raw bytes, byte-exact round trip.
//! * [`UsvlogRecording`]: the [`recfmt_core::RecordingReader`] adapter, one stream per record
//!   type named by the record name, columns `t_us` plus the fields.
//!
//! Low level:
//!
//! ```
//! use recfmt_tlv::{FileHeader, Record, io::{Reader, Writer}};
//! let mut writer = Writer::new(Vec::new());
//! writer.write_header(&FileHeader::new(1, 1_000))?;
//! writer.write_record(&Record { t_us: 1_000, type_id: 5, payload: [0u8; 8].to_vec(), offset: 0 })?;
//! let bytes = writer.into_inner()?;
//!
//! let mut reader = Reader::new(&bytes[..]);
//! let header = reader.read_header()?;
//! let mut record = Record::default();
//! let mut copy = Writer::new(Vec::new());
//! copy.write_header(&header)?;
//! while reader.read_record(&mut record)? {
//!     copy.write_record(&record)?;
//! }
//! assert_eq!(copy.into_inner()?, bytes);
//! # Ok::<(), recfmt_tlv::Error>(())
//! ```
//!
//! Generic adapter:
//!
//! ```
//! use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, Value};
//! use recfmt_tlv::{FileHeader, Record, UsvlogRecording, io::Writer};
//! let mut w = Writer::new(Vec::new());
//! w.write_header(&FileHeader::new(1, 0))?;
//! let esc = [0.25f32.to_le_bytes(), 0.5f32.to_le_bytes()].concat();
//! w.write_record(&Record { t_us: 7, type_id: 5, payload: esc, offset: 0 })?;
//! let bytes = w.into_inner()?;
//!
//! let mut rec = UsvlogRecording::new(&bytes[..], None, &[], &ReadOptions::default(), None)?;
//! let mut row = FrameBuf::default();
//! assert!(rec.read_frame(&mut row)?);
//! let stream = &rec.schema().streams[row.stream];
//! assert_eq!(stream.name, "REC_ESC_OUTPUT");
//! assert_eq!(row.values, [Value::UInt(7), Value::Float(0.25), Value::Float(0.5)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decode;
pub mod error;
mod events;
// Fixture writers for tests, benches, fuzz seeds and `cargo xtask fixtures`, outside the
// library's API: only with the feature `generate`.
#[cfg(feature = "generate")]
#[doc(hidden)]
pub mod generate;
mod header;
pub mod io;
mod layout;
mod meta;
mod parallel;
mod probe;
mod record;
mod recording;
mod writer;

pub use error::{Error, Result};
pub use events::MAX_EVENT_LINE_LEN;
pub use header::{FileHeader, HEADER_LEN, LITTLE_ENDIAN, MAGIC};
pub use layout::{
    CatalogEntry, CompiledLayout, FieldLayout, FieldType, LayoutTable, RecordLayout,
    builtin_layouts, parse_layouts, read_layout_file,
};
pub use meta::Meta;
pub use probe::{FORMAT, score, score_dir};
pub use record::{RECORD_HEADER_LEN, Record, RecordHeader, RecordRef};
pub use recording::{
    DECODE_THREADS_ENV, EVENTS_STREAM, INFO, MAX_DECODE_THREADS, SessionPaths, UNKNOWN_STREAM,
    UsvlogRecording,
};
pub use writer::{UsvlogRecordingWriter, copy_session, copy_session_with};

/// The shared model ([`recfmt_core`]) this crate's adapter implements, re-exported so one
/// dependency is enough.
pub use recfmt_core as core;

/// The format id used on the command line and in metadata.
pub const FORMAT_ID: &str = "usvlog";

const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<UsvlogRecording<std::io::BufReader<std::fs::File>>>();
};
