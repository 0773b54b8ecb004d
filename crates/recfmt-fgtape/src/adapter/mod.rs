//! The recfmt adapter: any tape as streams of rows, and the registry descriptor.
//!
//! Streams:
//!
//! * `signals`: `t` (f64 seconds), then one column per recorded signal, named by its
//!   property path with `[0]` steps removed (`/position/altitude-ft`) and typed by its signal
//!   type (f64, f32, i32, i16, i8, bool). Column metadata: `property` (the path as stored),
//!   `interpolation`, `fgtape.type`.
//! * `multiplayer` (tapes that can hold MP packets): one row per packet: `t`, `callsign`,
//!   `msg_id`, the decoded position message where it is one (`model`, `sim_time`, `lag`,
//!   `latitude_deg`, `longitude_deg`, `altitude_m` above the WGS84 ellipsoid, `ecef_x/y/z`;
//!   null otherwise), and `packet` (the raw bytes, header partly little-endian as FlightGear
//!   stores it).
//! * `extra_properties` (Continuous tapes recording them): one row per record: `t`, `path`,
//!   `value` (null for a removal), `removed`.
//!
//! Rows come in time order. For Normal tapes that means long-term, medium-term, then
//! short-term frames, the reverse of file order. Memory stays bounded to one frame: opening
//! the tape makes one pass over the gzip stream that checks it and counts the frames of each
//! RawData container; the containers are then emitted in time order, each by a fresh
//! decoder over the file that skips (decompresses and drops) everything before it. That
//! decompresses the stream about three times in all, which is cheap for tapes of a few MB.
//! Continuous tapes are streamed, and [`RecordingReader::seek_time`] seeks in them by binary
//! search over byte offsets ([`continuous::Reader::seek_time_offset`]).

mod open;
mod rows;

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use recfmt_core::{
    FormatDescriptor, FormatInfo, Header, Integrity, ReadOptions, RecordingReader, RowWriter,
    Schema, Score, Tier,
};

use crate::continuous::{self, ContinuousFrame};
use crate::error::FORMAT_ID;
use crate::normal::{self, Frame, MAGIC, RAW_DATA_NAMES};
use crate::signals::SignalLayout;
use rows::Pending;

/// Static facts about the format.
pub const INFO: FormatInfo = FormatInfo {
    id: FORMAT_ID,
    name: "FlightGear flight recorder tape",
    extensions: &["fgtape"],
};

/// The fgtape format descriptor for a [`recfmt_core::Registry`]: it also copies tapes
/// faithfully and writes KML/GPX flight tracks.
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    create: Some(crate::writer::create),
    copy: Some(crate::hooks::copy),
    outputs: &crate::hooks::OUTPUTS,
    ..FormatDescriptor::new(INFO, Tier::Magic, score, open)
};

/// Scores the first bytes of a file: the Continuous magic at byte 0, or a gzip stream (or
/// decompressed content) starting with the endian marker and the magic container.
///
/// ```
/// use recfmt_core::Score;
/// assert_eq!(recfmt_fgtape::score(b"FlightGear Flight Recorder Tape\0\x10\0\0\0"), Score::Yes(255));
/// assert_eq!(recfmt_fgtape::score(b"CARLA"), Score::No);
/// ```
pub fn score(head: &[u8]) -> Score {
    if head.starts_with(MAGIC) {
        return Score::Yes(255);
    }
    let normal_start = |d: &[u8]| {
        d.len() >= 48
            && d[..4] == normal::ENDIAN_MARKER.to_le_bytes()
            && d[4..16] == [0, 0, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0]
            && &d[16..48] == MAGIC
    };
    if head.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::with_capacity(48);
        let _ = flate2::read::GzDecoder::new(head)
            .take(48)
            .read_to_end(&mut out);
        if normal_start(&out) {
            return Score::Yes(255);
        }
        return Score::No;
    }
    if normal_start(head) {
        return Score::Yes(250);
    }
    Score::No
}

/// True when the file starts with the bare magic: a Continuous or Recovery tape (a Normal
/// tape starts with gzip or the endian marker).
pub(crate) fn starts_with_magic(path: &Path) -> std::io::Result<bool> {
    let mut head = Vec::with_capacity(MAGIC.len());
    File::open(path)?
        .take(MAGIC.len() as u64)
        .read_to_end(&mut head)?;
    Ok(head[..] == MAGIC[..])
}

fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    Ok(Box::new(FgTape::open(path, options)?))
}

/// The frames of a Normal tape, emitted container by container in time order.
#[derive(Debug)]
struct NormalFrames {
    path: PathBuf,
    options: ReadOptions,
    /// Frames read in the first pass, per container (short, medium, long).
    kept: [u64; 3],
    /// Containers still to emit; the next one is last.
    todo: Vec<usize>,
    /// The reader positioned in the container being emitted, and the frames left in it.
    current: Option<(Box<normal::Reader<BufReader<File>>>, u64)>,
    frame: Frame,
    emitted: u64,
}

impl NormalFrames {
    /// Reads the next frame into `self.frame`; `false` when every kept frame was emitted.
    fn next_frame(&mut self) -> crate::Result<bool> {
        loop {
            if let Some((reader, left)) = &mut self.current {
                if *left > 0 && reader.read_frame(&mut self.frame)? {
                    *left -= 1;
                    self.emitted += 1;
                    return Ok(true);
                }
                self.current = None;
            }
            let Some(index) = self.todo.pop() else {
                return Ok(false);
            };
            let reader = self.open_container(index)?;
            self.current = Some((Box::new(reader), self.kept[index]));
        }
    }

    /// A fresh reader over the file, positioned at the first frame of container `index`.
    fn open_container(&self, index: usize) -> crate::Result<normal::Reader<BufReader<File>>> {
        let file = BufReader::with_capacity(64 * 1024, File::open(&self.path)?);
        let mut reader = normal::Reader::with_options(file, &self.options)?;
        reader.read_header()?;
        while let Some(h) = reader.next_container()? {
            if h.index == index {
                return Ok(reader);
            }
        }
        Err(crate::Error::invalid(format!(
            "the {} container is gone (the file changed while it was read)",
            RAW_DATA_NAMES[index]
        )))
    }
}

#[derive(Debug)]
enum Frames {
    Normal(Box<NormalFrames>),
    Continuous {
        reader: Box<continuous::Reader<BufReader<File>>>,
        frame: ContinuousFrame,
        signals: Option<usize>,
        multiplayer: Option<usize>,
        extra: Option<usize>,
    },
}

/// Any fgtape (Normal, Continuous or Recovery) as a [`RecordingReader`].
#[derive(Debug)]
pub struct FgTape {
    header: Header,
    schema: Schema,
    integrity: Integrity,
    layout: Option<SignalLayout>,
    frames: Frames,
    pending: VecDeque<Pending>,
    /// Index of the `signals`, `multiplayer` and `extra_properties` streams.
    streams: [Option<usize>; 3],
    size: u64,
    done: bool,
    strict: bool,
    /// The frames end at the first one this late ([`RecordingReader::stop_time`]).
    stop: f64,
    /// True once the frames ended there, before the end of the tape.
    stopped: bool,
    /// Bytes [`RecordingReader::seek_time`] calls read to find their frame.
    seek_read: u64,
}

impl FgTape {
    /// Bytes [`RecordingReader::seek_time`] calls read from the tape to find their frame: a
    /// few chunks per probe of the binary search and the last stretch walked, far less than
    /// the tape for a long recording.
    pub fn seek_bytes_read(&self) -> u64 {
        self.seek_read
    }

    fn advance(&mut self) -> crate::Result<Option<f64>> {
        match &mut self.frames {
            Frames::Normal(normal) => {
                let more = match normal.next_frame() {
                    Ok(more) => more,
                    Err(e) if !self.strict => {
                        let offset = e.offset().map_or(0, |o| o.get());
                        self.integrity.skip_corrupt(offset, 0, &e.to_string());
                        false
                    }
                    Err(e) => return Err(e),
                };
                if !more {
                    self.done = true;
                    return Ok(None);
                }
                let time = normal.frame.time;
                if time >= self.stop {
                    // Nothing from here on is wanted: the containers left stay compressed.
                    self.done = true;
                    self.stopped = true;
                    return Ok(None);
                }
                self.pending.extend(
                    normal
                        .frame
                        .multiplayer
                        .drain(..)
                        .map(|packet| Pending::Mp { time, packet }),
                );
                Ok(Some(time))
            }
            Frames::Continuous {
                reader,
                frame,
                multiplayer,
                extra,
                ..
            } => {
                let more = match reader.read_frame(frame) {
                    Ok(more) => more,
                    Err(e) if !self.strict => {
                        let offset = e.offset().map_or(reader.position(), |o| o.get());
                        self.integrity.skip_corrupt(offset, 0, &e.to_string());
                        false
                    }
                    Err(e) => return Err(e),
                };
                if !more {
                    if let Some(t) = reader.truncated()
                        && self.integrity.truncated_at != Some(t.offset.get())
                    {
                        self.integrity.truncate(t.offset.get(), t.bytes);
                    }
                    self.done = true;
                    return Ok(None);
                }
                let time = frame.time;
                if time >= self.stop {
                    // Nothing from here on is wanted; a cut tail after it is not reached, so
                    // not reported.
                    self.done = true;
                    self.stopped = true;
                    return Ok(None);
                }
                if let Some(item) = multiplayer.and_then(|i| frame.items.get(i)) {
                    match crate::mp::split_u16_packets(item) {
                        Ok(list) => self.pending.extend(list.into_iter().map(|p| Pending::Mp {
                            time,
                            packet: p.to_vec(),
                        })),
                        Err(at) => self.integrity.warn(format!(
                            "frame at t={time}: multiplayer item broken at item byte {at}"
                        )),
                    }
                }
                if let Some(item) = extra.and_then(|i| frame.items.get(i)) {
                    match continuous::decode_extra_properties(item) {
                        Ok(list) => self.pending.extend(
                            list.into_iter()
                                .map(|record| Pending::Extra { time, record }),
                        ),
                        Err(at) => self.integrity.warn(format!(
                            "frame at t={time}: extra-properties item broken at item byte {at}"
                        )),
                    }
                }
                Ok(Some(time))
            }
        }
    }

    /// The one decode path: writes the next row (a queued multiplayer or extra-property
    /// row, else the signals of the next frame) to `row`, and on the batch path the rows
    /// after it while the batches have room. False at the end of the tape.
    fn next_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<bool> {
        loop {
            if let Some(pending) = self.pending.pop_front() {
                pending.write(&self.streams, row)?;
                if !row.has_room() {
                    return Ok(true);
                }
                continue;
            }
            if self.done {
                return Ok(false);
            }
            let Some(time) = self.advance()? else {
                continue;
            };
            if let (Some(layout), Some(stream), Some(block)) =
                (&self.layout, self.streams[0], self.frames.signal_block())
            {
                rows::write_signals(layout, stream, time, block, row)?;
            }
            if !row.has_room() {
                return Ok(true);
            }
        }
    }
}

impl Frames {
    /// The signal block of the frame last read (`None` for tapes without signals).
    fn signal_block(&self) -> Option<&[u8]> {
        match self {
            Frames::Normal(normal) => Some(&normal.frame.signals),
            Frames::Continuous {
                frame,
                signals: Some(i),
                ..
            } => frame.items.get(*i).map(Vec::as_slice),
            Frames::Continuous { signals: None, .. } => None,
        }
    }
}

impl RecordingReader for FgTape {
    fn format(&self) -> &'static FormatInfo {
        &FORMAT.info
    }
    fn header(&self) -> &Header {
        &self.header
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<bool> {
        self.next_row(row)
    }
    fn integrity(&self) -> &Integrity {
        &self.integrity
    }
    fn progress(&self) -> (u64, Option<u64>) {
        match &self.frames {
            Frames::Normal(normal) => {
                let total: u64 = normal.kept.iter().sum();
                // Frames emitted stand for the work done (the stream was read once at open);
                // a read ended by `stop_time` did not do the rest.
                if total == 0 || (self.done && !self.stopped) {
                    (self.size, Some(self.size))
                } else {
                    let done = (u128::from(self.size) * u128::from(normal.emitted)
                        / u128::from(total)) as u64;
                    (done, Some(self.size))
                }
            }
            Frames::Continuous { reader, .. } => (reader.position(), Some(self.size)),
        }
    }
    /// Continuous and Recovery tapes: moves to the first frame, in file order, whose time is
    /// at least `seconds`, found by binary search over byte offsets that resynchronises on
    /// confirmed frame starts ([`continuous::Reader::seek_time_offset`]: a few chunks read
    /// per probe, not the whole tape). Rows from there on are all rows of the tape at or
    /// after `seconds` (plus, if times do not rise through the file, any later frames with
    /// earlier times): every row (signals, multiplayer packet, extra property) comes from
    /// its own frame, so nothing before it is needed. Extra-property rows before that frame
    /// are skipped too, so a state rebuilt from them lacks earlier changes. Normal tapes are
    /// one gzip stream, and so are gzip-wrapped Continuous tapes: `Ok(false)` (rows are then
    /// filtered by time from the start).
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        let Frames::Continuous { reader, .. } = &mut self.frames else {
            return Ok(false);
        };
        if seconds.is_nan() || !reader.can_seek() {
            return Ok(false);
        }
        let found = reader.seek_time_offset(seconds)?;
        self.seek_read += found.bytes_read;
        self.pending.clear();
        self.done = false;
        self.stopped = false;
        Ok(true)
    }

    /// Ends the rows at the first frame, in the order rows come, whose time is at least
    /// `seconds`: its rows and the rest of the tape are not read. Continuous and Recovery
    /// tapes stop reading the file there; Normal tapes, whose rows come container by
    /// container in time order (long-term, medium-term, short-term), stop decompressing, so
    /// the containers after it are never inflated again (the pass at open already read the
    /// stream once). Frames are assumed to rise in time, as FlightGear records them: a frame
    /// whose time goes back below `seconds` after a later one is not read. A tape cut after
    /// the end is not reached, so not reported. Before the first row only.
    fn stop_time(&mut self, seconds: f64) -> bool {
        if seconds.is_nan() {
            return false;
        }
        self.stop = seconds;
        true
    }
}
