//! Errors of the ICAREC reader and writer.
//!
//! Every error about the content of a file names the file, the byte offset in it and what was
//! expected there, so `recfmt` can print `run.icarec/schema.json: icarec: at byte 312:
//! expected ...`.

use std::path::PathBuf;

/// What went wrong reading or writing an ICAREC directory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file does not follow the layout at `offset`.
    #[error("{}: at byte {offset}: expected {expected}", path.display())]
    Malformed {
        /// The file (inside the recording directory).
        path: PathBuf,
        /// Byte offset in that file where the problem starts.
        offset: u64,
        /// What the reader expected to find there.
        expected: String,
    },
    /// A file ends inside an item (strict reading; lenient readers report it instead).
    #[error("{}: at byte {offset}: expected {expected}", path.display())]
    Truncated {
        /// The file (inside the recording directory).
        path: PathBuf,
        /// Byte offset where the incomplete item starts.
        offset: u64,
        /// What the reader expected to find there.
        expected: String,
    },
    /// The schema checksum does not match the schema (an error only when verifying).
    #[error(
        "{}: at byte {offset}: expected checksum {computed} (SHA-256 of the canonical schema), found {found}",
        path.display()
    )]
    Checksum {
        /// `schema.json`.
        path: PathBuf,
        /// Offset of the `checksum` member (0 when it is missing).
        offset: u64,
        /// The checksum computed from the schema.
        computed: String,
        /// The checksum the file states (`none` when missing).
        found: String,
    },
    /// A data file does not match the size or digest `metadata.json` records for it (an error
    /// only when verifying).
    #[error("{}: at byte {offset}: expected {expected} (from metadata.json), found {found}", path.display())]
    Digest {
        /// The data file.
        path: PathBuf,
        /// Where the difference shows: the file length for a size mismatch, else 0.
        offset: u64,
        /// What metadata.json says.
        expected: String,
        /// What the file has.
        found: String,
    },
    /// A recording policy would drop signals that warmstart needs.
    #[error(
        "recording policy excludes signals that warmstart requires (warmstart_compatible is true): {}",
        excluded.join(", ")
    )]
    Policy {
        /// Names of the required signals the policy excludes.
        excluded: Vec<String>,
    },
    /// A feature of the input that this crate does not implement.
    #[error("{}: unsupported: {what}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What is unsupported.
        what: String,
    },
    /// The caller asked for something inconsistent (a value that does not fit its signal, a
    /// schema that cannot be built, ...).
    #[error("{0}")]
    Invalid(String),
    /// An I/O error on a file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system error.
        #[source]
        source: std::io::Error,
    },
    /// A length exceeds a configured limit, or another core error.
    #[error(transparent)]
    Core(#[from] recfmt_core::Error),
}

impl Error {
    /// Builds an [`Error::Malformed`].
    pub fn malformed(path: impl Into<PathBuf>, offset: u64, expected: impl Into<String>) -> Self {
        Error::Malformed {
            path: path.into(),
            offset,
            expected: expected.into(),
        }
    }

    /// Builds an [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Builds an [`Error::Invalid`].
    pub fn invalid(what: impl Into<String>) -> Self {
        Error::Invalid(what.into())
    }

    /// Replaces the directory part of the file this error names with `dir` (the reader parses
    /// in-memory files under their bare names, then says which directory they came from).
    pub(crate) fn in_dir(self, dir: &std::path::Path) -> Self {
        let rebase = |p: PathBuf| {
            if p.is_relative() && p.components().count() == 1 {
                dir.join(p)
            } else {
                p
            }
        };
        match self {
            Error::Malformed {
                path,
                offset,
                expected,
            } => Error::Malformed {
                path: rebase(path),
                offset,
                expected,
            },
            Error::Truncated {
                path,
                offset,
                expected,
            } => Error::Truncated {
                path: rebase(path),
                offset,
                expected,
            },
            Error::Checksum {
                path,
                offset,
                computed,
                found,
            } => Error::Checksum {
                path: rebase(path),
                offset,
                computed,
                found,
            },
            Error::Digest {
                path,
                offset,
                expected,
                found,
            } => Error::Digest {
                path: rebase(path),
                offset,
                expected,
                found,
            },
            Error::Unsupported { path, what } => Error::Unsupported {
                path: rebase(path),
                what,
            },
            Error::Io { path, source } => Error::Io {
                path: rebase(path),
                source,
            },
            other => other,
        }
    }
}

impl From<Error> for recfmt_core::Error {
    fn from(e: Error) -> Self {
        use recfmt_core::Error as E;
        let id = crate::FORMAT_ID;
        match e {
            Error::Malformed {
                path,
                offset,
                expected,
            } => E::malformed(id, offset, expected).in_file(path),
            Error::Truncated {
                path,
                offset,
                expected,
            } => E::truncated(id, offset, expected).in_file(path),
            Error::Checksum {
                path,
                offset,
                computed,
                found,
            } => E::malformed(
                id,
                offset,
                format!("checksum {computed} (SHA-256 of the canonical schema), found {found}"),
            )
            .in_file(path),
            Error::Digest {
                path,
                offset,
                expected,
                found,
            } => E::malformed(
                id,
                offset,
                format!("{expected} (from metadata.json), found {found}"),
            )
            .in_file(path),
            Error::Unsupported { path, what } => E::unsupported(id, what).in_file(path),
            Error::Io { path, source } => E::Io(source).in_file(path),
            Error::Policy { .. } | Error::Invalid(_) => E::invalid(e.to_string()),
            Error::Core(core) => core,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
