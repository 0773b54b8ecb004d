//! The adapter to recfmt's generic model: one stream per packet kind.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

use recfmt_core::{
    BatchSet, FormatInfo, FrameBuf, Integrity, Limits, Metadata, ReadOptions, RecordingReader,
    Schema, Score, TimeReference, TimeSystem, Value, unix_to_rfc3339,
};

use crate::error::{Error, FORMAT_ID};
use crate::fixed::FixedLayout;
use crate::flavour::{Flavour, PacketKind, VectorWidth};
use crate::format::FORMAT;
use crate::header::Header;
use crate::io::Reader;
use crate::packet::{Packet, PhysicsControl};
use crate::primitive::Vector3;
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
type FixedKinds = [Option<(FixedLayout, usize)>; PacketKind::ALL.len()];

fn fixed_kinds(width: VectorWidth) -> FixedKinds {
    PacketKind::ALL
        .map(|kind| FixedLayout::of(kind, width).and_then(|l| Some((l, stream_of_kind(kind)?))))
}

/// A fixed-size packet the batch path read and checked but did not decode into a
/// [`Packet`]: its body is the reader's last packet.
#[derive(Debug, Clone, Copy)]
struct FixedPacket {
    /// Position of the kind in [`PacketKind::ALL`].
    kind: usize,
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
    rec: usize,
    sub: usize,
    frame: u64,
    elapsed: f64,
    done: bool,
    total: Option<u64>,
    seen_raw: [bool; 256],
    scratch: String,
    limits: Limits,
    seek: Option<SeekFn<R>>,
    scan_decoded: u64,
    /// The frame being read (id, offset of its FrameStart) until its FrameEnd arrives: a file
    /// that ends while one is open lost the rest of that frame.
    open_frame: Option<(u64, u64)>,
    /// Record layouts of the fixed-size packet kinds, for the batch path.
    fixed: Box<FixedKinds>,
    /// The current packet when the batch path left it undecoded (`rec` counts its records
    /// already turned into rows); decoded before the row path goes on with it.
    fixed_packet: Option<FixedPacket>,
    /// The row the batch path builds rows of other packets in.
    row: FrameBuf,
}

/// Repositions a reader at the first frame at or after a time; set only for seekable sources.
type SeekFn<R> = fn(&mut Reader<R>, u64, f64, &Limits) -> crate::error::Result<SeekOutcome>;

/// Where [`seek_reader`] left the reader.
#[derive(Debug, Clone, Copy)]
struct SeekOutcome {
    found: bool,
    decoded: u64,
}

fn seek_reader<R: Read + Seek>(
    reader: &mut Reader<R>,
    start: u64,
    seconds: f64,
    limits: &Limits,
) -> crate::error::Result<SeekOutcome> {
    let scan = crate::index::seek_frame(reader.get_mut(), start, seconds, limits)?;
    let decoded = scan.packets_scanned * crate::packet::PACKET_HEADER_LEN as u64
        + scan.frames_scanned * crate::packet::FrameStart::SIZE as u64;
    match scan.frame {
        Some(f) => {
            reader.seek_to_packet(f.offset)?;
            Ok(SeekOutcome {
                found: true,
                decoded,
            })
        }
        None => {
            // Nothing at or after the time: the caller yields no more rows.
            reader.seek_to_packet(start)?;
            Ok(SeekOutcome {
                found: false,
                decoded,
            })
        }
    }
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
    /// then scans frame headers (seeking over packet bodies) and starts at the first frame
    /// at or after the requested time.
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
            "elapsed = simulation seconds since the first frame; date = wall clock when the recorder started".into(),
        );
        let header = recfmt_core::Header {
            format: FORMAT_ID,
            version: raw_header.version.to_string(),
            time: Some(TimeReference::new(TimeSystem::Met)),
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
            rec: 0,
            sub: 0,
            frame: 0,
            elapsed: 0.0,
            done: false,
            total: None,
            seen_raw: [false; 256],
            scratch: String::new(),
            limits: options.limits,
            seek: None,
            scan_decoded: 0,
            open_frame: None,
            fixed: Box::new(fixed_kinds(flavour.vector_width())),
            fixed_packet: None,
            row: FrameBuf::default(),
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

    /// Reads the next packet; returns false at the end.
    fn next_packet(&mut self) -> recfmt_core::Result<bool> {
        self.fixed_packet = None;
        let read = self.reader.read_packet(&mut self.packet);
        self.packet_read(read)
    }

    /// The batch form of [`Self::next_packet`]: a packet of a fixed-size kind whose body
    /// passes the decoder's checks is left undecoded ([`Self::fixed_packet`]); any other
    /// packet is decoded as the row path decodes it. Same streams, integrity notes and
    /// errors.
    fn next_packet_batch(&mut self) -> recfmt_core::Result<bool> {
        self.fixed_packet = None;
        let read = match self.reader.read_packet_undecoded() {
            Ok(0) => Ok(0),
            Ok(n) => {
                let raw = self.reader.last_raw_packet();
                let fixed = self
                    .reader
                    .flavour()
                    .and_then(|f| f.kind_of(raw.id))
                    .and_then(|kind| PacketKind::ALL.iter().position(|k| *k == kind))
                    .and_then(|kind| {
                        let (layout, stream) = self.fixed[kind].as_ref()?;
                        let records = layout.check(&raw.body)?;
                        Some((FixedPacket { kind, records }, *stream))
                    });
                if let Some((packet, stream)) = fixed {
                    self.fixed_packet = Some(packet);
                    self.stream = Some(stream);
                    self.rec = 0;
                    self.sub = 0;
                    return Ok(true);
                }
                self.reader.decode_last(&mut self.packet).map(|()| n)
            }
            Err(e) => Err(e),
        };
        self.packet_read(read)
    }

    /// Bookkeeping after a packet was read into `self.packet` (or reading it failed).
    fn packet_read(&mut self, read: crate::error::Result<usize>) -> recfmt_core::Result<bool> {
        match read {
            Ok(0) => {
                self.end_of_file()?;
                Ok(false)
            }
            Ok(_) => {
                self.stream = stream_of(&self.packet);
                self.rec = 0;
                self.sub = 0;
                match &self.packet {
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

    /// Fills `dst` with the next row of the current packet; false when it has no more.
    fn next_row(&mut self, dst: &mut FrameBuf) -> bool {
        let Some(stream) = self.stream else {
            return false;
        };
        let n = self.schema.streams[stream].signals.len();
        dst.reset(stream, n);
        let mut f = Fill {
            values: &mut dst.values,
            i: 0,
        };
        f.f64(self.elapsed);
        f.u64(self.frame);
        let rec = self.rec;
        let scratch = &mut self.scratch;
        let produced = match &self.packet {
            Packet::FrameStart(p) => {
                rec == 0 && {
                    f.f64(p.duration_this);
                    true
                }
            }
            Packet::PlatformTime(t) | Packet::VisualTime(t) => {
                rec == 0 && {
                    f.f64(*t);
                    true
                }
            }
            Packet::PhysicsControlOpaque(data) => {
                rec == 0 && {
                    f.bytes(data);
                    true
                }
            }
            Packet::EventAdd(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.u64(r.actor_type.into());
                f.vector(&r.location);
                f.vector(&r.rotation);
                f.u64(r.description.uid.into());
                f.str(&r.description.id.to_string_lossy());
                scratch.clear();
                for (k, a) in r.description.attributes.iter().enumerate() {
                    if k > 0 {
                        scratch.push_str("; ");
                    }
                    scratch.push_str(&a.id.to_string_lossy());
                    scratch.push('=');
                    scratch.push_str(&a.value.to_string_lossy());
                }
                f.str(scratch);
                true
            }),
            Packet::EventDel(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                true
            }),
            Packet::EventParent(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.u64(r.database_id_parent.into());
                true
            }),
            Packet::Collision(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.id.into());
                f.u64(r.database_id1.into());
                f.u64(r.database_id2.into());
                f.bool(r.is_actor1_hero);
                f.bool(r.is_actor2_hero);
                true
            }),
            Packet::Position(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.vector(&r.location);
                f.vector(&r.rotation);
                true
            }),
            Packet::TrafficLight(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.u64(r.state.into());
                f.bool(r.is_frozen);
                f.f32(r.elapsed_time);
                true
            }),
            Packet::VehicleAnim(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.f32(r.steering);
                f.f32(r.throttle);
                f.f32(r.brake);
                f.bool(r.handbrake);
                f.i64(r.gear.into());
                true
            }),
            Packet::WalkerAnim(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.f32(r.speed);
                true
            }),
            Packet::VehicleLight(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.u64(r.state.into());
                true
            }),
            Packet::SceneLight(v) => v.get(rec).is_some_and(|r| {
                f.i64(r.light_id.into());
                f.f32(r.intensity);
                for c in r.color {
                    f.f32(c);
                }
                f.bool(r.on);
                f.u64(r.light_type.into());
                true
            }),
            Packet::Kinematics(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.vector(&r.linear_velocity);
                f.vector(&r.angular_velocity);
                true
            }),
            Packet::BoundingBox(v) | Packet::TriggerVolume(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.vector(&r.origin);
                f.vector(&r.extent);
                true
            }),
            Packet::PhysicsControl(v) => v.get(rec).is_some_and(|r| {
                fill_physics(&mut f, r);
                true
            }),
            Packet::TrafficLightTime(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.f32(r.green_time);
                f.f32(r.yellow_time);
                f.f32(r.red_time);
                true
            }),
            Packet::BikerAnim(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.f32(r.forward_speed);
                f.f32(r.engine_rotation);
                true
            }),
            Packet::VehicleDoor(v) => v.get(rec).is_some_and(|r| {
                f.u64(r.database_id.into());
                f.u64(r.doors.into());
                f.bool(r.is_open);
                true
            }),
            Packet::Weather(v) => v.get(rec).is_some_and(|r| {
                for x in r.to_array() {
                    f.f32(x);
                }
                true
            }),
            Packet::WalkerBones(v) => {
                // One row per bone: advance (rec, sub) past walkers without bones.
                let mut rec = rec;
                while v.get(rec).is_some_and(|w| self.sub >= w.bones.len()) {
                    rec += 1;
                    self.sub = 0;
                }
                self.rec = rec;
                match v.get(rec) {
                    Some(w) => {
                        let b = &w.bones[self.sub];
                        f.u64(w.database_id.into());
                        f.str(&b.name.to_string_lossy());
                        f.vector(&b.location);
                        f.vector(&b.rotation);
                        self.sub += 1;
                        return true;
                    }
                    None => false,
                }
            }
            Packet::VehicleWheels(v) => {
                let mut rec = rec;
                while v.get(rec).is_some_and(|w| self.sub >= w.wheels.len()) {
                    rec += 1;
                    self.sub = 0;
                }
                self.rec = rec;
                match v.get(rec) {
                    Some(w) => {
                        let wheel = &w.wheels[self.sub];
                        f.u64(w.database_id.into());
                        f.u64(wheel.location.into());
                        f.f32(wheel.steering_angle);
                        f.f32(wheel.tire_rotation);
                        self.sub += 1;
                        return true;
                    }
                    None => false,
                }
            }
            Packet::FrameEnd
            | Packet::FrameCounter(_)
            | Packet::User { .. }
            | Packet::Unknown { .. } => false,
        };
        if produced {
            self.rec += 1;
        }
        produced
    }
}

impl<R: Read> CarlaRecording<R> {
    /// The batch path of [`RecordingReader::read_frame`]: appends rows to `dst` until a
    /// wanted stream holds its capacity (true) or the recording ends (false). Records of
    /// fixed-size packets go straight from the body into the columns; other packets are
    /// decoded and their rows pushed one by one (in `row`). Packets of unwanted streams are
    /// still checked (or decoded) so that the integrity report is the row path's, but give
    /// no rows.
    fn next_batches(
        &mut self,
        dst: &mut BatchSet,
        row: &mut FrameBuf,
    ) -> recfmt_core::Result<bool> {
        let capacity = dst.capacity();
        loop {
            if self.done {
                return Ok(false);
            }
            if let Some(stream) = self.stream.filter(|&s| dst.wants(s)) {
                if let Some(FixedPacket { kind, records }) = self.fixed_packet {
                    let batch = dst.stream_mut(stream);
                    let rows = (records.saturating_sub(self.rec)).min(batch.room(capacity));
                    if rows > 0 {
                        let Some((layout, _)) = self.fixed[kind].as_ref() else {
                            return Err(batch_error("a fixed packet kind without a layout"));
                        };
                        if !layout.columns_match(batch.columns()) {
                            return Err(batch_error(&format!(
                                "the {} batch does not have the columns of its packet records",
                                STREAM_NAMES[stream]
                            )));
                        }
                        let body = &self.reader.last_raw_packet().body;
                        layout.append(
                            body,
                            self.rec,
                            rows,
                            self.elapsed,
                            self.frame,
                            batch.columns_mut(),
                        );
                        batch.commit_rows(rows);
                        self.rec += rows;
                    }
                    if batch.is_full(capacity) {
                        return Ok(true);
                    }
                } else {
                    while self.next_row(row) {
                        dst.push_frame(row, &self.schema)?;
                        if dst.stream(stream).is_full(capacity) {
                            return Ok(true);
                        }
                    }
                }
            }
            if !self.next_packet_batch()? {
                self.done = true;
                return Ok(false);
            }
        }
    }
}

/// An error about batch columns that do not match the schema the adapter made.
fn batch_error(message: &str) -> recfmt_core::Error {
    recfmt_core::Error::invalid(message.to_owned())
}

fn fill_physics(f: &mut Fill<'_>, r: &PhysicsControl) {
    f.u64(r.database_id.into());
    for x in [
        r.max_rpm,
        r.moi,
        r.damping_rate_full_throttle,
        r.damping_rate_zero_throttle_clutch_engaged,
        r.damping_rate_zero_throttle_clutch_disengaged,
    ] {
        f.f32(x);
    }
    f.bool(r.use_gear_autobox);
    for x in [r.clutch_strength, r.final_ratio, r.mass, r.drag_coefficient] {
        f.f32(x);
    }
    for x in r.center_of_mass {
        f.f32(x);
    }
    f.f32_list(r.torque_curve.iter().flatten().copied());
    f.f32_list(
        r.forward_gears
            .iter()
            .flat_map(|g| [g.ratio, g.down_ratio, g.up_ratio]),
    );
    f.f32_list(r.steering_curve.iter().flatten().copied());
    let w = &r.wheels;
    f.f32_list(w.iter().map(|w| w.tire_friction));
    f.f32_list(w.iter().map(|w| w.damping_rate));
    f.f32_list(w.iter().map(|w| w.max_steer_angle));
    f.f32_list(w.iter().map(|w| w.radius));
    f.f32_list(w.iter().map(|w| w.max_brake_torque));
    f.f32_list(w.iter().map(|w| w.max_handbrake_torque));
    for k in 0..3 {
        if w.iter().all(|w| w.stiffness.is_some()) {
            f.f32_list(w.iter().filter_map(|w| w.stiffness.map(|s| s[k])));
        } else {
            f.null();
        }
    }
    for k in 0..3 {
        f.f32_list(w.iter().map(|w| w.position[k]));
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

    fn read_frame(&mut self, dst: &mut FrameBuf) -> recfmt_core::Result<bool> {
        if self.fixed_packet.take().is_some() {
            // A packet the batch path left undecoded (it passed the decoder's checks).
            self.reader.decode_last(&mut self.packet)?;
        }
        loop {
            if self.done {
                return Ok(false);
            }
            if self.next_row(dst) {
                return Ok(true);
            }
            if !self.next_packet()? {
                self.done = true;
                return Ok(false);
            }
        }
    }

    fn read_batches(&mut self, dst: &mut BatchSet) -> recfmt_core::Result<bool> {
        if dst.is_full() {
            return Ok(true);
        }
        let mut row = std::mem::take(&mut self.row);
        let result = self.next_batches(dst, &mut row);
        self.row = row;
        result
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
        self.stream = None;
        self.fixed_packet = None;
        self.open_frame = None;
        self.rec = 0;
        self.sub = 0;
        self.done = !outcome.found;
        Ok(true)
    }
}

/// Writes values into a row, one after the other.
struct Fill<'a> {
    values: &'a mut [Value],
    i: usize,
}

impl Fill<'_> {
    fn put(&mut self, v: Value) {
        if let Some(slot) = self.values.get_mut(self.i) {
            *slot = v;
        }
        self.i += 1;
    }
    fn f32(&mut self, x: f32) {
        self.put(Value::Float(f64::from(x)));
    }
    fn f64(&mut self, x: f64) {
        self.put(Value::Float(x));
    }
    fn u64(&mut self, x: u64) {
        self.put(Value::UInt(x));
    }
    fn i64(&mut self, x: i64) {
        self.put(Value::Int(x));
    }
    fn bool(&mut self, x: bool) {
        self.put(Value::Bool(x));
    }
    fn null(&mut self) {
        self.put(Value::Null);
    }
    fn str(&mut self, s: &str) {
        if let Some(slot) = self.values.get_mut(self.i) {
            slot.set_str(s);
        }
        self.i += 1;
    }
    fn bytes(&mut self, b: &[u8]) {
        if let Some(slot) = self.values.get_mut(self.i) {
            slot.set_bytes(b);
        }
        self.i += 1;
    }
    fn vector(&mut self, v: &Vector3) {
        for x in v.to_f64() {
            self.f64(x);
        }
    }
    fn f32_list(&mut self, it: impl Iterator<Item = f32>) {
        if let Some(slot) = self.values.get_mut(self.i) {
            let dst = slot.f32_array();
            dst.extend(it);
        }
        self.i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
