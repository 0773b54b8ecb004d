//! Errors of the fgtape crate, each with the byte offset where the problem starts.

use std::borrow::Cow;
use std::fmt;

/// The format id used in [`recfmt_core::Error`] values.
pub const FORMAT_ID: &str = "fgtape";

/// Where a byte offset counts from.
///
/// A Normal tape is one gzip stream, so its structure is described in offsets of the
/// *decompressed* bytes; Continuous and Recovery tapes are not compressed, so their offsets are
/// plain file offsets. Property-list XML offsets are converted to the enclosing stream's offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offset {
    /// Offset in the decompressed content of a gzip-compressed (Normal) tape.
    Decompressed(u64),
    /// Offset in the file itself (Continuous and Recovery tapes, or any uncompressed input).
    File(u64),
}

impl Offset {
    /// The numeric offset, whatever it counts from.
    pub fn get(self) -> u64 {
        match self {
            Offset::Decompressed(o) | Offset::File(o) => o,
        }
    }

    /// This offset moved forward by `n` bytes.
    pub fn plus(self, n: u64) -> Offset {
        match self {
            Offset::Decompressed(o) => Offset::Decompressed(o.saturating_add(n)),
            Offset::File(o) => Offset::File(o.saturating_add(n)),
        }
    }
}

impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Offset::Decompressed(o) => write!(f, "decompressed byte {o}"),
            Offset::File(o) => write!(f, "byte {o}"),
        }
    }
}

/// The error type of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system failed a read or a write.
    #[error("fgtape: I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The gzip layer of a Normal tape is corrupt (bad deflate data, checksum mismatch).
    #[error(
        "fgtape: corrupt gzip data at {offset} (compressed input read so far: {compressed_offset} bytes): {source}"
    )]
    Gzip {
        /// How far decompression got.
        offset: Offset,
        /// How many compressed bytes the decoder had consumed (it reads ahead a little).
        compressed_offset: u64,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// The input does not follow the format.
    #[error("fgtape: at {offset}: expected {expected}")]
    Malformed {
        /// Where the problem starts.
        offset: Offset,
        /// What the reader expected there.
        expected: Cow<'static, str>,
    },
    /// The input ends inside a structure.
    #[error("fgtape: at {offset}: file ends early, expected {expected}")]
    Truncated {
        /// Where the incomplete structure starts.
        offset: Offset,
        /// What was being read.
        expected: Cow<'static, str>,
    },
    /// A property-list XML text is invalid.
    #[error("fgtape: property list at {offset}: {message}")]
    Xml {
        /// Where the problem is, in the enclosing stream when known (else in the text).
        offset: Offset,
        /// What is wrong.
        message: String,
    },
    /// A length or count read from the input exceeds a [`recfmt_core::Limits`] value.
    #[error("fgtape: limit exceeded at {offset}: {what} = {value} > {limit}")]
    Limit {
        /// Which limit.
        what: &'static str,
        /// The value found in the input.
        value: u64,
        /// The configured limit.
        limit: u64,
        /// Where the value was read.
        offset: Offset,
    },
    /// A valid feature of the format that this crate does not implement.
    #[error("fgtape: unsupported: {0}")]
    Unsupported(Cow<'static, str>),
    /// The caller asked for something inconsistent (writer misuse, values that do not fit).
    #[error("fgtape: {0}")]
    Invalid(Cow<'static, str>),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Malformed`].
    pub fn malformed(offset: Offset, expected: impl Into<Cow<'static, str>>) -> Self {
        Error::Malformed {
            offset,
            expected: expected.into(),
        }
    }

    /// Builds an [`Error::Truncated`].
    pub fn truncated(offset: Offset, expected: impl Into<Cow<'static, str>>) -> Self {
        Error::Truncated {
            offset,
            expected: expected.into(),
        }
    }

    /// Builds an [`Error::Invalid`].
    pub fn invalid(what: impl Into<Cow<'static, str>>) -> Self {
        Error::Invalid(what.into())
    }

    /// The offset the error is about, when it has one.
    pub fn offset(&self) -> Option<Offset> {
        match self {
            Error::Gzip { offset, .. }
            | Error::Malformed { offset, .. }
            | Error::Truncated { offset, .. }
            | Error::Xml { offset, .. }
            | Error::Limit { offset, .. } => Some(*offset),
            Error::Io(_) | Error::Unsupported(_) | Error::Invalid(_) => None,
        }
    }

    /// What kind of failure this is; it stays with the error through [`recfmt_core::Error`].
    pub fn kind(&self) -> recfmt_core::ErrorKind {
        use recfmt_core::ErrorKind;
        match self {
            Error::Io(_) => ErrorKind::Io,
            Error::Gzip { .. } | Error::Malformed { .. } | Error::Xml { .. } => {
                ErrorKind::Malformed
            }
            Error::Truncated { .. } => ErrorKind::Truncated,
            Error::Limit { .. } => ErrorKind::Limit,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::Invalid(_) => ErrorKind::Invalid,
        }
    }

    /// True when the input simply ended too early (a torn tail), as opposed to being corrupt.
    pub fn is_truncation(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }

    /// Checks `value` against `limit`, failing with [`Error::Limit`].
    pub(crate) fn check_limit(
        what: &'static str,
        value: u64,
        limit: u64,
        offset: Offset,
    ) -> Result<()> {
        if value > limit {
            Err(Error::Limit {
                what,
                value,
                limit,
                offset,
            })
        } else {
            Ok(())
        }
    }
}

impl From<Error> for recfmt_core::Error {
    /// An I/O error stays one; every other error travels whole (its offset says whether it
    /// counts decompressed bytes) as the source of a [`recfmt_core::Error::Format`] with its
    /// [`Error::kind`].
    fn from(e: Error) -> Self {
        match e {
            Error::Io(io) => recfmt_core::Error::Io(io),
            e => recfmt_core::Error::format(FORMAT_ID, e.kind(), e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_to_core_errors_keeping_kind_and_text() {
        let e = Error::malformed(Offset::Decompressed(42), "a RawData container");
        assert_eq!(
            e.to_string(),
            "fgtape: at decompressed byte 42: expected a RawData container"
        );
        let core: recfmt_core::Error = e.into();
        assert_eq!(core.kind(), recfmt_core::ErrorKind::Malformed);
        // The core error's message is the crate's, the format id said once.
        assert_eq!(
            core.to_string(),
            "fgtape: at decompressed byte 42: expected a RawData container"
        );
        let torn: recfmt_core::Error = Error::truncated(Offset::File(9), "a frame").into();
        assert_eq!(torn.kind(), recfmt_core::ErrorKind::Truncated);
        let limit: recfmt_core::Error = Error::Limit {
            what: "container size",
            value: 10,
            limit: 5,
            offset: Offset::File(7),
        }
        .into();
        assert_eq!(limit.kind(), recfmt_core::ErrorKind::Limit);
    }
}
