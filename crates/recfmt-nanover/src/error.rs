//! Errors of the NanoVer reader and writer.

use std::borrow::Cow;

use recfmt_core::ErrorKind;

/// What went wrong reading or writing a NanoVer recording.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file does not start with the NanoVer magic number and was not read as version 1.
    #[error("at byte 0: expected the NanoVer magic number {expected:#018x}, found {found:02x?}")]
    BadMagic {
        /// The magic number that was expected.
        expected: u64,
        /// The first bytes found (at most 8).
        found: Vec<u8>,
    },
    /// The header names a format version this crate does not read.
    #[error("at byte 8: expected format version 2, found {found}")]
    UnsupportedVersion {
        /// The version in the header.
        found: u64,
    },
    /// The file is shorter than the 16-byte header.
    #[error("at byte 0: expected a 16-byte header, found only {found} bytes")]
    ShortHeader {
        /// Bytes present.
        found: u64,
    },
    /// The file ends inside a record (strict mode; lenient readers report it instead).
    #[error("at byte {offset}: expected a {needed}-byte record, file ends after {available}")]
    Truncated {
        /// Offset of the torn record.
        offset: u64,
        /// Bytes the record needs (24-byte record header plus payload).
        needed: u128,
        /// Bytes present.
        available: u64,
    },
    /// A payload is not the protobuf message the file kind calls for.
    #[error("at byte {offset}: expected a protobuf {message} payload: {source}")]
    Decode {
        /// Offset of the record.
        offset: u64,
        /// The message type expected.
        message: &'static str,
        /// What prost reported.
        #[source]
        source: prost::DecodeError,
    },
    /// Timestamps do not increase strictly (strict reading, or writing).
    #[error("at byte {offset}: expected a timestamp after {previous} us, found {found} us")]
    TimestampOrder {
        /// Offset of the record (for a writer: where it would have been written).
        offset: u64,
        /// The previous record's timestamp.
        previous: u128,
        /// The offending timestamp.
        found: u128,
    },
    /// A message of the wrong kind was written (a frame into a state file or the reverse).
    #[error("cannot write {what}")]
    Unwritable {
        /// What did not fit.
        what: Cow<'static, str>,
    },
    /// A length exceeds a configured limit, or another error of the shared model.
    #[error(transparent)]
    Core(#[from] recfmt_core::Error),
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    /// What kind of failure this is; it stays with the error through [`recfmt_core::Error`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io(_) => ErrorKind::Io,
            Error::Core(e) => e.kind(),
            Error::BadMagic { .. } | Error::Decode { .. } | Error::TimestampOrder { .. } => {
                ErrorKind::Malformed
            }
            Error::ShortHeader { .. } | Error::Truncated { .. } => ErrorKind::Truncated,
            Error::UnsupportedVersion { .. } => ErrorKind::Unsupported,
            Error::Unwritable { .. } => ErrorKind::Invalid,
        }
    }
}

impl From<Error> for recfmt_core::Error {
    /// I/O and shared-model errors stay as they are; every other error travels whole as the
    /// source of a [`recfmt_core::Error::Format`] with its [`Error::kind`].
    fn from(e: Error) -> Self {
        match e {
            Error::Io(io) => recfmt_core::Error::Io(io),
            Error::Core(core) => core,
            e => recfmt_core::Error::format(crate::FORMAT_ID, e.kind(), e),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
