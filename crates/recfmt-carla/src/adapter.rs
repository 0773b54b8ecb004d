//! The adapter to recfmt's generic model: one stream per packet kind.

mod decoded;

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

use recfmt_core::{
    FormatInfo, Integrity, Limits, Metadata, ReadOptions, RecordingReader, RowWriter, Schema,
    Score, TimeReference, TimeSystem, unix_to_rfc3339,
};

use crate::error::{Error, FORMAT_ID};
use crate::flavour::{Flavour, PacketKind, VectorWidth};
use crate::format::FORMAT;
use crate::header::Header;
use crate::io::Reader;
use crate::packet::Packet;
use crate::record::FixedKind;
pub use crate::schema::{STREAM_NAMES, schema};

/// Scores the first bytes of a file: 255 for the magic with version 1 or 2, 200 for the
/// magic with another version, no otherwise.
///
/// ```
/// use recfmt_core::Score;
/// let mut head = vec![1, 0, 14, 0];
/// head.extend_from_slice(b"CARLA_RECORDER");
/// assert_eq!(recfmt_carla::adapter::score(&head), Score::Yes(255));
/// assert_eq!(recfmt_carla::adapter::score(b"PK\x03\x04"), Score::No);
/// ```
pub fn score(head: &[u8]) -> Score {
    let magic = crate::header::MAGIC.as_bytes();
    match (head.get(..2), head.get(2..4), head.get(4..4 + magic.len())) {
        (Some(v), Some([14, 0]), Some(m)) if Header::is_magic(m) => {
            if matches!(v, [1 | 2, 0]) {
                Score::Yes(255)
            } else {
                Score::Yes(200)
            }
        }
        _ => Score::No,
    }
}

fn stream_of(packet: &Packet) -> Option<usize> {
    let name = match packet {
        Packet::FrameStart(_) => "frame",
        Packet::FrameEnd
        | Packet::FrameCounter(_)
        | Packet::User { .. }
        | Packet::Unknown { .. } => return None,
        Packet::TrafficLight(_) => "traffic_light",
        p => p.name(),
    };
    STREAM_NAMES.iter().position(|n| *n == name)
}

/// The stream of a packet kind (as [`stream_of`] gives it for a packet of that kind).
fn stream_of_kind(kind: PacketKind) -> Option<usize> {
    let name = match kind {
        PacketKind::FrameStart => "frame",
        PacketKind::FrameEnd | PacketKind::FrameCounter => return None,
        k => k.name(),
    };
    STREAM_NAMES.iter().position(|n| *n == name)
}

/// For each packet kind (by its position in [`PacketKind::ALL`]) with fixed-size records:
/// the record layout and the stream its rows go to.
type FixedKinds = [Option<(FixedKind, usize)>; PacketKind::ALL.len()];

fn fixed_kinds(width: VectorWidth) -> FixedKinds {
    PacketKind::ALL
        .map(|kind| FixedKind::of_kind(kind, width).and_then(|l| Some((l, stream_of_kind(kind)?))))
}

/// A packet of fixed-size records, read and checked but not decoded into a [`Packet`]: its
/// rows come straight from its body (the reader's last packet).
#[derive(Debug, Clone, Copy)]
struct FixedPacket {
    /// The layout of its records.
    layout: FixedKind,
    /// Records in the body.
    records: usize,
}

/// A CARLA recording read as recfmt streams.
///
/// Every packet kind is a stream (see [`STREAM_NAMES`]), listed even when the file holds no
/// such packet. Every row starts with `elapsed` (the time column: simulation seconds since
/// the first frame, `f64`) and `frame` (the frame id). Streams about actors carry the actor
/// id in `id`, which is the stream's entity key; packets with nested lists get one row per
/// element (`walker_bones`: per bone, `vehicle_wheels`: per wheel). Floats keep their file
/// type (`f32` in UE4, `f64` vectors in UE5). FrameEnd, FrameCounter, user and unknown
/// packets produce no rows; the latter two are noted in [`RecordingReader::integrity`].
///
/// In lenient mode (the default) a packet whose body does not fit its layout is skipped
/// and counted as corrupt, and a truncated tail ends the recording as truncated; with
/// `ReadOptions::strict` both are errors.
#[derive(Debug)]
pub struct CarlaRecording<R: Read> {
    reader: Reader<R>,
    raw_header: Header,
    header: recfmt_core::Header,
    schema: Schema,
    integrity: Integrity,
    strict: bool,
    packet: Packet,
    stream: Option<usize>,
    /// The next row of the current packet.
    at: decoded::Cursor,
    frame: u64,
    elapsed: f64,
    done: bool,
    total: Option<u64>,
    seen_raw: [bool; 256],
    scratch: decoded::Scratch,
    limits: Limits,
    seek: Option<SeekFn<R>>,
    scan_decoded: u64,
    /// Bytes read from the input by [`RecordingReader::seek_time`] calls.
    seek_read: u64,
    /// The frame being read (id, offset of its FrameStart) until its FrameEnd arrives: a file
    /// that ends while one is open lost the rest of that frame.
    open_frame: Option<(u64, u64)>,
    /// Record layouts of the fixed-size packet kinds.
    fixed: Box<FixedKinds>,
    /// The current packet when its records are of fixed size (`at.rec` counts those already
    /// turned into rows); `packet` is not decoded then.
    fixed_packet: Option<FixedPacket>,
    /// The recording ends at the first FrameStart this late ([`RecordingReader::stop_time`]).
    stop: f64,
}

/// Repositions a reader at the first frame at or after a time; set only for seekable sources.
type SeekFn<R> = fn(&mut Reader<R>, u64, f64, &Limits) -> crate::error::Result<SeekOutcome>;

/// Where [`seek_reader`] left the reader.
#[derive(Debug, Clone, Copy)]
struct SeekOutcome {
    found: bool,
    decoded: u64,
    /// Bytes the seek read from the input.
    bytes_read: u64,
}

/// Finds the first frame at or after `seconds` by binary search over byte offsets
/// ([`crate::bisect_frame`]) and positions the reader on it. The rows need nothing from the
/// frames skipped: every row comes from one packet and carries its frame's id and time, and
/// the header and flavour were read when the file was opened. (One exception stays as it was
/// with the linear scan: a 0.9.10/0.9.12 flavour switch made by a PhysicsControl packet in
/// the skipped part is made again at the next PhysicsControl that needs it.)
fn seek_reader<R: Read + Seek>(
    reader: &mut Reader<R>,
    start: u64,
    seconds: f64,
    limits: &Limits,
) -> crate::error::Result<SeekOutcome> {
    let flavour = reader.detect_flavour()?;
    let found = crate::bisect::bisect_frame(reader.get_mut(), start, seconds, flavour, limits)?;
    let scan = found.seek;
    let decoded = scan.packets_scanned * crate::packet::PACKET_HEADER_LEN as u64
        + scan.frames_scanned * crate::packet::FrameStart::SIZE as u64;
    let (offset, found_frame) = match scan.frame {
        Some(f) => (f.offset, true),
        // Nothing at or after the time: the caller yields no more rows.
        None => (start, false),
    };
    reader.seek_to_packet(offset)?;
    Ok(SeekOutcome {
        found: found_frame,
        decoded,
        bytes_read: found.bytes_read,
    })
}

impl CarlaRecording<BufReader<File>> {
    /// Opens a file.
    pub fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Self> {
        let file = File::open(path)?;
        let total = file.metadata().ok().map(|m| m.len());
        let mut rec = CarlaRecording::new_seekable(
            BufReader::with_capacity(crate::io::FILE_BUFFER, file),
            options,
            None,
        )?;
        rec.total = total;
        Ok(rec)
    }
}

impl<R: Read + Seek> CarlaRecording<R> {
    /// As [`CarlaRecording::new`], over a seekable source: [`RecordingReader::seek_time`]
    /// then finds the first frame at or after the requested time by binary search over byte
    /// offsets ([`crate::bisect_frame`]) and starts there.
    pub fn new_seekable(
        inner: R,
        options: &ReadOptions,
        flavour: Option<Flavour>,
    ) -> recfmt_core::Result<Self> {
        let mut rec = CarlaRecording::new(inner, options, flavour)?;
        rec.seek = Some(seek_reader::<R>);
        Ok(rec)
    }
}

impl<R: Read> CarlaRecording<R> {
    /// Reads the header and detects the flavour (buffering the first frame), unless
    /// `flavour` forces one.
    pub fn new(
        inner: R,
        options: &ReadOptions,
        flavour: Option<Flavour>,
    ) -> recfmt_core::Result<Self> {
        let mut reader = Reader::new(inner)
            .with_limits(options.limits)
            .with_flavour(flavour);
        let raw_header = reader.read_header()?;
        let flavour = reader.detect_flavour()?;
        let schema = schema(flavour);
        let mut metadata = Metadata::new();
        metadata.insert("map".into(), raw_header.map.to_string());
        metadata.insert("date_unix".into(), raw_header.date.to_string());
        metadata.insert("date".into(), unix_to_rfc3339(raw_header.date));
        metadata.insert("magic".into(), raw_header.magic.to_string());
        metadata.insert("flavour".into(), flavour.name().into());
        metadata.insert(
            "flavour_source".into(),
            if reader.is_flavour_forced() {
                "forced"
            } else {
                "detected"
            }
            .into(),
        );
        metadata.insert(
            "time".into(),
            "elapsed = simulation seconds since the first frame; date = wall clock when the recorder started, the epoch of elapsed".into(),
        );
        let header = recfmt_core::Header {
            format: FORMAT_ID,
            version: raw_header.version.to_string(),
            time: Some(recording_time(raw_header.date)),
            metadata,
        };
        Ok(CarlaRecording {
            reader,
            raw_header,
            header,
            schema,
            integrity: Integrity::default(),
            strict: options.strict,
            packet: Packet::FrameEnd,
            stream: None,
            at: decoded::Cursor::default(),
            frame: 0,
            elapsed: 0.0,
            done: false,
            total: None,
            seen_raw: [false; 256],
            scratch: decoded::Scratch::default(),
            limits: options.limits,
            seek: None,
            scan_decoded: 0,
            seek_read: 0,
            open_frame: None,
            fixed: Box::new(fixed_kinds(flavour.vector_width())),
            fixed_packet: None,
            stop: f64::INFINITY,
        })
    }

    /// The info header as stored.
    pub fn raw_header(&self) -> &Header {
        &self.raw_header
    }

    /// The flavour in use.
    pub fn flavour(&self) -> Option<Flavour> {
        self.reader.flavour()
    }

    /// Bytes decoded so far: the packets read for rows, plus the packet headers and
    /// FrameStart bodies a [`RecordingReader::seek_time`] scan looked at.
    pub fn bytes_decoded(&self) -> u64 {
        self.reader.bytes_decoded() + self.scan_decoded
    }

    /// Bytes [`RecordingReader::seek_time`] calls read from the input to find their frame:
    /// a few chunks per probe of the binary search and the last stretch walked, far less
    /// than the file for a long recording.
    pub fn seek_bytes_read(&self) -> u64 {
        self.seek_read
    }

    /// Reads the next packet; returns false at the end. A packet of fixed-size records whose
    /// body passes the decoder's checks is left undecoded ([`Self::fixed_packet`]): its rows
    /// come from its bytes. Any other packet is decoded (and a bad fixed-size body gives the
    /// decoder's error).
    fn next_packet(&mut self) -> recfmt_core::Result<bool> {
        self.fixed_packet = None;
        let read = match self.reader.read_packet_undecoded() {
            Ok(true) => {
                let raw = self.reader.last_raw_packet();
                let fixed = self
                    .reader
                    .flavour()
                    .and_then(|f| f.kind_of(raw.id))
                    .and_then(|kind| PacketKind::ALL.iter().position(|k| *k == kind))
                    .and_then(|kind| {
                        let (layout, stream) = self.fixed[kind]?;
                        let records = layout.records(&raw.body)?;
                        Some((FixedPacket { layout, records }, stream))
                    });
                if let Some((packet, stream)) = fixed {
                    self.fixed_packet = Some(packet);
                    self.stream = Some(stream);
                    self.at = decoded::Cursor::default();
                    return Ok(true);
                }
                self.reader.decode_last(&mut self.packet).map(|()| true)
            }
            other => other,
        };
        self.packet_read(read)
    }

    /// Bookkeeping after a packet was read into `self.packet` (or reading it failed).
    fn packet_read(&mut self, read: crate::error::Result<bool>) -> recfmt_core::Result<bool> {
        match read {
            Ok(false) => {
                self.end_of_file()?;
                Ok(false)
            }
            Ok(true) => {
                self.stream = stream_of(&self.packet);
                self.at = decoded::Cursor::default();
                match &self.packet {
                    Packet::FrameStart(f) if f.elapsed >= self.stop => {
                        // The end asked for: this frame and the rest of the file are not
                        // wanted, so not read, and no frame is left open (not truncated).
                        self.stream = None;
                        self.open_frame = None;
                        return Ok(false);
                    }
                    Packet::FrameStart(f) => {
                        self.frame = f.id;
                        self.elapsed = f.elapsed;
                        self.open_frame = Some((f.id, self.reader.last_packet_offset()));
                    }
                    Packet::FrameEnd => self.open_frame = None,
                    Packet::User { id, .. } | Packet::Unknown { id, .. } => {
                        let seen = &mut self.seen_raw[usize::from(*id)];
                        if !*seen {
                            *seen = true;
                            self.integrity.warn(format!(
                                "packet id {id} ({}) first at byte {}: kept raw, not exported",
                                self.packet.name(),
                                self.reader.last_packet_offset()
                            ));
                        }
                    }
                    _ => {}
                }
                Ok(true)
            }
            Err(e) if e.is_recoverable() && !self.strict => {
                let offset = e.offset().unwrap_or(0);
                let lost = self.reader.position().saturating_sub(offset);
                self.integrity.skip_corrupt(offset, lost, &e.to_string());
                self.stream = None;
                Ok(true)
            }
            Err(Error::Truncated {
                offset, available, ..
            }) if !self.strict => {
                self.integrity.truncate(offset, available);
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// At the end of the input: every frame the recorder writes ends with a FrameEnd packet, so
    /// a file that ends inside a frame was cut (at a packet boundary). Its complete packets
    /// were kept; the recording is truncated (an error when strict).
    fn end_of_file(&mut self) -> recfmt_core::Result<()> {
        let Some((id, start)) = self.open_frame.take() else {
            return Ok(());
        };
        let end = self.reader.position();
        if self.strict {
            return Err(recfmt_core::Error::truncated(
                FORMAT_ID,
                end,
                format!("a FrameEnd packet ending frame {id} (FrameStart at byte {start})"),
            ));
        }
        self.integrity.truncate(end, 0);
        self.integrity.warn(format!(
            "the file ends inside frame {id} (FrameStart at byte {start}): expected a FrameEnd packet at byte {end}"
        ));
        Ok(())
    }
}

impl<R: Read + Send> RecordingReader for CarlaRecording<R> {
    fn format(&self) -> &'static FormatInfo {
        &FORMAT.info
    }

    fn header(&self) -> &recfmt_core::Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn read_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<bool> {
        loop {
            if self.done {
                return Ok(false);
            }
            if let Some(stream) = self.stream {
                if let Some(fixed) = self.fixed_packet {
                    // As many of the packet's records as the row (or batch) takes, column by
                    // column straight from the body.
                    let left = fixed.records.saturating_sub(self.at.rec);
                    if left > 0 {
                        let rows = row.begin_rows(stream, left)?;
                        if rows == 0 {
                            // Not wanted: neither is the rest of the packet.
                            self.at.rec = fixed.records;
                            continue;
                        }
                        let layout = fixed.layout;
                        let start = 2 + self.at.rec * layout.size;
                        let body = &self.reader.last_raw_packet().body;
                        let records = body
                            .get(start..start + rows * layout.size)
                            .unwrap_or_default();
                        row.push_column(std::iter::repeat_n(self.elapsed, rows))?;
                        row.push_column(std::iter::repeat_n(self.frame, rows))?;
                        (layout.emit)(records, layout.width, row)?;
                        row.finish()?;
                        self.at.rec += rows;
                        return Ok(true);
                    }
                } else {
                    let place = (stream, self.elapsed, self.frame);
                    if decoded::emit_next(
                        &self.packet,
                        &mut self.at,
                        place,
                        &mut self.scratch,
                        row,
                    )? {
                        return Ok(true);
                    }
                }
            }
            if !self.next_packet()? {
                self.done = true;
                return Ok(false);
            }
        }
    }

    fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    fn progress(&self) -> (u64, Option<u64>) {
        (self.reader.position(), self.total)
    }

    /// Starts at the first frame whose elapsed time is at least `seconds` (every row of a
    /// frame has the frame's time, so no row at or after `seconds` is skipped). Only sources
    /// opened seekable ([`CarlaRecording::open`], [`CarlaRecording::new_seekable`]) can seek;
    /// others return `Ok(false)`. Returns `Ok(true)` after seeking, also when no frame is
    /// that late (no more rows then follow). May be called again, also after rows were read.
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        let Some(seek) = self.seek else {
            return Ok(false);
        };
        if seconds.is_nan() {
            return Ok(false);
        }
        let start = self.raw_header.encoded_len() as u64;
        let outcome = seek(&mut self.reader, start, seconds, &self.limits)?;
        self.scan_decoded += outcome.decoded;
        self.seek_read += outcome.bytes_read;
        self.stream = None;
        self.fixed_packet = None;
        self.open_frame = None;
        self.at = decoded::Cursor::default();
        self.done = !outcome.found;
        Ok(true)
    }

    /// Ends the recording at the first FrameStart whose elapsed time is at least `seconds`:
    /// every row of a frame has the frame's time, and the recorder writes frames with rising
    /// elapsed times (`Elapsed[k] + DurationThis[k] == Elapsed[k+1]`), so nothing after it is
    /// wanted. A frame whose time went back after that one would not be read. The frame that
    /// ends the recording is not reported as left open, and what lies after it (a cut tail
    /// included) is not read, so not reported. Works on every source, seekable or not; a
    /// later [`RecordingReader::seek_time`] keeps it.
    fn stop_time(&mut self, seconds: f64) -> bool {
        if seconds.is_nan() {
            return false;
        }
        self.stop = seconds;
        true
    }
}

/// The time reference of a log: elapsed seconds counted from the header's date (Unix
/// seconds, when the recorder started), so RFC 3339 `--start`/`--end` and absolute time
/// columns work. A date outside what an epoch can be (zero, negative, absurd: a damaged or
/// undated header) gives elapsed seconds only.
fn recording_time(date: i64) -> TimeReference {
    if date <= 0 || date as f64 > recfmt_core::MAX_ABSOLUTE_SECONDS {
        return TimeReference::new(TimeSystem::Met);
    }
    TimeReference::with_epoch(
        TimeSystem::Met,
        recfmt_core::Epoch::from_unix_seconds(date as f64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_date_is_the_epoch_of_elapsed_time() {
        let time = recording_time(1_700_000_000);
        assert_eq!(time.to_system(1.5, TimeSystem::Utc), Some(1_700_000_001.5));
        assert!(!recording_time(0).has_epoch(), "an undated header");
        assert!(!recording_time(i64::MAX).has_epoch(), "a damaged date");
    }

    #[test]
    fn dates() {
        assert_eq!(unix_to_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(unix_to_rfc3339(0x619c_e0fd), "2021-11-23T12:39:25Z");
        assert_eq!(unix_to_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(unix_to_rfc3339(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn every_stream_listed_with_entity_ids() {
        for f in Flavour::ALL {
            let s = schema(f);
            assert_eq!(s.streams.len(), STREAM_NAMES.len());
            for st in &s.streams {
                assert_eq!(st.signals[0].name, "elapsed");
                assert_eq!(st.signals[1].name, "frame");
                if let Some(e) = st.entity {
                    assert!(st.signals[e].name == "id", "{}", st.name);
                }
            }
        }
    }
}
