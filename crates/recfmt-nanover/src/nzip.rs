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

/// Reads a `.nanover.zip` into events, in index order. Messages that do not decode are skipped
/// and reported in the returned integrity; an index entry pointing past the messages ends
/// the events (reported as a truncation).
pub fn read_nanover_zip<R: Read + Seek>(
    source: R,
    limits: &Limits,
) -> Result<(Vec<Event>, Integrity)> {
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
