//! A model of the `std::ifstream` the CARLA query code reads from.
//!
//! The queries never look at packet sizes to parse a packet they know: they read the fields
//! one after the other. A read past the end copies the bytes that are left into the
//! destination, keeps the rest of its old value, and puts the stream in the failed state,
//! after which every read does nothing. `seekg` past the end succeeds; only the next read
//! fails. This type reproduces those rules over any [`Read`].

use std::io::{self, Read};

/// The C++ input stream state: a position and the fail/eof flag.
#[derive(Debug)]
pub(crate) struct CStream<R> {
    inner: R,
    failed: bool,
    /// Bytes consumed from `inner`.
    pos: u64,
    /// Bytes read through the stream, for progress reports.
    pub(crate) decoded: u64,
}

impl<R: Read> CStream<R> {
    pub(crate) fn new(inner: R) -> Self {
        CStream {
            inner,
            failed: false,
            pos: 0,
            decoded: 0,
        }
    }

    /// `bool(stream)`: no read has failed yet.
    pub(crate) fn ok(&self) -> bool {
        !self.failed
    }

    /// `stream.read(buf)`: overwrites the front of `buf` with the bytes available.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<()> {
        if self.failed {
            return Ok(());
        }
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.pos += got as u64;
        self.decoded += got as u64;
        if got < buf.len() {
            self.failed = true;
        }
        Ok(())
    }

    /// `stream.seekg(n, std::ios::cur)`: skips `n` bytes; past the end is not an error.
    pub(crate) fn skip(&mut self, n: u64) -> io::Result<()> {
        if self.failed {
            return Ok(());
        }
        let got = io::copy(&mut (&mut self.inner).take(n), &mut io::sink())?;
        self.pos += got;
        Ok(())
    }

    /// Reads a little-endian value, keeping the old bytes that a short read leaves.
    pub(crate) fn value<const N: usize>(&mut self, old: [u8; N]) -> io::Result<[u8; N]> {
        let mut b = old;
        self.read(&mut b)?;
        Ok(b)
    }

    /// `ReadFString`: a `u16` length (0 when the read fails), that many bytes into a zeroed
    /// buffer, and the text up to the first zero byte.
    pub(crate) fn fstring(&mut self, dst: &mut Vec<u8>) -> io::Result<()> {
        let len = u16::from_le_bytes(self.value([0; 2])?);
        dst.clear();
        dst.resize(usize::from(len), 0);
        self.read(dst)?;
        if let Some(nul) = dst.iter().position(|&b| b == 0) {
            dst.truncate(nul);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_reads_keep_old_bytes_and_fail() {
        let mut s = CStream::new(&[1u8, 2, 3][..]);
        assert_eq!(s.value([9u8; 2]).unwrap(), [1, 2]);
        assert!(s.ok());
        assert_eq!(s.value([9u8; 4]).unwrap(), [3, 9, 9, 9]);
        assert!(!s.ok());
        assert_eq!(s.value([7u8; 1]).unwrap(), [7]);
    }

    #[test]
    fn skipping_past_the_end_fails_only_at_the_next_read() {
        let mut s = CStream::new(&[1u8, 2, 3][..]);
        s.skip(10).unwrap();
        assert!(s.ok());
        assert_eq!(s.value([5u8; 1]).unwrap(), [5]);
        assert!(!s.ok());
    }

    #[test]
    fn strings_stop_at_nul() {
        let mut s = CStream::new(&[4u8, 0, b'a', 0, b'b', b'c', 2, 0, b'x'][..]);
        let mut v = Vec::new();
        s.fstring(&mut v).unwrap();
        assert_eq!(v, b"a");
        s.fstring(&mut v).unwrap();
        assert_eq!(v, b"x");
        assert!(!s.ok());
    }
}
