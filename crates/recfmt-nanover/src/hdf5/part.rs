//! One session part buffered whole: every frame's per-frame arrays and values, and the
//! arrays that describe the session (see [the module docs](super#why-a-whole-session-at-a-time)).

use std::collections::{BTreeMap, BTreeSet};

use hdf5_pure::AttrValue;
use recfmt_core::Limits;
use recfmt_h5::text;

use crate::aggregate::{FrameView, SIMULATION_COUNTER};
use crate::proto::{GetFrameResponse, Value, ValueArray};
use crate::recording::array_unit;

use super::spec::{Data, Spec, dynamic_spec, scalar_spec, static_spec};

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

/// The value column of one `values` key: the aggregated value per row.
#[derive(Default)]
pub(super) struct ScalarCol {
    pub(super) rows: Vec<Option<Value>>,
}

/// One session part being buffered.
pub(super) struct Part {
    pub(super) session: u32,
    pub(super) part: u32,
    /// True once a row had positions (the particle count is known from then on).
    positioned: bool,
    pub(super) particles: usize,
    pub(super) rows: u64,
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

pub(super) enum Pushed {
    Row,
    NewParticleCount(usize),
}

impl Part {
    pub(super) fn new(session: u32, part: u32) -> Self {
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

    pub(super) fn group_name(&self) -> String {
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

    pub(super) fn push(
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
    pub(super) fn specs(self, notes: &mut Vec<String>) -> (Vec<(String, AttrValue)>, Vec<Spec>) {
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
