//! Splitting a recording into sessions (simulations), like NanoVer's `nanover-split-recording`
//! without its bugs.
//!
//! NanoVer's protobuf-era split tool leaves part `-00` empty (header only) when the recording
//! starts with a reset, loses resets that the Python gRPC recorder merged into a later frame,
//! and at its last protobuf version does not run at all. Here:
//!
//! * a session never comes out empty: the first event always belongs to session 0;
//! * [`SplitRule::ResetOrCounterChange`] also splits where `system.simulation.counter`
//!   changes on a frame whose index is not 0;
//! * every session after the first starts, at time 0, with the full aggregated frame (index
//!   0) and the full shared state (one `StateUpdate`), so each part stands alone; session 0
//!   keeps the original timestamps, later ones are rebased to their first event.

use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};

use recfmt_core::{AtomicFile, ReadOptions, Replace, ResultExt};

use crate::aggregate::{FrameView, SIMULATION_COUNTER, StateView};
use crate::error::Result;
use crate::header::{FileKind, Version};
use crate::io::Writer;
use crate::proto::{GetFrameResponse, StateUpdate, is_null};
use crate::timeline::{Event, RecordingPaths, Timeline};

/// Where sessions start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SplitRule {
    /// At every frame with `frame_index == 0` (NanoVer's default).
    #[default]
    FrameReset,
    /// At resets and where `system.simulation.counter` changes (recovers merged resets).
    ResetOrCounterChange,
    /// Wherever an event changes the value of this key: a frame that sets it (in `values` or
    /// `arrays`) to a value other than the aggregate's, or a state update that sets it to
    /// another value or removes it. Setting a key that had no value is not a change (NanoVer's
    /// `-s KEY` splits whenever the key appears at all, so a first part can come out empty).
    KeyChange(String),
}

/// One event of a split recording.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitEvent {
    /// The session it belongs to (0-based).
    pub session: usize,
    /// True for the first event of a session after the first.
    pub starts_session: bool,
    /// Timestamp rebased to the session start (session 0 keeps the original timestamps).
    pub timestamp: u128,
    /// The frame to write (the full aggregate, index 0, at a session start).
    pub frame: Option<GetFrameResponse>,
    /// The state update to write (the full state at a session start).
    pub state: Option<StateUpdate>,
}

/// True when a key had a value and gets a different one.
fn changed<T: PartialEq>(old: Option<&T>, new: Option<&T>) -> bool {
    old.is_some() && new.is_some() && old != new
}

/// Assigns events to sessions, one at a time.
///
/// ```
/// use recfmt_nanover::{SplitRule, Splitter, Timeline, generate};
/// let (traj, state) = generate::small_recording_bytes()?;
/// let mut splitter = Splitter::new(SplitRule::FrameReset);
/// let mut starts = Vec::new();
/// for event in Timeline::from_bytes(Some(&traj), Some(&state))? {
///     let out = splitter.push(event?);
///     if out.starts_session {
///         starts.push((out.session, out.timestamp));
///     }
/// }
/// assert_eq!(starts, [(1, 0)]);
/// # Ok::<(), recfmt_nanover::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Splitter {
    rule: SplitRule,
    frames: FrameView,
    state: StateView,
    session: usize,
    base: u128,
    seen_any: bool,
    seen_frame: bool,
}

impl Splitter {
    /// A splitter applying `rule`.
    pub fn new(rule: SplitRule) -> Self {
        let counter = rule == SplitRule::ResetOrCounterChange;
        Splitter {
            rule,
            frames: FrameView::new().with_counter_resets(counter),
            state: StateView::default(),
            session: 0,
            base: 0,
            seen_any: false,
            seen_frame: false,
        }
    }

    /// The aggregated frame after the events pushed so far.
    pub fn frame_view(&self) -> &FrameView {
        &self.frames
    }

    /// The shared state after the events pushed so far.
    pub fn state_view(&self) -> &StateView {
        &self.state
    }

    fn splits(&self, event: &Event) -> bool {
        match &self.rule {
            SplitRule::FrameReset => event.frame.as_ref().is_some_and(|f| f.frame_index == 0),
            SplitRule::ResetOrCounterChange => event
                .frame
                .as_ref()
                .is_some_and(|f| f.frame_index == 0 || self.frames.counter_changes(f)),
            SplitRule::KeyChange(key) => {
                let frame_changes = event
                    .frame
                    .as_ref()
                    .and_then(|f| f.frame.as_ref())
                    .is_some_and(|f| {
                        changed(self.frames.values.get(key), f.values.get(key))
                            || changed(self.frames.arrays.get(key), f.arrays.get(key))
                    });
                let state_changes = event.state.as_ref().is_some_and(|s| {
                    s.changes().any(|(k, v)| {
                        k == key
                            && self
                                .state
                                .keys
                                .get(k)
                                .is_some_and(|old| is_null(v) || old != v)
                    })
                });
                frame_changes || state_changes
            }
        }
    }

    /// Assigns one event (in timestamp order) to a session.
    pub fn push(&mut self, event: Event) -> SplitEvent {
        // Frame rules need a frame before: state updates that precede the first frame belong
        // to the first session, which therefore never comes out without frames.
        let allowed = match self.rule {
            SplitRule::KeyChange(_) => self.seen_any,
            _ => self.seen_frame,
        };
        let split = allowed && self.splits(&event);
        self.seen_any = true;
        self.seen_frame |= event.frame.is_some();
        if let Some(f) = &event.frame {
            self.frames.apply(f);
        }
        if let Some(s) = &event.state {
            self.state.apply(s);
        }
        if !split {
            return SplitEvent {
                session: self.session,
                starts_session: false,
                timestamp: event.timestamp.saturating_sub(self.base),
                frame: event.frame,
                state: event.state,
            };
        }
        self.session += 1;
        self.base = event.timestamp;
        let frame = match event.frame {
            Some(f) if f.frame_index == 0 => Some(f),
            had => (had.is_some() || !self.frames.is_empty())
                .then(|| GetFrameResponse::new(0, self.frames.to_frame())),
        };
        SplitEvent {
            session: self.session,
            starts_session: true,
            timestamp: 0,
            frame,
            state: (!self.state.is_empty()).then(|| self.state.to_update()),
        }
    }
}

/// One session held in memory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Session {
    /// 0-based session number.
    pub index: usize,
    /// Original timestamp of its first event.
    pub start: u128,
    /// Frames with rebased timestamps.
    pub frames: Vec<(u128, GetFrameResponse)>,
    /// State updates with rebased timestamps.
    pub states: Vec<(u128, StateUpdate)>,
}

impl Session {
    /// The particle count of the session's first frame that has positions (aggregated).
    pub fn particle_count(&self) -> Option<usize> {
        let mut view = FrameView::new();
        for (_, f) in &self.frames {
            view.apply(f);
            if f.frame
                .as_ref()
                .is_some_and(|d| d.arrays.contains_key("particle.positions"))
            {
                return view.particle_count();
            }
        }
        None
    }

    /// The value of `system.simulation.counter` in the session's first frame, if any.
    pub fn simulation_counter(&self) -> Option<f64> {
        self.frames
            .iter()
            .find_map(|(_, f)| f.frame.as_ref()?.number(SIMULATION_COUNTER))
    }
}

/// Splits events into sessions held in memory.
///
/// ```
/// use recfmt_nanover::{SplitRule, Timeline, generate, split_sessions};
/// let (traj, state) = generate::small_recording_bytes()?;
/// let sessions = split_sessions(Timeline::from_bytes(Some(&traj), Some(&state))?, SplitRule::FrameReset)?;
/// assert_eq!(sessions.len(), 2);
/// assert_eq!(sessions[1].frames[0].0, 0); // rebased
/// assert_eq!((sessions[0].particle_count(), sessions[1].particle_count()), (Some(3), Some(4)));
/// # Ok::<(), recfmt_nanover::Error>(())
/// ```
pub fn split_sessions<I>(events: I, rule: SplitRule) -> Result<Vec<Session>>
where
    I: IntoIterator<Item = Result<Event>>,
{
    let mut splitter = Splitter::new(rule);
    let mut sessions: Vec<Session> = Vec::new();
    for event in events {
        let event = event?;
        let original = event.timestamp;
        let out = splitter.push(event);
        if sessions.len() <= out.session {
            sessions.push(Session {
                index: out.session,
                start: original,
                ..Session::default()
            });
        }
        let Some(session) = sessions.last_mut() else {
            continue;
        };
        if let Some(f) = out.frame {
            session.frames.push((out.timestamp, f));
        }
        if let Some(s) = out.state {
            session.states.push((out.timestamp, s));
        }
    }
    Ok(sessions)
}

/// The files written for one session by [`split_files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitPart {
    /// The `.traj` written (when the input had one).
    pub traj: Option<PathBuf>,
    /// The `.state` written (when the input had one).
    pub state: Option<PathBuf>,
    /// Frames written.
    pub frames: u64,
    /// State updates written.
    pub states: u64,
}

struct PartWriters {
    traj: Option<Writer<BufWriter<AtomicFile>>>,
    state: Option<Writer<BufWriter<AtomicFile>>>,
    part: SplitPart,
}

impl PartWriters {
    fn finish(self) -> recfmt_core::Result<SplitPart> {
        for (w, path) in [(self.traj, &self.part.traj), (self.state, &self.part.state)] {
            if let (Some(w), Some(path)) = (w, path) {
                let file = w.finish().in_file(path)?;
                let file = file
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .in_file(path)?;
                file.commit().in_file(path)?;
            }
        }
        Ok(self.part)
    }
}

/// Splits the recording at `paths` into files `<out_stem>-NN.traj` / `.state` (NN from 00),
/// streaming. Each output is written under a temporary name and renamed when complete.
pub fn split_files(
    paths: &RecordingPaths,
    out_stem: &Path,
    rule: SplitRule,
    options: &ReadOptions,
) -> recfmt_core::Result<Vec<SplitPart>> {
    let timeline = Timeline::open(paths, options)?;
    split_timeline(
        timeline,
        paths.traj.is_some(),
        paths.state.is_some(),
        out_stem,
        rule,
    )
}

fn open_part(stem: &Path, n: usize, traj: bool, state: bool) -> recfmt_core::Result<PartWriters> {
    let name = |ext: &str| {
        let mut s = stem.as_os_str().to_owned();
        s.push(format!("-{n:02}.{ext}"));
        PathBuf::from(s)
    };
    let open = |path: &PathBuf, kind| -> recfmt_core::Result<Writer<BufWriter<AtomicFile>>> {
        // Parts are new files: an existing one is kept and the split fails.
        let file = AtomicFile::create(path, Replace::Never).in_file(path)?;
        Writer::new(BufWriter::new(file), kind, Version::V2).in_file(path)
    };
    let part = SplitPart {
        traj: traj.then(|| name("traj")),
        state: state.then(|| name("state")),
        frames: 0,
        states: 0,
    };
    let traj = match &part.traj {
        Some(p) => Some(open(p, FileKind::Trajectory)?),
        None => None,
    };
    let state = match &part.state {
        Some(p) => Some(open(p, FileKind::State)?),
        None => None,
    };
    Ok(PartWriters { traj, state, part })
}

fn split_timeline<T: Read, S: Read>(
    timeline: Timeline<T, S>,
    has_traj: bool,
    has_state: bool,
    out_stem: &Path,
    rule: SplitRule,
) -> recfmt_core::Result<Vec<SplitPart>> {
    let mut splitter = Splitter::new(rule);
    let mut parts = Vec::new();
    let mut current: Option<PartWriters> = None;
    for event in timeline {
        let out = splitter.push(event?);
        if current.is_none() || out.starts_session {
            if let Some(done) = current.take() {
                parts.push(done.finish()?);
            }
            current = Some(open_part(out_stem, out.session, has_traj, has_state)?);
        }
        let Some(w) = current.as_mut() else { continue };
        if let (Some(f), Some(tw)) = (&out.frame, w.traj.as_mut()) {
            tw.write_frame(out.timestamp, f)?;
            w.part.frames += 1;
        }
        if let (Some(s), Some(sw)) = (&out.state, w.state.as_mut()) {
            sw.write_state(out.timestamp, s)?;
            w.part.states += 1;
        }
    }
    if let Some(done) = current.take() {
        parts.push(done.finish()?);
    }
    Ok(parts)
}
