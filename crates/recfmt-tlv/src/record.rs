//! Records: a 12-byte header (`<QHH`: `t_us`, `type`, `len`) followed by `len` payload bytes.

/// Size of a record header in bytes.
pub const RECORD_HEADER_LEN: usize = 12;

/// A record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Absolute monotonic time in microseconds (same clock as the file header's `t0_us`).
    pub t_us: u64,
    /// Record type id.
    pub type_id: u16,
    /// Payload length in bytes.
    pub len: u16,
}

impl RecordHeader {
    /// Parses a header from exactly 12 bytes.
    pub fn parse(bytes: &[u8; RECORD_HEADER_LEN]) -> Self {
        let mut t = [0; 8];
        t.copy_from_slice(&bytes[..8]);
        RecordHeader {
            t_us: u64::from_le_bytes(t),
            type_id: u16::from_le_bytes([bytes[8], bytes[9]]),
            len: u16::from_le_bytes([bytes[10], bytes[11]]),
        }
    }

    /// The 12 header bytes.
    pub fn to_bytes(&self) -> [u8; RECORD_HEADER_LEN] {
        let mut out = [0; RECORD_HEADER_LEN];
        out[..8].copy_from_slice(&self.t_us.to_le_bytes());
        out[8..10].copy_from_slice(&self.type_id.to_le_bytes());
        out[10..].copy_from_slice(&self.len.to_le_bytes());
        out
    }
}

/// One record with its raw payload, whatever its type: the faithful low-level unit.
///
/// Decoding into named fields is a separate step ([`crate::RecordLayout::decode_into`]), so unknown
/// types are kept byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    /// Time in microseconds.
    pub t_us: u64,
    /// Record type id.
    pub type_id: u16,
    /// Payload bytes (`len` of them).
    pub payload: Vec<u8>,
    /// Byte offset of the record header in the file (0 for records not read from a file).
    pub offset: u64,
}

impl Record {
    /// The header this record is written with.
    pub fn header(&self) -> RecordHeader {
        RecordHeader {
            t_us: self.t_us,
            type_id: self.type_id,
            len: u16::try_from(self.payload.len()).unwrap_or(u16::MAX),
        }
    }
}

/// A record borrowed from the reader's buffer: no copy of the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Time in microseconds.
    pub t_us: u64,
    /// Record type id.
    pub type_id: u16,
    /// Payload bytes.
    pub payload: &'a [u8],
    /// Byte offset of the record header in the file.
    pub offset: u64,
}
