//! `.nanover.zip`: NanoVer's recording format since October 2025 (read only).
//!
//! The zip (entries stored uncompressed) holds `index.msgpack`, an array of
//! `{offset, length, metadata: {types, timestamp, frame.index?}}`, and `messages.msgpack`, the
//! concatenated messages `{frame?: {key: value}, state?: {updates: {...}, removals: [...]}}`.
//! Numeric arrays are raw little-endian bytes whose type depends on the key (positions,
//! velocities, forces, box vectors and sparse user forces `f32`; residues, bond pairs,
//! residue chains and user force indices `u32`; elements and bond orders `u8`).
//!
//! Messages are mapped onto this crate's protobuf model so everything else works unchanged:
//! a frame becomes a [`GetFrameResponse`] (index from `frame.index`; a frame without one gets
//! the previous index + 1, never 0, since only an explicit 0 resets), `f32` arrays become
//! float arrays, `u32`/`u8` arrays index arrays (bond orders float arrays, as in `.traj`),
//! lists of strings string arrays, lists of numbers float arrays, and other values `Value`s;
//! a state message becomes a [`StateUpdate`] with removals as `null_value`. Timestamps are the
//! index's, in microseconds.

use std::io::{Read, Seek};

use recfmt_core::{Integrity, Limits};

use crate::error::{Error, Result};
use crate::msgpack::{Decoder, Mp};
use crate::proto::{
    FrameData, GetFrameResponse, Kind, ListValue, StateUpdate, Struct, Value, ValueArray, null,
};
use crate::timeline::Event;

/// How a key's byte array is typed in `.nanover.zip`.
fn packed_type(key: &str) -> Option<(&'static str, bool)> {
    // (element type, becomes a float array)
    Some(match key {
        "particle.positions"
        | "particle.velocities"
        | "particle.forces"
        | "particle.forces.system"
        | "system.box.vectors"
        | "forces.user.sparse" => ("f32", true),
        "particle.residues" | "bond.pairs" | "residue.chains" | "forces.user.index" => {
            ("u32", false)
        }
        "particle.elements" => ("u8", false),
        "bond.orders" => ("u8", true),
        _ => return None,
    })
}

fn unpack(key: &str, bytes: &[u8]) -> Option<ValueArray> {
    let (ty, float) = packed_type(key)?;
    match ty {
        "f32" if bytes.len().is_multiple_of(4) => Some(ValueArray::floats(
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )),
        "u32" if bytes.len().is_multiple_of(4) => Some(ValueArray::indices(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )),
        "u8" if float => Some(ValueArray::floats(
            bytes.iter().map(|&b| f32::from(b)).collect(),
        )),
        "u8" => Some(ValueArray::indices(
            bytes.iter().map(|&b| u32::from(b)).collect(),
        )),
        _ => None,
    }
}

fn to_value(m: &Mp) -> Value {
    let kind = match m {
        Mp::Nil | Mp::Ext => return null(),
        Mp::Bool(b) => Kind::BoolValue(*b),
        Mp::Int(_) | Mp::UInt(_) | Mp::Float(_) => Kind::NumberValue(m.as_f64().unwrap_or(0.0)),
        Mp::Str(s) => Kind::StringValue(s.clone()),
        Mp::Bin(b) => Kind::ListValue(ListValue {
            values: b
                .iter()
                .map(|&x| Value {
                    kind: Some(Kind::NumberValue(f64::from(x))),
                })
                .collect(),
        }),
        Mp::Array(items) => Kind::ListValue(ListValue {
            values: items.iter().map(to_value).collect(),
        }),
        Mp::Map(pairs) => Kind::StructValue(Struct {
            fields: pairs
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), to_value(v))))
                .collect(),
        }),
    };
    Value { kind: Some(kind) }
}

fn to_frame(m: &Mp, last_index: &mut u32, integrity: &mut Integrity) -> GetFrameResponse {
    let mut frame = FrameData::default();
    let mut index = None;
    if let Mp::Map(pairs) = m {
        for (k, v) in pairs {
            let Some(key) = k.as_str() else { continue };
            if key == "frame.index" {
                index = v.as_u64().map(|i| u32::try_from(i).unwrap_or(u32::MAX));
                continue;
            }
            match v {
                Mp::Bin(bytes) => match unpack(key, bytes) {
                    Some(a) => {
                        frame.arrays.insert(key.to_string(), a);
                    }
                    None => integrity.warn(format!(
                        "{key}: {} bytes of an unknown or misaligned packed array, skipped",
                        bytes.len()
                    )),
                },
                Mp::Array(items)
                    if items.iter().all(|i| i.as_str().is_some()) && !items.is_empty() =>
                {
                    let strings = items
                        .iter()
                        .filter_map(|i| i.as_str().map(str::to_string))
                        .collect();
                    frame
                        .arrays
                        .insert(key.to_string(), ValueArray::strings(strings));
                }
                Mp::Array(items) if items.iter().all(|i| i.as_f64().is_some()) => {
                    let floats = items
                        .iter()
                        .filter_map(Mp::as_f64)
                        .map(|f| f as f32)
                        .collect();
                    frame
                        .arrays
                        .insert(key.to_string(), ValueArray::floats(floats));
                }
                other => {
                    frame.values.insert(key.to_string(), to_value(other));
                }
            }
        }
    }
    let frame_index = index.unwrap_or_else(|| last_index.wrapping_add(1).max(1));
    *last_index = frame_index;
    GetFrameResponse::new(frame_index, frame)
}

fn to_state(m: &Mp) -> StateUpdate {
    let mut fields = std::collections::BTreeMap::new();
    if let Some(Mp::Map(updates)) = m.get("updates") {
        for (k, v) in updates {
            if let Some(k) = k.as_str() {
                fields.insert(k.to_string(), to_value(v));
            }
        }
    }
    if let Some(Mp::Array(removals)) = m.get("removals") {
        for k in removals {
            if let Some(k) = k.as_str() {
                fields.insert(k.to_string(), null());
            }
        }
    }
    StateUpdate {
        changed_keys: Some(Struct { fields }),
    }
}

fn read_entry<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    limit: Option<u64>,
) -> Result<Vec<u8>> {
    let mut entry = zip.by_name(name).map_err(|e| {
        Error::Core(recfmt_core::Error::malformed(
            crate::FORMAT_ID,
            0,
            format!("an entry {name} in the zip: {e}"),
        ))
    })?;
    if let Some(limit) = limit {
        Limits::check("nanover.zip entry size", entry.size(), limit, 0)?;
    }
    // No reservation from the declared size: the buffer grows with the bytes really read.
    let mut out = Vec::new();
    entry.read_to_end(&mut out)?;
    Ok(out)
}

/// The names in a zip's central directory, read from its end-of-central-directory record
/// (zip64 too). Used to refuse archives that name a member twice: readers disagree on which
/// copy wins, so such a file has no single meaning.
fn central_directory_names<R: Read + Seek>(source: &mut R) -> std::io::Result<Vec<Vec<u8>>> {
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
        names.push(name.to_vec());
        at += 46 + name_len + extra_len + comment_len;
    }
    source.seek(SeekFrom::Start(0))?;
    Ok(names)
}

/// Reads a `.nanover.zip` into events, in index order. Messages that do not decode are skipped
/// and reported in the returned integrity; an index entry pointing past the messages ends
/// the events (reported as a truncation).
pub fn read_nanover_zip<R: Read + Seek>(
    source: R,
    limits: &Limits,
) -> Result<(Vec<Event>, Integrity)> {
    let mut source = source;
    if let Ok(names) = central_directory_names(&mut source) {
        for member in ["index.msgpack", "messages.msgpack"] {
            let copies = names
                .iter()
                .filter(|n| n.as_slice() == member.as_bytes())
                .count();
            if copies > 1 {
                return Err(Error::Core(recfmt_core::Error::malformed(
                    crate::FORMAT_ID,
                    0,
                    format!("one {member} member in the zip, found {copies}"),
                )));
            }
        }
    }
    let mut zip = zip::ZipArchive::new(source).map_err(|e| {
        Error::Core(recfmt_core::Error::malformed(
            crate::FORMAT_ID,
            0,
            format!("a zip archive: {e}"),
        ))
    })?;
    let index = read_entry(&mut zip, "index.msgpack", Some(limits.max_side_file_len))?;
    let messages = read_entry(&mut zip, "messages.msgpack", None)?;
    let index = Decoder::new(&index).value().map_err(|e| {
        Error::Core(recfmt_core::Error::malformed(
            crate::FORMAT_ID,
            0,
            format!("index.msgpack to be a MessagePack array: {e}"),
        ))
    })?;
    let Mp::Array(entries) = index else {
        return Err(Error::Core(recfmt_core::Error::malformed(
            crate::FORMAT_ID,
            0,
            "index.msgpack to be an array",
        )));
    };
    let mut integrity = Integrity::default();
    let mut events = Vec::with_capacity(entries.len());
    let mut last_index = 0u32;
    let mut last_ts = 0u128;
    for (i, entry) in entries.iter().enumerate() {
        let offset = entry.get("offset").and_then(Mp::as_u64);
        let length = entry.get("length").and_then(Mp::as_u64);
        let (Some(offset), Some(length)) = (offset, length) else {
            integrity.skip_corrupt(0, 0, &format!("index entry {i} has no offset or length"));
            continue;
        };
        let end = offset
            .checked_add(length)
            .filter(|&e| e <= messages.len() as u64);
        let Some(end) = end else {
            integrity.truncate(offset, (messages.len() as u64).saturating_sub(offset));
            integrity.warn(format!(
                "index entry {i} points past the end of messages.msgpack; later entries dropped"
            ));
            break;
        };
        let bytes = &messages[offset as usize..end as usize];
        let message = match Decoder::new(bytes).value() {
            Ok(m) => m,
            Err(e) => {
                integrity.skip_corrupt(offset, length, &format!("message {i}: {e}"));
                continue;
            }
        };
        let timestamp = entry
            .get("metadata")
            .and_then(|m| m.get("timestamp"))
            .and_then(Mp::as_u64)
            .map_or(last_ts, u128::from);
        last_ts = timestamp;
        events.push(Event {
            timestamp,
            frame: message
                .get("frame")
                .map(|f| to_frame(f, &mut last_index, &mut integrity)),
            state: message.get("state").map(to_state),
        });
    }
    Ok((events, integrity))
}
