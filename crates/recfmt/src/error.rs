//! The error of the facade's front-door functions.

/// What went wrong in [`crate::convert`], [`crate::validate`], [`crate::inspect`] or
/// [`crate::ops`]. Messages and causes are those the command line
/// prints (`source()` walks the causes).
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
    /// What was being done when `source` happened.
    #[error("{context}")]
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

    /// As the shared model's error, for code that speaks only that (a reader's open function):
    /// a format's error as it is, so its kind survives, anything else as its message.
    pub fn into_core(self) -> recfmt_core::Error {
        match self {
            Error::Core(e) => e,
            Error::Export(recfmt_export::Error::Read(e)) => e,
            other => recfmt_core::Error::invalid(chain_text(&other)),
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

/// `e` and its causes joined by `: `, each cause left out when the text before already ends
/// with it.
pub(crate) fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !text.ends_with(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        cur = c.source();
    }
    text
}
