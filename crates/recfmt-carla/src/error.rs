//! Errors of the CARLA reader and writer.

use std::borrow::Cow;
use std::fmt;

use recfmt_core::ErrorKind;

use crate::Flavour;

/// The format id used in [`recfmt_core::Error`]s.
pub(crate) const FORMAT_ID: &str = "carla";

/// A packet size the reader expected, compared with the size found in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedSize {
    /// The body must be exactly this many bytes (fixed layouts, or `2 + count * record`).
    Exactly(u64),
    /// The body must be at least this many bytes (a count or string runs past the end).
    AtLeast(u64),
}

impl fmt::Display for ExpectedSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpectedSize::Exactly(n) => write!(f, "{n}"),
            ExpectedSize::AtLeast(n) => write!(f, "at least {n}"),
        }
    }
}

/// An error of this crate.
///
/// Every variant about the input names the byte offset where the problem is; packet errors also
/// name the packet. It converts into [`recfmt_core::Error`] for use with the rest of recfmt.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the underlying reader or writer.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The info header does not carry the `CARLA_RECORDER` magic.
    #[error(
        "at byte {offset}: not a CARLA recorder file: expected the magic string \"CARLA_RECORDER\", found {found}"
    )]
    BadMagic {
        /// Offset of the magic string.
        offset: u64,
        /// What was found instead, in words: the text quoted (`"CARLA_RECORDEX"`), or
        /// `a 63650-byte string` when the length is wrong.
        found: String,
    },
    /// The header version is neither 1 nor 2 and no flavour was forced.
    #[error("unsupported CARLA recorder version {version} (known: 1, 2)")]
    UnsupportedVersion {
        /// The version found.
        version: u16,
    },
    /// A packet's size field does not fit its layout.
    #[error(
        "{packet} packet (id {id}) at byte {offset}: impossible size: expected {expected} body bytes, found {found}"
    )]
    Size {
        /// Packet kind name (snake case), or `unknown`.
        packet: &'static str,
        /// Packet id byte.
        id: u8,
        /// Offset of the packet header (its id byte).
        offset: u64,
        /// The body size the layout needs.
        expected: ExpectedSize,
        /// The body size stored in the packet header.
        found: u64,
    },
    /// A field holds a value its layout does not allow (a bool that is not 0 or 1, ...).
    #[error("{packet} packet (id {id}) at byte {packet_offset}: {what} (field at byte {offset})")]
    Malformed {
        /// Packet kind name.
        packet: &'static str,
        /// Packet id byte.
        id: u8,
        /// Offset of the packet header.
        packet_offset: u64,
        /// Offset of the offending field.
        offset: u64,
        /// What is wrong.
        what: Cow<'static, str>,
    },
    /// The input ends inside an item; everything before `offset` was complete.
    #[error("truncated {what} at byte {offset}: needs {needed} bytes, only {available} present")]
    Truncated {
        /// What was being read (`info header`, `packet header`, `position packet`, ...).
        what: &'static str,
        /// Offset where the incomplete item starts.
        offset: u64,
        /// Bytes the item needs.
        needed: u64,
        /// Bytes present before the end of the input.
        available: u64,
    },
    /// A length or count exceeds a configured [`recfmt_core::Limits`] bound.
    #[error("limit exceeded at byte {offset}: {what} = {value} > {limit}")]
    Limit {
        /// Which limit.
        what: &'static str,
        /// The value in the input.
        value: u64,
        /// The configured limit.
        limit: u64,
        /// Offset where the value was read.
        offset: u64,
    },
    /// The writer was asked to write a packet kind the chosen flavour has no id for.
    #[error("{packet} packets do not exist in flavour {flavour}")]
    NotInFlavour {
        /// Packet kind name.
        packet: &'static str,
        /// The writer's flavour.
        flavour: Flavour,
    },
    /// A row of a tracks table (CSV or generic rows) that cannot be turned into a recording.
    #[error("tracks input, {location}: {what}")]
    Tracks {
        /// Where: `line 7` of a CSV file, or `row 12` of the rows given.
        location: String,
        /// What is wrong.
        what: String,
    },
    /// The writer was given a value too large for its field (a string over 65535 bytes, ...).
    #[error("cannot write {what}: {len} exceeds the field maximum {max}")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Its length or count.
        len: u64,
        /// The largest value the field holds.
        max: u64,
    },
}

impl Error {
    /// Byte offset in the input the error is about, when it is about the input.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::BadMagic { offset, .. }
            | Error::Size { offset, .. }
            | Error::Truncated { offset, .. }
            | Error::Limit { offset, .. } => Some(*offset),
            Error::Malformed { packet_offset, .. } => Some(*packet_offset),
            _ => None,
        }
    }

    /// What kind of failure this is; it stays with the error through [`recfmt_core::Error`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io(_) => ErrorKind::Io,
            Error::BadMagic { .. } | Error::Size { .. } | Error::Malformed { .. } => {
                ErrorKind::Malformed
            }
            Error::Truncated { .. } => ErrorKind::Truncated,
            Error::Limit { .. } => ErrorKind::Limit,
            Error::UnsupportedVersion { .. } => ErrorKind::Unsupported,
            Error::NotInFlavour { .. } | Error::Tracks { .. } | Error::TooLarge { .. } => {
                ErrorKind::Invalid
            }
        }
    }

    /// True for [`Error::Truncated`]: the input ends early and nothing after it can be read.
    pub fn is_truncation(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }

    /// True when the error concerns one packet body only: the reader has already moved past
    /// that packet and further reads continue with the next one.
    pub fn is_recoverable(&self) -> bool {
        matches!(self, Error::Size { .. } | Error::Malformed { .. })
    }
}

/// Fails with [`Error::Limit`] when `value` exceeds `limit`.
pub(crate) fn check_limit(what: &'static str, value: u64, limit: u64, offset: u64) -> Result<()> {
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

impl From<Error> for recfmt_core::Error {
    /// An I/O error stays one; every other error travels whole as the source of a
    /// [`recfmt_core::Error::Format`] with its [`Error::kind`].
    fn from(e: Error) -> Self {
        match e {
            Error::Io(io) => recfmt_core::Error::Io(io),
            e => recfmt_core::Error::format(FORMAT_ID, e.kind(), e),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncation_stays_truncated_in_core_and_says_its_offset_once() {
        let e = Error::Truncated {
            what: "position packet",
            offset: 21135,
            needed: 40,
            available: 12,
        };
        let core = recfmt_core::Error::from(e);
        assert_eq!(core.kind(), ErrorKind::Truncated);
        assert_eq!(
            core.to_string(),
            "carla: truncated position packet at byte 21135: needs 40 bytes, only 12 present"
        );
        assert!(std::error::Error::source(&core).is_some_and(|s| s.is::<Error>()));
    }

    #[test]
    fn kinds_survive_the_conversion() {
        let limit = Error::Limit {
            what: "packet size",
            value: 9,
            limit: 4,
            offset: 63,
        };
        assert_eq!(recfmt_core::Error::from(limit).kind(), ErrorKind::Limit);
        let size = Error::Size {
            packet: "position",
            id: 8,
            offset: 50,
            expected: ExpectedSize::Exactly(34),
            found: 3,
        };
        assert_eq!(recfmt_core::Error::from(size).kind(), ErrorKind::Malformed);
        let version = Error::UnsupportedVersion { version: 7 };
        assert_eq!(
            recfmt_core::Error::from(version).kind(),
            ErrorKind::Unsupported
        );
    }

    #[test]
    fn a_wrong_magic_says_what_was_found_in_plain_words() {
        let e = crate::codec::parse_header(b"\x02\x00\x0e\x00CARLA_RECORDEX....")
            .expect_err("not a recorder");
        assert_eq!(
            e.to_string(),
            "at byte 2: not a CARLA recorder file: expected the magic string \"CARLA_RECORDER\", found \"CARLA_RECORDEX\""
        );
        let e = crate::codec::parse_header(b"\x02\x00\xfe\xf8rest").expect_err("not a recorder");
        assert_eq!(
            e.to_string(),
            "at byte 2: not a CARLA recorder file: expected the magic string \"CARLA_RECORDER\", found a 63742-byte string"
        );
    }
}
