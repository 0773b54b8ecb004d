//! HDF5 export of NanoVer recordings (feature `hdf5`), through the pure-Rust `hdf5-pure`:
//! positions as one `[frames, particles, 3]` dataset per session.
//!
//! # Layout
//!
//! ```text
//! /                          attributes: recfmt.format = "nanover", nanover.version,
//!                            source.traj, source.state (when read from files), units,
//!                            sessions (number of session groups)
//! /session_<n>               one group per session (n as in the `frames` stream's
//!                            `session` column; a part after a particle-count change is
//!                            /session_<n>.<k>, k = 1, 2, ...); attributes: session, part,
//!                            frames, particles, frames_before_positions, start_t_us,
//!                            simulation_counter (when the frames carry one)
//!     t_us                   u64 [frames]          record timestamps (µs since the recorder started)
//!     frame_index            u32 [frames]
//!     positions              f32 [frames, particles, 3]   nm; NaN in the rows before the
//!                            first frame with positions (see frames_before_positions)
//!     velocities             f32 [frames, particles, 3]   nm/ps            (when recorded)
//!     forces                 f32 [frames, particles, 3]   kJ/(mol nm)      (particle.forces)
//!     forces.system          f32 [frames, particles, 3]   kJ/(mol nm)
//!     forces.user            f32 [frames, particles, 3]   kJ/(mol nm): the sparse iMD force
//!                            (forces.user.index + forces.user.sparse) made dense, 0 elsewhere
//!     system.box.vectors     f32 [frames, 3, 3]    nm, rows are the box vectors
//!     <values key>           one 1-D [frames] dataset per `values` key: f64 numbers
//!                            (energy.kinetic in kJ/mol, system.simulation.time in ps, counts,
//!                            ...; NaN where the key has no value), bool, or UTF-8 strings
//!                            (lists and structs as JSON text; "" where absent)
//!     elements, names, residues, residue.names, residue.ids, residue.chains, chain.names,
//!     bond.pairs [bonds, 2], bond.orders, ...
//!                            topology and every other array that does not change within the
//!                            session, once (`particle.` is dropped from particle keys)
//!     <other array key>      [frames, n] when it changes within the session with a fixed
//!                            length n; otherwise left out, with a note in the summary
//! /state                     when the recording has a .state: t_us u64 [n], key (UTF-8),
//!                            value (JSON text, as in the `state` stream), removed (bool);
//!                            one row per changed key
//! ```
//!
//! Rows are **every frame** of the session part, one per `.traj` record (or `.nanover.zip`
//! frame message), as in the `frames` stream: every per-frame dataset (`t_us`,
//! `frame_index`, the values, positions and the other per-particle arrays) has length
//! `frames`, and row `i` of each is the same record. Frames that come before the first one
//! whose aggregated frame has positions (the topology frame of Python recordings, the Rust
//! server's empty leading frame) are the first `frames_before_positions` rows: their
//! `t_us`, `frame_index` and values are there, and their positions, velocities and forces
//! are NaN (the iMD force 0), since the particle count is not known before positions
//! (`positions[frames_before_positions:]` are the frames with positions; a session with no
//! positions at all has `positions` of shape `[frames, 0, 3]`). The arrays written once
//! (topology) are those of the first frame with positions. Every value is the
//! **aggregated** frame's after the record, as in the `frames` stream. Every dataset has an attribute `nanover.key` (the NanoVer key
//! it comes from) and `unit` where NanoVer documents one. String attributes are
//! variable-length UTF-8 (h5py gives `str`).
//!
//! # Why a whole session at a time
//!
//! Upstream hdf5-pure 0.47 appends in place only to rank-1 datasets, and a
//! `[frames, particles, 3]` dataset is rank 3. (The workspace builds against a patched copy,
//! `vendor/hdf5-pure`, that grows rank-N datasets too; the generic exporter streams its 2-D
//! columns that way, and moving this writer over is a possible next step.) So each session is buffered in memory and written as one group in
//! one commit (`File::open_rw`, bounded backing, `SyncPolicy::OnClose`), then dropped
//! before the next session starts: memory is one session's frames, never the whole
//! recording. The buffer is bounded: a session's per-frame arrays together may hold at
//! most [`Limits::max_array_len`] elements (2²⁸ by default, 1 GiB of `f32`), and the state
//! table's text at most [`Limits::max_record_len`] bytes; past that the export fails with a
//! message that says which limit to raise. (The alternative, a rank-1 dataset of HDF5
//! array elements `[particles, 3]` appended frame by frame, would stream, but h5py would
//! show `shape == (frames,)` with an array dtype, not the `[frames, particles, 3]` dataset
//! NanoVer users' scripts expect.)
//!
//! The particle count is fixed within a group: when it changes inside a session (a reset
//! that NanoVer's gRPC recorder merged away), a new part `/session_<n>.<k>` starts there.
//!
//! Chunks: per-frame datasets are chunked along frames (at most 65 535 per dimension and
//! about 1 MiB per chunk) and compressed with shuffle + deflate when
//! [`Hdf5Options::deflate`] is set (level 1 by default); topology is contiguous. The file is
//! written as `.<name>.partial` beside the target and renamed when complete; a failed
//! export leaves nothing behind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hdf5_pure::{
    AttrValue, Datatype, EnumTypeBuilder, FileAccessProperties, FileBuilder, MemoryStrategy,
    StagedGroup, SyncPolicy, make_i8_type,
};
use recfmt_core::{Integrity, Limits, ReadOptions, ResultExt};

use crate::aggregate::{FrameView, SIMULATION_COUNTER};
use crate::json::value_to_json_text;
use crate::proto::{GetFrameResponse, Kind, Value, ValueArray, Values, is_null};
use crate::recording::{array_unit, value_unit};
use crate::timeline::{Event, RecordingPaths, Timeline};

/// How [`write_hdf5`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hdf5Options {
    /// Bounds on what is buffered: a session's per-frame arrays hold at most
    /// `max_array_len` elements, the state table at most `max_record_len` bytes of text;
    /// also the limits used to read the input.
    pub limits: Limits,
    /// Deflate level (0 to 9) with the shuffle filter for per-frame datasets, or `None` for
    /// no compression (default `Some(1)`).
    pub deflate: Option<u8>,
    /// Also start a session where `system.simulation.counter` changes without a reset
    /// (as [`crate::NanoverRecording::with_counter_resets`]; default false).
    pub counter_resets: bool,
    /// Whether an existing output file may be replaced (default: no).
    pub replace: recfmt_core::Replace,
}

impl Default for Hdf5Options {
    fn default() -> Self {
        Hdf5Options {
            limits: Limits::default(),
            deflate: Some(1),
            counter_resets: false,
            replace: recfmt_core::Replace::Never,
        }
    }
}

/// One group written by [`write_hdf5`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionGroup {
    /// The group path (`/session_0`, `/session_2.1`).
    pub group: String,
    /// The session number (as the `frames` stream's `session` column).
    pub session: u32,
    /// 0, or the part number after a particle-count change.
    pub part: u32,
    /// Rows: every frame of the part, those before the first positions included.
    pub frames: u64,
    /// Particles per frame.
    pub particles: u64,
}

/// What [`write_hdf5`] wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hdf5Summary {
    /// The session groups, in order.
    pub sessions: Vec<SessionGroup>,
    /// Rows of `/state` (0 when there is no `.state`).
    pub state_rows: u64,
    /// Arrays left out or values changed, with the reason.
    pub notes: Vec<String>,
    /// What reading the input lost (nothing for intact files).
    pub integrity: Integrity,
    /// Size of the file written.
    pub bytes: u64,
}

/// Per-particle `xyz` arrays stored as `[frames, particles, 3]`, with their dataset names.
const VEC3: [(&str, &str); 4] = [
    ("particle.positions", "positions"),
    ("particle.velocities", "velocities"),
    ("particle.forces", "forces"),
    ("particle.forces.system", "forces.system"),
];
const USER_INDEX: &str = "forces.user.index";
const USER_SPARSE: &str = "forces.user.sparse";
const BOX: &str = "system.box.vectors";

fn per_frame_key(key: &str) -> bool {
    VEC3.iter().any(|(k, _)| *k == key) || matches!(key, USER_INDEX | USER_SPARSE | BOX)
}

/// Dataset data, owned until the group is committed.
enum Data {
    F32(Vec<f32>),
    F64(Vec<f64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Bool(Vec<u8>),
    Str(Vec<String>),
}

impl Data {
    fn elem_size(&self) -> u64 {
        match self {
            Data::F32(_) | Data::U32(_) => 4,
            Data::F64(_) | Data::U64(_) => 8,
            Data::Bool(_) => 1,
            Data::Str(_) => 0,
        }
    }
}

struct Spec {
    name: String,
    data: Data,
    shape: Vec<u64>,
    per_frame: bool,
    attrs: Vec<(String, AttrValue)>,
}

fn text(s: impl Into<String>) -> AttrValue {
    AttrValue::VarLenString(s.into())
}

/// Chunk dimensions: along the first axis, each dimension at most 65 535 (hdf5-pure 0.47
/// encodes larger chunk dimensions in a way HDF5 2.0 refuses), about 1 MiB per chunk.
fn chunks(shape: &[u64], elem: u64) -> Option<Vec<u64>> {
    if shape.is_empty() || shape.contains(&0) || elem == 0 {
        return None;
    }
    let mut c: Vec<u64> = shape.iter().map(|&d| d.min(65_535)).collect();
    let row: u64 = c[1..].iter().product::<u64>() * elem;
    c[0] = ((1u64 << 20) / row.max(1)).clamp(1, c[0]);
    Some(c)
}

fn stage(g: &mut StagedGroup<'_>, spec: &Spec, deflate: Option<u8>, bool_t: &Datatype) {
    g.create_dataset(&spec.name, |b| {
        match &spec.data {
            Data::F32(v) => b.with_f32_data(v),
            Data::F64(v) => b.with_f64_data(v),
            Data::U32(v) => b.with_u32_data(v),
            Data::U64(v) => b.with_u64_data(v),
            Data::Bool(v) => b.with_enum_u8_data(bool_t.clone(), v),
            Data::Str(v) => {
                let refs: Vec<&str> = v.iter().map(String::as_str).collect();
                b.with_vlen_strings(&refs)
            }
        };
        if !matches!(spec.data, Data::Str(_)) {
            b.with_shape(&spec.shape);
        }
        if let (true, Some(level), Some(c)) = (
            spec.per_frame,
            deflate,
            chunks(&spec.shape, spec.data.elem_size()),
        ) {
            b.with_chunks(&c)
                .with_shuffle()
                .with_deflate(u32::from(level));
        }
        for (k, v) in &spec.attrs {
            b.set_attr(k, v.clone());
        }
    });
}

/// The value column of one `values` key: the aggregated value per row.
#[derive(Default)]
struct ScalarCol {
    rows: Vec<Option<Value>>,
}

/// One session part being buffered.
struct Part {
    session: u32,
    part: u32,
    /// True once a row had positions (the particle count is known from then on).
    positioned: bool,
    particles: usize,
    rows: u64,
    before_rows: u64,
    start_t: Option<u64>,
    t_us: Vec<u64>,
    frame_index: Vec<u32>,
    vec3: BTreeMap<&'static str, Vec<f32>>,
    user: Option<Vec<f32>>,
    boxv: Option<Vec<f32>>,
    scalars: BTreeMap<String, ScalarCol>,
    initial: BTreeMap<String, ValueArray>,
    changes: BTreeMap<String, Vec<(u64, ValueArray)>>,
    elements: u64,
    counter: Option<f64>,
}

enum Pushed {
    Row,
    NewParticleCount(usize),
}

impl Part {
    fn new(session: u32, part: u32) -> Self {
        Part {
            session,
            part,
            positioned: false,
            particles: 0,
            rows: 0,
            before_rows: 0,
            start_t: None,
            t_us: Vec::new(),
            frame_index: Vec::new(),
            vec3: BTreeMap::new(),
            user: None,
            boxv: None,
            scalars: BTreeMap::new(),
            initial: BTreeMap::new(),
            changes: BTreeMap::new(),
            elements: 0,
            counter: None,
        }
    }

    fn group_name(&self) -> String {
        if self.part == 0 {
            format!("session_{}", self.session)
        } else {
            format!("session_{}.{}", self.session, self.part)
        }
    }

    /// The current value of a non-per-frame array key in this part.
    fn current(&self, key: &str) -> Option<&ValueArray> {
        self.changes
            .get(key)
            .and_then(|c| c.last().map(|(_, a)| a))
            .or_else(|| self.initial.get(key))
    }

    fn push(
        &mut self,
        t: u64,
        msg: &GetFrameResponse,
        view: &FrameView,
        limits: &Limits,
    ) -> recfmt_core::Result<Pushed> {
        let positions = view
            .arrays
            .get("particle.positions")
            .and_then(ValueArray::as_floats)
            .filter(|p| !p.is_empty() || view.particle_count() == Some(0));
        let Some(positions) = positions else {
            // A frame before the first positions (a topology frame, the Rust server's empty
            // leading frame) is a row with NaN positions. After positions it cannot happen
            // within a session (the aggregate keeps them); the row is kept the same way.
            if !self.positioned {
                self.before_rows += 1;
            }
            return self.push_row(t, msg, view, limits);
        };
        let n = positions.len() / 3;
        if self.positioned && n != self.particles {
            return Ok(Pushed::NewParticleCount(n));
        }
        if !self.positioned {
            // The particle count is known from here; the rows before get NaN positions
            // (per-particle columns start with NaN rows when they first appear). The
            // arrays that describe the session are those of this first frame with positions.
            self.positioned = true;
            self.particles = n;
            if self.rows > 0 {
                self.initial.clear();
                self.changes.clear();
                self.take_initial(view);
            }
        }
        self.push_row(t, msg, view, limits)
    }

    /// The session's arrays that are not per-frame, as they are in `view`.
    fn take_initial(&mut self, view: &FrameView) {
        for (k, a) in &view.arrays {
            if !per_frame_key(k) {
                self.initial.insert(k.clone(), a.clone());
            }
        }
    }

    fn push_row(
        &mut self,
        t: u64,
        msg: &GetFrameResponse,
        view: &FrameView,
        limits: &Limits,
    ) -> recfmt_core::Result<Pushed> {
        if self.rows == 0 {
            self.start_t = Some(t);
            self.take_initial(view);
        } else if self.positioned
            && self.before_rows < self.rows
            && let Some(frame) = &msg.frame
        {
            for (k, a) in &frame.arrays {
                if per_frame_key(k) || self.current(k) == Some(a) {
                    continue;
                }
                self.changes
                    .entry(k.clone())
                    .or_default()
                    .push((self.rows, a.clone()));
            }
        }
        let p3 = 3 * self.particles;
        let row = self.rows as usize;
        // Per-particle xyz arrays: NaN rows before a key first appears.
        for (key, _) in VEC3 {
            let a = view
                .arrays
                .get(key)
                .and_then(ValueArray::as_floats)
                .filter(|a| a.len() == p3);
            let col = match (self.vec3.get_mut(key), a) {
                (Some(c), _) => c,
                (None, Some(_)) => self
                    .vec3
                    .entry(key)
                    .or_insert_with(|| vec![f32::NAN; row * p3]),
                (None, None) => continue,
            };
            match a {
                Some(a) => col.extend_from_slice(a),
                None => col.extend(std::iter::repeat_n(f32::NAN, p3)),
            }
        }
        // The iMD force made dense: zero where no force acts (from the first row with
        // positions, when the particle count is known; zero for the rows before).
        if self.positioned && (view.arrays.contains_key(USER_SPARSE) || self.user.is_some()) {
            let col = self.user.get_or_insert_with(|| vec![0.0; row * p3]);
            let start = col.len();
            col.resize(start + p3, 0.0);
            let index = view.arrays.get(USER_INDEX).and_then(ValueArray::as_indices);
            let sparse = view.arrays.get(USER_SPARSE).and_then(ValueArray::as_floats);
            if let (Some(index), Some(sparse)) = (index, sparse) {
                for (j, &i) in index.iter().enumerate() {
                    let i = i as usize;
                    if i < self.particles && 3 * j + 3 <= sparse.len() {
                        col[start + 3 * i..start + 3 * i + 3]
                            .copy_from_slice(&sparse[3 * j..3 * j + 3]);
                    }
                }
            }
        }
        let b = view
            .arrays
            .get(BOX)
            .and_then(ValueArray::as_floats)
            .filter(|b| b.len() == 9);
        if b.is_some() || self.boxv.is_some() {
            let col = self.boxv.get_or_insert_with(|| vec![f32::NAN; row * 9]);
            match b {
                Some(b) => col.extend_from_slice(b),
                None => col.extend([f32::NAN; 9]),
            }
        }
        for k in view.values.keys() {
            if !self.scalars.contains_key(k) {
                let mut c = ScalarCol::default();
                c.rows.resize(row, None);
                self.scalars.insert(k.clone(), c);
            }
        }
        for (k, c) in &mut self.scalars {
            c.rows.push(view.values.get(k).cloned());
        }
        if let Some(c) = view.number(SIMULATION_COUNTER) {
            self.counter.get_or_insert(c);
        }
        self.t_us.push(t);
        self.frame_index.push(msg.frame_index);
        self.rows += 1;
        let per_row = (self.vec3.len() + usize::from(self.user.is_some())) * p3
            + if self.boxv.is_some() { 9 } else { 0 };
        self.elements = self.rows.saturating_mul(per_row as u64);
        if self.elements > limits.max_array_len {
            return Err(recfmt_core::Error::Limit {
                what: "NanoVer HDF5 export: elements of one session's per-frame arrays (frames x particles x 3 each; a session is written whole as [frames, particles, 3]; raise Limits::max_array_len)",
                value: self.elements,
                limit: limits.max_array_len,
                offset: 0,
            });
        }
        Ok(Pushed::Row)
    }

    /// Turns the buffered part into datasets.
    fn specs(self, notes: &mut Vec<String>) -> (Vec<(String, AttrValue)>, Vec<Spec>) {
        let group = self.group_name();
        let f = self.rows;
        let p = self.particles as u64;
        let mut taken = BTreeSet::new();
        let mut name = |wanted: &str| {
            let mut n = wanted.to_string();
            let mut k = 2;
            while !taken.insert(n.clone()) {
                n = format!("{wanted}_{k}");
                k += 1;
            }
            n
        };
        let mut specs = Vec::new();
        let attrs = |key: &str, unit: Option<&str>| {
            let mut a = vec![("nanover.key".to_string(), text(key))];
            if let Some(u) = unit {
                a.push(("unit".into(), text(u)));
            }
            a
        };
        specs.push(Spec {
            name: name("t_us"),
            data: Data::U64(self.t_us),
            shape: vec![f],
            per_frame: true,
            attrs: vec![
                ("unit".into(), text("us")),
                (
                    "description".into(),
                    text("record timestamp, microseconds since the recorder started"),
                ),
            ],
        });
        specs.push(Spec {
            name: name("frame_index"),
            data: Data::U32(self.frame_index),
            shape: vec![f],
            per_frame: true,
            attrs: Vec::new(),
        });
        let mut vec3 = self.vec3;
        for (key, ds) in VEC3 {
            let data = match vec3.remove(key) {
                Some(d) => d,
                None if key == "particle.positions" => Vec::new(),
                None => continue,
            };
            let shape = if data.is_empty() {
                vec![f, 0, 3]
            } else {
                vec![f, p, 3]
            };
            let mut a = attrs(key, array_unit(key));
            a.push(("layout".into(), text("[frames, particles, xyz]")));
            specs.push(Spec {
                name: name(ds),
                data: Data::F32(data),
                shape,
                per_frame: true,
                attrs: a,
            });
        }
        if let Some(user) = self.user {
            let mut a = attrs(
                "forces.user.index + forces.user.sparse",
                array_unit(USER_SPARSE),
            );
            a.push((
                "layout".into(),
                text("[frames, particles, xyz]; the sparse iMD force made dense, 0 for particles without one"),
            ));
            specs.push(Spec {
                name: name("forces.user"),
                data: Data::F32(user),
                shape: vec![f, p, 3],
                per_frame: true,
                attrs: a,
            });
        }
        if let Some(b) = self.boxv {
            let mut a = attrs(BOX, array_unit(BOX));
            a.push((
                "layout".into(),
                text("[frames, 3, 3]; rows are the box vectors"),
            ));
            specs.push(Spec {
                name: name(BOX),
                data: Data::F32(b),
                shape: vec![f, 3, 3],
                per_frame: true,
                attrs: a,
            });
        }
        for (key, col) in self.scalars {
            let spec = scalar_spec(&key, col, f);
            specs.push(Spec {
                name: name(&key),
                ..spec
            });
        }
        // Arrays that do not change: once. Arrays that do: [frames, n] when every row has
        // the same type and length.
        let mut keys: BTreeSet<&String> = self.initial.keys().collect();
        keys.extend(self.changes.keys());
        for key in keys {
            let ds = key.strip_prefix("particle.").unwrap_or(key);
            match self.changes.get(key) {
                None => {
                    let Some(a) = self.initial.get(key) else {
                        continue;
                    };
                    match static_spec(key, a) {
                        Some(spec) => specs.push(Spec {
                            name: name(ds),
                            ..spec
                        }),
                        None => notes.push(format!("{group}: {key} has no array type; left out")),
                    }
                }
                Some(changes) => match dynamic_spec(key, self.initial.get(key), changes, f) {
                    Ok(spec) => specs.push(Spec {
                        name: name(ds),
                        ..spec
                    }),
                    Err(why) => notes.push(format!(
                        "{group}: {key} changes within the session and {why}; left out"
                    )),
                },
            }
        }
        let mut group_attrs = vec![
            (
                "session".to_string(),
                AttrValue::U64(u64::from(self.session)),
            ),
            ("part".into(), AttrValue::U64(u64::from(self.part))),
            ("frames".into(), AttrValue::U64(f)),
            ("particles".into(), AttrValue::U64(p)),
            (
                "frames_before_positions".into(),
                AttrValue::U64(self.before_rows),
            ),
        ];
        if let Some(t) = self.start_t {
            group_attrs.push(("start_t_us".into(), AttrValue::U64(t)));
        }
        if let Some(c) = self.counter {
            group_attrs.push(("simulation_counter".into(), AttrValue::F64(c)));
        }
        (group_attrs, specs)
    }
}

fn scalar_spec(key: &str, col: ScalarCol, f: u64) -> Spec {
    let kinds: BTreeSet<u8> = col
        .rows
        .iter()
        .flatten()
        .map(|v| match v.kind {
            None | Some(Kind::NullValue(_)) => 0,
            Some(Kind::NumberValue(_)) => 1,
            Some(Kind::BoolValue(_)) => 2,
            Some(Kind::StringValue(_)) => 3,
            _ => 4,
        })
        .filter(|&k| k != 0)
        .collect();
    let gaps = col.rows.iter().any(|v| v.as_ref().is_none_or(is_null));
    let mut attrs = vec![("nanover.key".to_string(), text(key))];
    let kinds: Vec<u8> = kinds.into_iter().collect();
    let data = match kinds.as_slice() {
        [] | [1] => {
            if let Some(u) = value_unit(key) {
                attrs.push(("unit".into(), text(u)));
            }
            Data::F64(
                col.rows
                    .iter()
                    .map(|v| match v.as_ref().and_then(|v| v.kind.as_ref()) {
                        Some(Kind::NumberValue(n)) => *n,
                        _ => f64::NAN,
                    })
                    .collect(),
            )
        }
        [2] if !gaps => Data::Bool(
            col.rows
                .iter()
                .map(|v| {
                    u8::from(matches!(
                        v.as_ref().and_then(|v| v.kind.as_ref()),
                        Some(Kind::BoolValue(true))
                    ))
                })
                .collect(),
        ),
        [2] => {
            attrs.push((
                "description".into(),
                text("boolean as 1/0, NaN where the key has no value"),
            ));
            Data::F64(
                col.rows
                    .iter()
                    .map(|v| match v.as_ref().and_then(|v| v.kind.as_ref()) {
                        Some(Kind::BoolValue(b)) => f64::from(u8::from(*b)),
                        _ => f64::NAN,
                    })
                    .collect(),
            )
        }
        [3] => Data::Str(
            col.rows
                .iter()
                .map(|v| match v.as_ref().and_then(|v| v.kind.as_ref()) {
                    Some(Kind::StringValue(s)) => s.clone(),
                    _ => String::new(),
                })
                .collect(),
        ),
        _ => {
            attrs.push(("encoding".into(), text("json")));
            Data::Str(
                col.rows
                    .iter()
                    .map(|v| match v {
                        Some(v) if !is_null(v) => value_to_json_text(v),
                        _ => String::new(),
                    })
                    .collect(),
            )
        }
    };
    Spec {
        name: String::new(),
        data,
        shape: vec![f],
        per_frame: true,
        attrs,
    }
}

fn static_spec(key: &str, a: &ValueArray) -> Option<Spec> {
    let mut attrs = vec![("nanover.key".to_string(), text(key))];
    if let Some(u) = array_unit(key) {
        attrs.push(("unit".into(), text(u)));
    }
    let (data, shape) = match &a.values {
        Some(Values::FloatValues(v)) => (Data::F32(v.values.clone()), vec![v.values.len() as u64]),
        Some(Values::IndexValues(v)) => {
            let n = v.values.len() as u64;
            let shape = if key == "bond.pairs" && n.is_multiple_of(2) {
                attrs.push(("layout".into(), text("[bonds, 2] particle indices")));
                vec![n / 2, 2]
            } else {
                vec![n]
            };
            (Data::U32(v.values.clone()), shape)
        }
        Some(Values::StringValues(v)) => (Data::Str(v.values.clone()), vec![v.values.len() as u64]),
        None => return None,
    };
    Some(Spec {
        name: String::new(),
        data,
        shape,
        per_frame: false,
        attrs,
    })
}

fn dynamic_spec(
    key: &str,
    initial: Option<&ValueArray>,
    changes: &[(u64, ValueArray)],
    f: u64,
) -> Result<Spec, String> {
    let mut attrs = vec![
        ("nanover.key".to_string(), text(key)),
        (
            "layout".into(),
            text("[frames, n]: the array after each record"),
        ),
    ];
    if let Some(u) = array_unit(key) {
        attrs.push(("unit".into(), text(u)));
    }
    let all: Vec<&ValueArray> = initial
        .into_iter()
        .chain(changes.iter().map(|(_, a)| a))
        .collect();
    let n = all.first().map_or(0, |a| a.len());
    if all.iter().any(|a| a.len() != n) {
        return Err("its length changes".into());
    }
    let floats = all
        .iter()
        .all(|a| matches!(a.values, Some(Values::FloatValues(_))) || a.is_empty());
    let indices = all
        .iter()
        .all(|a| matches!(a.values, Some(Values::IndexValues(_))));
    if !floats && !indices {
        return Err("it is not one numeric type".into());
    }
    if indices && initial.is_none() {
        return Err(
            "it has no value before it first changes (no integer stands for absent)".into(),
        );
    }
    let mut current: Option<&ValueArray> = initial;
    let mut next = changes.iter().peekable();
    let mut f32s = Vec::new();
    let mut u32s = Vec::new();
    for row in 0..f {
        while let Some((r, a)) = next.peek() {
            if *r > row {
                break;
            }
            current = Some(a);
            next.next();
        }
        match current {
            Some(a) if floats => f32s.extend_from_slice(a.as_floats().unwrap_or(&[])),
            Some(a) => u32s.extend_from_slice(a.as_indices().unwrap_or(&[])),
            None => f32s.extend(std::iter::repeat_n(f32::NAN, n)),
        }
    }
    Ok(Spec {
        name: String::new(),
        data: if floats {
            Data::F32(f32s)
        } else {
            Data::U32(u32s)
        },
        shape: vec![f, n as u64],
        per_frame: true,
        attrs,
    })
}

/// The `/state` table, buffered whole.
#[derive(Default)]
struct StateTable {
    t_us: Vec<u64>,
    key: Vec<String>,
    value: Vec<String>,
    removed: Vec<u8>,
    bytes: u64,
}

/// The output file: written under a temporary name, moved into place when complete.
struct Output {
    temp: recfmt_core::TempPath,
    target: PathBuf,
    file: Option<hdf5_pure::File>,
}

impl Drop for Output {
    fn drop(&mut self) {
        // Closed before the temporary file goes (the `temp` field drops after this).
        self.file.take();
    }
}

fn h5err(path: &Path, what: &str, e: hdf5_pure::Error) -> recfmt_core::Error {
    match e {
        hdf5_pure::Error::Io(io) => recfmt_core::Error::Io(io).in_file(path),
        e => recfmt_core::Error::invalid(format!("HDF5 export ({what}): {e}")).in_file(path),
    }
}

struct H5Writer {
    out: Output,
    options: Hdf5Options,
    bool_t: Datatype,
    summary: Hdf5Summary,
}

impl H5Writer {
    fn create(
        out: &Path,
        options: &Hdf5Options,
        root: &[(String, String)],
    ) -> recfmt_core::Result<Self> {
        if options.deflate.is_some_and(|l| l > 9) {
            return Err(recfmt_core::Error::invalid(
                "HDF5 deflate level must be 0 to 9",
            ));
        }
        if out.file_name().is_none() {
            return Err(recfmt_core::Error::invalid(
                "HDF5 output path has no file name",
            ));
        }
        let mut output = Output {
            temp: recfmt_core::TempPath::reserve(out, options.replace).in_file(out)?,
            target: out.to_path_buf(),
            file: None,
        };
        let mut fb = FileBuilder::new();
        for (k, v) in root {
            fb.set_attr(k, text(v.clone()));
        }
        fb.write(output.temp.path())
            .map_err(|e| h5err(out, "creating the file", e))?;
        let access = FileAccessProperties::new()
            .with_memory_strategy(MemoryStrategy::Bounded)
            .with_sync_policy(SyncPolicy::OnClose);
        output.file = Some(
            hdf5_pure::File::open_rw_with_options(output.temp.path(), access)
                .map_err(|e| h5err(out, "opening the file", e))?,
        );
        let bool_t = EnumTypeBuilder::with_base(make_i8_type())
            .value("FALSE", 0)
            .value("TRUE", 1)
            .build()
            .map_err(|e| recfmt_core::Error::invalid(format!("HDF5 bool type: {e}")))?;
        Ok(H5Writer {
            out: output,
            options: options.clone(),
            bool_t,
            summary: Hdf5Summary::default(),
        })
    }

    fn file(&self) -> recfmt_core::Result<&hdf5_pure::File> {
        self.out
            .file
            .as_ref()
            .ok_or_else(|| recfmt_core::Error::invalid("HDF5 file already closed"))
    }

    fn group(
        &self,
        name: &str,
        attrs: &[(String, AttrValue)],
        specs: &[Spec],
    ) -> recfmt_core::Result<()> {
        let file = self.file()?;
        let deflate = self.options.deflate;
        file.root()
            .create_group_with(name, |g| {
                for (k, v) in attrs {
                    g.set_attr(k, v.clone());
                }
                for spec in specs {
                    stage(g, spec, deflate, &self.bool_t);
                }
            })
            .map_err(|e| h5err(&self.out.target, name, e))?;
        file.commit().map_err(|e| h5err(&self.out.target, name, e))
    }

    fn write_part(&mut self, part: Part) -> recfmt_core::Result<()> {
        let group = part.group_name();
        let entry = SessionGroup {
            group: format!("/{group}"),
            session: part.session,
            part: part.part,
            frames: part.rows,
            particles: part.particles as u64,
        };
        let (attrs, specs) = part.specs(&mut self.summary.notes);
        self.group(&group, &attrs, &specs)?;
        self.summary.sessions.push(entry);
        Ok(())
    }

    fn finish(mut self, state: Option<StateTable>) -> recfmt_core::Result<Hdf5Summary> {
        if let Some(s) = state {
            let n = s.t_us.len() as u64;
            let specs = vec![
                Spec {
                    name: "t_us".into(),
                    data: Data::U64(s.t_us),
                    shape: vec![n],
                    per_frame: true,
                    attrs: vec![("unit".into(), text("us"))],
                },
                Spec {
                    name: "key".into(),
                    data: Data::Str(s.key),
                    shape: vec![n],
                    per_frame: false,
                    attrs: Vec::new(),
                },
                Spec {
                    name: "value".into(),
                    data: Data::Str(s.value),
                    shape: vec![n],
                    per_frame: false,
                    attrs: vec![("encoding".into(), text("json"))],
                },
                Spec {
                    name: "removed".into(),
                    data: Data::Bool(s.removed),
                    shape: vec![n],
                    per_frame: false,
                    attrs: Vec::new(),
                },
            ];
            let attrs = vec![(
                "rows".to_string(),
                text("one row per key a state update sets (value as JSON text) or removes"),
            )];
            self.group("state", &attrs, &specs)?;
            self.summary.state_rows = n;
        }
        let sessions = self.summary.sessions.len() as u64;
        let file = self.file()?;
        file.root()
            .set_attr("sessions", AttrValue::U64(sessions))
            .map_err(|e| h5err(&self.out.target, "root attributes", e))?;
        file.commit()
            .map_err(|e| h5err(&self.out.target, "root attributes", e))?;
        if let Some(file) = self.out.file.take() {
            file.close()
                .map_err(|e| h5err(&self.out.target, "closing", e))?;
        }
        self.out.temp.persist().in_file(&self.out.target)?;
        self.summary.bytes = std::fs::metadata(&self.out.target)
            .in_file(&self.out.target)?
            .len();
        Ok(std::mem::take(&mut self.summary))
    }
}

fn write_events<I>(
    events: I,
    has_state: bool,
    out: &Path,
    options: &Hdf5Options,
    root: &[(String, String)],
) -> recfmt_core::Result<Hdf5Summary>
where
    I: IntoIterator<Item = crate::Result<Event>>,
{
    let mut w = H5Writer::create(out, options, root)?;
    let mut view = FrameView::new().with_counter_resets(options.counter_resets);
    let mut session = 0u32;
    let mut frames_seen = 0u64;
    let mut part: Option<Part> = None;
    let mut state = has_state.then(StateTable::default);
    for event in events {
        let event = event?;
        let t = u64::try_from(event.timestamp).map_err(|_| {
            recfmt_core::Error::invalid(format!(
                "HDF5 export: timestamp {} us does not fit u64",
                event.timestamp
            ))
        })?;
        if let Some(msg) = &event.frame {
            let reset = view.apply(msg);
            if reset && frames_seen > 0 {
                session += 1;
                if let Some(done) = part.take() {
                    w.write_part(done)?;
                }
            }
            frames_seen += 1;
            let current = part.get_or_insert_with(|| Part::new(session, 0));
            if let Pushed::NewParticleCount(n) = current.push(t, msg, &view, &options.limits)? {
                let next = current.part + 1;
                w.summary.notes.push(format!(
                    "session {session}: the particle count changes from {} to {n} without a reset at t_us {t}; part {next} starts there",
                    current.particles
                ));
                if let Some(done) = part.take() {
                    w.write_part(done)?;
                }
                let mut p = Part::new(session, next);
                p.push(t, msg, &view, &options.limits)?;
                part = Some(p);
            }
        }
        if let (Some(update), Some(table)) = (&event.state, state.as_mut()) {
            let mut add = |k: String, v: String, removed: bool| {
                table.bytes += (k.len() + v.len()) as u64;
                table.t_us.push(t);
                table.key.push(k);
                table.value.push(v);
                table.removed.push(u8::from(removed));
            };
            match &update.changed_keys {
                Some(s) if !s.fields.is_empty() => {
                    for (k, v) in &s.fields {
                        add(k.clone(), value_to_json_text(v), is_null(v));
                    }
                }
                _ => add(String::new(), String::new(), false),
            }
            if table.bytes > options.limits.max_record_len {
                return Err(recfmt_core::Error::Limit {
                    what: "NanoVer HDF5 export: bytes of state text (the /state table is written whole; raise Limits::max_record_len)",
                    value: table.bytes,
                    limit: options.limits.max_record_len,
                    offset: 0,
                });
            }
        }
    }
    if let Some(done) = part.take() {
        w.write_part(done)?;
    }
    w.finish(state)
}

/// Writes events into an HDF5 file at `out` (see the module docs for the layout); `has_state`
/// says whether to write the `/state` group.
pub fn write_hdf5_events<I>(
    events: I,
    has_state: bool,
    out: &Path,
    options: &Hdf5Options,
) -> recfmt_core::Result<Hdf5Summary>
where
    I: IntoIterator<Item = crate::Result<Event>>,
{
    let root = vec![("recfmt.format".to_string(), crate::FORMAT_ID.to_string())];
    write_events(events, has_state, out, options, &root)
}

/// Exports the NanoVer recording at `input` (a `.traj` or `.state` with its partner, or a
/// `.nanover.zip`) to an HDF5 file at `out`, with positions as one `[frames, particles, 3]`
/// dataset per session. See the [module docs](self) for the layout and the memory bound.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let (traj, state) = recfmt_nanover::generate::small_recording_bytes()?;
/// std::fs::write(dir.path().join("a.traj"), &traj)?;
/// std::fs::write(dir.path().join("a.state"), &state)?;
/// let out = dir.path().join("a.h5");
/// let summary = recfmt_nanover::hdf5::write_hdf5(&dir.path().join("a.traj"), &out, &Default::default())?;
/// assert_eq!(summary.sessions.len(), 2);
/// let file = hdf5_pure::File::open(&out)?;
/// let positions = file.dataset("session_1/positions")?;
/// assert_eq!(positions.shape()?, [3, 4, 3]); // 3 frames of 4 particles
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_hdf5(
    input: &Path,
    out: &Path,
    options: &Hdf5Options,
) -> recfmt_core::Result<Hdf5Summary> {
    let read = ReadOptions {
        limits: options.limits,
        ..ReadOptions::default()
    };
    let mut root = vec![
        ("recfmt.format".to_string(), crate::FORMAT_ID.to_string()),
        (
            "units".to_string(),
            "nm, ps, kJ/mol, nm/ps, kJ/(mol nm); t_us in microseconds since the recorder started"
                .to_string(),
        ),
    ];
    if crate::recording::is_nanover_zip(input) {
        #[cfg(feature = "nanover-zip")]
        {
            let file = std::fs::File::open(input).in_file(input)?;
            let mut events =
                crate::nzip::ZipEvents::open(std::io::BufReader::new(file), &options.limits)
                    .in_file(input)?;
            // A first pass (one message in memory at a time) says whether there is state.
            let mut has_state = false;
            while let Some(e) = events.next_event().in_file(input)? {
                if e.state.is_some() {
                    has_state = true;
                    break;
                }
            }
            events.rewind();
            root.push(("source.zip".into(), input.display().to_string()));
            let mut s = write_events(&mut events, has_state, out, options, &root)?;
            s.integrity = events.integrity().clone();
            return Ok(s);
        }
        #[cfg(not(feature = "nanover-zip"))]
        return Err(crate::recording::zip_unsupported(input));
    }
    let paths = RecordingPaths::resolve(input);
    if let Some(p) = &paths.traj {
        root.push(("source.traj".into(), p.display().to_string()));
    }
    if let Some(p) = &paths.state {
        root.push(("source.state".into(), p.display().to_string()));
    }
    let mut timeline = Timeline::open(&paths, &read)?;
    if let Some(r) = timeline.traj_mut() {
        let v = r.read_header().in_file(input)?;
        root.push(("nanover.version".into(), v.name().into()));
    }
    let events = std::iter::from_fn(|| timeline.next_event().transpose());
    let mut summary = write_events(events, paths.state.is_some(), out, options, &root)?;
    let mut integrity = Integrity::default();
    for i in [
        timeline.traj().map(|r| r.integrity()),
        timeline.state().map(|r| r.integrity()),
    ]
    .into_iter()
    .flatten()
    {
        integrity.bytes_lost += i.bytes_lost;
        integrity.records_skipped += i.records_skipped;
        integrity.truncated_at = integrity.truncated_at.or(i.truncated_at);
        if i.lost_data() {
            integrity.status = i.status;
        }
        for w in &i.warnings {
            integrity.warn(w.clone());
        }
    }
    summary.integrity = integrity;
    Ok(summary)
}
