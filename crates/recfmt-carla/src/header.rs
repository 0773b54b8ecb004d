//! The info header at the start of every recorder file.

use crate::primitive::FString;

/// The magic string of the info header.
pub const MAGIC: &str = "CARLA_RECORDER";

/// The info header: version, magic, date and map.
///
/// On disk: `version: u16`, `magic: FString` (`0e 00` + `CARLA_RECORDER`), `date: i64`
/// (Unix seconds, UTC, when the recorder started), `map: FString`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// 1 in every release up to 0.9.16 and in UE5; 2 in the newest ue4-dev (attribute types
    /// renumbered, see [`crate::AttributeType::from_byte`]).
    pub version: u16,
    /// The magic as stored. CARLA compares it ignoring case, so the original bytes are kept.
    pub magic: FString,
    /// `std::time(0)` when the recorder started: Unix seconds, UTC.
    pub date: i64,
    /// Map name, e.g. `Town01`.
    pub map: FString,
}

impl Header {
    /// A version-1 header with the standard magic.
    ///
    /// ```
    /// let h = recfmt_carla::Header::new("Town06", 1_637_676_528);
    /// assert_eq!(h.encoded_len(), 34);
    /// ```
    pub fn new(map: impl Into<FString>, date: i64) -> Self {
        Header {
            version: 1,
            magic: FString::from(MAGIC),
            date,
            map: map.into(),
        }
    }

    /// Size of the header on disk.
    pub fn encoded_len(&self) -> usize {
        2 + 2 + self.magic.len() + 8 + 2 + self.map.len()
    }

    /// True when `magic` is `CARLA_RECORDER`, ignoring ASCII case as CARLA does.
    pub fn is_magic(magic: &[u8]) -> bool {
        magic.eq_ignore_ascii_case(MAGIC.as_bytes())
    }
}
