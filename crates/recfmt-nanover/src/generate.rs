//! Small deterministic recordings for examples, tests and fixtures.
//!
//! [`small_recording`] has two sessions (index 0 at frames 0 and 4, the second with a bigger
//! topology and `residue.ids` as floats, as the Rust server writes them), an empty
//! `forces.user.sparse` stored as an index array (the Python websocket recorder's quirk), a
//! frame with a `Value` of every kind, and state updates with removals and one timestamp
//! shared with a frame.
//!
//! [`write_bench_traj`] streams a large trajectory of many particles for benchmarks
//! (`cargo xtask bench formats`).

use std::io::Write;

use crate::error::Result;
use crate::header::{FileKind, Version};
use crate::io::Writer;
use crate::proto::{
    FrameData, GetFrameResponse, Kind, ListValue, StateUpdate, Struct, Value, ValueArray, null,
    number,
};

fn text(s: &str) -> Value {
    Value {
        kind: Some(Kind::StringValue(s.into())),
    }
}

fn boolean(b: bool) -> Value {
    Value {
        kind: Some(Kind::BoolValue(b)),
    }
}

fn list(values: Vec<Value>) -> Value {
    Value {
        kind: Some(Kind::ListValue(ListValue { values })),
    }
}

fn object(pairs: &[(&str, Value)]) -> Value {
    Value {
        kind: Some(Kind::StructValue(Struct {
            fields: pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.clone()))
                .collect(),
        })),
    }
}

fn strings(items: &[&str]) -> ValueArray {
    ValueArray::strings(items.iter().map(|s| (*s).to_string()).collect())
}

/// Positions of `n` particles at `step`: particle `i` at `(0.1 i + 0.01 s, 0.2, -0.1 i)` nm.
fn positions(n: usize, step: usize) -> ValueArray {
    let mut p = Vec::with_capacity(3 * n);
    for i in 0..n {
        p.extend([i as f32 * 0.1 + step as f32 * 0.01, 0.2, -(i as f32) * 0.1]);
    }
    ValueArray::floats(p)
}

fn topology(n: usize, counter: f64, float_ids: bool) -> FrameData {
    let mut f = FrameData::default();
    let v = &mut f.values;
    v.insert("particle.count".into(), number(n as f64));
    v.insert("residue.count".into(), number(2.0));
    v.insert("chain.count".into(), number(1.0));
    v.insert("system.simulation.counter".into(), number(counter));
    v.insert("system.simulation.time".into(), number(0.0));
    v.insert("energy.kinetic".into(), number(1.5));
    v.insert("energy.potential".into(), number(-20.25));
    let a = &mut f.arrays;
    let names: Vec<String> = (0..n).map(|i| format!("C{}", i + 1)).collect();
    a.insert("particle.names".into(), ValueArray::strings(names));
    a.insert("particle.elements".into(), ValueArray::indices(vec![6; n]));
    a.insert(
        "particle.residues".into(),
        ValueArray::indices((0..n as u32).map(|i| i * 2 / n as u32).collect()),
    );
    a.insert("residue.names".into(), strings(&["ALA", "GLY"]));
    a.insert(
        "residue.ids".into(),
        if float_ids {
            ValueArray::floats(vec![1.0, 2.0])
        } else {
            strings(&["1", "2"])
        },
    );
    a.insert("residue.chains".into(), ValueArray::indices(vec![0, 0]));
    a.insert("chain.names".into(), strings(&["A"]));
    let pairs: Vec<u32> = (0..n as u32 - 1).flat_map(|i| [i, i + 1]).collect();
    a.insert("bond.orders".into(), ValueArray::floats(vec![1.0; n - 1]));
    a.insert("bond.pairs".into(), ValueArray::indices(pairs));
    a.insert("particle.positions".into(), positions(n, 0));
    a.insert(
        "system.box.vectors".into(),
        ValueArray::floats(vec![3.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 3.0]),
    );
    f
}

fn step(n: usize, step: usize) -> FrameData {
    let mut f = FrameData::default();
    let s = step as f64;
    f.values
        .insert("system.simulation.time".into(), number(s * 0.5));
    f.values
        .insert("energy.kinetic".into(), number(1.5 + s * 0.25));
    f.values
        .insert("energy.potential".into(), number(-20.25 + s));
    f.arrays
        .insert("particle.positions".into(), positions(n, step));
    let velocities = (0..3 * n).map(|k| k as f32 * 0.5 - s as f32).collect();
    f.arrays
        .insert("particle.velocities".into(), ValueArray::floats(velocities));
    f
}

/// Frames with their timestamps (µs).
pub type TimedFrames = Vec<(u128, GetFrameResponse)>;
/// State updates with their timestamps (µs).
pub type TimedUpdates = Vec<(u128, StateUpdate)>;

/// The frames and state updates of the small recording, with their timestamps (µs).
pub fn small_recording() -> (TimedFrames, TimedUpdates) {
    let mut frames = vec![(1_000, GetFrameResponse::new(0, topology(3, 0.0, false)))];
    for i in 1..4usize {
        let mut f = step(3, i);
        match i {
            1 => {
                // The Python websocket recorder's empty user force arrays.
                f.arrays
                    .insert("forces.user.index".into(), ValueArray::indices(vec![]));
                f.arrays
                    .insert("forces.user.sparse".into(), ValueArray::indices(vec![]));
            }
            2 => {
                f.arrays
                    .insert("forces.user.index".into(), ValueArray::indices(vec![1]));
                f.arrays.insert(
                    "forces.user.sparse".into(),
                    ValueArray::floats(vec![10.0, -5.0, 2.5]),
                );
                f.values.insert("custom.bool".into(), boolean(true));
                f.values.insert("custom.string".into(), text("hello"));
                f.values
                    .insert("custom.list".into(), list(vec![number(1.0), text("a")]));
                f.values
                    .insert("custom.struct".into(), object(&[("x", number(2.0))]));
                f.values.insert("custom.null".into(), null());
            }
            _ => {}
        }
        frames.push((
            1_000 + 33_000 * i as u128,
            GetFrameResponse::new(i as u32, f),
        ));
    }
    frames.push((133_000, GetFrameResponse::new(0, topology(4, 1.0, true))));
    for i in 1..3usize {
        frames.push((
            133_000 + 33_000 * i as u128,
            GetFrameResponse::new(i as u32, step(4, i)),
        ));
    }

    let interaction = object(&[
        ("interaction_type", text("spring")),
        ("particles", list(vec![number(1.0)])),
        (
            "position",
            list(vec![number(0.1), number(0.2), number(0.3)]),
        ),
        ("scale", number(100.0)),
    ]);
    let scene = list(
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
            .into_iter()
            .map(number)
            .collect(),
    );
    let states = vec![
        (
            500,
            StateUpdate::from_pairs([("imd.velocity_reset_available", boolean(false))]),
        ),
        (
            34_000,
            StateUpdate::from_pairs([("scene", scene), ("interaction.abc", interaction)]),
        ),
        (
            90_000,
            StateUpdate::from_pairs([
                ("interaction.abc", null()),
                ("update.index.p1", number(3.0)),
            ]),
        ),
        (
            150_000,
            StateUpdate::from_pairs([(
                "avatar.p1",
                object(&[("name", text("ada")), ("playerid", text("p1"))]),
            )]),
        ),
        (210_000, StateUpdate::from_pairs([("avatar.p1", null())])),
    ];
    (frames, states)
}

/// A longer recording for time windows and other tests that need many records: `sessions`
/// sessions (each starting with a reset: a topology frame of `particles` particles, every
/// other one with `residue.ids` as floats) of `frames` step frames each, [`BENCH_FRAME_US`]
/// apart. Some keys come back only now and then, so the aggregated frame of a row depends on
/// records far before it: `custom.marker` every 17th step, the iMD force arrays every 29th,
/// `custom.note` (a string) once per session. State updates come every 7th frame, between
/// frames, and every 13th at a frame's time (the two then make one event), with removals.
pub fn long_recording(
    particles: usize,
    sessions: usize,
    frames: usize,
) -> (TimedFrames, TimedUpdates) {
    let particles = particles.max(2);
    let mut out = Vec::new();
    let mut updates = Vec::new();
    let mut t = BENCH_FRAME_US;
    for s in 0..sessions {
        out.push((
            t,
            GetFrameResponse::new(0, topology(particles, s as f64, s % 2 == 1)),
        ));
        for i in 1..=frames {
            t += BENCH_FRAME_US;
            let mut f = step(particles, i);
            if i % 17 == 0 {
                f.values.insert("custom.marker".into(), number(i as f64));
            }
            if i % 29 == 0 {
                f.arrays
                    .insert("forces.user.index".into(), ValueArray::indices(vec![1]));
                f.arrays.insert(
                    "forces.user.sparse".into(),
                    ValueArray::floats(vec![i as f32, -1.0, 0.5]),
                );
            }
            if i == frames / 3 {
                f.values
                    .insert("custom.note".into(), text(&format!("session {s}")));
            }
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            out.push((t, GetFrameResponse::new(index, f)));
            if i % 7 == 0 {
                let key = format!("update.index.p{}", i % 3);
                updates.push((
                    t + BENCH_FRAME_US / 2,
                    StateUpdate::from_pairs([(key.as_str(), number(i as f64))]),
                ));
            }
            if i % 13 == 0 {
                let removed = format!("update.index.p{}", (i + 1) % 3);
                updates.push((
                    t,
                    StateUpdate::from_pairs([
                        ("scene", list(vec![number(i as f64)])),
                        (removed.as_str(), null()),
                    ]),
                ));
            }
        }
        t += BENCH_FRAME_US;
    }
    updates.sort_by_key(|(t, _)| *t);
    (out, updates)
}

/// Writes frames into a `.traj` (version 2).
pub fn write_traj<W: Write>(out: W, frames: &[(u128, GetFrameResponse)]) -> Result<W> {
    let mut w = Writer::new(out, FileKind::Trajectory, Version::V2)?;
    for (t, f) in frames {
        w.write_frame(*t, f)?;
    }
    w.finish()
}

/// Writes updates into a `.state` (version 2).
pub fn write_state<W: Write>(out: W, updates: &[(u128, StateUpdate)]) -> Result<W> {
    let mut w = Writer::new(out, FileKind::State, Version::V2)?;
    for (t, u) in updates {
        w.write_state(*t, u)?;
    }
    w.finish()
}

/// Microseconds between the frames of [`write_bench_traj`] (a 100 Hz simulation).
pub const BENCH_FRAME_US: u128 = 10_000;

/// Writes a large `.traj` (version 2) for benchmarks, streaming into `out`: the topology frame
/// of `particles` particles (at least 2) that [`small_recording`] starts with, then step frames
/// (`frame_index` 1, 2, …, [`BENCH_FRAME_US`] apart) carrying `particle.positions` and
/// `particle.velocities` (3 floats per particle each) and three energy/time values, until at
/// least `min_bytes` are written. Only one frame is held in memory. Returns `out` and the
/// number of frames written.
///
/// ```
/// use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};
/// let (traj, frames) = recfmt_nanover::generate::write_bench_traj(Vec::new(), 10, 4_000)?;
/// assert!(traj.len() >= 4_000);
/// let mut rec = recfmt_nanover::NanoverRecording::from_bytes(Some(&traj), None, &ReadOptions::default())?;
/// let mut row = FrameBuf::default();
/// let mut rows = 0;
/// while rec.read_frame(&mut row)? {
///     rows += 1;
/// }
/// assert_eq!(rows, frames);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_bench_traj<W: Write>(out: W, particles: usize, min_bytes: u64) -> Result<(W, u64)> {
    let mut w = Writer::new(out, FileKind::Trajectory, Version::V2)?;
    let mut frames = 0u64;
    for (t, frame) in bench_frames(particles) {
        if frames > 0 && w.position() >= min_bytes {
            break;
        }
        w.write_frame(t, &frame)?;
        frames += 1;
    }
    Ok((w.finish()?, frames))
}

/// The frames of [`write_bench_traj`] with their times, without end: a topology frame, then
/// step frames.
fn bench_frames(particles: usize) -> impl Iterator<Item = (u128, GetFrameResponse)> {
    let particles = particles.max(2);
    (0u64..).map(move |i| {
        let t = BENCH_FRAME_US * (u128::from(i) + 1);
        let frame = if i == 0 {
            GetFrameResponse::new(0, topology(particles, 0.0, false))
        } else {
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            GetFrameResponse::new(index, step(particles, i as usize))
        };
        (t, frame)
    })
}

/// The frames of [`write_bench_traj`] as a `.nanover.zip` at `out` of at least `min_bytes`
/// (zip64 past 4 GiB, as NanoVer's converter writes it), streamed. Returns the frames
/// written.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("bench.nanover.zip");
/// let frames = recfmt_nanover::generate::write_bench_zip(&out, 10, 4_000)?;
/// assert!(std::fs::metadata(&out)?.len() >= 4_000);
/// assert!(frames > 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_bench_zip(
    out: &std::path::Path,
    particles: usize,
    min_bytes: u64,
) -> recfmt_core::Result<u64> {
    use prost::Message;
    // A zip message holds a record's arrays as the same bytes and a little less framing
    // than the `.traj` record: the records' sizes with a margin reach `min_bytes`.
    let target = min_bytes
        .saturating_add(min_bytes / 50)
        .saturating_add(4096);
    let mut written = 0u64;
    let mut frames = 0u64;
    let events = bench_frames(particles)
        .take_while(|(_, frame)| {
            let more = frames == 0 || written < target;
            written += frame.encoded_len() as u64 + 24;
            frames += u64::from(more);
            more
        })
        .map(|(timestamp, frame)| {
            Ok(crate::timeline::Event {
                timestamp,
                frame: Some(frame),
                state: None,
            })
        });
    crate::zipwrite::write_zip_events(events, out)?;
    Ok(frames)
}

/// The small recording as the bytes of a `.traj` and a `.state`.
///
/// ```
/// let (traj, state) = recfmt_nanover::generate::small_recording_bytes()?;
/// assert_eq!(traj[..8], 6661355757386708963u64.to_le_bytes());
/// assert!(state.len() > 16);
/// # Ok::<(), recfmt_nanover::Error>(())
/// ```
pub fn small_recording_bytes() -> Result<(Vec<u8>, Vec<u8>)> {
    let (frames, states) = small_recording();
    Ok((
        write_traj(Vec::new(), &frames)?,
        write_state(Vec::new(), &states)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NanoverRecording;
    use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, Value as Cell};

    /// The bench trajectory reads back frame for frame, each step frame with the positions of
    /// every particle, and nothing lost.
    #[test]
    fn bench_traj_reads_back() {
        let (traj, frames) = write_bench_traj(Vec::new(), 50, 20_000).unwrap();
        assert!(traj.len() >= 20_000);
        assert!(frames > 2);
        let mut rec =
            NanoverRecording::from_bytes(Some(&traj), None, &ReadOptions::default()).unwrap();
        let stream = &rec.schema().streams[0];
        let positions = stream
            .signals
            .iter()
            .position(|s| {
                s.metadata.get(crate::META_KEY).map(String::as_str) == Some("particle.positions")
            })
            .unwrap();
        let mut row = FrameBuf::default();
        let mut rows = 0u64;
        while rec.read_frame(&mut row).unwrap() {
            match &row.values[positions] {
                Cell::Array(values) => assert_eq!(values.len(), 150),
                other => panic!("row {rows}: positions are {other:?}"),
            }
            rows += 1;
        }
        assert_eq!(rows, frames);
        assert!(!rec.integrity().lost_data());
    }
}
