//! The zip container of a `.nanover.zip`: its two members found through the central
//! directory, or, when that is cut off, by walking the local headers.

use std::io::{Read, Seek};

use crate::error::{Error, Result};
use crate::packed::{INDEX, MESSAGES};

/// The names in a zip's central directory, read from its end-of-central-directory record
/// (zip64 too). Used to refuse archives that name a member twice: readers disagree on which
/// copy wins, so such a file has no single meaning.
pub(super) fn central_directory_names<R: Read + Seek>(
    source: &mut R,
) -> std::io::Result<Vec<(Vec<u8>, u64)>> {
    use std::io::SeekFrom;
    let invalid =
        |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let len = source.seek(SeekFrom::End(0))?;
    // The EOCD record is 22 bytes plus a comment of at most 65,535 bytes.
    let tail_len = len.min(22 + 65_535);
    source.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = vec![0u8; tail_len as usize];
    source.read_exact(&mut tail)?;
    let eocd = tail
        .windows(4)
        .rposition(|w| w == b"PK\x05\x06")
        .filter(|&i| i + 22 <= tail.len())
        .ok_or_else(|| invalid("no end-of-central-directory record"))?;
    let u16_at = |b: &[u8], i: usize| u64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let u32_at =
        |b: &[u8], i: usize| u64::from(u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]));
    let u64_at = |b: &[u8], i: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(x)
    };
    let mut entries = u16_at(&tail, eocd + 10);
    let mut cd_size = u32_at(&tail, eocd + 12);
    let mut cd_offset = u32_at(&tail, eocd + 16);
    if entries == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF {
        // Zip64: the locator just before the EOCD points at the zip64 EOCD record.
        let locator = eocd
            .checked_sub(20)
            .filter(|&i| &tail[i..i + 4] == b"PK\x06\x07")
            .ok_or_else(|| invalid("no zip64 end-of-central-directory locator"))?;
        source.seek(SeekFrom::Start(u64_at(&tail, locator + 8)))?;
        let mut record = [0u8; 56];
        source.read_exact(&mut record)?;
        if &record[..4] != b"PK\x06\x06" {
            return Err(invalid("no zip64 end-of-central-directory record"));
        }
        entries = u64_at(&record, 32);
        cd_size = u64_at(&record, 40);
        cd_offset = u64_at(&record, 48);
    }
    if cd_offset.checked_add(cd_size).is_none_or(|end| end > len) {
        return Err(invalid("a central directory past the end of the file"));
    }
    source.seek(SeekFrom::Start(cd_offset))?;
    let mut cd = Vec::new();
    source.by_ref().take(cd_size).read_to_end(&mut cd)?;
    let mut names = Vec::new();
    let mut at = 0usize;
    // Every entry takes at least 46 bytes, so the count is bounded by the directory's size.
    for _ in 0..entries.min(cd_size / 46) {
        let Some(fixed) = cd.get(at..at + 46).filter(|f| f.starts_with(b"PK\x01\x02")) else {
            return Err(invalid("a central directory entry"));
        };
        let (name_len, extra_len, comment_len) = (
            u16_at(fixed, 28) as usize,
            u16_at(fixed, 30) as usize,
            u16_at(fixed, 32) as usize,
        );
        let name = cd
            .get(at + 46..at + 46 + name_len)
            .ok_or_else(|| invalid("a central directory entry name"))?;
        names.push((name.to_vec(), cd_offset + at as u64));
        at += 46 + name_len + extra_len + comment_len;
    }
    source.seek(SeekFrom::Start(0))?;
    Ok(names)
}

pub(super) fn malformed(offset: u64, expected: String) -> Error {
    Error::Core(recfmt_core::Error::malformed(
        crate::FORMAT_ID,
        offset,
        expected,
    ))
}

fn u16_le(b: &[u8], i: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[i], b[i + 1]]))
}

fn u32_le(b: &[u8], i: usize) -> u64 {
    u64::from(u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]))
}

fn u64_le(b: &[u8], i: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(x)
}

/// Reads `n` bytes at `at` (the caller has checked that they lie inside the file); fewer
/// when the file ends first.
pub(super) fn read_at<R: Read + Seek>(source: &mut R, at: u64, n: u64) -> std::io::Result<Vec<u8>> {
    source.seek(std::io::SeekFrom::Start(at))?;
    let mut out = Vec::new();
    source.by_ref().take(n).read_to_end(&mut out)?;
    Ok(out)
}

/// Where a member's stored bytes lie in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Member {
    /// Offset of its first data byte in the file.
    pub(super) data_start: u64,
    /// Its size as the zip declares it, when known.
    pub(super) declared: Option<u64>,
    /// Bytes of it present in the file.
    pub(super) available: u64,
}

impl Member {
    pub(super) fn complete(&self) -> bool {
        self.declared == Some(self.available)
    }
}

/// The two members, located through the central directory; `None` when the zip has no
/// readable central directory (a truncated file).
pub(super) fn members_from_directory<R: Read + Seek>(
    source: &mut R,
    len: u64,
) -> Result<Option<[Option<Member>; 2]>> {
    let Ok(mut zip) = zip::ZipArchive::new(&mut *source) else {
        return Ok(None);
    };
    let mut found = [None, None];
    for (slot, name) in found.iter_mut().zip([INDEX, MESSAGES]) {
        let Some(i) = zip.index_for_name(name) else {
            continue;
        };
        let entry = zip
            .by_index_raw(i)
            .map_err(|e| malformed(0, format!("a readable {name} member in the zip: {e}")))?;
        if entry.compression() != zip::CompressionMethod::Stored {
            return Err(malformed(
                entry.header_start(),
                format!(
                    "{name} stored uncompressed (as NanoVer writes it), found {}",
                    entry.compression()
                ),
            ));
        }
        let data_start = entry.data_start();
        let size = entry.compressed_size();
        *slot = Some(Member {
            data_start,
            declared: Some(size),
            available: size.min(len.saturating_sub(data_start)),
        });
    }
    Ok(Some(found))
}

/// The stored size from a local header's zip64 extra field (id 1): the original size comes
/// first when its 32-bit field is saturated, then the compressed size.
fn zip64_size(extra: &[u8], original_saturated: bool, compressed_saturated: bool) -> Option<u64> {
    let mut at = 0usize;
    while at + 4 <= extra.len() {
        let id = u16_le(extra, at);
        let size = u16_le(extra, at + 2) as usize;
        let body = extra.get(at + 4..at + 4 + size)?;
        if id == 1 {
            let original = original_saturated
                .then(|| body.get(..8).map(|b| u64_le(b, 0)))
                .flatten();
            let skip = if original_saturated { 8 } else { 0 };
            let compressed = compressed_saturated
                .then(|| body.get(skip..skip + 8).map(|b| u64_le(b, 0)))
                .flatten();
            return compressed.or(original);
        }
        at += 4 + size;
    }
    None
}

/// The size of a stored member whose local header defers it to a data descriptor: the
/// first `PK\7\8` signature after the data whose size field equals the bytes before it.
/// `None` when the file ends first.
fn find_descriptor<R: Read + Seek>(
    source: &mut R,
    data_start: u64,
    len: u64,
    zip64: bool,
) -> std::io::Result<Option<(u64, u64)>> {
    const CHUNK: u64 = 1 << 16;
    let descriptor_len: u64 = if zip64 { 24 } else { 16 };
    let mut at = data_start;
    while at < len {
        // Overlapping windows so that a descriptor across a boundary is seen whole.
        let window = read_at(source, at, CHUNK + descriptor_len)?;
        for i in 0..window.len().min(CHUNK as usize) {
            if !window[i..].starts_with(b"PK\x07\x08") {
                continue;
            }
            let Some(d) = window.get(i..i + descriptor_len as usize) else {
                continue;
            };
            let size = if zip64 { u64_le(d, 8) } else { u32_le(d, 8) };
            let here = at + i as u64;
            if size == here - data_start {
                return Ok(Some((size, descriptor_len)));
            }
        }
        at += CHUNK;
    }
    Ok(None)
}

/// Where a walk of local headers stopped early, and what it expected there.
type StoppedAt = (u64, String);

/// A member found by walking local headers, and where its header starts.
pub(super) struct Walked {
    pub(super) name: Vec<u8>,
    pub(super) header: u64,
    pub(super) method: u64,
    pub(super) member: Member,
}

/// The members of a zip without a readable central directory, found by walking its local
/// file headers from the start, and where and why the walk stopped before the end (a cut
/// header or member, or bytes that are not a header). Every length is checked against the
/// file before it sizes a read.
pub(super) fn walk_local_headers<R: Read + Seek>(
    source: &mut R,
    len: u64,
) -> std::io::Result<(Vec<Walked>, Option<StoppedAt>)> {
    let mut members = Vec::new();
    let mut at = 0u64;
    let stopped = loop {
        if at >= len {
            break None;
        }
        if len - at < 30 {
            break Some((
                at,
                format!("a 30-byte local file header, found {} bytes", len - at),
            ));
        }
        let fixed = read_at(source, at, 30)?;
        if !fixed.starts_with(b"PK\x03\x04") {
            // The central directory (or a zip64 end record) ends the members.
            if fixed.starts_with(b"PK\x01\x02") || fixed.starts_with(b"PK\x06\x06") {
                break None;
            }
            break Some((at, "a local file header (PK\\3\\4)".to_string()));
        }
        let flags = u16_le(&fixed, 6);
        let method = u16_le(&fixed, 8);
        let (compressed, original) = (u32_le(&fixed, 18), u32_le(&fixed, 22));
        let (name_len, extra_len) = (u16_le(&fixed, 26), u16_le(&fixed, 28));
        let data_start = at + 30 + name_len + extra_len;
        if data_start > len {
            break Some((
                at,
                format!(
                    "a local file header with a {name_len}-byte name and a {extra_len}-byte extra field"
                ),
            ));
        }
        // At most 2 x 65,535 bytes, both inside the file (checked above).
        let var = read_at(source, at + 30, name_len + extra_len)?;
        let (name, extra) = var.split_at(name_len as usize);
        let zip64 = compressed == u64::from(u32::MAX) || original == u64::from(u32::MAX);
        let mut size = if zip64 {
            zip64_size(
                extra,
                original == u64::from(u32::MAX),
                compressed == u64::from(u32::MAX),
            )
        } else {
            Some(compressed)
        };
        let has_descriptor = flags & 8 != 0;
        let mut descriptor_len = 0;
        if has_descriptor && size.is_none_or(|s| s == 0) {
            size = None;
            if method == 0
                && let Some((s, d)) = find_descriptor(source, data_start, len, zip64)?
            {
                size = Some(s);
                descriptor_len = d;
            }
        } else if has_descriptor {
            let sig = read_at(source, data_start.saturating_add(size.unwrap_or(0)), 4)?;
            descriptor_len = if sig == b"PK\x07\x08" { 4 } else { 0 } + if zip64 { 20 } else { 12 };
        }
        let room = len - data_start;
        let member = Member {
            data_start,
            declared: size,
            available: size.map_or(room, |s| s.min(room)),
        };
        members.push(Walked {
            name: name.to_vec(),
            header: at,
            method,
            member,
        });
        match size {
            Some(s) if s <= room => at = data_start + s + descriptor_len,
            Some(s) => {
                break Some((
                    len,
                    format!(
                        "{s} bytes of {} from byte {data_start}, found {room}",
                        String::from_utf8_lossy(name)
                    ),
                ));
            }
            None => {
                break Some((
                    data_start,
                    format!(
                        "the size of {} (in its local header or a data descriptor)",
                        String::from_utf8_lossy(name)
                    ),
                ));
            }
        }
    };
    Ok((members, stopped))
}
