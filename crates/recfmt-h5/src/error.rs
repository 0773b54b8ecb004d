//! hdf5-pure errors as [`recfmt_core::Error`]s that name the output file and what was being
//! written.

use std::path::Path;

use recfmt_core::ErrorKind;

/// A failure of hdf5-pure while writing: what was being done, and hdf5-pure's error as the
/// source. It reaches callers inside a [`recfmt_core::Error`] of kind [`ErrorKind::Io`] naming
/// the file ([`write_error`]).
#[derive(Debug, thiserror::Error)]
#[error("HDF5: {what}: {source}")]
pub struct WriteError {
    /// What was being written (`appending to NAV/x`, `closing the file`).
    pub what: String,
    /// hdf5-pure's error.
    #[source]
    pub source: hdf5_pure::Error,
}

/// Something the writer itself found wrong (a compression thread that stopped, a dataset it
/// does not know): an internal failure, reported like a write failure.
#[derive(Debug, thiserror::Error)]
#[error("HDF5: {0}")]
pub struct InternalError(pub String);

/// The error for hdf5-pure failing while `what` was being done to the output `path`: kind
/// [`ErrorKind::Io`] (the output could not be written), the message `path: HDF5: what: why`.
///
/// ```
/// let e = recfmt_h5::write_error(
///     std::path::Path::new("out.h5"),
///     "closing the file",
///     hdf5_pure::Error::Io(std::io::Error::other("disk full")),
/// );
/// assert_eq!(e.kind(), recfmt_core::ErrorKind::Io);
/// assert_eq!(e.to_string(), "out.h5: HDF5: closing the file: I/O error: disk full");
/// ```
pub fn write_error(
    path: &Path,
    what: impl Into<String>,
    source: hdf5_pure::Error,
) -> recfmt_core::Error {
    output_error(
        path,
        WriteError {
            what: what.into(),
            source,
        },
    )
}

/// An [`InternalError`] about the output `path`, of kind [`ErrorKind::Io`].
pub fn internal_error(path: &Path, what: impl Into<String>) -> recfmt_core::Error {
    output_error(path, InternalError(what.into()))
}

fn output_error(
    path: &Path,
    e: impl std::error::Error + Send + Sync + 'static,
) -> recfmt_core::Error {
    recfmt_core::Error::Format {
        format: None,
        kind: ErrorKind::Io,
        source: Box::new(e),
    }
    .in_file(path)
}
