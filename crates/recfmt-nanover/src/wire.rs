//! A protobuf wire-format walker that lists the keys of a frame record and their types
//! without decoding the arrays: the adapter's first pass over a `.traj` uses it to declare
//! its columns (keys only; no float or index array is materialised).

/// A tiny cursor over protobuf bytes.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// The wire is not protobuf (or not the message we expected).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WireError;

type W<T> = Result<T, WireError>;

impl<'a> Cursor<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn varint(&mut self) -> W<u64> {
        let mut out = 0u64;
        for shift in (0..70).step_by(7) {
            let b = *self.buf.get(self.pos).ok_or(WireError)?;
            self.pos += 1;
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

    fn take(&mut self, n: usize) -> W<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(WireError)?;
        let s = self.buf.get(self.pos..end).ok_or(WireError)?;
        self.pos = end;
        Ok(s)
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

    fn bytes(&mut self) -> W<&'a [u8]> {
        let n = usize::try_from(self.varint()?).map_err(|_| WireError)?;
        self.take(n)
    }

    fn skip(&mut self, wire: u8) -> W<()> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.take(8).map(drop),
            2 => self.bytes().map(drop),
            5 => self.take(4).map(drop),
            _ => Err(WireError),
        }
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

fn value_kind(buf: &[u8]) -> W<WireValue> {
    let mut c = Cursor::new(buf);
    let mut kind = WireValue::Null;
    while !c.done() {
        let (field, wire) = c.tag()?;
        kind = match (field, wire) {
            (1, 0) => {
                c.varint()?;
                WireValue::Null
            }
            (2, 1) => {
                c.take(8)?;
                WireValue::Number
            }
            (3, 2) => {
                c.bytes()?;
                WireValue::Text
            }
            (4, 0) => {
                c.varint()?;
                WireValue::Bool
            }
            (5 | 6, 2) => {
                c.bytes()?;
                WireValue::Nested
            }
            (_, w) => {
                c.skip(w)?;
                kind
            }
        };
    }
    Ok(kind)
}

/// Elements of a `FloatArray`, `IndexArray` or `StringArray` message.
fn element_count(buf: &[u8], variant: u64) -> W<usize> {
    let mut c = Cursor::new(buf);
    let mut n = 0usize;
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, variant, wire) {
            (1, 1, 2) => {
                let packed = c.bytes()?;
                if !packed.len().is_multiple_of(4) {
                    return Err(WireError);
                }
                n += packed.len() / 4;
            }
            (1, 1, 5) => {
                c.take(4)?;
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
                c.bytes()?;
                n += 1;
            }
            (_, _, w) => c.skip(w)?,
        }
    }
    Ok(n)
}

fn array_kind(buf: &[u8]) -> W<WireArray> {
    let mut c = Cursor::new(buf);
    let mut kind = WireArray::None;
    while !c.done() {
        let (field, wire) = c.tag()?;
        kind = match (field, wire) {
            (1..=3, 2) => {
                let inner = c.bytes()?;
                let n = element_count(inner, field)?;
                match field {
                    1 => WireArray::Float(n),
                    2 => WireArray::Index(n),
                    _ => WireArray::Text(n),
                }
            }
            (_, w) => {
                c.skip(w)?;
                kind
            }
        };
    }
    Ok(kind)
}

/// One map entry: `(key, value bytes)`.
fn map_entry(buf: &[u8]) -> W<(&str, &[u8])> {
    let mut c = Cursor::new(buf);
    let mut key: &[u8] = b"";
    let mut value: &[u8] = b"";
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, wire) {
            (1, 2) => key = c.bytes()?,
            (2, 2) => value = c.bytes()?,
            (_, w) => c.skip(w)?,
        }
    }
    let key = std::str::from_utf8(key).map_err(|_| WireError)?;
    Ok((key, value))
}

/// What one frame record holds, key by key.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct FrameKeys<'a> {
    /// `frame_index` (0 when absent, as protobuf reads it).
    pub frame_index: u64,
    /// True when the `frame` field is present.
    pub has_frame: bool,
    pub values: Vec<(&'a str, WireValue)>,
    pub arrays: Vec<(&'a str, WireArray)>,
}

fn frame_data<'a>(buf: &'a [u8], out: &mut FrameKeys<'a>) -> W<()> {
    let mut c = Cursor::new(buf);
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, wire) {
            (1, 2) => {
                let (k, v) = map_entry(c.bytes()?)?;
                out.values.push((k, value_kind(v)?));
            }
            (2, 2) => {
                let (k, v) = map_entry(c.bytes()?)?;
                out.arrays.push((k, array_kind(v)?));
            }
            (_, w) => c.skip(w)?,
        }
    }
    Ok(())
}

/// Lists the keys of a version-2 `GetFrameResponse` payload (or, with `bare`, a version-1
/// `FrameData`). Repeated keys are listed each time (the last one wins, as in decoding).
pub(crate) fn frame_keys(payload: &[u8], bare: bool) -> W<FrameKeys<'_>> {
    let mut out = FrameKeys::default();
    if bare {
        out.has_frame = true;
        frame_data(payload, &mut out)?;
        return Ok(out);
    }
    let mut c = Cursor::new(payload);
    while !c.done() {
        let (field, wire) = c.tag()?;
        match (field, wire) {
            (1, 0) => out.frame_index = c.varint()?,
            (2, 2) => {
                out.has_frame = true;
                frame_data(c.bytes()?, &mut out)?;
            }
            (_, w) => c.skip(w)?,
        }
    }
    Ok(out)
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
        assert_eq!(k.frame_index, 7);
        assert!(k.has_frame);
        assert_eq!(
            k.values,
            [("energy", WireValue::Number), ("gone", WireValue::Null)]
        );
        assert_eq!(
            k.arrays,
            [
                ("empty", WireArray::None),
                ("names", WireArray::Text(1)),
                ("particle.elements", WireArray::Index(2)),
                ("particle.positions", WireArray::Float(6)),
            ]
        );
        assert!(frame_keys(&bytes[..bytes.len() - 1], false).is_err());
        assert_eq!(frame_keys(&[], false).unwrap(), FrameKeys::default());
    }
}
