//! The open pass over a `.nanover.zip`: each message's structure walked from the file with
//! its packed arrays skipped ([`crate::skim`]), giving what the schema and the checkpoints
//! need (the frame's keys and how each would be read, its index, whether there is a state)
//! without decoding the arrays. The walk accepts and refuses exactly what
//! [`Decoder::value`] does, and classifies keys as `to_frame` does.

use std::io::{Read, Seek};

use super::{
    EntryRead, IndexEntry, ZipEvents, frame_index_of, number_frame, to_frame, to_value, unpackable,
};
use recfmt_core::Integrity;

use crate::error::{Error, Result};
use crate::msgpack::{Decoder, MAX_DEPTH, Mp};
use crate::packed::Packed;
use crate::proto::GetFrameResponse;
use crate::recording::{ScalarKind, Variant};
use crate::skim::{ByteSource, Seeking, Skim, W, WireError};

/// A frame as the open pass sees it: each key once (the last of a repeated key wins, as
/// in the decoded frame).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct FrameShape {
    pub frame_index: u32,
    /// `values` keys and how each is held (`None`: null).
    pub values: Vec<(String, Option<ScalarKind>)>,
    /// `arrays` keys, their variant and element count.
    pub arrays: Vec<(String, (Variant, usize))>,
}

impl FrameShape {
    /// The shape of a decoded frame.
    fn of(msg: &GetFrameResponse) -> Self {
        let mut shape = FrameShape {
            frame_index: msg.frame_index,
            ..FrameShape::default()
        };
        if let Some(frame) = &msg.frame {
            shape.values = (frame.values.iter())
                .map(|(k, v)| (k.clone(), ScalarKind::of(v)))
                .collect();
            shape.arrays = (frame.arrays.iter())
                .map(|(k, a)| (k.clone(), (Variant::of(a), a.len())))
                .collect();
        }
        shape
    }
}

/// A message as the open pass sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MessageShape {
    /// The index's time (or the last one known, as [`super::Event::timestamp`]).
    pub timestamp: u128,
    pub frame: Option<FrameShape>,
    pub state: bool,
}

/// One MessagePack value as walked: scalars as decoded (a string's text only when asked
/// for), containers and byte strings summed up.
enum Walked {
    Scalar(Mp),
    Bin(u64),
    Array {
        len: u64,
        all_text: bool,
        all_numbers: bool,
    },
    Map,
}

impl<S: ByteSource> Skim<'_, S> {
    fn be(&mut self, n: usize) -> W<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// One value at nesting `depth`, refused where [`Decoder`] refuses it.
    fn mp_value(&mut self, depth: usize, keep_text: bool) -> W<Walked> {
        if depth > MAX_DEPTH {
            return Err(WireError);
        }
        let b = self.byte()?;
        self.mp_value_after(b, depth, keep_text)
    }

    /// The rest of a value whose type byte `b` was read.
    fn mp_value_after(&mut self, b: u8, depth: usize, keep_text: bool) -> W<Walked> {
        let text = |c: &mut Self, n: u64| -> W<Walked> {
            if !keep_text {
                c.skip(n)?;
                return Ok(Walked::Scalar(Mp::Str(String::new())));
            }
            let n = usize::try_from(n).map_err(|_| WireError)?;
            let s = String::from_utf8_lossy(c.take(n)?).into_owned();
            Ok(Walked::Scalar(Mp::Str(s)))
        };
        let scalar = |m| Ok(Walked::Scalar(m));
        match b {
            0x00..=0x7f => scalar(Mp::UInt(u64::from(b))),
            0x80..=0x8f => self.mp_map(u64::from(b & 0x0f), depth),
            0x90..=0x9f => self.mp_array(u64::from(b & 0x0f), depth),
            0xa0..=0xbf => text(self, u64::from(b & 0x1f)),
            0xc0 => scalar(Mp::Nil),
            0xc2 => scalar(Mp::Bool(false)),
            0xc3 => scalar(Mp::Bool(true)),
            0xc4..=0xc6 => {
                let n = self.be(1 << (b - 0xc4))?;
                self.skip(n)?;
                Ok(Walked::Bin(n))
            }
            0xc7..=0xc9 => {
                let n = self.be(1 << (b - 0xc7))?;
                self.skip(n + 1)?;
                scalar(Mp::Ext)
            }
            0xca => scalar(Mp::Float(f64::from(f32::from_bits(self.be(4)? as u32)))),
            0xcb => scalar(Mp::Float(f64::from_bits(self.be(8)?))),
            0xcc..=0xcf => scalar(Mp::UInt(self.be(1 << (b - 0xcc))?)),
            0xd0 => scalar(Mp::Int(i64::from(self.be(1)? as u8 as i8))),
            0xd1 => scalar(Mp::Int(i64::from(self.be(2)? as u16 as i16))),
            0xd2 => scalar(Mp::Int(i64::from(self.be(4)? as u32 as i32))),
            0xd3 => scalar(Mp::Int(self.be(8)? as i64)),
            0xd4..=0xd8 => {
                self.skip(1 + (1 << (b - 0xd4)))?;
                scalar(Mp::Ext)
            }
            0xd9..=0xdb => {
                let n = self.be(1 << (b - 0xd9))?;
                text(self, n)
            }
            0xdc | 0xdd => {
                let n = self.be(if b == 0xdc { 2 } else { 4 })?;
                self.mp_array(n, depth)
            }
            0xde | 0xdf => {
                let n = self.be(if b == 0xde { 2 } else { 4 })?;
                self.mp_map(n, depth)
            }
            0xc1 => Err(WireError),
            0xe0..=0xff => scalar(Mp::Int(i64::from(b as i8))),
        }
    }

    fn mp_array(&mut self, len: u64, depth: usize) -> W<Walked> {
        let (mut all_text, mut all_numbers) = (true, true);
        for _ in 0..len {
            let item = self.mp_value(depth + 1, false)?;
            let scalar = match &item {
                Walked::Scalar(m) => Some(m),
                _ => None,
            };
            all_text &= scalar.is_some_and(|m| m.as_str().is_some());
            all_numbers &= scalar.is_some_and(|m| m.as_f64().is_some());
        }
        Ok(Walked::Array {
            len,
            all_text,
            all_numbers,
        })
    }

    fn mp_map(&mut self, n: u64, depth: usize) -> W<Walked> {
        for _ in 0..n {
            self.mp_value(depth + 1, false)?;
            self.mp_value(depth + 1, false)?;
        }
        Ok(Walked::Map)
    }

    /// The value at nesting `depth`: for a map, each pair's string key (`None` for another
    /// kind of key) given to `pair` with the cursor on its value; any other value is walked
    /// whole. False when it is no map.
    fn mp_pairs(
        &mut self,
        depth: usize,
        mut pair: impl FnMut(&mut Self, Option<String>) -> W<()>,
    ) -> W<bool> {
        if depth > MAX_DEPTH {
            return Err(WireError);
        }
        let b = self.byte()?;
        let n = match b {
            0x80..=0x8f => u64::from(b & 0x0f),
            0xde => self.be(2)?,
            0xdf => self.be(4)?,
            _ => {
                self.mp_value_after(b, depth, false)?;
                return Ok(false);
            }
        };
        for _ in 0..n {
            let key = match self.mp_value(depth + 1, true)? {
                Walked::Scalar(Mp::Str(s)) => Some(s),
                _ => None,
            };
            pair(self, key)?;
        }
        Ok(true)
    }
}

/// A frame as walked, before it is numbered.
#[derive(Default)]
struct WalkedFrame {
    shape: FrameShape,
    /// Its `frame.index`, if it has one that is a count.
    index: Option<u32>,
    /// What `to_frame` warns about it.
    warnings: Vec<String>,
}

/// A whole message: the first `frame` and whether there is a `state`, as `Mp::get` finds
/// them (a message that is not a map has neither).
fn message<S: ByteSource>(c: &mut Skim<'_, S>) -> W<(Option<WalkedFrame>, bool)> {
    let mut frame = None;
    let mut state = false;
    c.mp_pairs(0, |c, key| {
        match key.as_deref() {
            Some("frame") if frame.is_none() => frame = Some(frame_keys(c, 1)?),
            Some("state") => {
                state = true;
                c.mp_value(1, false)?;
            }
            _ => {
                c.mp_value(1, false)?;
            }
        }
        Ok(())
    })?;
    Ok((frame, state))
}

/// A frame's keys, classified as `to_frame` converts them (a frame that is not a map has
/// none).
fn frame_keys<S: ByteSource>(c: &mut Skim<'_, S>, depth: usize) -> W<WalkedFrame> {
    let mut out = WalkedFrame::default();
    c.mp_pairs(depth, |c, key| {
        let is_index = key.as_deref() == Some("frame.index");
        let walked = c.mp_value(depth + 1, is_index)?;
        let Some(key) = key else {
            return Ok(());
        };
        let shape = &mut out.shape;
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        match walked {
            _ if is_index => {
                out.index = match &walked {
                    Walked::Scalar(m) => frame_index_of(m),
                    _ => None,
                };
            }
            Walked::Bin(n) => match Packed::shape(&key, n) {
                Some((float, n)) => {
                    let variant = if float {
                        Variant::Float
                    } else {
                        Variant::Index
                    };
                    set(&mut shape.arrays, key, (variant, count(n)));
                }
                None => out.warnings.push(unpackable(&key, n)),
            },
            Walked::Array {
                len,
                all_text: true,
                ..
            } if len > 0 => set(&mut shape.arrays, key, (Variant::Text, count(len))),
            Walked::Array {
                len,
                all_numbers: true,
                ..
            } => set(&mut shape.arrays, key, (Variant::Float, count(len))),
            Walked::Array { .. } | Walked::Map => {
                set(&mut shape.values, key, Some(ScalarKind::Json));
            }
            Walked::Scalar(m) => set(&mut shape.values, key, ScalarKind::of(&to_value(&m))),
        }
        Ok(())
    })?;
    Ok(out)
}

/// Sets `key` in a list of keys: a repeated key replaces the earlier one, as in a map.
fn set<T>(list: &mut Vec<(String, T)>, key: String, value: T) {
    match list.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => list.push((key, value)),
    }
}

impl<R: Read + Seek> ZipEvents<R> {
    /// The next message as the open pass needs it, in index order; `None` after the last.
    /// Reads and reports as [`ZipEvents::next_event`] does (the same messages refused, the
    /// same warnings), without decoding the arrays.
    pub(crate) fn next_shape(&mut self) -> Result<Option<MessageShape>> {
        let read = |events: &mut Self, entry: IndexEntry| events.walk_entry(entry);
        let Some(((walked, state), timestamp)) = self.next_message(read)? else {
            return Ok(None);
        };
        let frame = walked.map(|w| {
            for warning in w.warnings {
                self.integrity.warn(warning);
            }
            FrameShape {
                frame_index: number_frame(w.index, &mut self.last_index),
                ..w.shape
            }
        });
        Ok(Some(MessageShape {
            timestamp,
            frame,
            state,
        }))
    }

    /// Walks one entry's message from the file. Where the walk refuses it, the message is
    /// decoded whole for the decoder's own words (a walk and a decoder that disagree would
    /// give the decoder's answer).
    fn walk_entry(&mut self, entry: IndexEntry) -> Result<EntryRead<(Option<WalkedFrame>, bool)>> {
        let mut file = Seeking::new(&mut self.source, &mut self.ahead);
        file.seek_to(self.messages_start + entry.offset)?;
        let mut skim = Skim::new(&mut file, entry.length);
        let walked = message(&mut skim);
        match skim.finish() {
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Ok(EntryRead::Short);
            }
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        if let Ok(walked) = walked {
            return Ok(EntryRead::Message(walked));
        }
        if !self.read_entry(entry)? {
            return Ok(EntryRead::Short);
        }
        Ok(match Decoder::new(&self.buf).value() {
            Err(e) => EntryRead::Corrupt(e),
            Ok(m) => {
                let mut last_index = 0;
                let mut warnings = Integrity::default();
                let frame = m.get("frame").map(|f| {
                    let msg = to_frame(f, &mut last_index, &mut warnings);
                    // The last `frame.index` counts, as in `to_frame`.
                    let index = match f {
                        Mp::Map(pairs) => pairs
                            .iter()
                            .rfind(|(k, _)| k.as_str() == Some("frame.index"))
                            .and_then(|(_, v)| frame_index_of(v)),
                        _ => None,
                    };
                    WalkedFrame {
                        shape: FrameShape::of(&msg),
                        index,
                        warnings: warnings.warnings.clone(),
                    }
                });
                EntryRead::Message((frame, m.get("state").is_some()))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::small_recording;
    use recfmt_core::Limits;

    /// What a reading pass sees of a zip, message by message, and what it lost.
    type Seen = (Vec<(u128, Option<FrameShape>, bool)>, Integrity);

    fn by_events(zip: &[u8]) -> Seen {
        let mut events = ZipEvents::open(std::io::Cursor::new(zip), &Limits::default()).unwrap();
        let mut seen = Vec::new();
        while let Some(e) = events.next_event().unwrap() {
            let frame = e.frame.as_ref().map(|f| {
                let mut shape = FrameShape::of(f);
                shape.values.sort_by(|a, b| a.0.cmp(&b.0));
                shape.arrays.sort_by(|a, b| a.0.cmp(&b.0));
                shape
            });
            seen.push((e.timestamp, frame, e.state.is_some()));
        }
        (seen, events.integrity().clone())
    }

    fn by_shapes(zip: &[u8]) -> Seen {
        let mut events = ZipEvents::open(std::io::Cursor::new(zip), &Limits::default()).unwrap();
        let mut seen = Vec::new();
        while let Some(mut m) = events.next_shape().unwrap() {
            if let Some(f) = &mut m.frame {
                f.values.sort_by(|a, b| a.0.cmp(&b.0));
                f.arrays.sort_by(|a, b| a.0.cmp(&b.0));
            }
            seen.push((m.timestamp, m.frame, m.state));
        }
        (seen, events.integrity().clone())
    }

    /// The walk sees every message as decoding does, on an intact zip and on copies with a
    /// byte changed anywhere in the messages (messages refused, keys renamed or retyped,
    /// lengths broken): the same keys, kinds, counts, indices, times and losses.
    #[test]
    fn walking_a_message_agrees_with_decoding_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small.nanover.zip");
        let (frames, updates) = small_recording();
        let mut events: Vec<_> = frames
            .into_iter()
            .map(|(t, f)| (t, Some(f), None))
            .chain(updates.into_iter().map(|(t, u)| (t, None, Some(u))))
            .collect();
        events.sort_by_key(|e| e.0);
        let events = events.into_iter().map(|(timestamp, frame, state)| {
            Ok(crate::timeline::Event {
                timestamp,
                frame,
                state,
            })
        });
        crate::zipwrite::write_zip_events(events, &path).unwrap();
        let zip = std::fs::read(&path).unwrap();
        let whole = by_events(&zip);
        assert!(whole.0.len() > 10);
        assert_eq!(by_shapes(&zip), whole);
        // The messages member's data starts after its local header (30 bytes, the name,
        // a 20-byte zip64 extra field).
        let start = 30 + crate::packed::MESSAGES.len() + 20;
        let end = zip.len() / 2;
        for at in start..end {
            for value in [0x00, 0xc1, 0xdf, 0xff, zip[at] ^ 0x01] {
                let mut bad = zip.clone();
                bad[at] = value;
                assert_eq!(
                    by_shapes(&bad),
                    by_events(&bad),
                    "byte {at} set to {value:#x}"
                );
            }
        }
    }
}
