//! Forward-only walking of a message's structure, reading its small fields and skipping its
//! large ones (arrays) instead of reading them. The open pass over a `.traj` (protobuf,
//! `wire.rs`) and a `.nanover.zip` (MessagePack, `nzip/skim.rs`) walks records this way, so
//! opening costs the keys, not the arrays; the same walkers run over bytes in memory.

use std::io::{Read, Seek, SeekFrom};

use crate::error::{Error, Result};

/// Bytes read at a time by [`Seeking`] (and a `.traj` reader framing records) beyond what
/// is asked for: enough for the keys and array headers of a typical record, far less than
/// its arrays. Each read copies this much from the page cache, so more costs more: 4 KiB
/// took 0.2 s more than this over the 42,000 records of a 10 GB `.traj` (PERFORMANCE.md).
pub(crate) const READ_AHEAD: usize = 512;

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

/// A file read with positioned reads (`pread`): a seek only moves the position kept here,
/// without a system call, which halves the calls of a pass that reads a little and seeks
/// past a lot.
#[derive(Debug)]
pub(crate) struct PositionedFile {
    file: std::fs::File,
    pos: u64,
}

impl PositionedFile {
    pub(crate) fn new(file: std::fs::File) -> Self {
        PositionedFile { file, pos: 0 }
    }

    #[cfg(unix)]
    fn read_at(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.file, buf, self.pos)
    }

    #[cfg(windows)]
    fn read_at(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(&self.file, buf, self.pos)
    }

    #[cfg(not(any(unix, windows)))]
    fn read_at(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut file = &self.file;
        file.seek(SeekFrom::Start(self.pos))?;
        file.read(buf)
    }
}

impl Read for PositionedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.read_at(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for PositionedFile {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let (base, by) = match to {
            SeekFrom::Start(at) => {
                self.pos = at;
                return Ok(at);
            }
            SeekFrom::Current(by) => (self.pos, by),
            SeekFrom::End(by) => (self.file.metadata()?.len(), by),
        };
        self.pos = base.checked_add_signed(by).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )
        })?;
        Ok(self.pos)
    }
}

#[cfg(feature = "nanover-zip")]
/// The bytes read ahead of a [`Seeking`] reader, kept between readers over the same file so
/// that the start of the next record, read with the end of the last, is not read again.
#[derive(Debug, Default)]
pub(crate) struct ReadAhead {
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// The file offset of `buf[pos]` (the file being positioned at `end`); `None` when not
    /// known, as after someone else moved the file.
    at: Option<u64>,
}

#[cfg(feature = "nanover-zip")]
impl ReadAhead {
    /// Forgets the bytes read ahead: the file was moved by someone else.
    pub(crate) fn forget(&mut self) {
        self.pos = 0;
        self.end = 0;
        self.at = None;
    }
}

#[cfg(feature = "nanover-zip")]
/// A seekable file read forward in small pieces ([`READ_AHEAD`]), a skip being a seek.
#[derive(Debug)]
pub(crate) struct Seeking<'a, R> {
    inner: &'a mut R,
    ahead: &'a mut ReadAhead,
}

#[cfg(feature = "nanover-zip")]
impl<'a, R: Read + Seek> Seeking<'a, R> {
    pub(crate) fn new(inner: &'a mut R, ahead: &'a mut ReadAhead) -> Self {
        Seeking { inner, ahead }
    }

    /// Continues at byte `offset` of the file (without a seek where it is read ahead).
    pub(crate) fn seek_to(&mut self, offset: u64) -> Result<()> {
        let a = &mut *self.ahead;
        if let Some(ahead) = a.at.and_then(|at| offset.checked_sub(at))
            && ahead <= (a.end - a.pos) as u64
        {
            a.pos += ahead as usize;
            a.at = Some(offset);
            return Ok(());
        }
        a.forget();
        self.inner.seek(SeekFrom::Start(offset))?;
        a.at = Some(offset);
        Ok(())
    }

    fn fill(&mut self, n: usize) -> Result<()> {
        let a = &mut *self.ahead;
        a.buf.copy_within(a.pos..a.end, 0);
        a.end -= a.pos;
        a.pos = 0;
        let want = n.max(READ_AHEAD);
        if a.buf.len() < want {
            a.buf.resize(want, 0);
        }
        while a.end < n {
            match self.inner.read(&mut a.buf[a.end..want]) {
                Ok(0) => return Err(ended((n - a.end) as u64)),
                Ok(k) => a.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    a.forget();
                    return Err(e.into());
                }
            }
        }
        Ok(())
    }
}

#[cfg(feature = "nanover-zip")]
impl<R: Read + Seek> ByteSource for Seeking<'_, R> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.ahead.end - self.ahead.pos < n {
            self.fill(n)?;
        }
        let a = &mut *self.ahead;
        let at = a.pos;
        a.pos += n;
        a.at = a.at.map(|o| o + n as u64);
        Ok(&a.buf[at..at + n])
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let a = &mut *self.ahead;
        let buffered = (a.end - a.pos) as u64;
        if n <= buffered {
            a.pos += n as usize;
            a.at = a.at.map(|o| o + n);
            return Ok(());
        }
        let beyond = i64::try_from(n - buffered).map_err(|_| ended(n))?;
        let at = a.at.map(|o| o + n);
        a.forget();
        self.inner.seek(SeekFrom::Current(beyond))?;
        a.at = at;
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

    #[cfg(feature = "nanover-zip")]
    #[test]
    fn a_seeking_source_reads_and_skips_like_a_slice() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let mut cursor = std::io::Cursor::new(bytes.clone());
        let mut ahead = ReadAhead::default();
        let mut file = Seeking::new(&mut cursor, &mut ahead);
        let mut slice = &bytes[..];
        for (take, skip) in [(3, 5000), (4097, 1), (10, 0), (1, 9000)] {
            assert_eq!(
                ByteSource::take(&mut file, take).unwrap(),
                ByteSource::take(&mut slice, take).unwrap()
            );
            file.skip(skip).unwrap();
            slice.skip(skip).unwrap();
        }
        file.seek_to(100).unwrap();
        assert_eq!(ByteSource::take(&mut file, 3).unwrap(), &bytes[100..103]);
        file.seek_to(104).unwrap();
        assert_eq!(ByteSource::take(&mut file, 3).unwrap(), &bytes[104..107]);
        file.seek_to(19_000).unwrap();
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
