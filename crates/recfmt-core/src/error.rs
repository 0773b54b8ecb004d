//! Errors shared by every recfmt crate, grouped into categories that tell the caller what to do.

use std::borrow::Cow;
use std::path::PathBuf;

/// What a caller should do about an [`Error`].
///
/// Every layer keeps it: a format crate's error travels whole inside [`Error::Format`] with the
/// kind the crate gave it, [`Error::File`] and [`Error::Context`] report the kind of what they
/// wrap, and the facade's error reports the same kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system failed a read or write: retry or abort.
    Io,
    /// The input breaks its format: in lenient mode skip or stop the stream, else abort.
    Malformed,
    /// The input ends inside an item (a torn tail): everything before it was read; in lenient
    /// mode readers report this through the integrity instead of failing.
    Truncated,
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
    /// The input ends inside an item that starts at `offset`.
    #[error("{format}: at byte {offset}: file ends early, expected {expected}")]
    Truncated {
        /// Format id.
        format: &'static str,
        /// Byte offset in the file where the incomplete item starts.
        offset: u64,
        /// What the reader was reading there.
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
    /// An error of a format crate kept whole as `source` (its message, offsets and causes
    /// unchanged) with the kind the crate gave it. The message starts with the format id once.
    #[error("{}", with_format_id(*format, source.as_ref()))]
    Format {
        /// Format id said before the message, unless the message starts with it already;
        /// `None` keeps the message as it is.
        format: Option<&'static str>,
        /// What kind of error the format crate says it is.
        kind: ErrorKind,
        /// The format crate's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// What was being done when `source` happened; the message says both.
    #[error("{}", with_cause(context, source.as_ref()))]
    Context {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An error that happened while handling a particular file; the message names the file
    /// once (not again when the error's own message starts with it).
    #[error("{}", with_path(path, source))]
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

    /// Builds an [`Error::Truncated`].
    pub fn truncated(
        format: &'static str,
        offset: u64,
        expected: impl Into<Cow<'static, str>>,
    ) -> Self {
        Error::Truncated {
            format,
            offset,
            expected: expected.into(),
        }
    }

    /// Keeps a format crate's own error as the source, with its kind; the message is the
    /// crate's, after the format id (said once).
    ///
    /// ```
    /// use recfmt_core::{Error, ErrorKind};
    /// #[derive(Debug, thiserror::Error)]
    /// #[error("truncated packet at byte 40")]
    /// struct Torn;
    /// let e = Error::format("demo", ErrorKind::Truncated, Torn);
    /// assert_eq!(e.to_string(), "demo: truncated packet at byte 40");
    /// assert_eq!(e.kind(), ErrorKind::Truncated);
    /// assert!(std::error::Error::source(&e).unwrap().is::<Torn>());
    /// ```
    pub fn format(
        format: &'static str,
        kind: ErrorKind,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Format {
            format: Some(format),
            kind,
            source: Box::new(e),
        }
    }

    /// Wraps an error of a format crate, keeping its message and causes as they are; its kind
    /// is that of the first recfmt or I/O error in its chain ([`ErrorKind::Invalid`] if none).
    /// Prefer [`Error::format`], which says the kind.
    pub fn other(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        let kind = kind_of_chain(&e);
        Error::Format {
            format: None,
            kind,
            source: Box::new(e),
        }
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
            Error::Format { source: e, .. } | Error::Context { source: e, .. } => {
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
            Error::Truncated { .. } => ErrorKind::Truncated,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::Limit { .. } => ErrorKind::Limit,
            Error::UnknownFormat { .. } => ErrorKind::UnknownFormat,
            Error::Invalid(_) | Error::Value { .. } => ErrorKind::Invalid,
            Error::Format { kind, .. } => *kind,
            Error::Context { source, .. } => kind_of_chain(source.as_ref()),
            Error::File { source, .. } => source.kind(),
        }
    }
}

/// The kind of the first recfmt or I/O error in `e`'s chain, else [`ErrorKind::Invalid`].
fn kind_of_chain(e: &(dyn std::error::Error + 'static)) -> ErrorKind {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(core) = c.downcast_ref::<Error>() {
            return core.kind();
        }
        if c.is::<std::io::Error>() {
            return ErrorKind::Io;
        }
        cur = c.source();
    }
    ErrorKind::Invalid
}

/// `format: message`, or the message alone when it starts with the format id already.
fn with_format_id(format: Option<&str>, e: &(dyn std::error::Error + Send + Sync)) -> String {
    let text = e.to_string();
    match format {
        Some(id) if !text.starts_with(&format!("{id}:")) => format!("{id}: {text}"),
        _ => text,
    }
}

/// `path: message`, or the message alone when it starts with the path already.
fn with_path(path: &std::path::Path, e: &Error) -> String {
    let path = path.display().to_string();
    let text = e.to_string();
    if text.starts_with(&format!("{path}:")) {
        text
    } else {
        format!("{path}: {text}")
    }
}

/// `context: cause`. A context of several lines (a hint after what was being done) gets the
/// cause after its first line, so the message reads "what: why" and the hint follows.
fn with_cause(context: &str, cause: &(dyn std::error::Error + Send + Sync)) -> String {
    match context.split_once('\n') {
        Some((what, rest)) => format!("{what}: {cause}\n{rest}"),
        None => format!("{context}: {cause}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("torn record at byte 40")]
    struct Torn;

    #[derive(Debug, thiserror::Error)]
    #[error("demo: torn record at byte 40")]
    struct NamedTorn;

    #[test]
    fn a_format_error_keeps_its_kind_and_its_text_says_the_format_once() {
        let e = Error::format("demo", ErrorKind::Truncated, Torn);
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert_eq!(e.to_string(), "demo: torn record at byte 40");
        let e = Error::format("demo", ErrorKind::Truncated, NamedTorn);
        assert_eq!(e.to_string(), "demo: torn record at byte 40");
        let e = e.in_file("run.demo");
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert_eq!(e.to_string(), "run.demo: demo: torn record at byte 40");
        // The file is said once, also when the inner message starts with it.
        let named = Error::invalid("run.demo: no header").in_file("run.demo");
        assert_eq!(named.to_string(), "run.demo: no header");
    }

    #[test]
    fn a_context_says_its_cause_and_keeps_its_kind() {
        let e = Error::context(
            "reading index",
            Error::format("demo", ErrorKind::Limit, Torn),
        );
        assert_eq!(e.to_string(), "reading index: demo: torn record at byte 40");
        assert_eq!(e.kind(), ErrorKind::Limit);
        let io = Error::context("reading index", std::io::Error::other("gone"));
        assert_eq!(io.kind(), ErrorKind::Io);
        assert_eq!(Error::other(Torn).kind(), ErrorKind::Invalid);
        assert_eq!(Error::other(Torn).to_string(), "torn record at byte 40");
        let t = Error::truncated("usvlog", 96, "a 24-byte record");
        assert_eq!(t.kind(), ErrorKind::Truncated);
        assert_eq!(
            t.to_string(),
            "usvlog: at byte 96: file ends early, expected a 24-byte record"
        );
    }
}
