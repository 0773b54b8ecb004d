//! Forward-only walking of a message's structure, reading its small fields and skipping its
//! large ones (arrays) instead of reading them. The open pass over a `.traj` (protobuf,
//! `wire.rs`) and a `.nanover.zip` (MessagePack, `nzip/skim.rs`) walks records this way, so
//! opening costs the keys, not the arrays; the same walkers run over bytes in memory.

use std::io::{Read, Seek, SeekFrom};

use crate::error::{Error, Result};

/// Bytes read at a time by [`Seeking`] beyond what is asked for: enough for the keys and
/// headers of a record, far less than its arrays.
pub(crate) const READ_AHEAD: usize = 4096;

/// A source of bytes read forward.
pub(crate) trait ByteSource {
    /// The next `n` bytes (`n` within the limits of the message being walked), consumed;
    /// an error when the input ends first.
    fn take(&mut self, n: usize) -> Result<&[u8]>;
    /// Moves `n` bytes on without reading them.
    fn skip(&mut self, n: u64) -> Result<()>;
}

/// The input ends `n` bytes before what its framing promised.
pub(crate) fn ended(n: u64) -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        format!("the input ends {n} bytes short of a record its framing promises"),
    ))
}

impl ByteSource for &[u8] {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if n > self.len() {
            return Err(ended((n - self.len()) as u64));
        }
        let (head, rest) = self.split_at(n);
        *self = rest;
        Ok(head)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        ByteSource::take(self, n).map(drop)
    }
}

/// A seekable file read forward in small pieces ([`READ_AHEAD`]), a skip being a seek.
#[derive(Debug)]
pub(crate) struct Seeking<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
}

impl<R: Read + Seek> Seeking<R> {
    pub(crate) fn new(inner: R) -> Self {
        Seeking {
            inner,
            buf: Vec::new(),
            pos: 0,
            end: 0,
        }
    }

    /// Continues at byte `offset` of the file.
    pub(crate) fn seek_to(&mut self, offset: u64) -> Result<()> {
        self.inner.seek(SeekFrom::Start(offset))?;
        self.pos = 0;
        self.end = 0;
        Ok(())
    }
}

impl<R: Read + Seek> ByteSource for Seeking<R> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.end - self.pos < n {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            let want = n.max(READ_AHEAD);
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            while self.end < n {
                match self.inner.read(&mut self.buf[self.end..want]) {
                    Ok(0) => return Err(ended((n - self.end) as u64)),
                    Ok(k) => self.end += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let at = self.pos;
        self.pos += n;
        Ok(&self.buf[at..at + n])
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let buffered = (self.end - self.pos) as u64;
        if n <= buffered {
            self.pos += n as usize;
            return Ok(());
        }
        let beyond = i64::try_from(n - buffered).map_err(|_| ended(n))?;
        self.inner.seek(SeekFrom::Current(beyond))?;
        self.pos = 0;
        self.end = 0;
        Ok(())
    }
}

/// The structure is not what the walker expects (or ends inside a field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WireError;

/// A walker's result.
pub(crate) type W<T> = std::result::Result<T, WireError>;

/// A cursor over one message of a [`ByteSource`]: reads never pass the end of the message
/// (or of the nested field being walked), and a failure of the source is kept for the
/// caller ([`Skim::finish`]) while the walker sees a [`WireError`].
pub(crate) struct Skim<'s, S> {
    source: &'s mut S,
    pos: u64,
    end: u64,
    failed: Option<Error>,
}

impl<'s, S: ByteSource> Skim<'s, S> {
    /// A cursor over the next `len` bytes of `source`.
    pub(crate) fn new(source: &'s mut S, len: u64) -> Self {
        Skim {
            source,
            pos: 0,
            end: len,
            failed: None,
        }
    }

    /// Moves to the end of the message and gives back the source's failure, if any (which
    /// comes before whatever the walker made of it).
    pub(crate) fn finish(mut self) -> Result<()> {
        if self.failed.is_none() && self.pos < self.end {
            let rest = self.end - self.pos;
            // A failure is kept in `failed`.
            let _ = self.io(|s| s.skip(rest));
        }
        self.failed.map_or(Ok(()), Err)
    }

    fn io<T>(&mut self, op: impl FnOnce(&mut S) -> Result<T>) -> W<T> {
        if self.failed.is_some() {
            return Err(WireError);
        }
        op(self.source).map_err(|e| {
            self.failed = Some(e);
            WireError
        })
    }

    /// True at the end of the message (or nested field).
    pub(crate) fn done(&self) -> bool {
        self.pos >= self.end
    }

    fn reserve(&mut self, n: u64) -> W<()> {
        let to = self.pos.checked_add(n).filter(|&to| to <= self.end);
        self.pos = to.ok_or(WireError)?;
        Ok(())
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> W<&[u8]> {
        self.reserve(n as u64)?;
        if self.failed.is_some() {
            return Err(WireError);
        }
        match self.source.take(n) {
            Ok(bytes) => Ok(bytes),
            Err(e) => {
                self.failed = Some(e);
                Err(WireError)
            }
        }
    }

    /// One byte.
    pub(crate) fn byte(&mut self) -> W<u8> {
        self.take(1).map(|b| b[0])
    }

    /// Skips `n` bytes.
    pub(crate) fn skip(&mut self, n: u64) -> W<()> {
        self.reserve(n)?;
        self.io(|s| s.skip(n))
    }

    /// Walks the next `n` bytes as a nested field with `walk`, then moves to its end
    /// whatever `walk` made of it: the outer result fails only when the field does not fit.
    pub(crate) fn nested<T>(&mut self, n: u64, walk: impl FnOnce(&mut Self) -> W<T>) -> W<W<T>> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.end);
        let outer = std::mem::replace(&mut self.end, end.ok_or(WireError)?);
        let inner = walk(self);
        let rest = self.end - self.pos;
        let moved = self.skip(rest);
        self.end = outer;
        moved.map(|()| inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeking_source_reads_and_skips_like_a_slice() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let mut file = Seeking::new(std::io::Cursor::new(bytes.clone()));
        let mut slice = &bytes[..];
        for (take, skip) in [(3, 5000), (4097, 1), (10, 0), (1, 9000)] {
            assert_eq!(
                ByteSource::take(&mut file, take).unwrap(),
                ByteSource::take(&mut slice, take).unwrap()
            );
            file.skip(skip).unwrap();
            slice.skip(skip).unwrap();
        }
        assert!(ByteSource::take(&mut file, 5000).is_err());
        assert!(ByteSource::take(&mut slice, 5000).is_err());
    }

    #[test]
    fn a_cursor_stays_inside_its_message_and_keeps_the_source_failure() {
        let bytes = [1u8, 2, 3, 4, 5, 6];
        let mut src = &bytes[..];
        let mut c = Skim::new(&mut src, 4);
        assert_eq!(c.nested(2, |c| c.byte()), Ok(Ok(1)));
        assert_eq!(c.take(3), Err(WireError));
        assert_eq!(c.byte(), Ok(3));
        c.finish().unwrap();
        assert_eq!(src, [5, 6]);
        let mut src = &bytes[..];
        let mut c = Skim::new(&mut src, 10);
        assert_eq!(c.skip(8), Err(WireError));
        assert!(c.finish().is_err());
    }
}
