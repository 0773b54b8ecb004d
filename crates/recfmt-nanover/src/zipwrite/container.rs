//! The zip container `zipwrite` writes, laid out as Python's `zipfile` does: CRC-32, local
//! headers, the central directory and the end records (zip64 past 2³¹ − 1 bytes).

fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    for (i, slot) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *slot = c;
    }
    table
}

pub(super) struct Crc {
    pub(super) table: [u32; 256],
    pub(super) value: u32,
}

impl Crc {
    pub(super) fn new() -> Self {
        Crc {
            table: crc_table(),
            value: 0xffff_ffff,
        }
    }

    pub(super) fn update(&mut self, bytes: &[u8]) {
        let mut c = self.value;
        for &b in bytes {
            c = self.table[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
        }
        self.value = c;
    }

    pub(super) fn finish(&self) -> u32 {
        self.value ^ 0xffff_ffff
    }
}

/// `zipfile.ZIP64_LIMIT`: Python switches to zip64 fields above this.
pub(super) const ZIP64_LIMIT: u64 = (1 << 31) - 1;
/// DOS date 1980-01-01, time 00:00 (Python's default `ZipInfo.date_time`).
pub(super) const DOS_DATE: u16 = 0x0021;
/// `external_attr` of `ZipFile.open(name, "w")`: `0o600 << 16`.
pub(super) const EXTERNAL_ATTR: u32 = 0o600 << 16;

pub(super) struct Entry {
    pub(super) name: &'static str,
    pub(super) offset: u64,
    pub(super) size: u64,
    pub(super) crc: u32,
    /// Written with a zip64 local header (version 45).
    pub(super) zip64: bool,
}

pub(super) fn local_header(name: &str, crc: u32, size: u64, zip64: bool) -> Vec<u8> {
    let mut h = Vec::with_capacity(30 + name.len() + 20);
    h.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
    h.extend_from_slice(&(if zip64 { 45u16 } else { 20 }).to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes()); // flags
    h.extend_from_slice(&0u16.to_le_bytes()); // stored
    h.extend_from_slice(&0u16.to_le_bytes()); // time
    h.extend_from_slice(&DOS_DATE.to_le_bytes());
    h.extend_from_slice(&crc.to_le_bytes());
    let small = if zip64 { 0xffff_ffff } else { size as u32 };
    h.extend_from_slice(&small.to_le_bytes());
    h.extend_from_slice(&small.to_le_bytes());
    h.extend_from_slice(&(name.len() as u16).to_le_bytes());
    h.extend_from_slice(&(if zip64 { 20u16 } else { 0 }).to_le_bytes());
    h.extend_from_slice(name.as_bytes());
    if zip64 {
        h.extend_from_slice(&1u16.to_le_bytes());
        h.extend_from_slice(&16u16.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
    }
    h
}

pub(super) fn central_directory(entries: &[Entry], limit: u64) -> Vec<u8> {
    let mut cd = Vec::new();
    for e in entries {
        let mut extra: Vec<u64> = Vec::new();
        let mut size = e.size as u32;
        let mut offset = e.offset as u32;
        if e.size > limit {
            extra.extend([e.size, e.size]);
            size = 0xffff_ffff;
        }
        if e.offset > limit {
            extra.push(e.offset);
            offset = 0xffff_ffff;
        }
        let version: u16 = if e.zip64 || !extra.is_empty() { 45 } else { 20 };
        cd.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        cd.extend_from_slice(&(version | (3 << 8)).to_le_bytes()); // made by: Unix
        cd.extend_from_slice(&version.to_le_bytes());
        cd.extend_from_slice(&0u16.to_le_bytes());
        cd.extend_from_slice(&0u16.to_le_bytes());
        cd.extend_from_slice(&0u16.to_le_bytes());
        cd.extend_from_slice(&DOS_DATE.to_le_bytes());
        cd.extend_from_slice(&e.crc.to_le_bytes());
        cd.extend_from_slice(&size.to_le_bytes());
        cd.extend_from_slice(&size.to_le_bytes());
        cd.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        let extra_len = if extra.is_empty() {
            0
        } else {
            4 + 8 * extra.len()
        };
        cd.extend_from_slice(&(extra_len as u16).to_le_bytes());
        cd.extend_from_slice(&0u16.to_le_bytes()); // comment
        cd.extend_from_slice(&0u16.to_le_bytes()); // disk
        cd.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        cd.extend_from_slice(&EXTERNAL_ATTR.to_le_bytes());
        cd.extend_from_slice(&offset.to_le_bytes());
        cd.extend_from_slice(e.name.as_bytes());
        if !extra.is_empty() {
            cd.extend_from_slice(&1u16.to_le_bytes());
            cd.extend_from_slice(&((8 * extra.len()) as u16).to_le_bytes());
            for x in extra {
                cd.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    cd
}

pub(super) fn end_records(count: u64, cd_size: u64, cd_offset: u64, limit: u64) -> Vec<u8> {
    let mut end = Vec::new();
    if cd_offset > limit || cd_size > limit {
        let pos = cd_offset + cd_size;
        end.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
        end.extend_from_slice(&44u64.to_le_bytes());
        end.extend_from_slice(&45u16.to_le_bytes());
        end.extend_from_slice(&45u16.to_le_bytes());
        end.extend_from_slice(&0u32.to_le_bytes());
        end.extend_from_slice(&0u32.to_le_bytes());
        end.extend_from_slice(&count.to_le_bytes());
        end.extend_from_slice(&count.to_le_bytes());
        end.extend_from_slice(&cd_size.to_le_bytes());
        end.extend_from_slice(&cd_offset.to_le_bytes());
        end.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
        end.extend_from_slice(&0u32.to_le_bytes());
        end.extend_from_slice(&pos.to_le_bytes());
        end.extend_from_slice(&1u32.to_le_bytes());
    }
    end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    end.extend_from_slice(&(count.min(0xffff) as u16).to_le_bytes());
    end.extend_from_slice(&(count.min(0xffff) as u16).to_le_bytes());
    end.extend_from_slice(&(cd_size.min(0xffff_ffff) as u32).to_le_bytes());
    end.extend_from_slice(&(cd_offset.min(0xffff_ffff) as u32).to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    end
}
