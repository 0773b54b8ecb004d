//! Checkpoints of the aggregated frame, taken during the first pass, so that a time window
//! can start reading in the middle of a recording and still give the rows a full read gives.
//!
//! A `frames` row holds the *aggregated* frame: every key as the last record since the last
//! reset set it. So the rows after a point depend on records long before it (a Python
//! recording sets its topology once, in its first frame). The aggregate at a point is rebuilt
//! exactly by applying, in file order, only the records that last set each of its keys (each
//! key then ends with the value of its last setter, which is applied after every other record
//! that set it); a checkpoint lists those records. Typically two or three: the topology
//! frame and the latest frame, whatever the distance to the last reset.

use std::collections::HashMap;

/// A checkpoint every this many bytes of records at least.
pub(crate) const MIN_SPACING: u64 = 256 << 10;
/// Checkpoints kept at most: beyond, every other one is dropped and the spacing doubles, so
/// their memory stays bounded whatever the file.
const MAX_CHECKPOINTS: usize = 8192;
/// A point whose aggregate needs more records than this gets no checkpoint (a file whose
/// every record adds a key): the window then starts from an earlier one.
const MAX_SETTERS: usize = 1024;

/// The spacing of checkpoints over `len` bytes of records: [`MIN_SPACING`], or wider so that
/// a large file has about [`MAX_CHECKPOINTS`] / 2.
pub(crate) fn spacing_for(len: u64) -> u64 {
    MIN_SPACING.max(len / (MAX_CHECKPOINTS as u64 / 2))
}

/// The reading state a source needs to continue at a checkpoint as a full read would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resume {
    /// A `.traj` reader: the last timestamp it accepted in order (its resync and order checks
    /// depend on it).
    Traj { last_ts: Option<u128> },
    /// A `.nanover.zip`: the last frame index (a message without one counts on from it) and
    /// the last time (a message found without its index repeats it).
    #[cfg_attr(not(feature = "nanover-zip"), allow(dead_code))]
    Zip {
        last_index: u32,
        last_ts: u128,
        time_known: bool,
    },
}

/// A point where reading can continue with the state a full read has there.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoint {
    /// Where reading continues: a byte offset of the `.traj`, or an index entry of a zip.
    pub at: u64,
    /// The latest timestamp of any frame or event before `at` (`None`: none had a time).
    pub max_before: Option<u128>,
    /// Frames read before `at`.
    pub frames_seen: u64,
    /// The `session` of the last frame before `at`.
    pub session: u32,
    /// The records (positions as `at`'s records are named: header offsets, entry numbers)
    /// that last set a key of the aggregate at `at`, ascending.
    pub setters: Box<[u64]>,
    /// The source's reading state at `at`.
    pub resume: Resume,
}

/// The checkpoints of one recording, in file order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Checkpoints {
    list: Vec<Checkpoint>,
    /// True when no time noted was earlier than one before it: only then may a window end
    /// at the first time past its end.
    pub in_order: bool,
}

impl Checkpoints {
    /// The last checkpoint before which every frame and event is earlier than `target_us`:
    /// whatever the order of the timestamps, reading from it skips no row at or after the
    /// target. `None` when there is none (reading starts from the beginning).
    pub(crate) fn before(&self, target_us: u128) -> Option<&Checkpoint> {
        // `max_before` never decreases along the list.
        let n = self
            .list
            .partition_point(|c| c.max_before.is_none_or(|m| m < target_us));
        n.checked_sub(1).map(|i| &self.list[i])
    }

    /// How many there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }
}

/// Follows the first pass: which record last set each key since the last reset, the session
/// numbering and the times, and takes checkpoints along the way.
#[derive(Debug)]
pub(crate) struct Tracker {
    values: HashMap<String, u64>,
    arrays: HashMap<String, u64>,
    frames: u64,
    session: u32,
    max_ts: Option<u128>,
    in_order: bool,
    spacing: u64,
    last_measure: u64,
    list: Vec<Checkpoint>,
}

impl Tracker {
    /// A tracker taking a checkpoint every `spacing` units of the caller's measure (bytes).
    pub(crate) fn new(spacing: u64) -> Self {
        Tracker {
            values: HashMap::new(),
            arrays: HashMap::new(),
            frames: 0,
            session: 0,
            max_ts: None,
            in_order: true,
            spacing: spacing.max(1),
            last_measure: 0,
            list: Vec::new(),
        }
    }

    /// Frames noted so far.
    pub(crate) fn frames(&self) -> u64 {
        self.frames
    }

    /// A frame or event that gives rows at `ts`.
    pub(crate) fn note_time(&mut self, ts: u128) {
        self.in_order &= self.max_ts.is_none_or(|m| ts >= m);
        self.max_ts = Some(self.max_ts.map_or(ts, |m| m.max(ts)));
    }

    /// A frame record at `at` that resets (or not) and sets these keys, as the reading pass
    /// applies it: a reset after the first frame starts a new session.
    pub(crate) fn frame<'a>(
        &mut self,
        at: u64,
        reset: bool,
        values: impl IntoIterator<Item = &'a str>,
        arrays: impl IntoIterator<Item = &'a str>,
    ) {
        if reset {
            self.values.clear();
            self.arrays.clear();
            if self.frames > 0 {
                self.session = self.session.saturating_add(1);
            }
        }
        self.frames += 1;
        for (map, keys) in [
            (&mut self.values, values.into_iter().collect::<Vec<_>>()),
            (&mut self.arrays, arrays.into_iter().collect()),
        ] {
            for k in keys {
                match map.get_mut(k) {
                    Some(v) => *v = at,
                    None => {
                        map.insert(k.to_string(), at);
                    }
                }
            }
        }
    }

    /// Takes a checkpoint at `at` when the caller's `measure` (bytes read) has moved at least
    /// the spacing since the last one.
    pub(crate) fn checkpoint(&mut self, at: u64, measure: u64, resume: Resume) {
        if measure < self.last_measure.saturating_add(self.spacing) {
            return;
        }
        self.last_measure = measure;
        let mut setters: Vec<u64> = self
            .values
            .values()
            .chain(self.arrays.values())
            .copied()
            .collect();
        setters.sort_unstable();
        setters.dedup();
        if setters.len() > MAX_SETTERS {
            return;
        }
        self.list.push(Checkpoint {
            at,
            max_before: self.max_ts,
            frames_seen: self.frames,
            session: self.session,
            setters: setters.into_boxed_slice(),
            resume,
        });
        if self.list.len() > MAX_CHECKPOINTS {
            let mut keep = false;
            self.list.retain(|_| {
                keep = !keep;
                keep
            });
            self.spacing = self.spacing.saturating_mul(2);
        }
    }

    /// The checkpoints taken.
    pub(crate) fn finish(self) -> Checkpoints {
        Checkpoints {
            list: self.list,
            in_order: self.in_order,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_are_the_last_record_of_each_key_since_the_reset() {
        let mut t = Tracker::new(1);
        t.frame(10, true, ["count"], ["names", "positions"]);
        t.note_time(1);
        t.frame(20, false, ["energy"], ["positions"]);
        t.note_time(2);
        t.checkpoint(30, 30, Resume::Traj { last_ts: Some(2) });
        t.frame(30, false, [], ["positions"]);
        t.note_time(3);
        t.checkpoint(40, 40, Resume::Traj { last_ts: Some(3) });
        t.frame(40, true, ["count"], ["positions"]);
        t.note_time(4);
        t.checkpoint(50, 50, Resume::Traj { last_ts: Some(4) });
        let c = t.finish();
        assert_eq!(c.len(), 3);
        assert_eq!(&*c.list[0].setters, [10, 20]);
        assert_eq!(&*c.list[1].setters, [10, 20, 30]);
        assert_eq!((&*c.list[2].setters, c.list[2].session), (&[40][..], 1));
        // Every frame before the checkpoint is earlier than the target.
        assert!(c.in_order);
        assert!(c.before(2).is_none());
        assert_eq!(c.before(3).map(|c| c.at), Some(30));
        assert_eq!(c.before(100).map(|c| c.at), Some(50));
    }

    #[test]
    fn checkpoints_stay_bounded() {
        let mut t = Tracker::new(1);
        for i in 0..(3 * MAX_CHECKPOINTS as u64) {
            t.frame(i, i == 0, ["k"], []);
            t.note_time(u128::from(i));
            t.checkpoint(i + 1, i + 1, Resume::Traj { last_ts: None });
        }
        let c = t.finish();
        assert!(c.len() <= MAX_CHECKPOINTS && c.len() > MAX_CHECKPOINTS / 4);
        assert!(c.list.windows(2).all(|w| w[0].at < w[1].at));
    }
}
