//! The 32-byte `timeseries.bin` file header (`<6sIBQ13x`, little-endian, packed).

use crate::error::{Error, Result};

/// The magic at byte 0.
pub const MAGIC: &[u8; 6] = b"USVLOG";
/// Size of the file header in bytes.
pub const HEADER_LEN: usize = 32;
/// The only endianness value the format defines (little-endian).
pub const LITTLE_ENDIAN: u8 = 1;

/// The file header, every byte kept (the reserved tail included) for byte-exact writing.
///
/// ```
/// use recfmt_tlv::FileHeader;
/// let h = FileHeader::new(1, 1_000_000);
/// let bytes = h.to_bytes();
/// assert_eq!(&bytes[..6], b"USVLOG");
/// assert_eq!(FileHeader::parse(&bytes).unwrap(), h);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// `fw_model_schema` (u32 at byte 6).
    pub fw_model_schema: u32,
    /// Endianness byte (always 1).
    pub endianness: u8,
    /// Session start in microseconds, the clock of every record's `t_us`.
    pub t0_us: u64,
    /// The 13 reserved bytes, normally zero.
    pub reserved: [u8; 13],
}

impl FileHeader {
    /// A header with zeroed reserved bytes.
    pub fn new(fw_model_schema: u32, t0_us: u64) -> Self {
        FileHeader {
            fw_model_schema,
            endianness: LITTLE_ENDIAN,
            t0_us,
            reserved: [0; 13],
        }
    }

    /// Parses the first 32 bytes of a file.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let head: &[u8; HEADER_LEN] = bytes
            .get(..HEADER_LEN)
            .and_then(|b| b.try_into().ok())
            .ok_or(Error::ShortHeader { found: bytes.len() })?;
        if &head[..6] != MAGIC {
            return Err(Error::BadMagic {
                found: head[..6].to_vec(),
            });
        }
        let endianness = head[10];
        if endianness != LITTLE_ENDIAN {
            return Err(Error::BadEndianness { found: endianness });
        }
        let mut reserved = [0; 13];
        reserved.copy_from_slice(&head[19..32]);
        Ok(FileHeader {
            fw_model_schema: u32::from_le_bytes([head[6], head[7], head[8], head[9]]),
            endianness,
            t0_us: u64::from_le_bytes([
                head[11], head[12], head[13], head[14], head[15], head[16], head[17], head[18],
            ]),
            reserved,
        })
    }

    /// The 32 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut out = [0; HEADER_LEN];
        out[..6].copy_from_slice(MAGIC);
        out[6..10].copy_from_slice(&self.fw_model_schema.to_le_bytes());
        out[10] = self.endianness;
        out[11..19].copy_from_slice(&self.t0_us.to_le_bytes());
        out[19..].copy_from_slice(&self.reserved);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rustfmt::skip]
    const HEADER: [u8; 32] = [
        b'U', b'S', b'V', b'L', b'O', b'G', // magic
        0x01, 0x00, 0x00, 0x00,             // fw_model_schema = 1
        0x01,                               // endianness = little
        0x40, 0x42, 0x0f, 0, 0, 0, 0, 0,    // t0_us = 1_000_000
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
    ];

    #[test]
    fn parses_the_documented_layout() {
        let h = FileHeader::parse(&HEADER).unwrap();
        assert_eq!(h.fw_model_schema, 1);
        assert_eq!(h.t0_us, 1_000_000);
        assert_eq!(h.to_bytes(), HEADER);
    }

    #[test]
    fn rejects_bad_magic_endianness_and_short_input() {
        let mut bad = HEADER;
        bad[0] = b'X';
        assert!(matches!(
            FileHeader::parse(&bad),
            Err(Error::BadMagic { .. })
        ));
        let mut big = HEADER;
        big[10] = 2;
        assert!(matches!(
            FileHeader::parse(&big),
            Err(Error::BadEndianness { found: 2 })
        ));
        assert!(matches!(
            FileHeader::parse(&HEADER[..20]),
            Err(Error::ShortHeader { found: 20 })
        ));
    }
}
