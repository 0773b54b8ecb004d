//! Little-endian field readers over a packet body, and the matching writers.

use recfmt_core::Limits;

use crate::error::{Error, ExpectedSize, Result, check_limit};
use crate::flavour::VectorWidth;
use crate::primitive::{FString, Vector3};

/// Where the body being decoded sits in the file, for error messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PacketCtx {
    pub packet: &'static str,
    pub id: u8,
    /// Offset of the packet header (the id byte); the body starts 5 bytes later.
    pub offset: u64,
}

/// Reads fields from a packet body, failing with errors that name the packet and offset.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    ctx: PacketCtx,
    pub width: VectorWidth,
    pub limits: &'a Limits,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], ctx: PacketCtx, width: VectorWidth, limits: &'a Limits) -> Self {
        Cursor {
            buf,
            pos: 0,
            ctx,
            width,
            limits,
        }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Offset in the file of the next unread body byte.
    pub fn file_offset(&self) -> u64 {
        self.ctx.offset + 5 + self.pos as u64
    }

    pub fn size_error(&self, expected: ExpectedSize) -> Error {
        Error::Size {
            packet: self.ctx.packet,
            id: self.ctx.id,
            offset: self.ctx.offset,
            expected,
            found: self.buf.len() as u64,
        }
    }

    pub fn malformed(&self, at: u64, what: impl Into<std::borrow::Cow<'static, str>>) -> Error {
        Error::Malformed {
            packet: self.ctx.packet,
            id: self.ctx.id,
            packet_offset: self.ctx.offset,
            offset: at,
            what: what.into(),
        }
    }

    /// Fails unless `n` more bytes are present.
    pub fn need(&self, n: u64) -> Result<()> {
        if (self.remaining() as u64) < n {
            return Err(self.size_error(ExpectedSize::AtLeast((self.pos as u64).saturating_add(n))));
        }
        Ok(())
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        self.need(n as u64)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    pub fn f32s<const N: usize>(&mut self) -> Result<[f32; N]> {
        let mut out = [0f32; N];
        for v in &mut out {
            *v = self.f32()?;
        }
        Ok(out)
    }

    /// A C++ `bool`: one byte that must be 0 or 1.
    pub fn bool(&mut self) -> Result<bool> {
        let at = self.file_offset();
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.malformed(at, format!("bool byte must be 0 or 1, found {b}"))),
        }
    }

    pub fn fstring(&mut self) -> Result<FString> {
        let len = self.u16()?;
        Ok(FString::from_bytes(self.bytes(usize::from(len))?))
    }

    pub fn vector(&mut self) -> Result<Vector3> {
        Ok(match self.width {
            VectorWidth::F32 => Vector3::F32(self.f32s::<3>()?),
            VectorWidth::F64 => Vector3::F64([self.f64()?, self.f64()?, self.f64()?]),
        })
    }

    /// A `u32` element count followed by at least `count * min_elem` bytes; checked against
    /// the array limit and the bytes left before the caller allocates.
    pub fn array_count(&mut self, what: &'static str, min_elem: u64) -> Result<usize> {
        let at = self.file_offset();
        let count = self.u32()?;
        check_limit(what, u64::from(count), self.limits.max_array_len, at)?;
        self.need(u64::from(count).saturating_mul(min_elem))?;
        usize::try_from(count).map_err(|_| self.size_error(ExpectedSize::AtLeast(u64::MAX)))
    }

    /// Fails unless the whole body was consumed.
    pub fn finish(&self) -> Result<()> {
        if self.pos != self.buf.len() {
            return Err(self.size_error(ExpectedSize::Exactly(self.pos as u64)));
        }
        Ok(())
    }
}

/// Little-endian field writers.
pub(crate) trait Put {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_i32(&mut self, v: i32);
    fn put_u64(&mut self, v: u64);
    fn put_i64(&mut self, v: i64);
    fn put_f32(&mut self, v: f32);
    fn put_f64(&mut self, v: f64);
    fn put_f32s(&mut self, v: &[f32]);
    fn put_bool(&mut self, v: bool);
    fn put_fstring(&mut self, what: &'static str, s: &FString) -> Result<()>;
    fn put_vector(&mut self, v: &Vector3);
    fn put_count_u16(&mut self, what: &'static str, n: usize) -> Result<()>;
    fn put_count_u32(&mut self, what: &'static str, n: usize) -> Result<()>;
}

impl Put for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i32(&mut self, v: i32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i64(&mut self, v: i64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f32(&mut self, v: f32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f64(&mut self, v: f64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f32s(&mut self, v: &[f32]) {
        for x in v {
            self.put_f32(*x);
        }
    }
    fn put_bool(&mut self, v: bool) {
        self.push(u8::from(v));
    }
    fn put_fstring(&mut self, what: &'static str, s: &FString) -> Result<()> {
        self.put_count_u16(what, s.len())?;
        self.extend_from_slice(s.as_bytes());
        Ok(())
    }
    fn put_vector(&mut self, v: &Vector3) {
        match v {
            Vector3::F32(a) => self.put_f32s(a),
            Vector3::F64(a) => {
                for x in a {
                    self.put_f64(*x);
                }
            }
        }
    }
    fn put_count_u16(&mut self, what: &'static str, n: usize) -> Result<()> {
        let v = u16::try_from(n).map_err(|_| Error::TooLarge {
            what,
            len: n as u64,
            max: u64::from(u16::MAX),
        })?;
        self.put_u16(v);
        Ok(())
    }
    fn put_count_u32(&mut self, what: &'static str, n: usize) -> Result<()> {
        let v = u32::try_from(n).map_err(|_| Error::TooLarge {
            what,
            len: n as u64,
            max: u64::from(u32::MAX),
        })?;
        self.put_u32(v);
        Ok(())
    }
}
