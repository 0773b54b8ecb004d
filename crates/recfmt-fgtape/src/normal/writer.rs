//! The writer of Normal tapes' decompressed content.

use std::io::Write;

use super::*;
use crate::error::{Error, Result};

/// Writer of Normal tapes' decompressed content.
///
/// Wrap the output in [`gzip_encoder`] to produce a `.fgtape` file (and call `finish` on the
/// encoder returned by [`Writer::finish`]). Call [`Writer::write_header`], then exactly three
/// containers with [`Writer::write_raw_data`] (or [`Writer::start_raw_data`] and
/// [`Writer::write_frame`]), then [`Writer::finish`].
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    layout: FrameLayout,
    block_len: usize,
    mp: MpEncoding,
    header_written: bool,
    containers: usize,
    remaining: u64,
    trailing_written: bool,
}

impl<W: Write> Writer<W> {
    /// A writer producing frames in `layout`.
    pub fn new(out: W, layout: FrameLayout) -> Self {
        Writer {
            out,
            layout,
            block_len: 0,
            mp: MpEncoding::None,
            header_written: false,
            containers: 0,
            remaining: 0,
            trailing_written: false,
        }
    }

    /// Writes the endian marker and the Header, Meta and Config containers (payloads as kept).
    pub fn write_header(&mut self, header: &Header) -> Result<()> {
        if self.header_written {
            return Err(Error::invalid("the header was already written"));
        }
        if header.multiplayer == MpEncoding::Next && self.layout == FrameLayout::Vector {
            return Err(Error::Unsupported(
                "writing the `next` multiplayer encoding (FlightGear never writes it to Normal tapes)".into(),
            ));
        }
        self.out.write_all(&ENDIAN_MARKER.to_le_bytes())?;
        for (ty, payload) in [
            (CONTAINER_HEADER, &header.magic),
            (CONTAINER_META, &header.meta.payload),
            (CONTAINER_PROPERTIES, &header.config.payload),
        ] {
            self.out.write_all(&ty.to_le_bytes())?;
            self.out.write_all(&(payload.len() as u64).to_le_bytes())?;
            self.out.write_all(payload)?;
        }
        self.block_len = header.signals.block_len();
        self.mp = header.multiplayer;
        self.header_written = true;
        Ok(())
    }

    /// Starts the next RawData container with the given size field; returns the number of
    /// frames that must follow (`declared_size / record_size`).
    pub fn start_raw_data(&mut self, declared_size: u64) -> Result<u64> {
        if !self.header_written {
            return Err(Error::invalid("write_header must be called first"));
        }
        if self.remaining != 0 {
            return Err(Error::invalid(format!(
                "{} frames of the previous RawData container are missing",
                self.remaining
            )));
        }
        if self.containers == 3 {
            return Err(Error::invalid(
                "a Normal tape has exactly three RawData containers",
            ));
        }
        self.out.write_all(&CONTAINER_RAW_DATA.to_le_bytes())?;
        self.out.write_all(&declared_size.to_le_bytes())?;
        self.containers += 1;
        self.remaining = declared_size / (self.block_len as u64 + 8);
        Ok(self.remaining)
    }

    /// Writes one frame of the current container.
    pub fn write_frame(&mut self, frame: &Frame) -> Result<()> {
        if self.remaining == 0 {
            return Err(Error::invalid(
                "no frame is expected here (start_raw_data first, or too many frames)",
            ));
        }
        if frame.signals.len() != self.block_len {
            return Err(Error::invalid(format!(
                "frame signal block has {} bytes, the layout needs {}",
                frame.signals.len(),
                self.block_len
            )));
        }
        match self.layout {
            FrameLayout::Legacy => {
                if frame.padding.is_some_and(|p| p != [0; 8]) {
                    return Err(Error::invalid(
                        "legacy frames have no room for non-zero padding bytes",
                    ));
                }
                if !frame.multiplayer.is_empty() {
                    return Err(Error::invalid(
                        "legacy frames cannot hold multiplayer packets",
                    ));
                }
            }
            FrameLayout::Vector => match self.mp {
                MpEncoding::None if !frame.multiplayer.is_empty() => {
                    return Err(Error::invalid(
                        "frame has multiplayer packets but the Meta tree does not set meta/multiplayer",
                    ));
                }
                MpEncoding::Next => {
                    return Err(Error::Unsupported(
                        "writing the `next` multiplayer encoding".into(),
                    ));
                }
                _ => {}
            },
        }
        self.out.write_all(&frame.time.to_le_bytes())?;
        self.out.write_all(&frame.signals)?;
        if self.layout == FrameLayout::Vector {
            self.out.write_all(&frame.padding.unwrap_or([0; 8]))?;
            if self.mp == MpEncoding::Fg2020_3 {
                self.out
                    .write_all(&(frame.multiplayer.len() as u64).to_le_bytes())?;
                for packet in &frame.multiplayer {
                    self.out.write_all(&(packet.len() as u64).to_le_bytes())?;
                    self.out.write_all(packet)?;
                }
            }
        }
        self.remaining -= 1;
        Ok(())
    }

    /// Writes a whole RawData container.
    pub fn write_raw_data(&mut self, data: &RawData) -> Result<()> {
        let rs = self.block_len as u64 + 8;
        if data.declared_size / rs != data.frames.len() as u64 {
            return Err(Error::invalid(format!(
                "RawData size field {} means {} frames of {rs} bytes, but {} frames are given",
                data.declared_size,
                data.declared_size / rs,
                data.frames.len()
            )));
        }
        self.start_raw_data(data.declared_size)?;
        for frame in &data.frames {
            self.write_frame(frame)?;
        }
        Ok(())
    }

    /// Writes bytes after the third container (only to reproduce a file that had them).
    pub fn write_trailing(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.containers != 3 || self.remaining != 0 || self.trailing_written {
            return Err(Error::invalid(
                "trailing bytes go after the third RawData container",
            ));
        }
        self.trailing_written = true;
        self.out.write_all(bytes)?;
        Ok(())
    }

    /// Checks that the tape is complete, flushes and returns the output.
    pub fn finish(mut self) -> Result<W> {
        if !self.header_written || self.containers != 3 || self.remaining != 0 {
            return Err(Error::invalid(format!(
                "incomplete tape: header {}, {} of 3 RawData containers, {} frames missing",
                if self.header_written {
                    "written"
                } else {
                    "missing"
                },
                self.containers,
                self.remaining
            )));
        }
        self.out.flush()?;
        Ok(self.out)
    }
}
