//! The error type of the exporters.

use std::path::{Path, PathBuf};

use arrow_schema::ArrowError;
use recfmt_core::ErrorKind;

/// Everything that can go wrong while exporting a recording.
///
/// Convert it into [`recfmt_core::Error`] with `?` or `.into()` when a caller wants one error
/// type for reading and exporting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the recording failed.
    #[error(transparent)]
    Read(recfmt_core::Error),
    /// A value does not fit the column its signal's dtype and shape call for.
    #[error("stream {stream:?}, signal {signal:?}: {message}")]
    Value {
        /// Stream name.
        stream: String,
        /// Signal name.
        signal: String,
        /// What is wrong with the value (the message names the value).
        message: String,
    },
    /// Arrow refused to build or write a batch.
    #[error("{}arrow: {source}", path_prefix(path.as_deref()))]
    Arrow {
        /// The output file, when the error happened while writing one.
        path: Option<PathBuf>,
        /// The Arrow error.
        #[source]
        source: ArrowError,
    },
    /// The Parquet writer failed.
    #[cfg(feature = "parquet")]
    #[error("{}: parquet: {source}", path.display())]
    Parquet {
        /// The output file.
        path: PathBuf,
        /// The Parquet error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// The MCAP writer failed.
    #[cfg(feature = "mcap")]
    #[error("{}: mcap: {source}", path.display())]
    Mcap {
        /// The output file.
        path: PathBuf,
        /// The MCAP error.
        #[source]
        source: mcap::McapError,
    },
    /// Creating, writing or renaming an output file failed.
    #[error("{}", io_text(path, source))]
    Io {
        /// The output file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The options or the recording ask for something the exporter cannot do (a zero batch
    /// size, a table format this build leaves out, a row for a stream the schema lacks, ...).
    #[error("{0}")]
    Invalid(String),
}

fn path_prefix(path: Option<&Path>) -> String {
    match path {
        Some(p) => format!("{}: ", p.display()),
        None => String::new(),
    }
}

/// `path: error`, or the error alone when it already names the path (the output checks of
/// `recfmt_core::atomic` do), so the path is said once.
fn io_text(path: &Path, source: &std::io::Error) -> String {
    let path = path.display().to_string();
    let text = source.to_string();
    if text.starts_with(&path) {
        text
    } else {
        format!("{path}: {text}")
    }
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn arrow(path: Option<&Path>, source: ArrowError) -> Self {
        Error::Arrow {
            path: path.map(Path::to_path_buf),
            source,
        }
    }

    /// What kind of failure this is: a reader error's own kind, [`ErrorKind::Io`] for a
    /// failed output file, [`ErrorKind::Invalid`] for a value or request that does not fit
    /// (the kind the [`recfmt_core::Error`] converted from it has).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Read(e) => e.kind(),
            Error::Io { .. } | Error::Arrow { path: Some(_), .. } => ErrorKind::Io,
            #[cfg(feature = "parquet")]
            Error::Parquet { .. } => ErrorKind::Io,
            #[cfg(feature = "mcap")]
            Error::Mcap { .. } => ErrorKind::Io,
            Error::Arrow { path: None, .. } | Error::Value { .. } | Error::Invalid(_) => {
                ErrorKind::Invalid
            }
        }
    }
}

impl From<Error> for recfmt_core::Error {
    /// Reader errors come back unchanged; output failures become [`recfmt_core::Error::Io`]
    /// naming the output file; bad values and options become [`recfmt_core::Error::Invalid`].
    fn from(e: Error) -> Self {
        match e {
            Error::Read(e) => e,
            Error::Io { path, source } => recfmt_core::Error::Io(source).in_file(path),
            Error::Arrow {
                path: Some(path),
                source,
            } => recfmt_core::Error::Io(std::io::Error::other(source)).in_file(path),
            #[cfg(feature = "parquet")]
            Error::Parquet { path, source } => {
                recfmt_core::Error::Io(std::io::Error::other(source)).in_file(path)
            }
            #[cfg(feature = "mcap")]
            Error::Mcap { path, source } => {
                recfmt_core::Error::Io(std::io::Error::other(source)).in_file(path)
            }
            e @ (Error::Arrow { path: None, .. } | Error::Value { .. } | Error::Invalid(_)) => {
                recfmt_core::Error::invalid(e.to_string())
            }
        }
    }
}

impl From<recfmt_core::Error> for Error {
    /// A value that does not fit its column stays an [`Error::Value`] and an inconsistent
    /// request an [`Error::Invalid`], whichever side found them; every other reader error is
    /// an [`Error::Read`].
    fn from(e: recfmt_core::Error) -> Self {
        match e {
            recfmt_core::Error::Value {
                stream,
                signal,
                message,
            } => Error::Value {
                stream,
                signal,
                message,
            },
            recfmt_core::Error::Invalid(what) => Error::Invalid(what.into_owned()),
            other => Error::Read(other),
        }
    }
}
