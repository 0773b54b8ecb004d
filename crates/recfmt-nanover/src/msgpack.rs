//! A small MessagePack decoder for `.nanover.zip` messages: bounded allocations (a container
//! never reserves more elements than bytes remain) and bounded nesting.

/// A decoded MessagePack value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mp {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Mp>),
    Map(Vec<(Mp, Mp)>),
    Ext,
}

pub(crate) const MAX_DEPTH: usize = 64;

pub(crate) struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| format!("{n} bytes needed at {}, message ends", self.pos))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn be(&mut self, n: usize) -> Result<u64, String> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn len(&mut self, n: usize) -> Result<usize, String> {
        usize::try_from(self.be(n)?).map_err(|_| "length does not fit".to_string())
    }

    fn text(&mut self, n: usize) -> Result<Mp, String> {
        let bytes = self.take(n)?;
        Ok(Mp::Str(String::from_utf8_lossy(bytes).into_owned()))
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Mp, String> {
        let mut v = Vec::with_capacity(n.min(self.buf.len() - self.pos));
        for _ in 0..n {
            v.push(self.value_at(depth + 1)?);
        }
        Ok(Mp::Array(v))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Mp, String> {
        let mut v = Vec::with_capacity(n.min((self.buf.len() - self.pos) / 2));
        for _ in 0..n {
            let k = self.value_at(depth + 1)?;
            let val = self.value_at(depth + 1)?;
            v.push((k, val));
        }
        Ok(Mp::Map(v))
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Reads an array header and returns its element count (the elements follow; the count
    /// sizes nothing).
    pub(crate) fn array_len(&mut self) -> Result<usize, String> {
        let b = self.take(1)?[0];
        match b {
            0x90..=0x9f => Ok(usize::from(b & 0x0f)),
            0xdc => self.len(2),
            0xdd => self.len(4),
            _ => Err(format!("an array, found type byte 0x{b:02x}")),
        }
    }

    /// Decodes the next value.
    pub(crate) fn value(&mut self) -> Result<Mp, String> {
        self.value_at(0)
    }

    fn value_at(&mut self, depth: usize) -> Result<Mp, String> {
        if depth > MAX_DEPTH {
            return Err("nesting too deep".into());
        }
        let b = self.take(1)?[0];
        Ok(match b {
            0x00..=0x7f => Mp::UInt(u64::from(b)),
            0x80..=0x8f => return self.map(usize::from(b & 0x0f), depth),
            0x90..=0x9f => return self.array(usize::from(b & 0x0f), depth),
            0xa0..=0xbf => return self.text(usize::from(b & 0x1f)),
            0xc0 => Mp::Nil,
            0xc2 => Mp::Bool(false),
            0xc3 => Mp::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len(1 << (b - 0xc4))?;
                Mp::Bin(self.take(n)?.to_vec())
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (b - 0xc7))?;
                self.take(n + 1)?;
                Mp::Ext
            }
            0xca => Mp::Float(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Mp::Float(f64::from_bits(self.be(8)?)),
            0xcc..=0xcf => Mp::UInt(self.be(1 << (b - 0xcc))?),
            0xd0 => Mp::Int(i64::from(self.be(1)? as u8 as i8)),
            0xd1 => Mp::Int(i64::from(self.be(2)? as u16 as i16)),
            0xd2 => Mp::Int(i64::from(self.be(4)? as u32 as i32)),
            0xd3 => Mp::Int(self.be(8)? as i64),
            0xd4..=0xd8 => {
                self.take(1 + (1 << (b - 0xd4)))?;
                Mp::Ext
            }
            0xd9..=0xdb => {
                let n = self.len(1 << (b - 0xd9))?;
                return self.text(n);
            }
            0xdc | 0xdd => {
                let n = self.len(if b == 0xdc { 2 } else { 4 })?;
                return self.array(n, depth);
            }
            0xde | 0xdf => {
                let n = self.len(if b == 0xde { 2 } else { 4 })?;
                return self.map(n, depth);
            }
            0xc1 => return Err("reserved byte 0xc1".into()),
            0xe0..=0xff => Mp::Int(i64::from(b as i8)),
        })
    }
}

impl Mp {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Mp::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_u64(&self) -> Option<u64> {
        match *self {
            Mp::UInt(u) => Some(u),
            Mp::Int(i) => u64::try_from(i).ok(),
            Mp::Float(f) if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => Some(f as u64),
            _ => None,
        }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        match *self {
            Mp::UInt(u) => Some(u as f64),
            Mp::Int(i) => Some(i as f64),
            Mp::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The value under a string key of a map.
    pub(crate) fn get(&self, key: &str) -> Option<&Mp> {
        match self {
            Mp::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_common_types_and_refuses_lies() {
        // {"a": [1, -1, 2.5, "x", nil, true], "b": bin[2]}
        let bytes = [
            0x82, 0xa1, b'a', 0x96, 0x01, 0xff, 0xcb, 0x40, 0x04, 0, 0, 0, 0, 0, 0, 0xa1, b'x',
            0xc0, 0xc3, 0xa1, b'b', 0xc4, 0x02, 9, 8,
        ];
        let v = Decoder::new(&bytes).value().unwrap();
        let a = v.get("a").unwrap();
        assert_eq!(
            *a,
            Mp::Array(vec![
                Mp::UInt(1),
                Mp::Int(-1),
                Mp::Float(2.5),
                Mp::Str("x".into()),
                Mp::Nil,
                Mp::Bool(true)
            ])
        );
        assert_eq!(v.get("b"), Some(&Mp::Bin(vec![9, 8])));
        // An array claiming 2^32-1 elements in 5 bytes fails without allocating them.
        assert!(
            Decoder::new(&[0xdd, 0xff, 0xff, 0xff, 0xff])
                .value()
                .is_err()
        );
        assert!(Decoder::new(&[0x91; 200]).value().is_err());
    }
}
