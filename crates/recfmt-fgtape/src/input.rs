//! Byte input with position tracking, push-back and error mapping (crate-private).

use std::io::{self, BufRead, Read, Seek, SeekFrom};

use crate::error::{Error, Offset, Result};

/// Counts the compressed bytes a gzip decoder consumes.
#[derive(Debug)]
pub(crate) struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.count += amt as u64;
        self.inner.consume(amt);
    }
}

/// The raw input of a tape: plain bytes or a gzip stream.
#[derive(Debug)]
pub(crate) enum Source<R> {
    /// Uncompressed.
    Plain(R),
    /// Gzip (multi-member), decompressed on the fly.
    Gzip(Box<io::BufReader<flate2::bufread::MultiGzDecoder<Counting<R>>>>),
}

impl<R: BufRead> Source<R> {
    /// Looks at the first bytes: `1f 8b` means gzip.
    pub(crate) fn sniff(mut inner: R) -> io::Result<Self> {
        let head = inner.fill_buf()?;
        if head.starts_with(&[0x1f, 0x8b]) {
            let counting = Counting { inner, count: 0 };
            Ok(Source::Gzip(Box::new(io::BufReader::with_capacity(
                64 * 1024,
                flate2::bufread::MultiGzDecoder::new(counting),
            ))))
        } else {
            Ok(Source::Plain(inner))
        }
    }

    pub(crate) fn is_compressed(&self) -> bool {
        matches!(self, Source::Gzip(_))
    }

    pub(crate) fn compressed_pos(&self) -> u64 {
        match self {
            Source::Plain(_) => 0,
            Source::Gzip(r) => r.get_ref().get_ref().count,
        }
    }
}

impl<R: BufRead> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Plain(r) => r.read(buf),
            Source::Gzip(r) => r.read(buf),
        }
    }
}

/// Sequential input with a position, a push-back buffer and offset-carrying errors.
#[derive(Debug)]
pub(crate) struct Input<R> {
    inner: Source<R>,
    pos: u64,
    ahead: Vec<u8>,
    ahead_at: usize,
    /// A read error held back so the bytes delivered before it are still used; it is
    /// returned where the short read is noticed.
    pending: Option<Error>,
    failed: bool,
}

impl<R: BufRead> Input<R> {
    pub(crate) fn new(inner: Source<R>) -> Self {
        Input {
            inner,
            pos: 0,
            ahead: Vec::new(),
            ahead_at: 0,
            pending: None,
            failed: false,
        }
    }

    /// True for gzip-wrapped input, which cannot seek.
    pub(crate) fn is_gzip(&self) -> bool {
        self.inner.is_compressed()
    }

    /// Compressed bytes consumed by the decoder so far (0 for plain input).
    pub(crate) fn compressed_pos(&self) -> u64 {
        self.inner.compressed_pos()
    }

    /// An offset in this input's terms.
    pub(crate) fn at(&self, pos: u64) -> Offset {
        if self.inner.is_compressed() {
            Offset::Decompressed(pos)
        } else {
            Offset::File(pos)
        }
    }

    fn map_io(&self, e: io::Error) -> Error {
        let offset = self.at(self.pos);
        match e.kind() {
            io::ErrorKind::UnexpectedEof if self.inner.is_compressed() => {
                Error::truncated(offset, "the rest of the gzip stream")
            }
            io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData
                if self.inner.is_compressed() =>
            {
                Error::Gzip {
                    offset,
                    compressed_offset: self.compressed_pos(),
                    source: e,
                }
            }
            _ => Error::Io(e),
        }
    }

    /// Reads until `buf` is full or the input ends (or fails); returns the bytes read. A read
    /// error is held back (see [`Input::short`]) so the bytes before it are not lost.
    pub(crate) fn read_full(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut n = 0;
        if self.ahead_at < self.ahead.len() {
            let avail = &self.ahead[self.ahead_at..];
            let k = avail.len().min(buf.len());
            buf[..k].copy_from_slice(&avail[..k]);
            self.ahead_at += k;
            n = k;
            if self.ahead_at == self.ahead.len() {
                self.ahead.clear();
                self.ahead_at = 0;
            }
        }
        while n < buf.len() && !self.failed {
            match self.inner.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => {
                    n += k;
                    self.pos += k as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let e = self.map_io(e);
                    self.pending = Some(e);
                    self.failed = true;
                }
            }
        }
        Ok(n)
    }

    /// The error for a short read: the held-back read error if there is one, else `eof`.
    pub(crate) fn short(&mut self, eof: Error) -> Error {
        self.pending.take().unwrap_or(eof)
    }

    /// Reads exactly `buf.len()` bytes or fails with [`Error::Truncated`] at the start offset.
    pub(crate) fn exact(&mut self, buf: &mut [u8], what: &'static str) -> Result<()> {
        let start = self.position();
        let n = self.read_full(buf)?;
        if n < buf.len() {
            let eof = Error::truncated(self.at(start), what);
            return Err(self.short(eof));
        }
        Ok(())
    }

    /// The logical position: bytes consumed, minus bytes pushed back and not re-read.
    pub(crate) fn position(&self) -> u64 {
        self.pos - (self.ahead.len() - self.ahead_at) as u64
    }

    /// The logical position as an [`Offset`].
    pub(crate) fn offset(&self) -> Offset {
        self.at(self.position())
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        let mut b = [0u8; 4];
        self.exact(&mut b, what)?;
        Ok(u32::from_le_bytes(b))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        let mut b = [0u8; 8];
        self.exact(&mut b, what)?;
        Ok(u64::from_le_bytes(b))
    }

    pub(crate) fn f64(&mut self, what: &'static str) -> Result<f64> {
        let mut b = [0u8; 8];
        self.exact(&mut b, what)?;
        Ok(f64::from_le_bytes(b))
    }

    /// Reads `len` bytes into `out` (cleared first), growing it as data arrives so a bogus
    /// length on a short file does not allocate. `len` must have been checked against limits.
    pub(crate) fn read_into(
        &mut self,
        out: &mut Vec<u8>,
        len: u64,
        what: &'static str,
    ) -> Result<()> {
        let start = self.position();
        out.clear();
        // Straight into `out`, which grows a step at a time so that a length read from a
        // cut file never sizes more than a step beyond the bytes that are there; `out` is
        // reused from frame to frame, so after the first frame nothing is allocated.
        const STEP: u64 = 64 * 1024;
        let mut left = len;
        while left > 0 {
            let want = left.min(STEP) as usize;
            let filled = out.len();
            out.resize(filled + want, 0);
            let n = self.read_full(&mut out[filled..])?;
            out.truncate(filled + n);
            if n < want {
                let eof = Error::truncated(self.at(start), what);
                return Err(self.short(eof));
            }
            left -= n as u64;
        }
        Ok(())
    }

    /// Reads `len` bytes, checking `len` against `limit` first.
    pub(crate) fn vec(
        &mut self,
        len: u64,
        limit_what: &'static str,
        limit: u64,
        what: &'static str,
    ) -> Result<Vec<u8>> {
        Error::check_limit(limit_what, len, limit, self.offset())?;
        let mut out = Vec::new();
        self.read_into(&mut out, len, what)?;
        Ok(out)
    }

    /// Reads everything that is left, up to `limit` bytes (more is a limit error).
    pub(crate) fn rest(&mut self, limit: u64, what: &'static str) -> Result<Vec<u8>> {
        let start = self.offset();
        let mut out = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = self.read_full(&mut chunk)?;
            if n == 0 {
                return match self.pending.take() {
                    Some(e) => Err(e),
                    None => Ok(out),
                };
            }
            out.extend_from_slice(&chunk[..n]);
            Error::check_limit(what, out.len() as u64, limit, start)?;
        }
    }

    /// True when no byte is left.
    pub(crate) fn at_eof(&mut self) -> Result<bool> {
        if self.ahead_at < self.ahead.len() {
            return Ok(false);
        }
        let mut b = [0u8; 1];
        let n = self.read_full(&mut b)?;
        if n == 0 {
            return match self.pending.take() {
                Some(e) => Err(e),
                None => Ok(true),
            };
        }
        self.ahead = vec![b[0]];
        self.ahead_at = 0;
        Ok(false)
    }

    /// Reads and drops `len` bytes, failing with [`Error::Truncated`] (at the start offset)
    /// when the input ends first. Nothing is allocated for `len`.
    pub(crate) fn skip(&mut self, len: u64, what: &'static str) -> Result<()> {
        let start = self.position();
        let mut left = len;
        let mut chunk = [0u8; 8192];
        while left > 0 {
            let want = left.min(chunk.len() as u64) as usize;
            let n = self.read_full(&mut chunk[..want])?;
            if n < want {
                let eof = Error::truncated(self.at(start), what);
                return Err(self.short(eof));
            }
            left -= n as u64;
        }
        Ok(())
    }

    /// Gives bytes back so they are read again next (in front of any earlier push-back).
    pub(crate) fn unread(&mut self, mut bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        bytes.extend_from_slice(&self.ahead[self.ahead_at..]);
        self.ahead = bytes;
        self.ahead_at = 0;
    }
}

impl<R: BufRead + Seek> Input<R> {
    /// Length of uncompressed input in bytes (the read position is left where it was; the
    /// push-back is kept). Gzip input has no known length.
    pub(crate) fn file_len(&mut self) -> Result<u64> {
        match &mut self.inner {
            Source::Plain(r) => {
                let here = r.stream_position()?;
                let len = r.seek(SeekFrom::End(0))?;
                r.seek(SeekFrom::Start(here))?;
                Ok(len)
            }
            Source::Gzip(_) => Err(Error::Unsupported(
                "the length of gzip-compressed input".into(),
            )),
        }
    }

    /// Moves to byte `pos` of uncompressed input, dropping any push-back and held-back
    /// error. Gzip input cannot seek.
    pub(crate) fn seek_to(&mut self, pos: u64) -> Result<()> {
        match &mut self.inner {
            Source::Plain(r) => {
                r.seek(SeekFrom::Start(pos))?;
            }
            Source::Gzip(_) => {
                return Err(Error::Unsupported(
                    "seeking in gzip-compressed input".into(),
                ));
            }
        }
        self.pos = pos;
        self.ahead.clear();
        self.ahead_at = 0;
        self.pending = None;
        self.failed = false;
        Ok(())
    }
}
