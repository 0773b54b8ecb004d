//! Writing `.nanover.zip`, NanoVer's recording format since October 2025, from `.traj` /
//! `.state` records (what NanoVer's `nanover-convert-recording` does).
//!
//! The layout and the value conversions follow NanoVer's own writer (nanover-server-py,
//! `nanover/recording/writing.py`, and nanover-recording-converter's
//! `nanover/grpc/convert.py` + `utilities.py`), checked byte for byte against the converted
//! sample (`shared/samples/nanover/converted/`); `docs/formats/nanover.md` describes it:
//!
//! * an uncompressed (stored) zip written like Python's `zipfile`: `messages.msgpack` first
//!   (opened with `force_zip64`, so its local header carries a zip64 extra field and sizes
//!   `0xFFFFFFFF`), then `index.msgpack`; dates 1980-01-01 00:00, Unix permissions 0600,
//!   no data descriptors; zip64 central-directory fields and end records past 2³¹ − 1 bytes,
//!   where Python's `zipfile` switches;
//! * `messages.msgpack`: the MessagePack messages back to back, one per `.traj` record
//!   (`{"frame": {...}}`) and one per `.state` record (`{"state": {"updates": {...},
//!   "removals": [...]}}`); a frame and a state update with the same timestamp are two
//!   messages, the frame first;
//! * `index.msgpack`: one array of `{"offset", "length", "metadata": {"types": [...],
//!   "frame.index"?, "timestamp"}}`, timestamps in microseconds as in the `.traj`.
//!
//! In a frame, the record's `values` come first, then its `arrays`, then `frame.index` (the
//! record's `frame_index`). Numbers are MessagePack float64 except `particle.count`,
//! `residue.count` and `chain.count` (integers); the arrays of the well-known keys are packed
//! little-endian bytes (`f32`: positions, velocities, forces, system forces, box vectors,
//! sparse user forces; `u32`: residues, bond pairs, residue chains, user force indices;
//! `u8`: elements and bond orders), other arrays plain lists. Map keys are in sorted order,
//! where NanoVer's order follows Python set and protobuf map iteration and changes from run
//! to run; so each message has the same length and content as NanoVer's, and
//! `index.msgpack` is byte-identical, but `messages.msgpack` differs in key order.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use recfmt_core::{AtomicFile, Integrity, ReadOptions, Replace, ResultExt};

use crate::error::Result;
use crate::header::FileKind;
use crate::packed::{INDEX, MESSAGES, Packed};
use crate::proto::{GetFrameResponse, Kind, StateUpdate, Value, ValueArray, Values, is_null};
use crate::timeline::{Event, Timeline, open_file};

mod container;

use self::container::{Crc, Entry, ZIP64_LIMIT, central_directory, end_records, local_header};

// ---------------------------------------------------------------------------------------------
// MessagePack, packed as msgpack-python packs (smallest encodings, float64, bin for bytes)
// ---------------------------------------------------------------------------------------------

struct Mp<'a>(&'a mut Vec<u8>);

impl Mp<'_> {
    fn nil(&mut self) {
        self.0.push(0xc0);
    }

    fn boolean(&mut self, b: bool) {
        self.0.push(if b { 0xc3 } else { 0xc2 });
    }

    fn uint(&mut self, n: u64) {
        let o = &mut *self.0;
        if n < 0x80 {
            o.push(n as u8);
        } else if n <= 0xff {
            o.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            o.push(0xcd);
            o.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            o.push(0xce);
            o.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            o.push(0xcf);
            o.extend_from_slice(&n.to_be_bytes());
        }
    }

    fn int(&mut self, n: i64) {
        if let Ok(u) = u64::try_from(n) {
            return self.uint(u);
        }
        let o = &mut *self.0;
        if n >= -32 {
            o.push(n as i8 as u8);
        } else if n >= i64::from(i8::MIN) {
            o.extend_from_slice(&[0xd0, n as i8 as u8]);
        } else if n >= i64::from(i16::MIN) {
            o.push(0xd1);
            o.extend_from_slice(&(n as i16).to_be_bytes());
        } else if n >= i64::from(i32::MIN) {
            o.push(0xd2);
            o.extend_from_slice(&(n as i32).to_be_bytes());
        } else {
            o.push(0xd3);
            o.extend_from_slice(&n.to_be_bytes());
        }
    }

    fn float(&mut self, f: f64) {
        self.0.push(0xcb);
        self.0.extend_from_slice(&f.to_bits().to_be_bytes());
    }

    fn len_header(&mut self, n: usize, fix: Option<(u8, usize)>, codes: [u8; 3]) {
        let o = &mut *self.0;
        match fix {
            Some((base, max)) if n <= max => o.push(base | n as u8),
            _ if codes[0] != 0 && n <= 0xff => o.extend_from_slice(&[codes[0], n as u8]),
            _ if n <= 0xffff => {
                o.push(codes[1]);
                o.extend_from_slice(&(n as u16).to_be_bytes());
            }
            _ => {
                o.push(codes[2]);
                o.extend_from_slice(&(n as u32).to_be_bytes());
            }
        }
    }

    fn str(&mut self, s: &str) {
        self.len_header(s.len(), Some((0xa0, 31)), [0xd9, 0xda, 0xdb]);
        self.0.extend_from_slice(s.as_bytes());
    }

    fn bin(&mut self, b: &[u8]) {
        self.len_header(b.len(), None, [0xc4, 0xc5, 0xc6]);
        self.0.extend_from_slice(b);
    }

    fn array(&mut self, n: usize) {
        self.len_header(n, Some((0x90, 15)), [0, 0xdc, 0xdd]);
    }

    fn map(&mut self, n: usize) {
        self.len_header(n, Some((0x80, 15)), [0, 0xde, 0xdf]);
    }

    /// A `google.protobuf.Value` as NanoVer's `value_to_object` gives it to msgpack.
    fn value(&mut self, v: &Value) {
        match &v.kind {
            None | Some(Kind::NullValue(_)) => self.nil(),
            Some(Kind::BoolValue(b)) => self.boolean(*b),
            Some(Kind::NumberValue(n)) => self.float(*n),
            Some(Kind::StringValue(s)) => self.str(s),
            Some(Kind::ListValue(l)) => {
                self.array(l.values.len());
                for item in &l.values {
                    self.value(item);
                }
            }
            Some(Kind::StructValue(s)) => {
                self.map(s.fields.len());
                for (k, item) in &s.fields {
                    self.str(k);
                    self.value(item);
                }
            }
        }
    }
}

/// One message item in a frame: a value, or an array of a key.
enum Item<'a> {
    Value(&'a str, &'a Value),
    Array(&'a str, &'a ValueArray),
    Index(u32),
}

/// Values changed on the way (a fractional bond order packed into `u8`, ...).
#[derive(Debug, Default)]
struct Loss {
    values: u64,
    notes: Vec<String>,
}

impl Loss {
    fn note(&mut self, n: u64, what: impl FnOnce() -> String) {
        if n == 0 {
            return;
        }
        if self.values == 0 || self.notes.len() < 20 {
            self.notes.push(what());
        }
        self.values += n;
    }
}

fn pack_array(
    out: &mut Mp<'_>,
    key: &str,
    a: &ValueArray,
    p: Packed,
    loss: &mut Loss,
) -> Result<()> {
    let mut bytes = Vec::with_capacity(a.len() * 4);
    let mut changed = 0u64;
    match (p, &a.values) {
        (_, None) => {}
        (_, Some(Values::StringValues(s))) if s.values.is_empty() => {}
        (_, Some(Values::StringValues(_))) => {
            return Err(crate::Error::Unwritable {
                what: format!(
                    "{key} as .nanover.zip: NanoVer packs it as numbers, but the record holds strings"
                )
                .into(),
            });
        }
        (Packed::F32, Some(Values::FloatValues(f))) => {
            for x in &f.values {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        (Packed::F32, Some(Values::IndexValues(i))) => {
            for &x in &i.values {
                let f = x as f32;
                changed += u64::from(f as u32 != x);
                bytes.extend_from_slice(&f.to_le_bytes());
            }
        }
        (Packed::U32 | Packed::U8, Some(v)) => {
            let max = if p == Packed::U8 {
                255.0
            } else {
                f64::from(u32::MAX)
            };
            let items: Vec<f64> = match v {
                Values::FloatValues(f) => f.values.iter().map(|&x| f64::from(x)).collect(),
                Values::IndexValues(i) => i.values.iter().map(|&x| f64::from(x)).collect(),
                Values::StringValues(_) => Vec::new(),
            };
            for x in items {
                if !(x > -1.0 && x < max + 1.0) {
                    return Err(crate::Error::Unwritable {
                        what: format!(
                            "{key} as .nanover.zip: {x} does not fit the {} NanoVer packs it into",
                            if p == Packed::U8 { "u8" } else { "u32" }
                        )
                        .into(),
                    });
                }
                // NumPy's cast, as NanoVer's converter does it: towards zero.
                let t = x.trunc();
                changed += u64::from(t != x);
                if p == Packed::U8 {
                    bytes.push(t as u8);
                } else {
                    bytes.extend_from_slice(&(t as u32).to_le_bytes());
                }
            }
        }
    }
    loss.note(changed, || {
        format!("{key}: {changed} values changed by NanoVer's packing (fractions cut, as its converter does)")
    });
    out.bin(&bytes);
    Ok(())
}

fn list_array(out: &mut Mp<'_>, a: &ValueArray) {
    match &a.values {
        None => out.array(0),
        Some(Values::FloatValues(f)) => {
            out.array(f.values.len());
            for &x in &f.values {
                out.float(f64::from(x));
            }
        }
        Some(Values::IndexValues(i)) => {
            out.array(i.values.len());
            for &x in &i.values {
                out.uint(u64::from(x));
            }
        }
        Some(Values::StringValues(s)) => {
            out.array(s.values.len());
            for x in &s.values {
                out.str(x);
            }
        }
    }
}

/// Encodes one frame message into `buf`.
fn encode_frame(buf: &mut Vec<u8>, msg: &GetFrameResponse, loss: &mut Loss) -> Result<()> {
    // Python dict semantics: values, then arrays, then frame.index; a key set twice keeps
    // the position of its first insertion and the last value.
    let mut items: Vec<(&str, Item<'_>)> = Vec::new();
    let empty = Default::default();
    let frame = msg.frame.as_ref().unwrap_or(&empty);
    for (k, v) in &frame.values {
        items.push((k, Item::Value(k, v)));
    }
    for (k, a) in &frame.arrays {
        match items.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => slot.1 = Item::Array(k, a),
            None => items.push((k, Item::Array(k, a))),
        }
    }
    match items.iter_mut().find(|(key, _)| *key == "frame.index") {
        Some(slot) => slot.1 = Item::Index(msg.frame_index),
        None => items.push(("frame.index", Item::Index(msg.frame_index))),
    }
    let mut out = Mp(buf);
    out.map(1);
    out.str("frame");
    out.map(items.len());
    for (k, item) in &items {
        out.str(k);
        match item {
            Item::Index(i) => out.uint(u64::from(*i)),
            Item::Value(key, v) => match v.kind {
                Some(Kind::NumberValue(n))
                    if crate::packed::integer_value(key) && n.is_finite() && n.abs() < 9.2e18 =>
                {
                    let t = n.trunc();
                    loss.note(u64::from(t != n), || {
                        format!("{key}: a fractional count cut to an integer, as NanoVer's converter does")
                    });
                    out.int(t as i64);
                }
                _ => out.value(v),
            },
            Item::Array(key, a) => match Packed::of(key) {
                Some(p) => pack_array(&mut out, key, a, p, loss)?,
                None => list_array(&mut out, a),
            },
        }
    }
    Ok(())
}

/// Encodes one state message into `buf`.
fn encode_state(buf: &mut Vec<u8>, update: &StateUpdate) {
    let (removals, updates): (Vec<_>, Vec<_>) = update.changes().partition(|(_, v)| is_null(v));
    let mut out = Mp(buf);
    out.map(1);
    out.str("state");
    out.map(2);
    out.str("updates");
    out.map(updates.len());
    for (k, v) in updates {
        out.str(k);
        out.value(v);
    }
    out.str("removals");
    out.array(removals.len());
    for (k, _) in removals {
        out.str(k);
    }
}

/// What [`write_zip`] wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ZipSummary {
    /// Messages written (one per frame record and one per state record).
    pub messages: u64,
    /// Frame messages.
    pub frames: u64,
    /// State messages.
    pub states: u64,
    /// Size of `messages.msgpack`.
    pub messages_bytes: u64,
    /// Size of the zip.
    pub bytes: u64,
    /// Values that NanoVer's packing changes, as its converter does (a fractional bond
    /// order or count cut to an integer, an index above 2²⁴ rounded to `f32`); 0 in the
    /// samples.
    pub values_changed: u64,
    /// What changed, per key (at most 20 notes).
    pub notes: Vec<String>,
    /// What reading the input lost (nothing for intact files).
    pub integrity: Integrity,
}

/// Streams events into a `.nanover.zip` at `out`.
struct ZipOut {
    file: AtomicFile,
    target: PathBuf,
    crc: Crc,
    size: u64,
    index: Vec<u8>,
    entries: u64,
    buf: Vec<u8>,
    loss: Loss,
    summary: ZipSummary,
    limit: u64,
}

impl ZipOut {
    fn create(out: &Path, limit: u64, replace: Replace) -> recfmt_core::Result<Self> {
        let mut file = AtomicFile::create(out, replace).in_file(out)?;
        let header = local_header(MESSAGES, 0, 0, true);
        file.write_all(&header).in_file(out)?;
        Ok(ZipOut {
            file,
            target: out.to_path_buf(),
            crc: Crc::new(),
            size: 0,
            index: Vec::new(),
            entries: 0,
            buf: Vec::new(),
            loss: Loss::default(),
            summary: ZipSummary::default(),
            limit,
        })
    }

    fn message(
        &mut self,
        kind: &str,
        frame_index: Option<u32>,
        timestamp: u128,
    ) -> recfmt_core::Result<()> {
        let timestamp = u64::try_from(timestamp).map_err(|_| {
            recfmt_core::Error::invalid(format!(
                ".nanover.zip: timestamp {timestamp} us does not fit MessagePack's u64"
            ))
        })?;
        self.file.write_all(&self.buf).in_file(&self.target)?;
        self.crc.update(&self.buf);
        let length = self.buf.len() as u64;
        let mut idx = Mp(&mut self.index);
        idx.map(3);
        idx.str("offset");
        idx.uint(self.size);
        idx.str("length");
        idx.uint(length);
        idx.str("metadata");
        idx.map(if frame_index.is_some() { 3 } else { 2 });
        idx.str("types");
        idx.array(1);
        idx.str(kind);
        if let Some(i) = frame_index {
            idx.str("frame.index");
            idx.uint(u64::from(i));
        }
        idx.str("timestamp");
        idx.uint(timestamp);
        self.size += length;
        self.entries += 1;
        self.summary.messages += 1;
        Ok(())
    }

    fn push(&mut self, event: &Event) -> recfmt_core::Result<()> {
        if let Some(frame) = &event.frame {
            self.buf.clear();
            encode_frame(&mut self.buf, frame, &mut self.loss)?;
            self.message("frame", Some(frame.frame_index), event.timestamp)?;
            self.summary.frames += 1;
        }
        if let Some(update) = &event.state {
            self.buf.clear();
            encode_state(&mut self.buf, update);
            self.message("state", None, event.timestamp)?;
            self.summary.states += 1;
        }
        Ok(())
    }

    fn finish(mut self) -> recfmt_core::Result<ZipSummary> {
        let target = self.target.clone();
        let mut index = Vec::with_capacity(self.index.len() + 5);
        Mp(&mut index).array(usize::try_from(self.entries).unwrap_or(usize::MAX));
        index.extend_from_slice(&self.index);
        if index.len() as u64 > ZIP64_LIMIT {
            return Err(recfmt_core::Error::invalid(
                ".nanover.zip: index.msgpack above 2 GiB (Python's zipfile refuses it without zip64 too)",
            ))
            .in_file(&target);
        }
        let mut index_crc = Crc::new();
        index_crc.update(&index);
        let entries = [
            Entry {
                name: MESSAGES,
                offset: 0,
                size: self.size,
                crc: self.crc.finish(),
                zip64: true,
            },
            Entry {
                name: INDEX,
                offset: (30 + MESSAGES.len() + 20) as u64 + self.size,
                size: index.len() as u64,
                crc: index_crc.finish(),
                zip64: false,
            },
        ];
        let limit = self.limit;
        let write = |w: &mut AtomicFile| -> std::io::Result<u64> {
            w.write_all(&local_header(INDEX, entries[1].crc, entries[1].size, false))?;
            w.write_all(&index)?;
            let cd_offset = entries[1].offset + (30 + INDEX.len()) as u64 + entries[1].size;
            let cd = central_directory(&entries, limit);
            w.write_all(&cd)?;
            let end = end_records(2, cd.len() as u64, cd_offset, limit);
            w.write_all(&end)?;
            // Patch the messages' local header: CRC and the zip64 sizes.
            let total = cd_offset + cd.len() as u64 + end.len() as u64;
            w.seek(SeekFrom::Start(0))?;
            w.write_all(&local_header(
                MESSAGES,
                entries[0].crc,
                entries[0].size,
                true,
            ))?;
            w.seek(SeekFrom::Start(total))?;
            Ok(total)
        };
        let bytes = write(&mut self.file).in_file(&target)?;
        self.file.commit().in_file(&target)?;
        let mut summary = self.summary;
        summary.messages_bytes = self.size;
        summary.bytes = bytes;
        summary.values_changed = self.loss.values;
        summary.notes = self.loss.notes;
        Ok(summary)
    }
}

/// Writes events into a `.nanover.zip` at `out` (under a temporary name, renamed when
/// complete). See [`write_zip`].
pub fn write_zip_events<I>(events: I, out: &Path) -> recfmt_core::Result<ZipSummary>
where
    I: IntoIterator<Item = Result<Event>>,
{
    write_zip_events_with(events, out, Replace::Never)
}

/// [`write_zip_events`], replacing an existing file as `replace` allows.
pub fn write_zip_events_with<I>(
    events: I,
    out: &Path,
    replace: Replace,
) -> recfmt_core::Result<ZipSummary>
where
    I: IntoIterator<Item = Result<Event>>,
{
    write_zip_events_with_limit(events, out, ZIP64_LIMIT, replace)
}

fn write_zip_events_with_limit<I>(
    events: I,
    out: &Path,
    limit: u64,
    replace: Replace,
) -> recfmt_core::Result<ZipSummary>
where
    I: IntoIterator<Item = Result<Event>>,
{
    let mut z = ZipOut::create(out, limit, replace)?;
    for event in events {
        z.push(&event?)?;
    }
    z.finish()
}

/// Converts a `.traj` (and its `.state`, when given) into a `.nanover.zip` at `out`, as
/// NanoVer's `nanover-convert-recording` does (see the module docs for the layout and the
/// conversions): one message per record, in timestamp order, streamed (memory holds one
/// record and the index). The file is written under a temporary name and renamed when
/// complete.
///
/// The input is read leniently: a torn last record ends the messages and is reported in
/// [`ZipSummary::integrity`]. Pass the `.state` explicitly
/// (`RecordingPaths::resolve(traj).state`) to include it.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let (traj, state) = recfmt_nanover::generate::small_recording_bytes()?;
/// std::fs::write(dir.path().join("a.traj"), &traj)?;
/// std::fs::write(dir.path().join("a.state"), &state)?;
/// let out = dir.path().join("a.nanover.zip");
/// let s = recfmt_nanover::write_zip(&dir.path().join("a.traj"), Some(&dir.path().join("a.state")), &out)?;
/// assert_eq!((s.frames, s.states), (7, 5));
/// assert_eq!(recfmt_nanover::score(&std::fs::read(&out)?), recfmt_core::Score::Yes(230));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_zip(traj: &Path, state: Option<&Path>, out: &Path) -> recfmt_core::Result<ZipSummary> {
    let options = ReadOptions::default();
    let t = open_file(traj, FileKind::Trajectory, &options).in_file(traj)?;
    let s = match state {
        Some(p) => Some(open_file(p, FileKind::State, &options).in_file(p)?),
        None => None,
    };
    let mut timeline = Timeline::new(Some(t), s);
    let mut z = ZipOut::create(out, ZIP64_LIMIT, Replace::Never)?;
    loop {
        let event = timeline.next_event().map_err(|e| {
            let e = recfmt_core::Error::from(e);
            // With two inputs the failing one is not known here.
            if state.is_none() { e.in_file(traj) } else { e }
        })?;
        let Some(event) = event else { break };
        z.push(&event)?;
    }
    let integrity = timeline.integrity();
    let mut summary = z.finish()?;
    summary.integrity = integrity;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        let mut c = Crc::new();
        c.update(b"123456789");
        assert_eq!(c.finish(), 0xcbf4_3926);
    }

    #[test]
    fn msgpack_encodings_are_the_smallest_like_msgpack_python() {
        let enc = |f: &dyn Fn(&mut Mp<'_>)| {
            let mut v = Vec::new();
            f(&mut Mp(&mut v));
            v
        };
        assert_eq!(enc(&|m| m.uint(127)), [0x7f]);
        assert_eq!(enc(&|m| m.uint(128)), [0xcc, 0x80]);
        assert_eq!(enc(&|m| m.uint(2019)), [0xcd, 0x07, 0xe3]);
        assert_eq!(enc(&|m| m.uint(70_000)), [0xce, 0, 1, 0x11, 0x70]);
        assert_eq!(enc(&|m| m.int(-1)), [0xff]);
        assert_eq!(enc(&|m| m.int(-33)), [0xd0, 0xdf]);
        assert_eq!(enc(&|m| m.int(-200)), [0xd1, 0xff, 0x38]);
        assert_eq!(enc(&|m| m.str("ab")), [0xa2, b'a', b'b']);
        assert_eq!(enc(&|m| m.str(&"x".repeat(32)))[..2], [0xd9, 32]);
        assert_eq!(enc(&|m| m.bin(&[])), [0xc4, 0]);
        assert_eq!(enc(&|m| m.bin(&[0; 300]))[..3], [0xc5, 1, 44]);
        assert_eq!(enc(&|m| m.array(15)), [0x9f]);
        assert_eq!(enc(&|m| m.array(455)), [0xdc, 1, 0xc7]);
        assert_eq!(enc(&|m| m.map(16)), [0xde, 0, 16]);
        assert_eq!(enc(&|m| m.float(0.0)), [0xcb, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[cfg(feature = "nanover-zip")]
    #[test]
    fn zip64_records_are_written_past_the_limit_and_read_back() {
        let (traj, state) = crate::generate::small_recording_bytes().unwrap();
        let events: Vec<_> = Timeline::from_bytes(Some(&traj), Some(&state))
            .unwrap()
            .collect();
        let dir = std::env::temp_dir().join(format!("nanover-zip64-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("small.nanover.zip");
        // A limit of 100 bytes makes every size and offset "large".
        write_zip_events_with_limit(events, &path, 100, Replace::Never).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.windows(4).any(|w| w == b"PK\x06\x06"));
        let (back, integrity) =
            crate::nzip::read_nanover_zip(std::io::Cursor::new(&bytes), &Default::default())
                .unwrap();
        assert!(!integrity.lost_data());
        assert_eq!(back.len(), 12);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Every message of the converted sample equals ours once map keys are sorted, and has
    /// the same length.
    #[cfg(feature = "nanover-zip")]
    #[test]
    fn every_message_equals_nanovers_up_to_key_order() {
        use crate::msgpack::{Decoder, Mp as M};
        use std::io::Read;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/samples/nanover");
        if !root.join("converted").is_dir() {
            eprintln!("skipping: no NanoVer samples");
            return;
        }
        fn sorted(m: M) -> M {
            match m {
                M::Map(mut pairs) => {
                    pairs.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
                    M::Map(pairs.into_iter().map(|(k, v)| (k, sorted(v))).collect())
                }
                M::Array(items) => M::Array(items.into_iter().map(sorted).collect()),
                other => other,
            }
        }
        let entries = |bytes: Vec<u8>| {
            let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
            let mut get = |n: &str| {
                let mut v = Vec::new();
                z.by_name(n).unwrap().read_to_end(&mut v).unwrap();
                v
            };
            (get(MESSAGES), get(INDEX))
        };
        let traj = root.join("server-py/sim-switching-test-recording.traj");
        let dir = std::env::temp_dir().join(format!("nanover-zipmsg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("x.nanover.zip");
        write_zip(&traj, Some(&traj.with_extension("state")), &out).unwrap();
        let (ours, index) = entries(std::fs::read(&out).unwrap());
        let (theirs, their_index) = entries(
            std::fs::read(root.join("converted/sim-switching-test-recording.nanover.zip")).unwrap(),
        );
        assert_eq!(index, their_index);
        let M::Array(list) = Decoder::new(&index).value().unwrap() else {
            panic!()
        };
        let mut same_bytes = 0;
        for e in &list {
            let off = e.get("offset").and_then(M::as_u64).unwrap() as usize;
            let len = e.get("length").and_then(M::as_u64).unwrap() as usize;
            let (a, b) = (&ours[off..off + len], &theirs[off..off + len]);
            same_bytes += usize::from(a == b);
            let a = sorted(Decoder::new(a).value().unwrap());
            let b = sorted(Decoder::new(b).value().unwrap());
            assert!(a == b, "message at {off} differs");
        }
        assert_eq!(list.len(), 455);
        eprintln!("{same_bytes} of 455 messages byte-identical, all equal up to key order");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
