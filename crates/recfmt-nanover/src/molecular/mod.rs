//! NanoVer recordings as the files molecular tools open: multi-model PDB (with `CONECT` for
//! bonds), extended XYZ (the box as `Lattice`) and CHARMM/NAMD DCD (with the unit cell).
//!
//! Sessions are split where NanoVer's `nanover.mdanalysis.universes_from_recording` splits
//! them: a frame with `frame_index == 0` starts a new one. Each session becomes one file;
//! the output path is that file when the recording has one session with positions, else a
//! folder of `session_<n>.<ext>` files (`n` as in the `frames` stream's `session` column).
//!
//! Within a session, as NanoVer reads it:
//! - the topology (names trimmed, element symbols, residue names and ids, chains, bonds) is
//!   the aggregated frame's at the first frame with positions; frames before it are left out;
//! - every later frame of the session is written with its aggregated positions;
//! - when the particle count changes inside a session (a topology change without a reset),
//!   the frames from there to the session's end are left out, with a note saying how many
//!   (NanoVer's MDAnalysis reader keeps only the frames of the first topology too);
//! - a session without positions writes no file (NanoVer warns and makes no Universe).
//!
//! Units: NanoVer stores nm; positions and box lengths are written in Å (x 10, rounded to
//! `f32`). PDB holds 3 decimals (0.001 Å); XYZ the shortest text that reads back as the same
//! `f32`; DCD the `f32` itself. DCD's time step is the difference of the first two frames'
//! `system.simulation.time` (ps) in CHARMM's AKMA unit (0 when unknown); XYZ's `Time` is
//! `system.simulation.time` in ps.
//!
//! The recording is read twice, one frame in memory at a time: once to find the sessions and
//! their frame counts (DCD's header needs the count), once to write. Files are written under
//! a temporary name and moved into place when complete.

mod files;
mod topology;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use recfmt_core::{AtomicDir, AtomicFile, Integrity, Limits, ReadOptions, Replace, ResultExt};

use crate::aggregate::FrameView;
use crate::proto::{GetFrameResponse, Kind};
use crate::timeline::{Event, RecordingPaths, Timeline};
use files::FileWriter;
pub use topology::{Atom, Topology, element_symbol};

/// Which molecular file to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MolecularFormat {
    /// Multi-model PDB.
    Pdb,
    /// Extended XYZ.
    Xyz,
    /// CHARMM/NAMD DCD.
    Dcd,
}

impl MolecularFormat {
    /// The file extension (`pdb`, `xyz`, `dcd`).
    pub fn extension(self) -> &'static str {
        match self {
            MolecularFormat::Pdb => "pdb",
            MolecularFormat::Xyz => "xyz",
            MolecularFormat::Dcd => "dcd",
        }
    }
}

/// One frame as the writers see it.
pub(crate) struct Snapshot<'a> {
    view: &'a FrameView,
    positions: &'a [f32],
    box_nm: Option<&'a [f32]>,
    time_ps: Option<f64>,
    t_us: u128,
    frame_index: u32,
}

impl Snapshot<'_> {
    /// The frame's scalar values (numbers), by key.
    fn scalars(&self) -> impl Iterator<Item = (&str, f64)> {
        self.view.values.iter().filter_map(|(k, v)| match v.kind {
            Some(Kind::NumberValue(n)) => Some((k.as_str(), n)),
            _ => None,
        })
    }
}

/// What a frame is to its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Before the first positions: not written.
    BeforePositions,
    /// The first frame with positions: the topology is taken here, and it is written.
    First,
    /// Written.
    Frame,
    /// After a particle-count change: not written.
    AfterTopologyChange,
}

/// NanoVer's session rule and the per-session bookkeeping, shared by both passes.
struct Sessions {
    view: FrameView,
    session: u32,
    frames_seen: u64,
    particles: Option<usize>,
    stopped: bool,
}

impl Sessions {
    fn new() -> Self {
        Sessions {
            view: FrameView::new(),
            session: 0,
            frames_seen: 0,
            particles: None,
            stopped: false,
        }
    }

    /// Applies a frame record; returns whether it starts a new session and what it is to it.
    fn push(&mut self, msg: GetFrameResponse) -> (bool, Role) {
        let reset = self.view.apply_owned(msg);
        let new_session = reset && self.frames_seen > 0;
        if new_session {
            self.session += 1;
            self.particles = None;
            self.stopped = false;
        }
        self.frames_seen += 1;
        let count = self.positions().len() / 3;
        let role = match self.particles {
            _ if self.stopped => Role::AfterTopologyChange,
            None if count == 0 => Role::BeforePositions,
            None => {
                self.particles = Some(count);
                Role::First
            }
            Some(n) if n == count => Role::Frame,
            Some(_) => {
                self.stopped = true;
                Role::AfterTopologyChange
            }
        };
        (new_session, role)
    }

    fn positions(&self) -> &[f32] {
        self.view
            .arrays
            .get("particle.positions")
            .and_then(|a| a.as_floats())
            .unwrap_or(&[])
    }

    fn snapshot(&self, t_us: u128) -> Snapshot<'_> {
        let n = self.particles.unwrap_or(0) * 3;
        Snapshot {
            view: &self.view,
            positions: &self.positions()[..n.min(self.positions().len())],
            box_nm: self
                .view
                .arrays
                .get("system.box.vectors")
                .and_then(|a| a.as_floats())
                .filter(|b| b.len() == 9),
            time_ps: self.view.number("system.simulation.time"),
            t_us,
            frame_index: self.view.frame_index.unwrap_or(0),
        }
    }
}

/// One session found by the first pass.
#[derive(Debug, Clone, PartialEq)]
struct Planned {
    session: u32,
    frames: u64,
    dropped: u64,
    first_times: Vec<f64>,
}

/// One session file written by [`write_molecular`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// The session number (as the `frames` stream's `session` column).
    pub session: u32,
    /// The file name (`session_<n>.<ext>` in a folder, or the output's own name).
    pub file: String,
    /// Frames written.
    pub frames: u64,
    /// Particles per frame.
    pub particles: u64,
    /// Frames after a particle-count change left out.
    pub dropped_frames: u64,
}

/// What [`write_molecular`] wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MolecularSummary {
    /// The files, one per session with positions.
    pub files: Vec<SessionFile>,
    /// True when the output is a folder (several sessions).
    pub folder: bool,
    /// Sessions skipped or frames left out, with the reason.
    pub notes: Vec<String>,
    /// What reading the input lost.
    pub integrity: Integrity,
}

/// Calls `each` on every frame record of the recording at `input` (`.traj`, either file of a
/// pair, or `.nanover.zip`) in order; returns what reading lost.
fn for_each_frame(
    input: &Path,
    limits: &Limits,
    mut each: impl FnMut(u128, GetFrameResponse) -> recfmt_core::Result<()>,
) -> recfmt_core::Result<Integrity> {
    let mut handle = |e: Event| match e.frame {
        Some(frame) => each(e.timestamp, frame),
        None => Ok(()),
    };
    if crate::recording::is_nanover_zip(input) {
        #[cfg(feature = "nanover-zip")]
        {
            let file = File::open(input).in_file(input)?;
            let mut events = crate::nzip::ZipEvents::open(std::io::BufReader::new(file), limits)
                .in_file(input)?;
            while let Some(e) = events.next_event().in_file(input)? {
                handle(e)?;
            }
            return Ok(events.integrity().clone());
        }
        #[cfg(not(feature = "nanover-zip"))]
        return Err(crate::recording::zip_unsupported(input));
    }
    let mut paths = RecordingPaths::resolve(input);
    paths.state = None; // the molecular files hold frames only
    if paths.traj.is_none() {
        return Err(recfmt_core::Error::invalid(format!(
            "{}: molecular files are written from a NanoVer trajectory, and there is no .traj beside it",
            input.display()
        )));
    }
    let read = ReadOptions {
        limits: *limits,
        ..ReadOptions::default()
    };
    let mut timeline = Timeline::open(&paths, &read)?;
    while let Some(e) = timeline.next_event().in_file(input)? {
        handle(e)?;
    }
    Ok(timeline.integrity())
}

/// The first pass: the sessions with positions, their frame counts and first times.
fn plan(
    input: &Path,
    limits: &Limits,
    notes: &mut Vec<String>,
) -> recfmt_core::Result<Vec<Planned>> {
    let mut sessions = Sessions::new();
    let mut planned: Vec<Planned> = Vec::new();
    let mut empty = Vec::new();
    let mut current: Option<Planned> = None;
    let mut current_session = 0u32;
    for_each_frame(input, limits, |_, msg| {
        let (new, role) = sessions.push(msg);
        if new {
            match current.take() {
                Some(p) => planned.push(p),
                None => empty.push(current_session),
            }
            current_session = sessions.session;
        }
        match role {
            Role::BeforePositions => {}
            Role::First | Role::Frame => {
                let p = current.get_or_insert_with(|| Planned {
                    session: sessions.session,
                    frames: 0,
                    dropped: 0,
                    first_times: Vec::new(),
                });
                p.frames += 1;
                if p.first_times.len() < 2
                    && let Some(t) = sessions.view.number("system.simulation.time")
                {
                    p.first_times.push(t);
                }
            }
            Role::AfterTopologyChange => {
                if let Some(p) = current.as_mut() {
                    p.dropped += 1;
                }
            }
        }
        Ok(())
    })?;
    match current.take() {
        Some(p) => planned.push(p),
        None if sessions.frames_seen > 0 => empty.push(current_session),
        None => {}
    }
    if !empty.is_empty() {
        notes.push(format!(
            "sessions without positions, no file written (as NanoVer makes no Universe): {empty:?}"
        ));
    }
    Ok(planned)
}

/// Writes the molecular file(s) of the NanoVer recording at `input` to `output`: one file
/// when there is one session with positions, else a folder of `session_<n>.<ext>`. See the
/// [module docs](self) for sessions and units.
///
/// ```
/// use recfmt_nanover::molecular::{MolecularFormat, write_molecular};
/// let dir = tempfile::tempdir()?;
/// let (traj, _) = recfmt_nanover::generate::small_recording_bytes()?;
/// std::fs::write(dir.path().join("a.traj"), &traj)?;
/// let out = dir.path().join("a");
/// let summary = write_molecular(&dir.path().join("a.traj"), &out, MolecularFormat::Xyz, &Default::default(), Default::default())?;
/// assert!(summary.folder); // two sessions
/// assert!(out.join("session_1.xyz").is_file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_molecular(
    input: &Path,
    output: &Path,
    format: MolecularFormat,
    limits: &Limits,
    replace: Replace,
) -> recfmt_core::Result<MolecularSummary> {
    let mut summary = MolecularSummary::default();
    let planned = plan(input, limits, &mut summary.notes)?;
    if planned.is_empty() {
        return Err(recfmt_core::Error::invalid(format!(
            "{}: no session has particle positions, so there is nothing to write as {}",
            input.display(),
            format.extension()
        )));
    }
    summary.folder = planned.len() > 1;
    let names: Vec<String> = if summary.folder {
        planned
            .iter()
            .map(|p| format!("session_{}.{}", p.session, format.extension()))
            .collect()
    } else {
        let name = output.file_name().map(|n| n.to_string_lossy().into_owned());
        vec![name.unwrap_or_default()]
    };
    let folder = if summary.folder {
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        Some(AtomicDir::create(output, replace, &refs).in_file(output)?)
    } else {
        recfmt_core::atomic::check_target(output, replace).in_file(output)?;
        None
    };
    let source = input.display().to_string();
    let mut sessions = Sessions::new();
    let mut open: Option<(usize, FileWriter<BufWriter<Sink>>, u64)> = None;
    let mut next = 0usize;
    let close = |open: Option<(usize, FileWriter<BufWriter<Sink>>, u64)>,
                 summary: &mut MolecularSummary|
     -> recfmt_core::Result<()> {
        let Some((i, w, written)) = open else {
            return Ok(());
        };
        let p = &planned[i];
        if written != p.frames {
            return Err(changed(input));
        }
        let particles = w.particles() as u64;
        let sink = w.finish().in_file(output)?;
        sink.into_inner()
            .map_err(|e| e.into_error())
            .and_then(Sink::commit)
            .in_file(output)?;
        summary.files.push(SessionFile {
            session: p.session,
            file: names[i].clone(),
            frames: written,
            particles,
            dropped_frames: p.dropped,
        });
        if p.dropped > 0 {
            summary.notes.push(format!(
                "session {}: the particle count changes inside the session; the {} frames from there on are left out (NanoVer's reader keeps the first topology's frames too)",
                p.session, p.dropped
            ));
        }
        Ok(())
    };
    summary.integrity = for_each_frame(input, limits, |t_us, msg| {
        let (_, role) = sessions.push(msg);
        match role {
            Role::BeforePositions | Role::AfterTopologyChange => return Ok(()),
            Role::Frame => {}
            Role::First => {
                close(open.take(), &mut summary)?;
                let Some(p) = planned.get(next).filter(|p| p.session == sessions.session) else {
                    return Err(changed(input));
                };
                let sink = match &folder {
                    Some(dir) => {
                        Sink::File(File::create(dir.path().join(&names[next])).in_file(output)?)
                    }
                    None => Sink::Atomic(AtomicFile::create(output, replace).in_file(output)?),
                };
                let step = match p.first_times.as_slice() {
                    [a, b, ..] if b > a => Some(b - a),
                    _ => None,
                };
                let topology = Topology::from_view(&sessions.view, sessions.particles.unwrap_or(0));
                if topology.dropped_bonds > 0 {
                    summary.notes.push(format!(
                        "session {}: {} bonds name particles past the count {}, left out",
                        p.session,
                        topology.dropped_bonds,
                        topology.atoms.len()
                    ));
                }
                let title = format!("recfmt: NanoVer session {} of {source}", p.session);
                let w = FileWriter::begin(
                    format,
                    BufWriter::new(sink),
                    topology,
                    p.frames,
                    step,
                    &title,
                )
                .in_file(output)?;
                open = Some((next, w, 0));
                next += 1;
            }
        }
        let Some((_, w, written)) = open.as_mut() else {
            return Err(changed(input));
        };
        w.frame(&sessions.snapshot(t_us)).in_file(output)?;
        *written += 1;
        Ok(())
    })?;
    close(open.take(), &mut summary)?;
    if summary.files.len() != planned.len() {
        return Err(changed(input));
    }
    if let Some(dir) = folder {
        dir.commit().in_file(output)?;
    }
    Ok(summary)
}

/// The error when the second pass does not see what the first saw.
fn changed(input: &Path) -> recfmt_core::Error {
    recfmt_core::Error::invalid(format!(
        "{}: the recording changed while it was being converted (the two passes disagree)",
        input.display()
    ))
}

/// Where one session's file goes: a file inside the temporary folder, or the single output.
enum Sink {
    File(File),
    Atomic(AtomicFile),
}

impl Sink {
    fn commit(self) -> std::io::Result<()> {
        match self {
            Sink::File(f) => f.sync_all(),
            Sink::Atomic(f) => f.commit(),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Atomic(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            Sink::Atomic(f) => f.flush(),
        }
    }
}
