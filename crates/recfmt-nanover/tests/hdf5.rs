//! HDF5 export: positions as [frames, particles, 3] per session, read back with hdf5-pure and
//! (when `target/pyenv/bin/python` exists) with h5py.

#![cfg(feature = "hdf5")]
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use recfmt_core::{ErrorKind, Limits, ReadOptions};
use recfmt_nanover::hdf5::{Hdf5Options, write_hdf5};
use recfmt_nanover::{FrameView, RecordingPaths, Timeline, ValueArray, generate};

/// What the export should hold per group: (t_us, frame_index, positions, particles,
/// rows before the first positions) of each row.
type Expected = BTreeMap<String, (Vec<u64>, Vec<u32>, Vec<f32>, usize, usize)>;

/// Computes the expected rows with the low-level reader: sessions split on resets, a row per
/// frame (those before the first aggregated frame with positions get NaN positions), a new
/// part where the particle count changes.
fn expected(paths: &RecordingPaths) -> Expected {
    let mut out = Expected::new();
    let mut view = FrameView::new();
    let (mut session, mut part, mut seen) = (0u32, 0u32, 0u64);
    let mut group = String::from("session_0");
    out.insert(group.clone(), Default::default());
    for e in Timeline::open(paths, &ReadOptions::default()).unwrap() {
        let e = e.unwrap();
        let Some(f) = e.frame else { continue };
        if view.apply(&f) && seen > 0 {
            session += 1;
            part = 0;
            group = format!("session_{session}");
            out.insert(group.clone(), Default::default());
        }
        seen += 1;
        let positions = view
            .arrays
            .get("particle.positions")
            .and_then(ValueArray::as_floats)
            .filter(|p| !p.is_empty());
        let entry = out.get_mut(&group).unwrap();
        let Some(p) = positions else {
            // Before the first positions: a row with NaN positions.
            assert_eq!(entry.4, entry.0.len(), "positions vanish inside a session");
            entry.0.push(e.timestamp as u64);
            entry.1.push(f.frame_index);
            entry.4 += 1;
            continue;
        };
        let n = p.len() / 3;
        if entry.0.len() > entry.4 && entry.3 != n {
            part += 1;
            group = format!("session_{session}.{part}");
            out.insert(group.clone(), Default::default());
        }
        let entry = out.get_mut(&group).unwrap();
        if entry.0.len() == entry.4 {
            entry.2 = vec![f32::NAN; entry.4 * n * 3];
        }
        entry.0.push(e.timestamp as u64);
        entry.1.push(f.frame_index);
        entry.2.extend_from_slice(p);
        entry.3 = n;
    }
    out
}

/// Equal, NaN included (bit for bit).
fn same_f32(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

fn check_with_hdf5_pure(h5: &Path, want: &Expected) {
    let file = hdf5_pure::File::open(h5).unwrap();
    for (group, (t, idx, pos, n, before)) in want {
        let ds = file.dataset(&format!("{group}/positions")).unwrap();
        let f = t.len() as u64;
        if f > 0 {
            assert_eq!(ds.shape().unwrap(), [f, *n as u64, 3], "{group}");
        }
        assert!(same_f32(&ds.read_f32().unwrap(), pos), "{group}: positions");
        let attrs = file.group(group).unwrap().attrs().unwrap();
        assert_eq!(
            attrs["frames_before_positions"],
            hdf5_pure::AttrValue::U64(*before as u64),
            "{group}"
        );
        assert_eq!(
            &file
                .dataset(&format!("{group}/t_us"))
                .unwrap()
                .read_u64()
                .unwrap(),
            t
        );
        assert_eq!(
            &file
                .dataset(&format!("{group}/frame_index"))
                .unwrap()
                .read_u32()
                .unwrap(),
            idx
        );
    }
}

fn python() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv/bin/python");
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipping the h5py check: no {}", p.display());
        None
    }
}

const H5PY: &str = r#"
import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
out = {}
for name, g in f.items():
    if not name.startswith("session_"):
        continue
    d = g["positions"]
    a = d[()]
    a.astype("<f4").tofile(sys.argv[2] + "/" + name + ".bin")
    out[name] = {
        "shape": list(d.shape), "dtype": str(d.dtype), "unit": d.attrs.get("unit"),
        "t_us": [int(x) for x in g["t_us"][()]],
        "frame_index": [int(x) for x in g["frame_index"][()]],
        "particles": int(g.attrs["particles"]),
        "energy": str(g["energy.potential"].dtype) if "energy.potential" in g else None,
    }
if "state" in f:
    out["state"] = {"rows": int(f["state/t_us"].shape[0]),
                    "keys": [k for k in f["state/key"].asstr()[()][:3]]}
print(json.dumps(out))
"#;

fn check_with_h5py(python: &Path, h5: &Path, want: &Expected, work: &Path) {
    let o = std::process::Command::new(python)
        .arg("-c")
        .arg(H5PY)
        .arg(h5)
        .arg(work)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for (group, (t, idx, pos, n, _)) in want {
        let g = &got[group];
        assert_eq!(g["shape"], serde_json::json!([t.len(), *n, 3]), "{group}");
        assert_eq!(g["frame_index"], serde_json::json!(idx), "{group}");
        assert_eq!(g["dtype"], "float32");
        assert_eq!(g["unit"], "nm");
        assert_eq!(g["t_us"], serde_json::json!(t));
        let bytes = std::fs::read(work.join(format!("{group}.bin"))).unwrap();
        let back: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert!(same_f32(&back, pos), "{group}: h5py positions differ");
    }
}

#[test]
fn every_sample_exports_positions_per_session() {
    let py = python();
    let work = tempfile::tempdir().unwrap();
    for traj in common::sample_files() {
        if traj.extension().is_none_or(|e| e != "traj") {
            continue;
        }
        let name = traj.file_name().unwrap().to_string_lossy().into_owned();
        let h5 = work.path().join(format!("{name}.h5"));
        let summary = write_hdf5(&traj, &h5, &Hdf5Options::default()).unwrap();
        assert!(!summary.integrity.lost_data(), "{name}");
        let paths = RecordingPaths::resolve(&traj);
        let want = expected(&paths);
        let groups: Vec<String> = summary
            .sessions
            .iter()
            .map(|s| s.group.trim_start_matches('/').to_string())
            .collect();
        assert_eq!(groups, want.keys().cloned().collect::<Vec<_>>(), "{name}");
        for s in &summary.sessions {
            let w = &want[s.group.trim_start_matches('/')];
            assert_eq!(s.frames, w.0.len() as u64, "{name}");
        }
        check_with_hdf5_pure(&h5, &want);
        if let Some(py) = &py {
            let dir = work.path().join(format!("{name}.py"));
            std::fs::create_dir_all(&dir).unwrap();
            check_with_h5py(py, &h5, &want, &dir);
        }
        let frames: Vec<u64> = summary.sessions.iter().map(|s| s.frames).collect();
        let particles: Vec<u64> = summary.sessions.iter().map(|s| s.particles).collect();
        eprintln!(
            "{name}: sessions {frames:?} frames x {particles:?} particles, {} state rows, {} bytes, notes {:?}",
            summary.state_rows, summary.bytes, summary.notes
        );
        if name == "sim-switching-test-recording.traj" {
            assert_eq!(frames, [104, 108, 127, 115]);
            assert_eq!(particles, [65, 173, 65, 173]);
            assert_eq!(summary.state_rows, 1);
        }
        if name == "hello.traj" {
            // The Rust server's leading empty frame is a session of its own, without positions;
            // the next session starts with a topology frame without positions. Both are rows.
            assert_eq!(frames, [1, 625]);
        }
    }
}

#[test]
fn layout_of_one_session() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let h5 = work.path().join("t.h5");
    let traj = dir.join("server-py/tutorials-nanotube-recording.traj");
    write_hdf5(&traj, &h5, &Hdf5Options::default()).unwrap();
    let file = hdf5_pure::File::open(&h5).unwrap();
    let g = "session_0";
    let ds = |n: &str| file.dataset(&format!("{g}/{n}")).unwrap();
    assert_eq!(ds("positions").shape().unwrap(), [1468, 65, 3]);
    assert_eq!(ds("forces.user").shape().unwrap(), [1468, 65, 3]);
    assert_eq!(ds("forces.system").shape().unwrap(), [1468, 65, 3]);
    assert_eq!(ds("system.box.vectors").shape().unwrap(), [1468, 3, 3]);
    assert_eq!(ds("energy.potential").read_f64().unwrap().len(), 1468);
    assert_eq!(ds("particle.count").read_f64().unwrap(), vec![65.0; 1468]);
    assert_eq!(ds("elements").read_u32().unwrap().len(), 65);
    assert_eq!(ds("bond.pairs").shape().unwrap()[1], 2);
    assert_eq!(ds("names").read_string().unwrap()[7], "C8");
    // Someone pulled on the nanotube: some user force is not zero.
    assert!(
        ds("forces.user")
            .read_f32()
            .unwrap()
            .iter()
            .any(|&f| f != 0.0)
    );
    let attrs = ds("positions").attrs().unwrap();
    assert_eq!(
        attrs["unit"],
        hdf5_pure::AttrValue::VarLenString("nm".into())
    );
    assert!(
        file.dataset("state/t_us")
            .unwrap()
            .read_u64()
            .unwrap()
            .len()
            >= 1171
    );
}

#[test]
fn a_particle_count_change_without_reset_starts_a_part() {
    let (mut frames, states) = generate::small_recording();
    frames[4].1.frame_index = 9; // the reset merged away by the gRPC recorder
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("m.traj"),
        generate::write_traj(Vec::new(), &frames).unwrap(),
    )
    .unwrap();
    std::fs::write(
        work.path().join("m.state"),
        generate::write_state(Vec::new(), &states).unwrap(),
    )
    .unwrap();
    let h5 = work.path().join("m.h5");
    let s = write_hdf5(&work.path().join("m.traj"), &h5, &Hdf5Options::default()).unwrap();
    let groups: Vec<_> = s
        .sessions
        .iter()
        .map(|g| (g.group.as_str(), g.frames, g.particles))
        .collect();
    assert_eq!(groups, [("/session_0", 4, 3), ("/session_0.1", 3, 4)]);
    assert!(s.notes.iter().any(|n| n.contains("particle count changes")));
    // With counter resets it is a session of its own.
    let o = Hdf5Options {
        counter_resets: true,
        ..Hdf5Options::default()
    };
    // Outputs are never replaced silently: the first file goes first.
    std::fs::remove_file(&h5).unwrap();
    let s = write_hdf5(&work.path().join("m.traj"), &h5, &o).unwrap();
    let groups: Vec<_> = s.sessions.iter().map(|g| g.group.as_str()).collect();
    assert_eq!(groups, ["/session_0", "/session_1"]);
    assert_eq!(s.state_rows, 7);
}

#[test]
fn the_session_buffer_is_bounded_by_the_limits() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.traj"), traj).unwrap();
    std::fs::write(work.path().join("a.state"), state).unwrap();
    let h5 = work.path().join("a.h5");
    let o = Hdf5Options {
        limits: Limits {
            max_array_len: 30,
            ..Limits::default()
        },
        ..Hdf5Options::default()
    };
    let e = write_hdf5(&work.path().join("a.traj"), &h5, &o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    assert!(e.to_string().contains("max_array_len"), "{e}");
    assert!(
        std::fs::read_dir(work.path()).unwrap().count() == 2,
        "no output left behind"
    );
}

#[test]
fn many_sessions_and_a_zip_input() {
    // 40 sessions (resets) in one file: one group each.
    let (frames, _) = generate::small_recording();
    let mut many = Vec::new();
    for k in 0..40u128 {
        for (t, f) in &frames[..4] {
            many.push((k * 1_000_000 + t, f.clone()));
        }
    }
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("many.traj"),
        generate::write_traj(Vec::new(), &many).unwrap(),
    )
    .unwrap();
    let h5 = work.path().join("many.h5");
    let s = write_hdf5(&work.path().join("many.traj"), &h5, &Hdf5Options::default()).unwrap();
    assert_eq!(s.sessions.len(), 40);
    let file = hdf5_pure::File::open(&h5).unwrap();
    assert_eq!(
        file.dataset("session_39/positions")
            .unwrap()
            .shape()
            .unwrap(),
        [4, 3, 3]
    );
    assert_eq!(s.state_rows, 0);
    // A .nanover.zip gives the same sessions as its .traj.
    #[cfg(feature = "nanover-zip")]
    if let Some(dir) = common::samples_dir() {
        let z = write_hdf5(
            &dir.join("converted/sim-switching-test-recording.nanover.zip"),
            &work.path().join("z.h5"),
            &Hdf5Options::default(),
        )
        .unwrap();
        let frames: Vec<u64> = z.sessions.iter().map(|s| s.frames).collect();
        assert_eq!(frames, [104, 108, 127, 115]);
    }
}

/// Issue 14, item 19: frames before the first positions are rows too (their t_us,
/// frame_index and values), with NaN positions, in every per-frame dataset.
#[test]
fn frames_before_the_first_positions_are_rows_with_nan_positions() {
    use recfmt_nanover::{Event, FrameData, GetFrameResponse, hdf5::write_hdf5_events, number};
    let frame = |index: u32, energy: f64, positions: Option<Vec<f32>>| {
        let mut f = FrameData::default();
        f.values.insert("energy.potential".into(), number(energy));
        if let Some(p) = positions {
            f.arrays
                .insert("particle.positions".into(), ValueArray::floats(p));
            f.values.insert("particle.count".into(), number(2.0));
        }
        GetFrameResponse::new(index, f)
    };
    // An empty leading frame and a frame with values only, then two with positions.
    let frames = [
        (10u128, GetFrameResponse::new(0, FrameData::default())),
        (20, frame(1, -5.0, None)),
        (30, frame(2, -6.0, Some(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))),
        (40, frame(3, -7.0, Some(vec![1.5, 2.5, 3.5, 4.5, 5.5, 6.5]))),
    ];
    let events = frames.iter().map(|(t, f)| {
        Ok(Event {
            timestamp: *t,
            frame: Some(f.clone()),
            state: None,
        })
    });
    let work = tempfile::tempdir().unwrap();
    let h5 = work.path().join("lead.h5");
    let s = write_hdf5_events(events, false, &h5, &Hdf5Options::default()).unwrap();
    let groups: Vec<_> = s
        .sessions
        .iter()
        .map(|g| (g.group.as_str(), g.frames, g.particles))
        .collect();
    assert_eq!(groups, [("/session_0", 4, 2)]);
    let file = hdf5_pure::File::open(&h5).unwrap();
    let ds = |name: &str| file.dataset(&format!("session_0/{name}")).unwrap();
    assert_eq!(ds("t_us").read_u64().unwrap(), [10, 20, 30, 40]);
    assert_eq!(ds("frame_index").read_u32().unwrap(), [0, 1, 2, 3]);
    let energy = ds("energy.potential").read_f64().unwrap();
    assert!(energy[0].is_nan());
    assert_eq!(energy[1..], [-5.0, -6.0, -7.0]);
    assert_eq!(ds("positions").shape().unwrap(), [4, 2, 3]);
    let p = ds("positions").read_f32().unwrap();
    assert!(p[..12].iter().all(|x| x.is_nan()), "{p:?}");
    assert_eq!(
        p[12..],
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
    );
    let attrs = file.group("session_0").unwrap().attrs().unwrap();
    assert_eq!(
        attrs["frames_before_positions"],
        hdf5_pure::AttrValue::U64(2)
    );
    assert_eq!(attrs["start_t_us"], hdf5_pure::AttrValue::U64(10));
    // What a user of h5py sees.
    if let Some(py) = python() {
        let script = r#"
import sys, json, h5py, numpy as np
g = h5py.File(sys.argv[1], "r")["session_0"]
n = int(g.attrs["frames_before_positions"])
print(json.dumps({
    "lengths": sorted({k: int(g[k].shape[0]) for k in ("t_us", "frame_index", "energy.potential", "positions")}.values()),
    "t_us": [int(x) for x in g["t_us"][()]],
    "lead_nan": bool(np.isnan(g["positions"][:n]).all()),
    "first_positions_t_us": int(g["t_us"][n]),
    "energy": [None if np.isnan(x) else float(x) for x in g["energy.potential"][()]],
}))
"#;
        let o = std::process::Command::new(py)
            .arg("-c")
            .arg(script)
            .arg(&h5)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            got,
            serde_json::json!({
                "lengths": [4, 4, 4, 4],
                "t_us": [10, 20, 30, 40],
                "lead_nan": true,
                "first_positions_t_us": 30,
                "energy": [null, -5.0, -6.0, -7.0],
            })
        );
    }
}
