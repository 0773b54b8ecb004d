//! Errors of the USVLOG reader and writer.

use std::borrow::Cow;

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

impl From<Error> for recfmt_core::Error {
    fn from(e: Error) -> Self {
        use recfmt_core::Error as E;
        match e {
            Error::Io(io) => E::Io(io),
            Error::Core(core) => core,
            Error::BadMagic { .. } | Error::BadEndianness { .. } | Error::ShortHeader { .. } => {
                let offset = match &e {
                    Error::BadEndianness { .. } => 10,
                    _ => 0,
                };
                E::malformed(crate::FORMAT_ID, offset, expectation(&e))
            }
            Error::PayloadLength { offset, .. } | Error::Truncated { offset, .. } => {
                E::malformed(crate::FORMAT_ID, offset, expectation(&e))
            }
            Error::Unwritable { .. } => E::invalid(e.to_string()),
            Error::Layout(_) | Error::Meta(_) => E::invalid(e.to_string()),
        }
    }
}

/// The part of the message after "at byte N: expected ".
fn expectation(e: &Error) -> String {
    let text = e.to_string();
    match text.find("expected ") {
        Some(i) => text[i + "expected ".len()..].to_string(),
        None => text,
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
