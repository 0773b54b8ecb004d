//! The `frames` stream's columns, declared once: how each `values` and `arrays` key is held
//! ([`ScalarKind`], [`ArrayKind`], [`Variant`], shared with the writer), the first pass that
//! finds the keys ([`prescan`]), and the schema built from it ([`build_schema`]) with the
//! [`FrameCols`] table the reader's row emission walks.

use std::collections::BTreeMap;
use std::io::{Read, Seek};

use prost::Message;

use recfmt_core::{DType, Schema, Shape, SignalDesc, StreamDesc, TimeBase};

use super::{
    DELTA_KEYS_COLUMN, FRAMES_STREAM, META_KEY, META_MAP, META_TYPE, STATE_STREAM, TIME_COLUMN,
};
use crate::checkpoint::{Checkpoints, Resume, Tracker};
use crate::error::Result;
use crate::header::Version;
use crate::io::{Reader, Record};
use crate::proto::{GetFrameResponse, Kind, Value, ValueArray, Values};
use crate::skim::W;
use crate::wire::{FrameKeys, WireArray, WireValue};

/// How a `values` key is held in the frames stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    /// `number_value`: `f64`.
    Number,
    /// `bool_value`.
    Bool,
    /// `string_value`.
    Text,
    /// Lists, structs, nulls only, or a key whose kind changes: the JSON text.
    Json,
}

impl ScalarKind {
    #[cfg_attr(not(feature = "nanover-zip"), allow(dead_code))]
    pub(crate) fn of(v: &Value) -> Option<ScalarKind> {
        match v.kind {
            Some(Kind::NumberValue(_)) => Some(ScalarKind::Number),
            Some(Kind::BoolValue(_)) => Some(ScalarKind::Bool),
            Some(Kind::StringValue(_)) => Some(ScalarKind::Text),
            Some(Kind::ListValue(_) | Kind::StructValue(_)) => Some(ScalarKind::Json),
            None | Some(Kind::NullValue(_)) => None,
        }
    }

    fn of_wire(v: WireValue) -> Option<ScalarKind> {
        match v {
            WireValue::Null => None,
            WireValue::Number => Some(ScalarKind::Number),
            WireValue::Text => Some(ScalarKind::Text),
            WireValue::Bool => Some(ScalarKind::Bool),
            WireValue::Nested => Some(ScalarKind::Json),
        }
    }

    fn dtype(self) -> DType {
        match self {
            ScalarKind::Number => DType::F64,
            ScalarKind::Bool => DType::Bool,
            ScalarKind::Text | ScalarKind::Json => DType::Str,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            ScalarKind::Number => "number",
            ScalarKind::Bool => "bool",
            ScalarKind::Text => "string",
            ScalarKind::Json => "json",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<ScalarKind> {
        Some(match name {
            "number" => ScalarKind::Number,
            "bool" => ScalarKind::Bool,
            "string" => ScalarKind::Text,
            "json" => ScalarKind::Json,
            _ => return None,
        })
    }
}

/// How an `arrays` key is held in the frames stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArrayKind {
    /// A list of `f32` (`float_values`).
    Float,
    /// A list of `u32` (`index_values`).
    Index,
    /// JSON text: string arrays, or a key whose non-empty arrays change type.
    Json,
}

impl ArrayKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ArrayKind::Float => "float",
            ArrayKind::Index => "index",
            ArrayKind::Json => "json",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<ArrayKind> {
        Some(match name {
            "float" => ArrayKind::Float,
            "index" => ArrayKind::Index,
            "json" => ArrayKind::Json,
            _ => return None,
        })
    }

    /// The variant a record has when `delta_keys` names no other.
    pub(crate) fn natural(self) -> Variant {
        match self {
            ArrayKind::Float => Variant::Float,
            ArrayKind::Index => Variant::Index,
            ArrayKind::Json => Variant::Text,
        }
    }
}

/// The protobuf variant of a `ValueArray`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// No variant set.
    None,
    Float,
    Index,
    Text,
}

impl Variant {
    pub(crate) fn of(a: &ValueArray) -> Variant {
        match a.values {
            None => Variant::None,
            Some(Values::FloatValues(_)) => Variant::Float,
            Some(Values::IndexValues(_)) => Variant::Index,
            Some(Values::StringValues(_)) => Variant::Text,
        }
    }

    fn of_wire(a: WireArray) -> Variant {
        match a {
            WireArray::None => Variant::None,
            WireArray::Float(_) => Variant::Float,
            WireArray::Index(_) => Variant::Index,
            WireArray::Text(_) => Variant::Text,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Variant::None => "none",
            Variant::Float => "float",
            Variant::Index => "index",
            Variant::Text => "string",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Variant> {
        Some(match name {
            "none" => Variant::None,
            "float" => Variant::Float,
            "index" => Variant::Index,
            "string" => Variant::Text,
            _ => return None,
        })
    }
}

/// Which variants a key's arrays had in the first pass.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ArraySeen {
    pub(super) float: bool,
    pub(super) index: bool,
    pub(super) text: bool,
    pub(super) first: Option<Variant>,
}

impl ArraySeen {
    fn note(&mut self, v: Variant, len: usize) {
        self.first.get_or_insert(v);
        if len > 0 {
            match v {
                Variant::Float => self.float = true,
                Variant::Index => self.index = true,
                Variant::Text => self.text = true,
                Variant::None => {}
            }
        }
    }

    /// Non-empty arrays decide; empty ones (any variant: writers store an empty float array
    /// as an index array) only when nothing else was seen.
    fn kind(&self) -> ArrayKind {
        match (self.float, self.index, self.text) {
            (true, false, false) => ArrayKind::Float,
            (false, true, false) => ArrayKind::Index,
            (false, false, true) => ArrayKind::Json,
            (false, false, false) => match self.first {
                Some(Variant::Index) => ArrayKind::Index,
                Some(Variant::Text) => ArrayKind::Json,
                _ => ArrayKind::Float,
            },
            _ => ArrayKind::Json,
        }
    }
}

/// What the first pass over the `.traj` found: which keys, with which types.
#[derive(Debug, Default)]
pub(super) struct Prescan {
    pub(super) values: BTreeMap<String, Option<ScalarKind>>,
    pub(super) arrays: BTreeMap<String, ArraySeen>,
    pub(super) frames: u64,
    pub(super) resets: u64,
    pub(super) max_particles: usize,
    /// Where a time window may start reading (a `.traj` read with a length, or a zip).
    pub(super) checkpoints: Option<Checkpoints>,
}

impl Prescan {
    fn note_value(&mut self, key: &str, kind: Option<ScalarKind>) {
        let seen = match self.values.get_mut(key) {
            Some(s) => s,
            None => self.values.entry(key.to_string()).or_insert(None),
        };
        if let Some(kind) = kind {
            *seen = match *seen {
                None => Some(kind),
                Some(old) if old == kind => Some(old),
                Some(_) => Some(ScalarKind::Json),
            };
        }
    }

    fn note_array(&mut self, key: &str, v: Variant, len: usize) {
        if key == "particle.positions" && v == Variant::Float {
            self.max_particles = self.max_particles.max(len / 3);
        }
        match self.arrays.get_mut(key) {
            Some(s) => s.note(v, len),
            None => self.arrays.entry(key.to_string()).or_default().note(v, len),
        }
    }

    fn note_frame(&mut self, frame_index: u64) {
        self.frames += 1;
        if frame_index == 0 {
            self.resets += 1;
        }
    }

    /// A `.nanover.zip` frame as its open pass walked it.
    #[cfg(feature = "nanover-zip")]
    pub(super) fn add_frame(&mut self, frame: &crate::nzip::FrameShape) {
        self.note_frame(u64::from(frame.frame_index));
        for (k, kind) in &frame.values {
            self.note_value(k, *kind);
        }
        for (k, (variant, len)) in &frame.arrays {
            self.note_array(k, *variant, *len);
        }
    }
}

/// The first pass: keys and types only, walked from the wire with the arrays skipped
/// ([`Reader::read_record_keys`]). With a `tracker` (version 2), also the checkpoints a time
/// window starts from.
pub(super) fn prescan<R: Read + Seek>(
    mut reader: Reader<R>,
    tracker: Option<Tracker>,
) -> Result<Prescan> {
    let mut scan = Prescan::default();
    let bare = reader.read_header()? == Version::V1;
    let mut tracker = tracker.filter(|_| !bare);
    let mut record = Record::default();
    loop {
        // The tracker decodes the records whose keys alone cannot tell it enough.
        let wants_payload = |keys: &W<FrameKeys>| {
            tracker
                .as_ref()
                .is_some_and(|t| needs_decoding(t, keys.as_ref().ok()))
        };
        let Some(keys) = reader.read_record_keys(&mut record, wants_payload)? else {
            break;
        };
        if let Some(t) = &mut tracker {
            track(t, &record, keys.as_ref().ok());
            let at = reader.position();
            t.checkpoint(
                at,
                at,
                Resume::Traj {
                    last_ts: reader.last_timestamp(),
                },
            );
        }
        // Undecodable records are skipped here; the second pass reports them.
        let Ok(keys) = keys else {
            continue;
        };
        // Version 1 has no index: the ordinal stands in, as in `Reader::read_frame`.
        scan.note_frame(if bare { scan.frames } else { keys.frame_index });
        for (k, v) in &keys.values {
            scan.note_value(k, ScalarKind::of_wire(*v));
        }
        for (k, a) in &keys.arrays {
            scan.note_array(k, Variant::of_wire(*a), a.len());
        }
    }
    scan.checkpoints = tracker.map(Tracker::finish);
    Ok(scan)
}

/// Whether [`track`] decodes the record: where the wire scan could disagree with prost in a
/// way that changes the session numbering (a reset, the first frame), or refused it.
fn needs_decoding(t: &Tracker, keys: Option<&FrameKeys>) -> bool {
    // prost reads a `uint32` varint cut to 32 bits.
    keys.is_none_or(|k| k.frame_index as u32 == 0 || t.frames() == 0)
}

/// Notes a `.traj` record in the tracker as the reading pass will apply it. That pass
/// decodes with prost: where [`needs_decoding`] says so, prost decides (the payload is in
/// `record` then). A record the wire scan reads and prost refuses elsewhere only matters
/// when it is a key's last setter, and rebuilding the aggregate then fails and reads from
/// the start.
fn track(t: &mut Tracker, record: &Record, keys: Option<&FrameKeys>) {
    let decoded = || GetFrameResponse::decode(&record.payload[..]);
    match keys {
        Some(k) => {
            let reset = k.frame_index as u32 == 0;
            if needs_decoding(t, Some(k)) && decoded().is_err() {
                return;
            }
            t.note_time(record.timestamp);
            t.frame(
                record.offset,
                reset,
                k.values.iter().map(|(k, _)| k.as_str()),
                k.arrays.iter().map(|(k, _)| k.as_str()),
            );
        }
        None => {
            if let Ok(m) = decoded() {
                t.note_time(record.timestamp);
                let frame = m.frame.unwrap_or_default();
                t.frame(
                    record.offset,
                    m.frame_index == 0,
                    frame.values.keys().map(String::as_str),
                    frame.arrays.keys().map(String::as_str),
                );
            }
        }
    }
}

/// The unit of a `values` key, when NanoVer documents one.
pub(crate) fn value_unit(key: &str) -> Option<&'static str> {
    Some(match key {
        "system.simulation.time" => "ps",
        "system.temperature" => "K",
        "server.timestamp" => "s",
        k if k.starts_with("energy.") || k == "forces.user.work_done" => "kJ/mol",
        _ => return None,
    })
}

/// The unit of an `arrays` key, when NanoVer documents one.
pub(crate) fn array_unit(key: &str) -> Option<&'static str> {
    Some(match key {
        "particle.positions" | "system.box.vectors" => "nm",
        "particle.velocities" => "nm/ps",
        "particle.forces" | "particle.forces.system" | "forces.user.sparse" => "kJ/(mol nm)",
        _ => return None,
    })
}

/// How the elements of a well-known array are laid out.
fn array_layout(key: &str) -> Option<&'static str> {
    Some(match key {
        "particle.positions"
        | "particle.velocities"
        | "particle.forces"
        | "particle.forces.system" => "x, y, z of each particle, flattened (3 per particle)",
        "forces.user.sparse" => {
            "x, y, z of each particle listed in forces.user.index, flattened (3 per entry)"
        }
        "system.box.vectors" => "3x3, row-major, each row a box vector",
        "bond.pairs" => "particle index pairs, flattened (2 per bond)",
        _ => return None,
    })
}

/// A `frames` column fed from `values`.
#[derive(Debug, Clone)]
pub(super) struct ValueCol {
    pub(super) key: String,
    pub(super) kind: ScalarKind,
    pub(super) at: usize,
}

/// A `frames` column fed from `arrays`, with the JSON text of its current value (string
/// arrays are serialised once per change, not once per row).
#[derive(Debug, Clone)]
pub(super) struct ArrayCol {
    pub(super) key: String,
    pub(super) kind: ArrayKind,
    pub(super) at: usize,
    pub(super) json: Option<String>,
}

/// The `frames` columns after the fixed ones.
#[derive(Debug, Default, Clone)]
pub(super) struct FrameCols {
    pub(super) values: Vec<ValueCol>,
    pub(super) arrays: Vec<ArrayCol>,
    pub(super) value_of: BTreeMap<String, usize>,
    pub(super) array_of: BTreeMap<String, usize>,
    pub(super) delta: usize,
}

fn unique_name(taken: &mut std::collections::BTreeSet<String>, key: &str, map: &str) -> String {
    let mut name = key.to_string();
    if taken.contains(&name) {
        name = format!("{map}.{key}");
    }
    let base = name.clone();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}#{n}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

pub(super) fn build_schema(scan: &Prescan, has_traj: bool, has_state: bool) -> (Schema, FrameCols) {
    let mut schema = Schema::default();
    let mut cols = FrameCols::default();
    if has_traj {
        let mut frames = StreamDesc::new(
            FRAMES_STREAM,
            SignalDesc::scalar(TIME_COLUMN, DType::U64).with_unit("us"),
            TimeBase::MICROSECONDS,
        );
        frames
            .signals
            .push(SignalDesc::scalar("frame_index", DType::U32));
        let mut session = SignalDesc::scalar("session", DType::U32);
        session.metadata.insert(
            "description".into(),
            "0-based session: +1 at every reset after the first frame, as split_sessions splits"
                .into(),
        );
        frames.signals.push(session);
        let mut taken: std::collections::BTreeSet<String> =
            [TIME_COLUMN, "frame_index", "session", DELTA_KEYS_COLUMN]
                .into_iter()
                .map(String::from)
                .collect();
        for (key, kind) in &scan.values {
            let kind = kind.unwrap_or(ScalarKind::Json);
            let name = unique_name(&mut taken, key, "values");
            let mut s = SignalDesc::scalar(name, kind.dtype());
            if kind == ScalarKind::Number
                && let Some(u) = value_unit(key)
            {
                s = s.with_unit(u);
            }
            let m = &mut s.metadata;
            m.insert(META_MAP.into(), "values".into());
            m.insert(META_KEY.into(), key.clone());
            m.insert(META_TYPE.into(), kind.name().into());
            if kind == ScalarKind::Json {
                m.insert("encoding".into(), "json".into());
            }
            cols.value_of.insert(key.clone(), cols.values.len());
            cols.values.push(ValueCol {
                key: key.clone(),
                kind,
                at: frames.signals.len(),
            });
            frames.signals.push(s);
        }
        for (key, seen) in &scan.arrays {
            let kind = seen.kind();
            let name = unique_name(&mut taken, key, "arrays");
            let mut s = match kind {
                ArrayKind::Float => {
                    SignalDesc::scalar(name, DType::F32).with_shape(Shape::Variable)
                }
                ArrayKind::Index => {
                    SignalDesc::scalar(name, DType::U32).with_shape(Shape::Variable)
                }
                ArrayKind::Json => SignalDesc::scalar(name, DType::Str),
            };
            if kind != ArrayKind::Json
                && let Some(u) = array_unit(key)
            {
                s = s.with_unit(u);
            }
            let m = &mut s.metadata;
            m.insert(META_MAP.into(), "arrays".into());
            m.insert(META_KEY.into(), key.clone());
            m.insert(META_TYPE.into(), kind.name().into());
            if kind == ArrayKind::Json {
                m.insert("encoding".into(), "json".into());
            }
            if let Some(l) = array_layout(key) {
                m.insert("layout".into(), l.into());
            }
            cols.array_of.insert(key.clone(), cols.arrays.len());
            cols.arrays.push(ArrayCol {
                key: key.clone(),
                kind,
                at: frames.signals.len(),
                json: None,
            });
            frames.signals.push(s);
        }
        let mut delta = SignalDesc::scalar(DELTA_KEYS_COLUMN, DType::Str);
        delta.metadata.insert("encoding".into(), "json".into());
        delta.metadata.insert(
            "description".into(),
            "the columns this record itself set (its delta), as a JSON array of column names; [name, variant] where an array's protobuf type differs from the column's; null for a record without FrameData".into(),
        );
        cols.delta = frames.signals.len();
        frames.signals.push(delta);
        frames.metadata.insert(
            "values".into(),
            "aggregated frame after applying the record (deltas merged key by key, reset on frame_index 0), so every row is complete".into(),
        );
        schema.streams.push(frames);
    }
    if has_state {
        let mut s = StreamDesc::new(
            STATE_STREAM,
            SignalDesc::scalar(TIME_COLUMN, DType::U64).with_unit("us"),
            TimeBase::MICROSECONDS,
        );
        s.signals.push(SignalDesc::scalar("key", DType::Str));
        let mut value = SignalDesc::scalar("value", DType::Str);
        value.metadata.insert("encoding".into(), "json".into());
        s.signals.push(value);
        s.signals.push(SignalDesc::scalar("removed", DType::Bool));
        s.metadata.insert(
            "rows".into(),
            "one row per key a state update sets (value as JSON) or removes (value null, removed true); an update that changes nothing gives one row with a null key".into(),
        );
        schema.streams.push(s);
    }
    (schema, cols)
}
