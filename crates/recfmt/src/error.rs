//! The error of the facade's front-door functions.

use recfmt_core::ErrorKind;

/// What went wrong in [`crate::convert`], [`crate::validate`], [`crate::inspect`] or
/// [`crate::ops`]. The message says what failed and why; `source()` walks the causes (the
/// command line prints those the message does not already say), and [`Error::kind`] tells
/// what kind of failure it was, the same kind whatever layer found it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the shared model or of a format (reading, writing, a bad format option).
    #[error(transparent)]
    Core(#[from] recfmt_core::Error),
    /// An error of the exporters (tables, HDF5, selection, merging).
    #[error(transparent)]
    Export(#[from] recfmt_export::Error),
    /// An I/O error not tied to a recording (a directory listing, a digest).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The request does not make sense for this input (an option value, a target the input
    /// cannot go to, a capability the format does not have).
    #[error("{0}")]
    Invalid(String),
    /// What was being done when `source` happened; the message says both.
    #[error("{}", with_cause(context, source))]
    Context {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: Box<Error>,
    },
}

/// `Result` with the facade's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps `self` in what was being done.
    pub fn context(self, context: impl Into<String>) -> Self {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// What kind of failure this is: that of the error at the bottom (through every context),
    /// as the format crate that found it said.
    ///
    /// ```
    /// use recfmt::core::{Error as CoreError, ErrorKind};
    /// let e = recfmt::Error::from(CoreError::truncated("usvlog", 96, "a 24-byte record"))
    ///     .context("converting run.bin into run.parquet");
    /// assert_eq!(e.kind(), ErrorKind::Truncated);
    /// assert_eq!(
    ///     e.to_string(),
    ///     "converting run.bin into run.parquet: usvlog: at byte 96: file ends early, expected a 24-byte record"
    /// );
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Export(e) => e.kind(),
            Error::Io(_) => ErrorKind::Io,
            Error::Invalid(_) => ErrorKind::Invalid,
            Error::Context { source, .. } => source.kind(),
        }
    }

    /// As the shared model's error, for code that speaks only that (a reader's open function):
    /// the same message, causes and [`kind`](Error::kind).
    pub fn into_core(self) -> recfmt_core::Error {
        match self {
            Error::Core(e) => e,
            Error::Export(e) => e.into(),
            Error::Io(io) => recfmt_core::Error::Io(io),
            Error::Invalid(what) => recfmt_core::Error::invalid(what),
            Error::Context { context, source } => recfmt_core::Error::Context {
                context,
                source: Box::new(source.into_core()),
            },
        }
    }

    /// The I/O error at the bottom of this one, if it is one (a closed pipe is not a failure
    /// for a command that prints).
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            Error::Io(io) => Some(io),
            Error::Core(e) => e.io_error(),
            Error::Export(recfmt_export::Error::Read(e)) => e.io_error(),
            Error::Export(recfmt_export::Error::Io { source, .. }) => Some(source),
            Error::Context { source, .. } => source.io_error(),
            _ => None,
        }
    }
}

/// Adds what was being done to a failed result.
pub(crate) trait Context<T> {
    /// Wraps the error in `context()`.
    fn context_with(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context_with(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| e.into().context(context()))
    }
}

/// `context: cause`, the cause after the first line when the context has a hint below it (as
/// the shared model's context says it).
fn with_cause(context: &str, cause: &Error) -> String {
    match context.split_once('\n') {
        Some((what, hint)) => format!("{what}: {cause}\n{hint}"),
        None => format!("{context}: {cause}"),
    }
}

/// `e` and its causes joined by `: `, each cause left out when the text before already says
/// it (messages say their cause after what failed).
pub(crate) fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        cur = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use recfmt_core::{Error as CoreError, ErrorKind};

    use super::*;

    fn limit() -> CoreError {
        CoreError::Limit {
            what: "record length",
            value: 9,
            limit: 4,
            offset: 12,
        }
    }

    #[test]
    fn kind_is_that_of_the_error_under_every_context() {
        let e = Error::from(limit()).context("converting a into b");
        assert_eq!(e.kind(), ErrorKind::Limit);
        let e = Error::from(recfmt_export::Error::from(CoreError::malformed(
            "usvlog", 3, "a record",
        )))
        .context("converting a into b")
        .context("converting many");
        assert_eq!(e.kind(), ErrorKind::Malformed);
        let torn = CoreError::truncated("usvlog", 40, "a 24-byte record").in_file("run.bin");
        assert_eq!(Error::from(torn).context("x").kind(), ErrorKind::Truncated);
        assert_eq!(Error::Invalid("no".into()).kind(), ErrorKind::Invalid);
        let io = std::io::Error::other("disk");
        assert_eq!(Error::from(io).context("x").kind(), ErrorKind::Io);
    }

    #[test]
    fn into_core_keeps_kind_and_message() {
        // Before, any context turned Limit and Malformed alike into Invalid.
        for (e, kind) in [
            (Error::from(limit()), ErrorKind::Limit),
            (
                Error::from(CoreError::malformed("usvlog", 3, "a record")),
                ErrorKind::Malformed,
            ),
            (
                Error::from(recfmt_export::Error::from(limit())),
                ErrorKind::Limit,
            ),
        ] {
            let e = e.context("opening run.bin");
            let text = e.to_string();
            let core = e.into_core();
            assert_eq!(core.kind(), kind, "{core}");
            assert_eq!(core.to_string(), text);
        }
    }

    #[test]
    fn a_context_says_what_failed_and_why_and_the_chain_says_it_once() {
        let e = Error::from(CoreError::malformed("usvlog", 10, "endianness 1").in_file("r.bin"))
            .context("converting r.bin into out");
        assert_eq!(
            e.to_string(),
            "converting r.bin into out: r.bin: usvlog: at byte 10: expected endianness 1"
        );
        assert_eq!(chain_text(&e), e.to_string());
        // A hint stays below the cause.
        let e = Error::Invalid("too many streams".into())
            .context("converting r.bin to usvlog\n  hint: keep one stream");
        assert_eq!(
            e.to_string(),
            "converting r.bin to usvlog: too many streams\n  hint: keep one stream"
        );
        assert_eq!(chain_text(&e), e.to_string());
    }
}
