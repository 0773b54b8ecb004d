//! The HDF5 files Icarus records today (spec A.5; feature `hdf5`): reading them into the same
//! generic model as ICAREC, and writing them.
//!
//! Icarus's recorder (`HDF5Recorder`, through Vulcan's `HDF5Writer` and HighFive) writes:
//!
//! ```text
//! /time                 (N,) float64, chunked (1000), unlimited
//! /signals/<name>       (N,) float64 | int32 | int64, one per scalar signal, names with dots
//!                       (Vehicle.Nav.position.x); optional string attributes unit, semantic
//! /metadata             group; attributes schema (JSON, below) and created_at (UTC ISO 8601)
//! ```
//!
//! `schema` is `{"signals":[{"name","type","lifecycle","offset","unit"?,"semantic"?}],
//! "frame_size_bytes": 8·n}`. Static signals are written every frame like dynamic ones; their
//! lifecycle survives only in that JSON.
//!
//! [`IcarusH5Recording`] reads such a file as the streams [`IcarecRecording`](crate::IcarecRecording)
//! produces: `dynamic` (`t` in seconds, then every dynamic signal) and `static` (one row, the
//! values of the first frame), with the same column names, dtypes as stored (`f64`, `i32`,
//! `i64`), the `unit` attribute as the unit and `lifecycle`, `icarec.type` and `semantic` in
//! the column metadata. So `recfmt convert run.h5 --to icarec` goes through the ordinary
//! [`IcarecWriter`](crate::IcarecWriter). Datasets are read in windows of at most
//! [`MAX_WINDOW_ROWS`] rows and about 32 MiB over all columns, never whole.
//!
//! [`IcarusH5Writer`] (and [`write_icarus_h5`]) writes that layout from the generic model, in
//! bounded memory: every dataset is declared empty, then appended to a chunk at a time
//! ([`DEFAULT_CHUNK_ROWS`] rows, no compression unless asked for).
//!
//! ```
//! use recfmt_core::{FrameBuf, RecordingReader, Value};
//! let dir = tempfile::tempdir()?;
//! recfmt_icarec::generate::write_all_types(&dir.path().join("run.icarec"), 5)?;
//! let mut icarec = recfmt_icarec::IcarecRecording::open(&dir.path().join("run.icarec"), &Default::default())?;
//! let h5 = dir.path().join("run.h5");
//! let frames = recfmt_icarec::write_icarus_h5(&mut icarec, &h5, &Default::default())?;
//! assert_eq!(frames, 5);
//!
//! let mut rec = (recfmt_icarec::HDF5_FORMAT.open)(&h5, &Default::default())?;
//! assert_eq!(rec.schema().streams[0].name, "dynamic");
//! let mut row = FrameBuf::default();
//! let mut rows = 0;
//! while rec.read_frame(&mut row)? {
//!     rows += 1;
//! }
//! assert_eq!(rows, 1 + 5); // the static row, then the frames
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod read;
mod runs;
mod schema;
mod write;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use recfmt_core::{
    Error as CoreError, FormatDescriptor, FormatInfo, ReadOptions, RecordingReader,
    RecordingWriter, Result, Score, Tier, WriteOptions,
};

pub use read::IcarusH5Recording;
pub use write::{IcarusH5Options, IcarusH5Writer, write_icarus_h5};

/// The format id of Icarus HDF5 recordings on the command line and in headers.
pub const H5_FORMAT_ID: &str = "icarus-h5";

/// The HDF5 signature every HDF5 file without a user block starts with.
pub const HDF5_MAGIC: [u8; 8] = *b"\x89HDF\r\n\x1a\n";

/// The most rows [`IcarusH5Recording`] reads from one dataset at a time.
pub const MAX_WINDOW_ROWS: u64 = 65_536;

/// The largest chunk length, in rows, the writer uses. hdf5-pure 0.47 encodes a chunk
/// dimension above 65 535 in 4 bytes where the C library expects 3, and HDF5 2.0 (current
/// h5py wheels) then refuses to open the dataset (`shared/design/hdf5.md`).
pub const MAX_CHUNK_ROWS: usize = recfmt_h5::MAX_CHUNK_ROWS;

/// The chunk length the writer uses by default (32 KiB of f64). Vulcan's `HDF5Writer` uses
/// 1000. An unfiltered dataset stores its last chunk whole, so a short recording costs up to
/// one chunk per signal; larger chunks write faster (measured: 300 000 frames of 45 signals
/// took 0.47 s with 1000-row chunks, 0.33 s with 4096, 0.27 s with 65 535) but make short
/// files large (40 frames: 0.5 MB, 1.6 MB, 23 MB).
pub const DEFAULT_CHUNK_ROWS: usize = 4096;

/// Budget in bytes for the rows buffered over all columns, while reading (one window) and
/// while writing (one chunk per dataset).
pub(super) const READ_BUDGET: u64 = 32 << 20;
pub(super) const WRITE_BUDGET: usize = 64 << 20;

/// Largest `created_at` or `unit`/`semantic` attribute kept (longer ones are ignored).
pub(super) const MAX_SHORT_ATTR: usize = 4096;

/// Static facts about the Icarus HDF5 format.
pub static H5_INFO: FormatInfo = FormatInfo {
    id: H5_FORMAT_ID,
    name: "Icarus HDF5 recording",
    extensions: &["h5", "hdf5"],
};

/// The Icarus HDF5 format descriptor for a [`recfmt_core::Registry`].
///
/// Detection sees only the HDF5 signature, which every HDF5 file has, so it scores 100, not
/// 255; `open` then checks the layout and fails with "not an Icarus recording: ..." naming
/// what is missing.
pub static HDF5_FORMAT: FormatDescriptor = FormatDescriptor {
    create: Some(create_h5_boxed),
    ..FormatDescriptor::new(H5_INFO, Tier::Magic, score_h5, open_h5_boxed)
};

/// Scores the first bytes of a file: `Yes(100)` for the HDF5 signature at byte 0, else `No`.
///
/// The head bytes cannot show whether the file has Icarus's layout; [`IcarusH5Recording::open`]
/// checks that.
///
/// ```
/// use recfmt_core::Score;
/// assert_eq!(recfmt_icarec::score_h5(b"\x89HDF\r\n\x1a\n\x03\x08\x08"), Score::Yes(100));
/// assert_eq!(recfmt_icarec::score_h5(b"\x89HDF\r\n"), Score::No);
/// assert_eq!(recfmt_icarec::score_h5(b"{}"), Score::No);
/// ```
pub fn score_h5(head: &[u8]) -> Score {
    if head.starts_with(&HDF5_MAGIC) {
        Score::Yes(100)
    } else {
        Score::No
    }
}

fn open_h5_boxed(path: &Path, options: &ReadOptions) -> Result<Box<dyn RecordingReader>> {
    Ok(Box::new(IcarusH5Recording::open(path, options)?))
}

fn create_h5_boxed(path: &Path, write: &WriteOptions) -> Result<Box<dyn RecordingWriter>> {
    recfmt_core::atomic::check_target(path, write.replace)?;
    Ok(Box::new(
        IcarusH5Writer::new(path, IcarusH5Options::default()).with_replace(write.replace),
    ))
}

// Errors and the panic guard of the reader.

/// A content error. hdf5-pure does not say at which byte a structure is broken, so these
/// carry offset 0 and name the HDF5 object instead.
pub(super) fn malformed(expected: impl Into<String>) -> CoreError {
    CoreError::malformed(H5_FORMAT_ID, 0, expected.into())
}

pub(super) fn not_icarus(what: impl Into<String>) -> CoreError {
    CoreError::unsupported(
        H5_FORMAT_ID,
        format!("not an Icarus recording: {}", what.into()),
    )
}

fn h5_error(what: &str, e: hdf5_pure::Error) -> CoreError {
    match e {
        hdf5_pure::Error::Io(io) => CoreError::Io(io),
        e => malformed(format!("{what} (hdf5-pure: {e})")),
    }
}

/// Runs one call into hdf5-pure, turning its error, and a panic, into a recfmt error.
///
/// hdf5-pure parses untrusted bytes and is young (`shared/design/hdf5.md`); a malformed file
/// must give an error and never abort the process, so a panic inside it is caught here and
/// reported as malformed input. The closures only read; no state of ours is left half-updated
/// by an unwind, which is why `AssertUnwindSafe` is sound here.
pub(super) fn guard<T>(
    what: impl FnOnce() -> String,
    f: impl FnOnce() -> std::result::Result<T, hdf5_pure::Error>,
) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(h5_error(&what(), e)),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(malformed(format!(
                "{} (hdf5-pure panicked: {message})",
                what()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_turns_a_panic_into_an_error() {
        let e = guard(
            || "the dataset /x".into(),
            || -> std::result::Result<(), hdf5_pure::Error> { panic!("index out of bounds") },
        )
        .unwrap_err();
        assert_eq!(e.kind(), recfmt_core::ErrorKind::Malformed);
        assert!(
            e.to_string()
                .contains("the dataset /x (hdf5-pure panicked: index out of bounds)"),
            "{e}"
        );
    }
}
