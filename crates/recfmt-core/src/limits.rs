//! Limits on sizes read from untrusted input, checked before any allocation they would size.

use crate::{Error, Result};

/// Upper bounds for lengths and counts found in a file.
///
/// Every reader checks a length field against these before it allocates a buffer of that size,
/// so a corrupt or hostile file cannot make recfmt allocate gigabytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest single record or packet, in bytes.
    pub max_record_len: u64,
    /// Most signals in one stream.
    pub max_signals: u64,
    /// Most elements in one array value.
    pub max_array_len: u64,
    /// Largest side file (a JSON schema or metadata file), in bytes.
    pub max_side_file_len: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_record_len: 256 << 20,
            max_signals: 1 << 20,
            max_array_len: 1 << 28,
            max_side_file_len: 64 << 20,
        }
    }
}

impl Limits {
    /// Returns an error when `value` exceeds `limit`.
    ///
    /// ```
    /// use recfmt_core::Limits;
    /// let limits = Limits::default();
    /// assert!(Limits::check("record length", 10, limits.max_record_len, 0).is_ok());
    /// assert!(Limits::check("record length", u64::MAX, limits.max_record_len, 12).is_err());
    /// ```
    pub fn check(what: &'static str, value: u64, limit: u64, offset: u64) -> Result<()> {
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
