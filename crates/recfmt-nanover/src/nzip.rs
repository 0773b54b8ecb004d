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

use crate::error::Result;
use crate::msgpack::{Decoder, Mp};
use crate::packed::{INDEX, MESSAGES, Packed};
use crate::proto::{
    FrameData, GetFrameResponse, Kind, ListValue, StateUpdate, Struct, Value, ValueArray, null,
};
use crate::timeline::Event;

mod container;
mod skim;

pub(crate) use self::skim::FrameShape;

use self::container::{
    Member, central_directory_names, malformed, members_from_directory, read_at, walk_local_headers,
};

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

/// The value of `frame.index` as an index (saturated), `None` when it is not a count.
fn frame_index_of(v: &Mp) -> Option<u32> {
    v.as_u64().map(|i| u32::try_from(i).unwrap_or(u32::MAX))
}

fn to_frame(m: &Mp, last_index: &mut u32, integrity: &mut Integrity) -> GetFrameResponse {
    let mut frame = FrameData::default();
    let mut index = None;
    if let Mp::Map(pairs) = m {
        for (k, v) in pairs {
            let Some(key) = k.as_str() else { continue };
            if key == "frame.index" {
                index = frame_index_of(v);
                continue;
            }
            match v {
                Mp::Bin(bytes) => match Packed::unpack(key, bytes) {
                    Some(a) => {
                        frame.arrays.insert(key.to_string(), a);
                    }
                    None => integrity.warn(unpackable(key, bytes.len() as u64)),
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
    GetFrameResponse::new(number_frame(index, last_index), frame)
}

/// A frame's index: its `frame.index`, or for a frame without one the previous index + 1,
/// never 0 (only an explicit 0 resets).
fn number_frame(index: Option<u32>, last_index: &mut u32) -> u32 {
    let frame_index = index.unwrap_or_else(|| last_index.wrapping_add(1).max(1));
    *last_index = frame_index;
    frame_index
}

/// The warning for a byte string under a key that is not packed, or not whole elements.
fn unpackable(key: &str, bytes: u64) -> String {
    format!("{key}: {bytes} bytes of an unknown or misaligned packed array, skipped")
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

/// One index entry: where its message lies in `messages.msgpack` and when it was recorded.
/// This is all the reader keeps per entry; messages are decoded when they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexEntry {
    offset: u64,
    length: u64,
    timestamp: Option<u64>,
}

/// Parses `index.msgpack` (at file offset `at`) entry by entry. A complete member that is
/// not an array of entries is an error; a cut one gives the entries before the cut.
fn parse_index(
    bytes: &[u8],
    at: u64,
    complete: bool,
    integrity: &mut Integrity,
) -> Result<Vec<IndexEntry>> {
    let mut decoder = Decoder::new(bytes);
    let count = match decoder.array_len() {
        Ok(n) => n,
        Err(e) if complete => {
            return Err(malformed(
                at,
                format!("index.msgpack to be a MessagePack array: {e}"),
            ));
        }
        Err(_) => {
            integrity.warn(format!(
                "index.msgpack is cut before its first entry (byte {at})"
            ));
            return Ok(Vec::new());
        }
    };
    // An entry takes at least 16 bytes ({offset, length} with their keys): the count
    // reserves no more than the bytes can hold.
    let mut entries = Vec::with_capacity(count.min(bytes.len() / 16));
    for i in 0..count {
        let start = decoder.position();
        let entry = match decoder.value() {
            Ok(e) => e,
            Err(e) if complete => {
                return Err(malformed(
                    at + start as u64,
                    format!("index.msgpack entry {i} to be a MessagePack map: {e}"),
                ));
            }
            Err(_) => {
                integrity.warn(format!(
                    "index.msgpack is cut inside entry {i} (byte {}); {} of its {count} entries read",
                    at + start as u64,
                    entries.len()
                ));
                break;
            }
        };
        let offset = entry.get("offset").and_then(Mp::as_u64);
        let length = entry.get("length").and_then(Mp::as_u64);
        let (Some(offset), Some(length)) = (offset, length) else {
            integrity.skip_corrupt(
                at + start as u64,
                0,
                &format!("index entry {i} has no offset or length"),
            );
            continue;
        };
        let timestamp = entry
            .get("metadata")
            .and_then(|m| m.get("timestamp"))
            .and_then(Mp::as_u64);
        entries.push(IndexEntry {
            offset,
            length,
            timestamp,
        });
    }
    Ok(entries)
}

/// The messages of a `messages.msgpack` whose index is lost (from byte `from` of the
/// member), found by decoding them one after another (MessagePack values delimit
/// themselves). Reads windows of the member, so
/// memory is bounded by the largest message, not the member. Returns the entries and the
/// bytes they cover; what follows did not decode.
fn scan_messages<R: Read + Seek>(
    source: &mut R,
    messages: Member,
    from: u64,
) -> std::io::Result<(Vec<IndexEntry>, u64)> {
    const WINDOW: u64 = 1 << 16;
    let mut entries = Vec::new();
    let mut at = from;
    let mut window = WINDOW;
    while at < messages.available {
        let want = (messages.available - at).min(window);
        let buf = read_at(source, messages.data_start + at, want)?;
        let mut decoder = Decoder::new(&buf);
        let mut good = 0usize;
        // Only a map with a frame or a state is a message (not the bytes of a data
        // descriptor or a cut header after the data).
        let is_message = |m: &Mp| m.get("frame").is_some() || m.get("state").is_some();
        while good < buf.len() && decoder.value().is_ok_and(|m| is_message(&m)) {
            let end = decoder.position();
            entries.push(IndexEntry {
                offset: at + good as u64,
                length: (end - good) as u64,
                timestamp: None,
            });
            good = end;
        }
        if good == 0 {
            if want == messages.available - at {
                break;
            }
            // A message larger than the window: try again with a larger one.
            window = window.saturating_mul(2);
            continue;
        }
        at += good as u64;
        window = WINDOW;
    }
    Ok((entries, at))
}

/// Events of a `.nanover.zip`, decoded one message at a time as they are read.
///
/// Opening reads the index into a small record per entry (offset, length, timestamp) and
/// keeps the file; each message is read and decoded when its event is asked for and dropped
/// after, so memory does not grow with index entries (many entries pointing at one large
/// message cost 24 bytes each). [`ZipEvents::rewind`] starts again (for a second pass).
///
/// A zip cut short (no central directory) is read from its local file headers: every
/// complete message is kept and the loss is reported in [`ZipEvents::integrity`]. When
/// `index.msgpack` is lost with the end of the file, the messages are found by decoding
/// `messages.msgpack` in order; their times are unknown: [`ZipEvents::time_known`] is false
/// for them, and their [`Event::timestamp`] is the last time known (0 before the first),
/// which is what a `.traj` or HDF5 copy, whose records need a time, writes.
#[derive(Debug)]
pub struct ZipEvents<R> {
    source: R,
    messages_start: u64,
    entries: Vec<IndexEntry>,
    next: usize,
    opened: Integrity,
    integrity: Integrity,
    last_index: u32,
    last_ts: u128,
    last_time_known: bool,
    buf: Vec<u8>,
    /// Events end before the first entry whose index time is this late ([`ZipEvents::set_stop`]).
    stop: Option<u128>,
    /// What the open pass ([`ZipEvents::next_shape`]) read ahead of the next message.
    ahead: crate::skim::ReadAhead,
}

impl<R: Read + Seek> ZipEvents<R> {
    /// Reads the bytes of `entry` into the buffer: false when the file holds fewer (it got
    /// shorter since it was opened).
    fn read_entry(&mut self, entry: IndexEntry) -> std::io::Result<bool> {
        self.ahead.forget();
        self.source
            .seek(std::io::SeekFrom::Start(self.messages_start + entry.offset))?;
        self.buf.clear();
        self.source
            .by_ref()
            .take(entry.length)
            .read_to_end(&mut self.buf)?;
        Ok(self.buf.len() as u64 == entry.length)
    }

    /// Opens a `.nanover.zip`: refuses a zip that names a member twice or stores one
    /// compressed, reads the index (at most [`Limits::max_side_file_len`] bytes), and checks
    /// every entry against the messages present.
    pub fn open(mut source: R, limits: &Limits) -> Result<Self> {
        use std::io::SeekFrom;
        if let Ok(names) = central_directory_names(&mut source) {
            refuse_duplicates(names.iter().map(|(name, at)| (name.as_slice(), *at)))?;
        }
        let len = source.seek(SeekFrom::End(0))?;
        let mut integrity = Integrity::default();
        let (index, messages, walked) = match members_from_directory(&mut source, len)? {
            Some([index, messages]) => (index, messages, false),
            None => {
                let (members, stopped) = walk_local_headers(&mut source, len)?;
                refuse_duplicates(members.iter().map(|m| (m.name.as_slice(), m.header)))?;
                if members.is_empty() {
                    return Err(malformed(
                        stopped.as_ref().map_or(0, |s| s.0),
                        format!(
                            "a zip archive: no central directory, and no member at the start ({})",
                            stopped.map_or_else(|| "empty file".to_string(), |s| s.1)
                        ),
                    ));
                }
                if let Some(m) = members.iter().find(|m| {
                    m.method != 0 && (m.name == INDEX.as_bytes() || m.name == MESSAGES.as_bytes())
                }) {
                    return Err(malformed(
                        m.header,
                        format!(
                            "{} stored uncompressed (as NanoVer writes it), found compression method {}",
                            String::from_utf8_lossy(&m.name),
                            m.method
                        ),
                    ));
                }
                let find = |name: &str| {
                    members
                        .iter()
                        .find(|m| m.name == name.as_bytes())
                        .map(|m| m.member)
                };
                let (index, messages) = (find(INDEX), find(MESSAGES));
                let names: Vec<String> = members
                    .iter()
                    .map(|m| format!("{} at byte {}", String::from_utf8_lossy(&m.name), m.header))
                    .collect();
                integrity.warn(format!(
                    "no central directory (the zip is cut short); members read from their local headers: {}",
                    names.join(", ")
                ));
                match stopped {
                    Some((at, expected)) => {
                        integrity.truncate(at, len.saturating_sub(at));
                        integrity.warn(format!("at byte {at}: expected {expected}"));
                    }
                    None => integrity.truncate(len, 0),
                }
                (index, messages, true)
            }
        };
        let Some(messages) = messages else {
            if !walked {
                return Err(malformed(0, "a messages.msgpack member in the zip".into()));
            }
            integrity.truncate(len, 0);
            integrity.warn("messages.msgpack is not in the file: no message to read");
            return Ok(Self::new(source, 0, Vec::new(), integrity));
        };
        let mut entries = match index {
            Some(m) => {
                Limits::check(
                    "nanover.zip index.msgpack size",
                    m.available,
                    limits.max_side_file_len,
                    m.data_start,
                )?;
                let bytes = read_at(&mut source, m.data_start, m.available)?;
                let mut entries = parse_index(&bytes, m.data_start, m.complete(), &mut integrity)?;
                if walked && !m.complete() {
                    // The index is cut: the messages after the last one it names are found
                    // by decoding, and keep the last time known.
                    let from = entries
                        .iter()
                        .filter_map(|e| e.offset.checked_add(e.length))
                        .filter(|&end| end <= messages.available)
                        .max()
                        .unwrap_or(0);
                    let (more, _) = scan_messages(&mut source, messages, from)?;
                    if !more.is_empty() {
                        integrity.warn(format!(
                            "{} messages after the last one the cut index.msgpack names were found by decoding messages.msgpack; their times are unknown (null; a .traj or HDF5 copy keeps the last time known)",
                            more.len()
                        ));
                    }
                    entries.extend(more);
                }
                entries
            }
            None if walked => {
                let (entries, covered) = scan_messages(&mut source, messages, 0)?;
                integrity.warn(format!(
                    "index.msgpack is lost: {} complete messages read in order from messages.msgpack; their times are unknown (null; a .traj or HDF5 copy writes 0)",
                    entries.len()
                ));
                if covered < messages.available || !messages.complete() {
                    let at = messages.data_start + covered;
                    integrity.truncate(
                        at,
                        messages.declared.unwrap_or(messages.available) - covered,
                    );
                    integrity.warn(format!(
                        "at byte {at}: expected a complete message of messages.msgpack"
                    ));
                }
                entries
            }
            None => return Err(malformed(0, "an index.msgpack member in the zip".into())),
        };
        let past_end = entries.iter().position(|e| {
            e.offset
                .checked_add(e.length)
                .is_none_or(|end| end > messages.available)
        });
        if let Some(cut) = past_end {
            let offset = entries[cut].offset;
            let declared = messages.declared.unwrap_or(messages.available);
            integrity.truncate(
                messages.data_start + offset.min(messages.available),
                declared.saturating_sub(offset),
            );
            integrity.warn(format!(
                "index entry {cut} points past the end of messages.msgpack (offset {offset}, {} bytes present); later entries dropped",
                messages.available
            ));
            entries.truncate(cut);
        }
        entries.shrink_to_fit();
        Ok(Self::new(source, messages.data_start, entries, integrity))
    }

    fn new(source: R, messages_start: u64, entries: Vec<IndexEntry>, opened: Integrity) -> Self {
        ZipEvents {
            source,
            messages_start,
            entries,
            next: 0,
            integrity: opened.clone(),
            opened,
            last_index: 0,
            last_ts: 0,
            last_time_known: true,
            buf: Vec::new(),
            stop: None,
            ahead: crate::skim::ReadAhead::default(),
        }
    }

    /// Starts again from the first entry (what was lost is counted afresh).
    pub fn rewind(&mut self) {
        self.next = 0;
        self.integrity = self.opened.clone();
        self.last_index = 0;
        self.last_ts = 0;
        self.last_time_known = true;
    }

    /// Whether the last event's time is known: false for a message found by decoding
    /// `messages.msgpack` after its index was lost, whose [`Event::timestamp`] only repeats
    /// the last time known. The generic adapter reads such a time as null.
    pub fn time_known(&self) -> bool {
        self.last_time_known
    }

    /// Index entries (events) in all, read or not.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries not yet read.
    pub fn remaining(&self) -> usize {
        self.entries.len() - self.next
    }

    /// Bytes this reader keeps between events: its per-entry records and its message
    /// buffer (the largest message read so far), not counting the source.
    pub fn retained_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<IndexEntry>() + self.buf.capacity()
    }

    /// What opening and reading so far lost.
    pub fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    /// The next event, in index order; `None` after the last. A message that does not decode
    /// is skipped and reported.
    pub fn next_event(&mut self) -> Result<Option<Event>> {
        let read = |events: &mut Self, entry| {
            if !events.read_entry(entry)? {
                return Ok(EntryRead::Short);
            }
            Ok(match Decoder::new(&events.buf).value() {
                Ok(m) => EntryRead::Message(m),
                Err(e) => EntryRead::Corrupt(e),
            })
        };
        let Some((message, timestamp)) = self.next_message(read)? else {
            return Ok(None);
        };
        Ok(Some(Event {
            timestamp,
            frame: message
                .get("frame")
                .map(|f| to_frame(f, &mut self.last_index, &mut self.integrity)),
            state: message.get("state").map(to_state),
        }))
    }

    /// The next entry's message as `read` makes it, with its time; what a reading pass does
    /// with an entry, declared once: where a time window ends, the loss of a message that
    /// does not read or is cut, the time of a message without one.
    fn next_message<T>(
        &mut self,
        mut read: impl FnMut(&mut Self, IndexEntry) -> Result<EntryRead<T>>,
    ) -> Result<Option<(T, u128)>> {
        while let Some(&entry) = self.entries.get(self.next) {
            if let (Some(stop), Some(t)) = (self.stop, entry.timestamp)
                && u128::from(t) >= stop
            {
                // A time window's end: the entries are time-ordered, no later one is wanted.
                // `next` stays, so every later call ends here too and `remaining` tells
                // what was left unread.
                break;
            }
            let i = self.next;
            self.next += 1;
            let at = self.messages_start + entry.offset;
            let message = match read(self, entry)? {
                EntryRead::Message(m) => m,
                EntryRead::Corrupt(e) => {
                    self.integrity
                        .skip_corrupt(at, entry.length, &format!("message {i}: {e}"));
                    continue;
                }
                EntryRead::Short => {
                    // The file got shorter since it was opened.
                    self.integrity.truncate(at, entry.length);
                    self.integrity.warn(format!(
                        "at byte {at}: expected message {i} of {} bytes, the file ends",
                        entry.length
                    ));
                    self.next = self.entries.len();
                    break;
                }
            };
            let timestamp = entry.timestamp.map_or(self.last_ts, u128::from);
            self.last_ts = timestamp;
            self.last_time_known = entry.timestamp.is_some();
            return Ok(Some((message, timestamp)));
        }
        Ok(None)
    }
}

/// What reading one index entry gave.
enum EntryRead<T> {
    Message(T),
    /// The message does not decode: why.
    Corrupt(String),
    /// The file ends inside it.
    Short,
}

/// What time windows need: where the reading is, how to continue elsewhere, and one entry's
/// frame out of order (to rebuild an aggregated frame).
impl<R: Read + Seek> ZipEvents<R> {
    /// The entry the next event comes from (entries are numbered in index order).
    pub(crate) fn next_entry(&self) -> usize {
        self.next
    }

    /// Byte offset in the file just past the last message read (the start of the messages
    /// before the first); where the index is in file order, as NanoVer writes it, the bytes
    /// read so far.
    pub(crate) fn read_to(&self) -> u64 {
        self.next
            .checked_sub(1)
            .and_then(|i| self.entries.get(i))
            .map_or(self.messages_start, |e| {
                self.messages_start
                    .saturating_add(e.offset)
                    .saturating_add(e.length)
            })
    }

    /// Bytes from the start of the messages to the end of the furthest one.
    pub(crate) fn messages_extent(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| e.offset.saturating_add(e.length))
            .max()
            .unwrap_or(0)
    }

    /// The state later events depend on: the last frame index (a frame without one counts on
    /// from it), the last time and whether it was known.
    pub(crate) fn resume_state(&self) -> (u32, u128, bool) {
        (self.last_index, self.last_ts, self.last_time_known)
    }

    /// Continues at entry `next` with the state [`ZipEvents::resume_state`] gave there.
    pub(crate) fn resume(
        &mut self,
        next: usize,
        (last_index, last_ts, time_known): (u32, u128, bool),
    ) {
        self.next = next.min(self.entries.len());
        self.last_index = last_index;
        self.last_ts = last_ts;
        self.last_time_known = time_known;
    }

    /// The frame of entry `i`, decoded as [`ZipEvents::next_event`] decodes it (whether it
    /// resets does not depend on the entries before); `None` when the entry is missing, cut,
    /// does not decode or holds no frame. The reading position is unchanged.
    pub(crate) fn frame_of_entry(&mut self, i: usize) -> Result<Option<GetFrameResponse>> {
        let Some(&entry) = self.entries.get(i) else {
            return Ok(None);
        };
        if !self.read_entry(entry)? {
            return Ok(None);
        }
        let Ok(message) = Decoder::new(&self.buf).value() else {
            return Ok(None);
        };
        let mut last_index = 0;
        let mut ignored = Integrity::default();
        Ok(message
            .get("frame")
            .map(|f| to_frame(f, &mut last_index, &mut ignored)))
    }

    /// Ends the events before the first entry whose index time is `stop` µs or later.
    pub(crate) fn set_stop(&mut self, stop: Option<u128>) {
        self.stop = stop;
    }
}

impl<R: Read + Seek> Iterator for ZipEvents<R> {
    type Item = Result<Event>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event().transpose()
    }
}

/// Refuses a zip that names `index.msgpack` or `messages.msgpack` twice: readers disagree on
/// which copy wins, so such a file has no single meaning. `names` gives each member's name
/// and where its entry starts; the error points at the second copy.
fn refuse_duplicates<'a>(names: impl Iterator<Item = (&'a [u8], u64)> + Clone) -> Result<()> {
    for member in [INDEX, MESSAGES] {
        let mut copies = names.clone().filter(|(n, _)| *n == member.as_bytes());
        let second = copies.nth(1);
        if let Some((_, at)) = second {
            let count = 2 + copies.count();
            return Err(malformed(
                at,
                format!("one {member} member in the zip, found {count} (the second named here)"),
            ));
        }
    }
    Ok(())
}

/// Reads a whole `.nanover.zip` into events, in index order (every event in memory: for
/// small files and tests; [`ZipEvents`] streams). Messages that do not decode are skipped
/// and reported in the returned integrity; an index entry pointing past the messages ends
/// the events (reported as a truncation).
pub fn read_nanover_zip<R: Read + Seek>(
    source: R,
    limits: &Limits,
) -> Result<(Vec<Event>, Integrity)> {
    let mut events = ZipEvents::open(source, limits)?;
    let mut out = Vec::new();
    while let Some(e) = events.next_event()? {
        out.push(e);
    }
    Ok((out, events.integrity))
}
