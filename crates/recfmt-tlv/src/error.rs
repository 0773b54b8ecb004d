//! Errors of the USVLOG reader and writer.

use std::borrow::Cow;

use recfmt_core::ErrorKind;

/// What went wrong reading or writing a USVLOG session.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file does not start with `USVLOG`.
    #[error("at byte 0: expected magic \"USVLOG\", found {found:02x?}")]
    BadMagic {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// The header's endianness byte is not 1 (little-endian).
    #[error("at byte 10: expected endianness 1 (little-endian), found {found}")]
    BadEndianness {
        /// The byte found.
        found: u8,
    },
    /// The file is shorter than a 32-byte header.
    #[error("at byte 0: expected a 32-byte header, found only {found} bytes")]
    ShortHeader {
        /// Bytes present.
        found: usize,
    },
    /// A known record type whose payload length differs from its layout (strict mode).
    #[error(
        "at byte {offset}: record type {type_id} ({name}) expected a {expected}-byte payload, found {found}"
    )]
    PayloadLength {
        /// Offset of the record header.
        offset: u64,
        /// Record type id.
        type_id: u16,
        /// Record name.
        name: String,
        /// Payload size of the layout.
        expected: usize,
        /// Payload size in the file.
        found: usize,
    },
    /// The file ends inside a record (strict mode; lenient readers report it instead).
    #[error("at byte {offset}: expected {needed} bytes of a record, file ends after {available}")]
    Truncated {
        /// Offset of the torn record.
        offset: u64,
        /// Bytes the record needs.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// A record layout file or `meta.json` could not be used.
    #[error("{0}")]
    Layout(Cow<'static, str>),
    /// `meta.json` is not valid JSON.
    #[error("meta.json: {0}")]
    Meta(#[from] serde_json::Error),
    /// A value does not fit the record layout when writing.
    #[error("cannot write {what}")]
    Unwritable {
        /// What did not fit.
        what: String,
    },
    /// A length exceeds a configured limit.
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
            Error::BadMagic { .. } | Error::BadEndianness { .. } | Error::PayloadLength { .. } => {
                ErrorKind::Malformed
            }
            Error::ShortHeader { .. } | Error::Truncated { .. } => ErrorKind::Truncated,
            Error::Layout(_) | Error::Meta(_) | Error::Unwritable { .. } => ErrorKind::Invalid,
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
