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

mod part;
mod spec;
mod writer;

use std::path::Path;

use recfmt_core::{Integrity, Limits, ReadOptions, ResultExt};

use crate::aggregate::FrameView;
use crate::json::value_to_json_text;
use crate::proto::is_null;
use crate::timeline::{Event, RecordingPaths, Timeline};
use part::{Part, Pushed};
use writer::{H5Writer, StateTable};

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
    summary.integrity = timeline.integrity();
    Ok(summary)
}
