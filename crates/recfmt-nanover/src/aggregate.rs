//! Full views built from deltas: the aggregated frame and the shared state.

use std::collections::BTreeMap;

use crate::proto::{
    FrameData, GetFrameResponse, Kind, StateUpdate, Struct, Value, ValueArray, is_null,
};

/// The key whose change marks a new simulation (session).
pub const SIMULATION_COUNTER: &str = "system.simulation.counter";

/// The full frame aggregated from delta records.
///
/// Each record replaces whole entries, key by key, separately in `values` and in `arrays`;
/// keys missing from a record keep their value. A record with `frame_index == 0` first throws
/// the aggregate away (a reset). With [`FrameView::with_counter_resets`], a record that
/// changes `system.simulation.counter` also resets, which recovers resets that NanoVer's
/// Python gRPC recorder merged into a later frame (their index is then not 0).
///
/// ```
/// use recfmt_nanover::{FrameData, FrameView, GetFrameResponse, ValueArray, number};
/// let mut topology = FrameData::default();
/// topology.values.insert("particle.count".into(), number(2.0));
/// topology.arrays.insert("particle.positions".into(), ValueArray::floats(vec![0.0; 6]));
/// let mut step = FrameData::default();
/// step.arrays.insert("particle.positions".into(), ValueArray::floats(vec![1.0; 6]));
///
/// let mut view = FrameView::new();
/// assert!(view.apply(&GetFrameResponse::new(0, topology)));
/// assert!(!view.apply(&GetFrameResponse::new(1, step)));
/// assert_eq!(view.values["particle.count"], number(2.0)); // kept from the topology frame
/// assert_eq!(view.arrays["particle.positions"].as_floats().unwrap()[0], 1.0);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrameView {
    /// Index of the last record applied.
    pub frame_index: Option<u32>,
    /// Aggregated `values`.
    pub values: BTreeMap<String, Value>,
    /// Aggregated `arrays`.
    pub arrays: BTreeMap<String, ValueArray>,
    /// Resets so far (index-0 records, plus counter changes when enabled).
    pub resets: u64,
    /// Resets found only through a counter change (`frame_index != 0`).
    pub counter_resets: u64,
    counter_resets_enabled: bool,
}

impl FrameView {
    /// An empty view that resets on `frame_index == 0` only, as NanoVer's readers do.
    pub fn new() -> Self {
        FrameView::default()
    }

    /// Also reset when a record sets `system.simulation.counter` to a value different from
    /// the aggregate's (see the type docs).
    pub fn with_counter_resets(mut self, enabled: bool) -> Self {
        self.counter_resets_enabled = enabled;
        self
    }

    /// Whether counter changes reset too ([`FrameView::with_counter_resets`]).
    pub fn counter_resets_enabled(&self) -> bool {
        self.counter_resets_enabled
    }

    /// True when applying `msg` would reset the view.
    pub fn would_reset(&self, msg: &GetFrameResponse) -> bool {
        msg.frame_index == 0 || self.counter_resets_enabled && self.counter_changes(msg)
    }

    /// True when `msg` sets the simulation counter to a value other than the aggregate's (and
    /// the aggregate has one).
    pub fn counter_changes(&self, msg: &GetFrameResponse) -> bool {
        let new = msg
            .frame
            .as_ref()
            .and_then(|f| f.values.get(SIMULATION_COUNTER));
        match (new, self.values.get(SIMULATION_COUNTER)) {
            (Some(new), Some(old)) => new != old,
            _ => false,
        }
    }

    /// Applies one record; returns true when it reset the view.
    pub fn apply(&mut self, msg: &GetFrameResponse) -> bool {
        let reset = self.begin(msg);
        if let Some(frame) = &msg.frame {
            for (k, v) in &frame.values {
                self.values.insert(k.clone(), v.clone());
            }
            for (k, v) in &frame.arrays {
                self.arrays.insert(k.clone(), v.clone());
            }
        }
        reset
    }

    /// As [`FrameView::apply`], moving the record's entries into the view instead of cloning
    /// them: a frame's arrays can be megabytes (the positions of every particle), and a reader
    /// done with the record spares that copy.
    pub fn apply_owned(&mut self, msg: GetFrameResponse) -> bool {
        let reset = self.begin(&msg);
        if let Some(frame) = msg.frame {
            // `extend` inserts entry by entry, replacing existing keys, as `apply` does.
            self.values.extend(frame.values);
            self.arrays.extend(frame.arrays);
        }
        reset
    }

    /// The part of applying `msg` before its entries: the reset, when it is one, and the index.
    fn begin(&mut self, msg: &GetFrameResponse) -> bool {
        let reset = self.would_reset(msg);
        if reset {
            self.values.clear();
            self.arrays.clear();
            self.resets += 1;
            if msg.frame_index != 0 {
                self.counter_resets += 1;
            }
        }
        self.frame_index = Some(msg.frame_index);
        reset
    }

    /// Empties the view (keeps the reset counters).
    pub fn clear(&mut self) {
        self.values.clear();
        self.arrays.clear();
        self.frame_index = None;
    }

    /// True when nothing has been aggregated.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.arrays.is_empty()
    }

    /// The aggregate as one `FrameData`.
    pub fn to_frame(&self) -> FrameData {
        FrameData {
            values: self.values.clone(),
            arrays: self.arrays.clone(),
        }
    }

    /// The number under `key` in the aggregated values.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.values.get(key)?.kind {
            Some(Kind::NumberValue(n)) => Some(n),
            _ => None,
        }
    }

    /// The particle count: `particle.count` when present, else the length of
    /// `particle.positions` / 3.
    pub fn particle_count(&self) -> Option<usize> {
        if let Some(n) = self.number("particle.count")
            && n >= 0.0
            && n.fract() == 0.0
            && n < 4.0e9
        {
            return Some(n as usize);
        }
        self.arrays
            .get("particle.positions")
            .and_then(ValueArray::as_floats)
            .map(|p| p.len() / 3)
    }
}

/// The shared state aggregated from `StateUpdate`s: a `null_value` removes its key, any other
/// value replaces the whole value under the key.
///
/// ```
/// use recfmt_nanover::{StateUpdate, StateView, null, number};
/// let mut state = StateView::default();
/// state.apply(&StateUpdate::from_pairs([("a", number(1.0)), ("b", number(2.0))]));
/// state.apply(&StateUpdate::from_pairs([("a", null())]));
/// assert_eq!(state.keys.keys().collect::<Vec<_>>(), ["b"]);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StateView {
    /// The current value of every key.
    pub keys: BTreeMap<String, Value>,
}

impl StateView {
    /// Applies one update; returns how many keys it set or removed.
    pub fn apply(&mut self, update: &StateUpdate) -> usize {
        let mut n = 0;
        for (k, v) in update.changes() {
            n += 1;
            if is_null(v) {
                self.keys.remove(k);
            } else {
                self.keys.insert(k.clone(), v.clone());
            }
        }
        n
    }

    /// One update that sets every key (what a new file needs to start from this state).
    pub fn to_update(&self) -> StateUpdate {
        StateUpdate {
            changed_keys: Some(Struct {
                fields: self.keys.clone(),
            }),
        }
    }

    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}
