//! Streaming writer.

use std::io::{Seek, SeekFrom, Write};

use crate::codec;
use crate::error::{Error, Result};
use crate::flavour::Flavour;
use crate::header::Header;
use crate::packet::{FrameStart, PACKET_HEADER_LEN, Packet};

/// Writes a recorder file packet by packet to any [`Write`].
///
/// Packets are written exactly as given: a packet read by [`crate::Reader`] is written back
/// byte for byte. The flavour gives the id of each packet kind. The writer does not reorder
/// packets or add the "always written" empty packets; the caller emits them in CARLA's order
/// (see the crate documentation).
///
/// With a seekable output, [`Writer::begin_frame`] reproduces the recorder's handling of
/// `duration_this`: each FrameStart is written with -1 and patched when the next one starts.
#[derive(Debug)]
pub struct Writer<W: Write> {
    inner: W,
    flavour: Flavour,
    buf: Vec<u8>,
    pos: u64,
    last_frame: Option<(u64, f64)>,
}

impl<W: Write> Writer<W> {
    /// A writer using the ids of `flavour`.
    pub fn new(inner: W, flavour: Flavour) -> Self {
        Writer {
            inner,
            flavour,
            buf: Vec::new(),
            pos: 0,
            last_frame: None,
        }
    }

    /// The flavour whose ids are written.
    pub fn flavour(&self) -> Flavour {
        self.flavour
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The underlying writer, mutably. Writing to it desynchronises [`Writer::position`].
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(mut self) -> Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> Result<()> {
        self.inner.flush()?;
        Ok(())
    }

    fn emit(&mut self) -> Result<usize> {
        self.inner.write_all(&self.buf)?;
        self.pos += self.buf.len() as u64;
        Ok(self.buf.len())
    }

    /// Writes the info header.
    pub fn write_header(&mut self, header: &Header) -> Result<()> {
        self.buf.clear();
        codec::encode_header(header, &mut self.buf)?;
        self.emit()?;
        Ok(())
    }

    /// Writes one packet; returns the bytes written (5 + body size).
    pub fn write_packet(&mut self, packet: &Packet) -> Result<usize> {
        self.buf.clear();
        codec::encode_packet(packet, self.flavour, &mut self.buf)?;
        if let Packet::FrameStart(f) = packet {
            self.last_frame = Some((self.pos, f.elapsed));
        }
        self.emit()
    }

    /// Writes a packet from its id and body bytes; returns the bytes written.
    pub fn write_raw_packet(&mut self, id: u8, body: &[u8]) -> Result<usize> {
        let size = u32::try_from(body.len()).map_err(|_| Error::TooLarge {
            what: "packet body",
            len: body.len() as u64,
            max: u64::from(u32::MAX),
        })?;
        self.buf.clear();
        self.buf.push(id);
        self.buf.extend_from_slice(&size.to_le_bytes());
        self.buf.extend_from_slice(body);
        self.emit()
    }
}

impl<W: Write + Seek> Writer<W> {
    /// Overwrites the `duration_this` of the FrameStart packet written at `frame_offset`.
    pub fn patch_duration(&mut self, frame_offset: u64, duration: f64) -> Result<()> {
        let at = frame_offset + PACKET_HEADER_LEN as u64 + 8;
        if at + 8 > self.pos {
            return Err(Error::TooLarge {
                what: "FrameStart offset to patch",
                len: frame_offset,
                max: self
                    .pos
                    .saturating_sub(FrameStart::SIZE as u64 + PACKET_HEADER_LEN as u64),
            });
        }
        self.inner.seek(SeekFrom::Start(at))?;
        self.inner.write_all(&duration.to_le_bytes())?;
        self.inner.seek(SeekFrom::Start(self.pos))?;
        Ok(())
    }

    /// Starts a frame the way the recorder does: patches the previous FrameStart's
    /// `duration_this` to `elapsed - previous elapsed`, then writes a FrameStart with
    /// `duration_this = -1.0`. Returns the bytes written.
    pub fn begin_frame(&mut self, id: u64, elapsed: f64) -> Result<usize> {
        if let Some((offset, previous)) = self.last_frame {
            self.patch_duration(offset, elapsed - previous)?;
        }
        self.write_packet(&Packet::FrameStart(FrameStart {
            id,
            duration_this: -1.0,
            elapsed,
        }))
    }
}
