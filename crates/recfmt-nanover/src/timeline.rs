//! One timeline from a `.traj` and its `.state`, merged by timestamp.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use recfmt_core::{Integrity, ReadOptions};

use crate::error::Result;
use crate::header::{FileKind, VersionPolicy};
use crate::io::{Reader, Timed};
use crate::proto::{GetFrameResponse, StateUpdate};

/// One moment of a recording: a frame, a state update, or both when their timestamps are
/// equal (as NanoVer's `iter_recording_files` yields them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Event {
    /// Microseconds since the recorder started.
    pub timestamp: u128,
    /// The frame record at this time.
    pub frame: Option<GetFrameResponse>,
    /// The state record at this time.
    pub state: Option<StateUpdate>,
}

/// The files of one recording.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordingPaths {
    /// The `.traj`, when there is one.
    pub traj: Option<PathBuf>,
    /// The `.state`, when there is one.
    pub state: Option<PathBuf>,
    /// Which format version to read the files as (detected by default).
    pub version: crate::VersionPolicy,
}

impl RecordingPaths {
    /// Resolves a path to the files of one recording: a `.traj` picks up the `.state` beside
    /// it with the same stem, and a `.state` the `.traj` beside it (when they exist), so
    /// either file of a pair opens the whole recording. Any other extension is sniffed from
    /// the content (a frame or a state update in the first record) and defaults to a
    /// trajectory, whose partner is looked for with the `.state` extension.
    ///
    /// ```
    /// use recfmt_nanover::RecordingPaths;
    /// let dir = std::env::temp_dir().join(format!("nanover-paths-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let (traj, state) = recfmt_nanover::generate::small_recording_bytes()?;
    /// std::fs::write(dir.join("a.traj"), &traj)?;
    /// std::fs::write(dir.join("a.state"), &state)?;
    /// let from_state = RecordingPaths::resolve(&dir.join("a.state"));
    /// assert_eq!(from_state, RecordingPaths::resolve(&dir.join("a.traj")));
    /// assert_eq!(from_state.traj, Some(dir.join("a.traj")));
    /// assert_eq!(RecordingPaths::single(&dir.join("a.state")).traj, None);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve(path: &Path) -> Self {
        let mut paths = Self::single(path);
        match (&paths.traj, &paths.state) {
            (Some(t), None) => {
                let sibling = t.with_extension("state");
                paths.state = (sibling != *t && sibling.is_file()).then_some(sibling);
            }
            (None, Some(s)) => {
                let sibling = s.with_extension("traj");
                paths.traj = (sibling != *s && sibling.is_file()).then_some(sibling);
            }
            _ => {}
        }
        paths
    }

    /// The one file at `path`, without looking for its partner: a `.state` (by extension or
    /// content) is a state file, anything else a trajectory.
    pub fn single(path: &Path) -> Self {
        match FileKind::from_path(path).or_else(|| sniff_path(path)) {
            Some(FileKind::State) => RecordingPaths {
                version: crate::VersionPolicy::Auto,
                traj: None,
                state: Some(path.to_path_buf()),
            },
            _ => RecordingPaths {
                version: crate::VersionPolicy::Auto,
                traj: Some(path.to_path_buf()),
                state: None,
            },
        }
    }

    /// Where a writer puts the files of a recording named by `path`: a path ending in
    /// `.state` names the state file and the trajectory beside it gets `.traj`; any other
    /// path names the trajectory and the state file beside it gets `.state` (`y.traj` and
    /// `y.state`; `out` and `out.state`). `traj` and `state` say which files are wanted.
    ///
    /// ```
    /// use std::path::{Path, PathBuf};
    /// use recfmt_nanover::RecordingPaths;
    /// let p = RecordingPaths::outputs(Path::new("run/y.traj"), true, true);
    /// assert_eq!(p.state, Some(PathBuf::from("run/y.state")));
    /// let p = RecordingPaths::outputs(Path::new("y.state"), true, true);
    /// assert_eq!(p.traj, Some(PathBuf::from("y.traj")));
    /// ```
    pub fn outputs(path: &Path, traj: bool, state: bool) -> Self {
        let (t, s) = if FileKind::from_path(path) == Some(FileKind::State) {
            (path.with_extension("traj"), path.to_path_buf())
        } else {
            let mut s = path.as_os_str().to_owned();
            if FileKind::from_path(path) == Some(FileKind::Trajectory) {
                s = path.with_extension("state").into_os_string();
            } else {
                s.push(".state");
            }
            (path.to_path_buf(), PathBuf::from(s))
        };
        RecordingPaths {
            version: crate::VersionPolicy::Auto,
            traj: traj.then_some(t),
            state: state.then_some(s),
        }
    }
}

/// Guesses the kind of a file without a `.traj`/`.state` extension from its first payload.
pub fn sniff_path(path: &Path) -> Option<FileKind> {
    let mut head = Vec::with_capacity(64);
    File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut head))
        .ok()?;
    let first = head.get(crate::HEADER_LEN + crate::RECORD_HEADER_LEN..)?;
    crate::header::sniff_kind(first)
}

/// Opens one file as a buffered reader that knows its length and names the file in warnings.
pub fn open_file(
    path: &Path,
    kind: FileKind,
    options: &ReadOptions,
) -> std::io::Result<Reader<BufReader<File>>> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut reader =
        Reader::new(BufReader::with_capacity(1 << 16, file), kind).with_options(options);
    reader.set_total_len(Some(len));
    reader.set_label(path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    ));
    Ok(reader)
}

/// Merges the frames of a `.traj` and the updates of a `.state` into [`Event`]s in timestamp
/// order. Either file may be absent.
///
/// ```
/// use recfmt_nanover::{Timeline, generate};
/// let (traj, state) = generate::small_recording_bytes()?;
/// let timeline = Timeline::from_bytes(Some(&traj), Some(&state))?;
/// let events: Vec<_> = timeline.collect::<Result<_, _>>()?;
/// assert!(events.windows(2).all(|w| w[0].timestamp < w[1].timestamp));
/// assert!(events.iter().any(|e| e.frame.is_some() && e.state.is_some()));
/// # Ok::<(), recfmt_nanover::Error>(())
/// ```
#[derive(Debug)]
pub struct Timeline<T, S> {
    traj: Option<Reader<T>>,
    state: Option<Reader<S>>,
    next_frame: Option<(u128, GetFrameResponse)>,
    next_state: Option<(u128, StateUpdate)>,
    primed: bool,
    /// Frames end at the first one this late ([`Timeline::set_stop`]).
    stop: Option<u128>,
}

impl Timeline<BufReader<File>, BufReader<File>> {
    /// Opens the files of a recording.
    pub fn open(paths: &RecordingPaths, options: &ReadOptions) -> recfmt_core::Result<Self> {
        use recfmt_core::ResultExt;
        let open = |p: &Path, kind| -> recfmt_core::Result<_> {
            let mut reader = open_file(p, kind, options).in_file(p)?;
            reader.set_version_policy(paths.version);
            Ok(reader)
        };
        let traj = match &paths.traj {
            Some(p) => Some(open(p, FileKind::Trajectory)?),
            None => None,
        };
        let state = match &paths.state {
            Some(p) => Some(open(p, FileKind::State)?),
            None => None,
        };
        Ok(Timeline::new(traj, state))
    }
}

impl<'a> Timeline<&'a [u8], &'a [u8]> {
    /// Merges in-memory files.
    pub fn from_bytes(traj: Option<&'a [u8]>, state: Option<&'a [u8]>) -> Result<Self> {
        let reader = |b: &'a [u8], kind| {
            let mut r = Reader::new(b, kind);
            r.set_total_len(Some(b.len() as u64));
            r
        };
        Ok(Timeline::new(
            traj.map(|b| reader(b, FileKind::Trajectory)),
            state.map(|b| reader(b, FileKind::State)),
        ))
    }
}

impl<T: Read, S: Read> Timeline<T, S> {
    /// Merges two readers.
    pub fn new(traj: Option<Reader<T>>, state: Option<Reader<S>>) -> Self {
        Timeline {
            traj,
            state,
            next_frame: None,
            next_state: None,
            primed: false,
            stop: None,
        }
    }

    /// Ends the frames at the first one whose timestamp is `stop` µs or later (not handed
    /// out), for a time window over a `.traj` whose times are known to increase: no later
    /// frame is wanted, and the rest of the `.traj` is not read. The `.state` is read to its
    /// end: its order is not known before it is read, and a torn one read with resync may
    /// hold a bogus late time before records that are not late.
    pub fn set_stop(&mut self, stop: Option<u128>) {
        self.stop = stop;
    }

    /// True once the first records have been read: a reader may only be moved before.
    pub fn started(&self) -> bool {
        self.primed
    }

    /// Sets the version policy of both readers (before the first event).
    pub fn set_version_policy(&mut self, policy: VersionPolicy) {
        if let Some(t) = &mut self.traj {
            t.set_version_policy(policy);
        }
        if let Some(s) = &mut self.state {
            s.set_version_policy(policy);
        }
    }

    /// The trajectory reader.
    pub fn traj(&self) -> Option<&Reader<T>> {
        self.traj.as_ref()
    }

    /// The state reader.
    pub fn state(&self) -> Option<&Reader<S>> {
        self.state.as_ref()
    }

    /// What reading both files lost, together: losses and warnings added up, the first
    /// truncation offset, and the status of the last file that lost data.
    pub fn integrity(&self) -> Integrity {
        let mut integrity = Integrity::default();
        for i in [
            self.traj().map(|r| r.integrity()),
            self.state().map(|r| r.integrity()),
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
        integrity
    }

    /// Mutable access to the trajectory reader.
    pub fn traj_mut(&mut self) -> Option<&mut Reader<T>> {
        self.traj.as_mut()
    }

    /// Mutable access to the state reader.
    pub fn state_mut(&mut self) -> Option<&mut Reader<S>> {
        self.state.as_mut()
    }

    fn pull_frame(&mut self) -> Result<()> {
        if let Some(r) = &mut self.traj {
            let mut frame = Timed::default();
            self.next_frame = r
                .read_frame(&mut frame)?
                .then_some((frame.timestamp, frame.message))
                // A frame past the window ends the frames: `pull_frame` runs only after a
                // frame is taken, so the `.traj` is not read further.
                .filter(|(t, _)| self.stop.is_none_or(|stop| *t < stop));
        }
        Ok(())
    }

    fn pull_state(&mut self) -> Result<()> {
        if let Some(r) = &mut self.state {
            let mut update = Timed::default();
            self.next_state = r
                .read_state(&mut update)?
                .then_some((update.timestamp, update.message));
        }
        Ok(())
    }

    /// The next event, or `None` at the end of both files.
    pub fn next_event(&mut self) -> Result<Option<Event>> {
        if !self.primed {
            self.primed = true;
            self.pull_frame()?;
            self.pull_state()?;
        }
        let take_frame = match (&self.next_frame, &self.next_state) {
            (None, None) => return Ok(None),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((tf, _)), Some((ts, _))) => tf <= ts,
        };
        let mut event = Event::default();
        if take_frame && let Some((t, f)) = self.next_frame.take() {
            event.timestamp = t;
            event.frame = Some(f);
            self.pull_frame()?;
        }
        let state_now = match &self.next_state {
            Some((ts, _)) => !take_frame || *ts == event.timestamp,
            None => false,
        };
        if state_now && let Some((t, s)) = self.next_state.take() {
            event.timestamp = t;
            event.state = Some(s);
            self.pull_state()?;
        }
        Ok(Some(event))
    }
}

impl<T: Read, S: Read> Iterator for Timeline<T, S> {
    type Item = Result<Event>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event().transpose()
    }
}
