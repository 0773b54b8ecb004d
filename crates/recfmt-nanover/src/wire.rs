//! A protobuf wire-format walker that lists the keys of a frame record and their types
//! without decoding the arrays: the adapter's first pass over a `.traj` uses it to declare
//! its columns and take its checkpoints. Float arrays are skipped unread (over a file, with a
//! seek: [`crate::skim`]); index arrays are read to count their varints.

use crate::skim::{ByteSource, Skim, W, WireError};

impl<S: ByteSource> Skim<'_, S> {
    fn varint(&mut self) -> W<u64> {
        let mut out = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err(WireError);
            }
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(WireError)
    }

    /// The next field: `(field number, wire type)`.
    fn tag(&mut self) -> W<(u64, u8)> {
        let t = self.varint()?;
        let field = t >> 3;
        if field == 0 {
            return Err(WireError);
        }
        Ok((field, (t & 7) as u8))
    }

    /// The length of a length-delimited field.
    fn len_prefix(&mut self) -> W<u64> {
        self.varint()
    }

    fn bytes(&mut self) -> W<&[u8]> {
        let n = usize::try_from(self.len_prefix()?).map_err(|_| WireError)?;
        self.take(n)
    }

    fn skip_field(&mut self, wire: u8) -> W<()> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.skip(8),
            2 => {
                let n = self.len_prefix()?;
                self.skip(n)
            }
            5 => self.skip(4),
            _ => Err(WireError),
        }
    }

    /// A length-delimited field walked with `walk` (see [`Skim::nested`]).
    fn message<T>(&mut self, walk: impl FnOnce(&mut Self) -> W<T>) -> W<W<T>> {
        let n = self.len_prefix()?;
        self.nested(n, walk)
    }
}

/// The kind of a `google.protobuf.Value` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireValue {
    /// No kind set, or `null_value`.
    Null,
    Number,
    Text,
    Bool,
    /// A struct or a list.
    Nested,
}

/// The variant of a `ValueArray` on the wire and its element count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireArray {
    /// No variant set.
    None,
    Float(usize),
    Index(usize),
    Text(usize),
}

impl WireArray {
    pub(crate) fn len(self) -> usize {
        match self {
            WireArray::None => 0,
            WireArray::Float(n) | WireArray::Index(n) | WireArray::Text(n) => n,
        }
    }
}

fn value_kind<S: ByteSource>(c: &mut Skim<'_, S>) -> W<WireValue> {
    let mut kind = WireValue::Null;
    while !c.done() {
        let (field, wire) = c.tag()?;
        kind = match (field, wire) {
            (1 | 4, 0) => {
                c.varint()?;
                if field == 1 {
                    WireValue::Null
                } else {
                    WireValue::Bool
                }
            }
            (2, 1) => {
                c.skip(8)?;
                WireValue::Number
            }
            (3 | 5 | 6, 2) => {
                c.skip_field(2)?;
                if field == 3 {
                    WireValue::Text
                } else {
                    WireValue::Nested
                }
            }
            (_, w) => {
                c.skip_field(w)?;
                kind
            }
        };
    }
    Ok(kind)
}

/// Elements of a `FloatArray` (1), `IndexArray` (2) or `StringArray` (3) message.
fn element_count<S: ByteSource>(c: &mut Skim<'_, S>, variant: u64) -> W<usize> {
    let mut n = 0usize;
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, variant, wire) {
            (1, 1, 2) => {
                // Packed floats: counted from their length, never read.
                let len = c.len_prefix()?;
                if !len.is_multiple_of(4) {
                    return Err(WireError);
                }
                c.skip(len)?;
                n += usize::try_from(len / 4).map_err(|_| WireError)?;
            }
            (1, 1, 5) => {
                c.skip(4)?;
                n += 1;
            }
            (1, 2, 2) => {
                let packed = c.bytes()?;
                n += packed.iter().filter(|&&b| b & 0x80 == 0).count();
            }
            (1, 2, 0) => {
                c.varint()?;
                n += 1;
            }
            (1, 3, 2) => {
                c.skip_field(2)?;
                n += 1;
            }
            (_, _, w) => c.skip_field(w)?,
        }
    }
    Ok(n)
}

fn array_kind<S: ByteSource>(c: &mut Skim<'_, S>) -> W<WireArray> {
    let mut kind = WireArray::None;
    while !c.done() {
        let (field, wire) = c.tag()?;
        kind = match (field, wire) {
            (1..=3, 2) => {
                let n = c.message(|c| element_count(c, field))??;
                match field {
                    1 => WireArray::Float(n),
                    2 => WireArray::Index(n),
                    _ => WireArray::Text(n),
                }
            }
            (_, w) => {
                c.skip_field(w)?;
                kind
            }
        };
    }
    Ok(kind)
}

/// One map entry: its key and what `walk` makes of its value (the last of each wins, and
/// an absent value is walked as empty bytes, as decoding reads them).
fn map_entry<S: ByteSource, T>(
    c: &mut Skim<'_, S>,
    walk: impl Fn(&mut Skim<'_, S>) -> W<T>,
) -> W<(String, T)> {
    let mut key = Vec::new();
    let mut value = None;
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, wire) {
            (1, 2) => {
                key.clear();
                key.extend_from_slice(c.bytes()?);
            }
            (2, 2) => value = Some(c.message(&walk)?),
            (_, w) => c.skip_field(w)?,
        }
    }
    let key = String::from_utf8(key).map_err(|_| WireError)?;
    let value = match value {
        Some(v) => v?,
        None => c.nested(0, &walk)??,
    };
    Ok((key, value))
}

/// What one frame record holds, key by key.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct FrameKeys {
    /// `frame_index` (0 when absent, as protobuf reads it).
    pub frame_index: u64,
    /// True when the `frame` field is present.
    pub has_frame: bool,
    pub values: Vec<(String, WireValue)>,
    pub arrays: Vec<(String, WireArray)>,
}

fn frame_data<S: ByteSource>(c: &mut Skim<'_, S>, out: &mut FrameKeys) -> W<()> {
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, wire) {
            (1, 2) => out.values.push(c.message(|c| map_entry(c, value_kind))??),
            (2, 2) => out.arrays.push(c.message(|c| map_entry(c, array_kind))??),
            (_, w) => c.skip_field(w)?,
        }
    }
    Ok(())
}

/// Lists the keys of the version-2 `GetFrameResponse` (or, with `bare`, the version-1
/// `FrameData`) under the cursor. Repeated keys are listed each time (the last one wins, as
/// in decoding).
pub(crate) fn walk_frame<S: ByteSource>(c: &mut Skim<'_, S>, bare: bool) -> W<FrameKeys> {
    let mut out = FrameKeys::default();
    if bare {
        out.has_frame = true;
        frame_data(c, &mut out)?;
        return Ok(out);
    }
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, wire) {
            (1, 0) => out.frame_index = c.varint()?,
            (2, 2) => {
                out.has_frame = true;
                c.message(|c| frame_data(c, &mut out))??;
            }
            (_, w) => c.skip_field(w)?,
        }
    }
    Ok(out)
}

/// [`walk_frame`] over a payload in memory.
pub(crate) fn frame_keys(payload: &[u8], bare: bool) -> W<FrameKeys> {
    let mut source = payload;
    walk_frame(&mut Skim::new(&mut source, payload.len() as u64), bare)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{FrameData, GetFrameResponse, ValueArray, number};
    use prost::Message;

    #[test]
    fn keys_and_kinds_match_decoding() {
        let mut f = FrameData::default();
        f.values.insert("energy".into(), number(1.5));
        f.values.insert("gone".into(), crate::proto::null());
        f.arrays.insert(
            "particle.positions".into(),
            ValueArray::floats(vec![0.0; 6]),
        );
        f.arrays.insert(
            "particle.elements".into(),
            ValueArray::indices(vec![300, 1]),
        );
        f.arrays
            .insert("names".into(), ValueArray::strings(vec!["a".into()]));
        f.arrays.insert("empty".into(), ValueArray { values: None });
        let bytes = GetFrameResponse::new(7, f).encode_to_vec();
        let k = frame_keys(&bytes, false).unwrap();
        fn owned<T: Copy>(keys: &[(&str, T)]) -> Vec<(String, T)> {
            keys.iter().map(|&(k, v)| (k.to_string(), v)).collect()
        }
        assert_eq!(k.frame_index, 7);
        assert!(k.has_frame);
        assert_eq!(
            k.values,
            owned(&[("energy", WireValue::Number), ("gone", WireValue::Null)])
        );
        assert_eq!(
            k.arrays,
            owned(&[
                ("empty", WireArray::None),
                ("names", WireArray::Text(1)),
                ("particle.elements", WireArray::Index(2)),
                ("particle.positions", WireArray::Float(6)),
            ])
        );
        assert!(frame_keys(&bytes[..bytes.len() - 1], false).is_err());
        assert_eq!(frame_keys(&[], false).unwrap(), FrameKeys::default());
    }
}
