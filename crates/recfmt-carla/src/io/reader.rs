//! Streaming reader.

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};

use recfmt_core::Limits;

use crate::codec;
use crate::detect::FlavourDetector;
use crate::error::{Error, Result, check_limit};
use crate::flavour::{Flavour, PacketKind};
use crate::header::Header;
use crate::packet::{PACKET_HEADER_LEN, Packet};

/// Most bytes the reader buffers ahead while it detects the flavour.
const LOOKAHEAD_BYTES: usize = 64 << 20;
/// Most packets the reader buffers ahead while it detects the flavour.
const LOOKAHEAD_PACKETS: usize = 1 << 16;
/// Frames after which detection stops waiting for more evidence.
const LOOKAHEAD_FRAMES: u64 = 16;

/// A packet as stored: its offset, id and undecoded body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawPacket {
    /// Offset of the packet header (the id byte) in the file.
    pub offset: u64,
    /// Packet id.
    pub id: u8,
    /// Body bytes (the header's size field is `body.len()`).
    pub body: Vec<u8>,
}

/// Reads a recorder file packet by packet from any [`Read`], without reading it whole.
///
/// Call [`Reader::read_header`] first, then [`Reader::read_packet`] until it returns
/// `false` (or iterate over [`Reader::packets`]).
/// Offsets are `u64`, so files over 4 GiB work. Sizes are checked against
/// [`recfmt_core::Limits`] before any buffer is sized by them.
///
/// Unless a flavour is forced with [`Reader::with_flavour`], the first `read_packet`
/// buffers the first frame (at most 16 frames or 64 MiB) to detect it with a
/// [`FlavourDetector`]. A PhysicsControl packet that does not fit the detected 0.9.10/0.9.12
/// wheel layout but fits the other one switches the flavour.
///
/// Errors: a [`Error::Size`] or [`Error::Malformed`] error concerns one packet; the reader
/// has moved past it and the next call continues with the next packet. After
/// [`Error::Truncated`] (the file ends inside a packet) or a size over the limit, further
/// calls return `false`.
#[derive(Debug)]
pub struct Reader<R> {
    inner: R,
    limits: Limits,
    forced: Option<Flavour>,
    flavour: Option<Flavour>,
    header: Option<Header>,
    pos: u64,
    queue: VecDeque<RawPacket>,
    pending: Option<Error>,
    finished: bool,
    raw: RawPacket,
    notes: Vec<String>,
    header_failed: bool,
    decoded: u64,
    /// Bytes the last packet read spans (header and body, also when the body was skipped).
    last_len: u64,
}

impl<R: Read> Reader<R> {
    /// A reader with default limits and flavour detection. Wrap unbuffered sources (files)
    /// in a [`std::io::BufReader`].
    pub fn new(inner: R) -> Self {
        Reader {
            inner,
            limits: Limits::default(),
            forced: None,
            flavour: None,
            header: None,
            pos: 0,
            queue: VecDeque::new(),
            pending: None,
            finished: false,
            raw: RawPacket::default(),
            notes: Vec::new(),
            header_failed: false,
            decoded: 0,
            last_len: 0,
        }
    }

    /// Sets the limits checked before allocating.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Forces the flavour instead of detecting it; `None` restores detection.
    pub fn with_flavour(mut self, flavour: Option<Flavour>) -> Self {
        self.forced = flavour;
        self.flavour = flavour;
        self
    }

    /// The header, once read.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The flavour in use, once forced or detected (detection happens at the first
    /// [`Reader::read_packet`], or with [`Reader::detect_flavour`]).
    pub fn flavour(&self) -> Option<Flavour> {
        self.flavour
    }

    /// True when the flavour was forced by the caller.
    pub fn is_flavour_forced(&self) -> bool {
        self.forced.is_some()
    }

    /// Notes about detection decisions (for instance a flavour switch), oldest first.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Offset of the next packet the reader will return.
    pub fn position(&self) -> u64 {
        self.queue.front().map_or(self.pos, |p| p.offset)
    }

    /// Bytes consumed from the underlying reader so far (more than [`Reader::position`]
    /// while the lookahead holds packets).
    pub fn bytes_consumed(&self) -> u64 {
        self.pos
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The underlying reader, mutably. Reading from it desynchronises this reader.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads up to `n` bytes, appending them to `buf`; returns how many were read (fewer only
    /// at the end of the input).
    fn append(&mut self, buf: &mut Vec<u8>, n: u64) -> io::Result<u64> {
        let got = (&mut self.inner).take(n).read_to_end(buf)? as u64;
        self.pos += got;
        Ok(got)
    }

    /// Reads and checks the info header. Calling it again returns the header already read.
    ///
    /// Fails on a wrong magic, on a version other than 1 or 2 (unless a flavour is forced),
    /// and with [`Error::Truncated`] when the input ends inside the header. After a failure,
    /// every further read fails.
    pub fn read_header(&mut self) -> Result<Header> {
        if let Some(h) = &self.header {
            return Ok(h.clone());
        }
        if self.header_failed {
            return Err(Error::Io(io::Error::new(
                io::ErrorKind::InvalidData,
                "the info header could not be read",
            )));
        }
        let result = self.read_header_inner();
        self.header_failed = result.is_err();
        result
    }

    fn read_header_inner(&mut self) -> Result<Header> {
        let mut buf = Vec::with_capacity(64);
        let truncated = |available: usize, needed: usize| Error::Truncated {
            what: "info header",
            offset: 0,
            needed: needed as u64,
            available: available as u64,
        };
        let mut needed = 4;
        self.append(&mut buf, 4)?;
        if buf.len() < needed {
            return Err(truncated(buf.len(), needed));
        }
        // Checks the magic length before reading on.
        codec::parse_header(&buf)?;
        needed += 14 + 8 + 2;
        self.append(&mut buf, 24)?;
        codec::parse_header(&buf)?;
        if buf.len() < needed {
            return Err(truncated(buf.len(), needed));
        }
        let map_len = u16::from_le_bytes([buf[needed - 2], buf[needed - 1]]);
        needed += usize::from(map_len);
        self.append(&mut buf, u64::from(map_len))?;
        let Some((header, _)) = codec::parse_header(&buf)? else {
            return Err(truncated(buf.len(), needed));
        };
        if !matches!(header.version, 1 | 2) && self.forced.is_none() {
            return Err(Error::UnsupportedVersion {
                version: header.version,
            });
        }
        self.header = Some(header.clone());
        Ok(header)
    }

    /// Reads the next packet without decoding it. Returns `false` at the end of the file.
    pub fn read_raw_packet(&mut self, dst: &mut RawPacket) -> Result<bool> {
        self.read_raw_packet_if(dst, |_, _| true)
    }

    /// Reads the next packet's header and, when `want_body(id, size)` says so, its body;
    /// otherwise the body is skipped without being buffered and `dst.body` is left empty
    /// ([`Reader::last_packet_len`] still gives the packet's size). Returns `false` at the
    /// end of the file.
    pub fn read_raw_packet_if(
        &mut self,
        dst: &mut RawPacket,
        want_body: impl FnOnce(u8, u32) -> bool,
    ) -> Result<bool> {
        let n = self.read_raw_sized(dst, want_body)?;
        self.last_len = n as u64;
        Ok(n > 0)
    }

    /// [`Reader::read_raw_packet_if`], returning the bytes the packet spans (0 at the end).
    fn read_raw_sized(
        &mut self,
        dst: &mut RawPacket,
        want_body: impl FnOnce(u8, u32) -> bool,
    ) -> Result<usize> {
        if self.header.is_none() {
            self.read_header()?;
        }
        if let Some(mut p) = self.queue.pop_front() {
            std::mem::swap(dst, &mut p);
            return Ok(PACKET_HEADER_LEN + dst.body.len());
        }
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.finished {
            return Ok(0);
        }
        self.read_from_inner(dst, want_body)
    }

    fn read_from_inner(
        &mut self,
        dst: &mut RawPacket,
        want_body: impl FnOnce(u8, u32) -> bool,
    ) -> Result<usize> {
        let offset = self.pos;
        dst.offset = offset;
        dst.body.clear();
        let got = self.append(&mut dst.body, PACKET_HEADER_LEN as u64)?;
        if got == 0 {
            self.finished = true;
            return Ok(0);
        }
        if got < PACKET_HEADER_LEN as u64 {
            self.finished = true;
            dst.body.clear();
            return Err(Error::Truncated {
                what: "packet header",
                offset,
                needed: PACKET_HEADER_LEN as u64,
                available: got,
            });
        }
        let (id, size) = codec::peek_packet_header(&dst.body).unwrap_or((0, 0));
        dst.id = id;
        dst.body.clear();
        let size64 = u64::from(size);
        if let Err(e) = check_limit("packet size", size64, self.limits.max_record_len, offset) {
            self.finished = true;
            return Err(e);
        }
        let got = if want_body(id, size) {
            self.append(&mut dst.body, size64)?
        } else {
            let n = io::copy(&mut (&mut self.inner).take(size64), &mut io::sink())?;
            self.pos += n;
            n
        };
        if got < size64 {
            self.finished = true;
            return Err(Error::Truncated {
                what: self.packet_what(id),
                offset,
                needed: PACKET_HEADER_LEN as u64 + size64,
                available: PACKET_HEADER_LEN as u64 + got,
            });
        }
        usize::try_from(size64 + PACKET_HEADER_LEN as u64).map_err(|_| Error::Limit {
            what: "packet size",
            value: size64,
            limit: usize::MAX as u64,
            offset,
        })
    }

    fn packet_what(&self, id: u8) -> &'static str {
        match self.flavour.and_then(|f| f.kind_of(id)) {
            Some(PacketKind::FrameStart) => "frame_start packet",
            Some(PacketKind::EventAdd) => "event_add packet",
            Some(PacketKind::Position) => "position packet",
            Some(_) => "packet body",
            None if id >= crate::packet::FIRST_USER_ID => "user packet body",
            None => "packet body",
        }
    }

    /// Detects the flavour now (buffering the first frame) unless it is known already, and
    /// returns it.
    pub fn detect_flavour(&mut self) -> Result<Flavour> {
        if let Some(f) = self.flavour {
            return Ok(f);
        }
        let header = self.read_header()?;
        let mut detector = FlavourDetector::new(&header);
        let mut bytes = 0usize;
        while !detector.is_decided()
            && detector.frames() <= LOOKAHEAD_FRAMES
            && bytes < LOOKAHEAD_BYTES
            && self.queue.len() < LOOKAHEAD_PACKETS
            && !self.finished
        {
            let mut p = RawPacket::default();
            match self.read_from_inner(&mut p, |_, _| true) {
                Ok(0) => break,
                Ok(n) => {
                    bytes += n;
                    detector.observe(p.id, &p.body);
                    self.queue.push_back(p);
                }
                Err(e) => {
                    self.pending = Some(e);
                    break;
                }
            }
        }
        let f = detector.flavour();
        self.notes.push(format!(
            "flavour {f} detected from {} packets in {} frames",
            detector.packets(),
            detector.frames()
        ));
        self.flavour = Some(f);
        Ok(f)
    }

    /// Reads and decodes the next packet into `dst`, reusing its buffers. Returns `false`
    /// at the end of the file; [`Reader::last_packet_len`] gives the bytes the packet spans.
    ///
    /// Reads the header first if [`Reader::read_header`] was not called.
    pub fn read_packet(&mut self, dst: &mut Packet) -> Result<bool> {
        let more = self.read_packet_undecoded()?;
        if more {
            self.decode_last(dst)?;
        }
        Ok(more)
    }

    /// [`Reader::read_packet`] for readers that keep what a torn file holds: a packet cut by
    /// the end of the input ends the reading (`false`) and is recorded in `integrity`, with a
    /// warning that names `source` and says what the output keeps (`then`, e.g. "the copy
    /// ends with the packet before it"). Other errors are returned.
    pub(crate) fn read_packet_or_torn(
        &mut self,
        dst: &mut Packet,
        integrity: &mut recfmt_core::Integrity,
        source: &std::path::Path,
        then: &str,
    ) -> Result<bool> {
        match self.read_packet(dst) {
            Err(Error::Truncated {
                what,
                offset,
                available,
                ..
            }) => {
                integrity.truncate(offset, available);
                integrity.warn(format!(
                    "{}: truncated {what} at byte {offset}: {then}",
                    source.display()
                ));
                Ok(false)
            }
            other => other,
        }
    }

    /// The packets from here to the end, each decoded into a new [`Packet`] (use
    /// [`Reader::read_packet`] to reuse one). After an error that concerns one packet the
    /// iteration goes on with the next; after a truncation or a size over the limit it ends.
    pub fn packets(&mut self) -> Packets<'_, R> {
        Packets {
            reader: self,
            ended: false,
        }
    }

    /// The first half of [`Reader::read_packet`]: reads the next packet, counts it as
    /// decoded and keeps it as the last packet ([`Reader::last_raw_packet`]) without decoding
    /// its body. Returns `false` at the end of the file. The adapter decodes fixed-size
    /// bodies itself and everything else with [`Reader::decode_last`].
    pub(crate) fn read_packet_undecoded(&mut self) -> Result<bool> {
        self.detect_flavour()?;
        let mut raw = std::mem::take(&mut self.raw);
        let result = self.read_raw_packet(&mut raw);
        if let Ok(true) = result {
            self.decoded += self.last_len;
        }
        self.raw = raw;
        result
    }

    /// Bytes the last packet read spans in the file: its 5-byte header and its body.
    pub fn last_packet_len(&self) -> u64 {
        self.last_len
    }

    /// The second half of [`Reader::read_packet`]: decodes the last packet read into `dst`
    /// (switching between the 0.9.10 and 0.9.12 flavours as `read_packet` does).
    pub(crate) fn decode_last(&mut self, dst: &mut Packet) -> Result<()> {
        let flavour = self.detect_flavour()?;
        let raw = std::mem::take(&mut self.raw);
        let result = self.decode(&raw, flavour, dst);
        self.raw = raw;
        result
    }

    /// The last packet read, undecoded.
    pub(crate) fn last_raw_packet(&self) -> &RawPacket {
        &self.raw
    }

    /// Bytes of the packets [`Reader::read_packet`] has decoded (headers included).
    pub fn bytes_decoded(&self) -> u64 {
        self.decoded
    }

    /// Offset of the last packet returned by [`Reader::read_packet`].
    pub fn last_packet_offset(&self) -> u64 {
        self.raw.offset
    }

    fn decode(&mut self, raw: &RawPacket, flavour: Flavour, dst: &mut Packet) -> Result<()> {
        let result = codec::decode_body(raw.id, &raw.body, raw.offset, flavour, &self.limits, dst);
        let switchable = self.forced.is_none()
            && matches!(flavour, Flavour::Carla0910 | Flavour::Carla0912)
            && flavour.kind_of(raw.id) == Some(PacketKind::PhysicsControl);
        match result {
            Err(Error::Size { .. }) if switchable => {
                let other = if flavour == Flavour::Carla0910 {
                    Flavour::Carla0912
                } else {
                    Flavour::Carla0910
                };
                let mut retry = Packet::default();
                if codec::decode_body(
                    raw.id,
                    &raw.body,
                    raw.offset,
                    other,
                    &self.limits,
                    &mut retry,
                )
                .is_ok()
                {
                    self.notes.push(format!(
                        "PhysicsControl at byte {} fits flavour {other}, not {flavour}: switched",
                        raw.offset
                    ));
                    self.flavour = Some(other);
                    *dst = retry;
                    return Ok(());
                }
                result
            }
            r => r,
        }
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Continues reading at `offset`, which must be the offset of a packet (from
    /// [`crate::index_frames`], [`RawPacket::offset`] or [`crate::seek_frame`]). Drops the
    /// detection lookahead and any pending error; the header and flavour are kept (the header
    /// is read first if it was not).
    pub fn seek_to_packet(&mut self, offset: u64) -> Result<()> {
        self.read_header()?;
        self.inner.seek(SeekFrom::Start(offset))?;
        self.pos = offset;
        self.queue.clear();
        self.pending = None;
        self.finished = false;
        Ok(())
    }
}

/// The packets of a [`Reader`], decoded: see [`Reader::packets`].
#[derive(Debug)]
pub struct Packets<'a, R> {
    reader: &'a mut Reader<R>,
    /// The end was reached, or a read failed: nothing more is read.
    ended: bool,
}

impl<R: Read> Iterator for Packets<'_, R> {
    type Item = Result<Packet>;

    fn next(&mut self) -> Option<Self::Item> {
        recfmt_core::next_read(&mut self.ended, |packet| self.reader.read_packet(packet))
    }
}
