//! Errors shared by every recfmt crate, grouped into categories that tell the caller what to do.

use std::borrow::Cow;
use std::path::PathBuf;

/// What a caller should do about an [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The operating system failed a read or write: retry or abort.
    Io,
    /// The input breaks its format: in lenient mode skip or stop the stream, else abort.
    Malformed,
    /// The input is valid but uses something recfmt does not implement: report it.
    Unsupported,
    /// A length or count in the input exceeds a configured limit: abort, or raise the limit.
    Limit,
    /// No registered format recognised the input.
    UnknownFormat,
    /// The caller asked for something inconsistent (a bad option, a schema that cannot be written).
    Invalid,
}

/// The error type of every recfmt library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the operating system.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The input does not follow its format at `offset`.
    #[error("{format}: at byte {offset}: expected {expected}")]
    Malformed {
        /// Format id, e.g. `"usvlog"`.
        format: &'static str,
        /// Byte offset in the file where the problem starts.
        offset: u64,
        /// What the reader expected to find there.
        expected: Cow<'static, str>,
    },
    /// A feature of the input that recfmt does not implement.
    #[error("{format}: unsupported: {what}")]
    Unsupported {
        /// Format id.
        format: &'static str,
        /// What is unsupported.
        what: Cow<'static, str>,
    },
    /// A value read from the input exceeds a limit of [`crate::Limits`].
    #[error("limit exceeded at byte {offset}: {what} = {value} > {limit}")]
    Limit {
        /// Which limit.
        what: &'static str,
        /// The value found in the input.
        value: u64,
        /// The configured limit.
        limit: u64,
        /// Byte offset where the value was read.
        offset: u64,
    },
    /// No registered format recognised the input.
    #[error("not a recognised recording (tried: {})", tried.join(", "))]
    UnknownFormat {
        /// Ids of the formats that were tried.
        tried: Vec<&'static str>,
    },
    /// The caller asked for something inconsistent.
    #[error("{0}")]
    Invalid(Cow<'static, str>),
    /// A reader gave a value that does not fit its signal's type or shape (a reader bug, or a
    /// schema that does not match the rows).
    #[error("stream {stream:?}, signal {signal:?}: {message}")]
    Value {
        /// Stream name.
        stream: String,
        /// Signal name.
        signal: String,
        /// What is wrong with the value (the message names the value).
        message: String,
    },
    /// An error of a format crate kept as it is (its message and causes unchanged), for
    /// format-specific operations called through the registry.
    #[error(transparent)]
    Format(Box<dyn std::error::Error + Send + Sync>),
    /// What was being done when `source` happened.
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An error that happened while handling a particular file.
    #[error("{}: {source}", path.display())]
    File {
        /// The file the error is about.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: Box<Error>,
    },
}

/// `Result` with [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds a [`Error::Malformed`].
    pub fn malformed(
        format: &'static str,
        offset: u64,
        expected: impl Into<Cow<'static, str>>,
    ) -> Self {
        Error::Malformed {
            format,
            offset,
            expected: expected.into(),
        }
    }

    /// Builds an [`Error::Unsupported`].
    pub fn unsupported(format: &'static str, what: impl Into<Cow<'static, str>>) -> Self {
        Error::Unsupported {
            format,
            what: what.into(),
        }
    }

    /// Wraps a format crate's own error, keeping its message and causes.
    pub fn other(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Format(Box::new(e))
    }

    /// Says what was being done when `e` happened.
    pub fn context(
        context: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Context {
            context: context.into(),
            source: Box::new(e),
        }
    }

    /// The I/O error at the bottom of this one, if it is one (to tell a closed pipe from a
    /// failure).
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            Error::Io(io) => Some(io),
            Error::File { source, .. } => source.io_error(),
            Error::Format(e) | Error::Context { source: e, .. } => {
                let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e.as_ref());
                while let Some(c) = cur {
                    if let Some(io) = c.downcast_ref::<std::io::Error>() {
                        return Some(io);
                    }
                    if let Some(core) = c.downcast_ref::<Error>() {
                        return core.io_error();
                    }
                    cur = c.source();
                }
                None
            }
            _ => None,
        }
    }

    /// Builds an [`Error::Invalid`].
    pub fn invalid(what: impl Into<Cow<'static, str>>) -> Self {
        Error::Invalid(what.into())
    }

    /// Attaches the file this error is about, unless it already names one.
    ///
    /// ```
    /// use recfmt_core::{Error, ErrorKind};
    /// let e = Error::malformed("usvlog", 32, "a 12-byte record header").in_file("run/timeseries.bin");
    /// assert_eq!(e.to_string(), "run/timeseries.bin: usvlog: at byte 32: expected a 12-byte record header");
    /// assert_eq!(e.kind(), ErrorKind::Malformed);
    /// ```
    pub fn in_file(self, path: impl Into<PathBuf>) -> Self {
        match self {
            e @ Error::File { .. } => e,
            e => Error::File {
                path: path.into(),
                source: Box::new(e),
            },
        }
    }

    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io(_) => ErrorKind::Io,
            Error::Malformed { .. } => ErrorKind::Malformed,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::Limit { .. } => ErrorKind::Limit,
            Error::UnknownFormat { .. } => ErrorKind::UnknownFormat,
            Error::Invalid(_) | Error::Value { .. } => ErrorKind::Invalid,
            Error::Format(e) | Error::Context { source: e, .. } => e
                .downcast_ref::<Error>()
                .map_or(ErrorKind::Invalid, Error::kind),
            Error::File { source, .. } => source.kind(),
        }
    }
}

/// Adds a file name to errors on the way out of a function that knows it.
pub trait ResultExt<T> {
    /// Wraps an error with the file it is about (see [`Error::in_file`]).
    fn in_file(self, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T, E: Into<Error>> ResultExt<T> for std::result::Result<T, E> {
    fn in_file(self, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|e| e.into().in_file(path))
    }
}
