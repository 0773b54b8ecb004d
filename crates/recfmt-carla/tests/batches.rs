//! The batch read path (`read_batches`, fixed-size packet records decoded straight into the
//! columns) against the row path (`read_frame`): the same rows per stream, value for value
//! (floats bitwise, NaN equal to NaN), the same integrity report and the same errors, at
//! several capacities, with every stream and with subsets, on the samples, on synthetic
//! recordings of every flavour, and on truncated and damaged copies.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use std::io::Cursor;
use std::time::Instant;

use recfmt_carla::{
    ActorAttribute, ActorDescription, BikerAnim, Bone, BoundingBox, CarlaRecording, Collision,
    EventAdd, EventDel, EventParent, FString, Flavour, FrameStart, Header, Kinematics, Packet,
    PacketKind, Position, SceneLight, TrafficLightState, TrafficLightTime, Vector3, VehicleAnim,
    VehicleDoor, VehicleLight, VehicleWheels, WalkerAnim, WalkerBones, Weather, WheelAnim, Writer,
};
use recfmt_core::{BatchSet, FrameBuf, Integrity, ReadOptions, RecordingReader, Value};

type Rows = Vec<Vec<Vec<Value>>>;
type Recording = CarlaRecording<Cursor<Vec<u8>>>;

const CAPACITIES: [usize; 3] = [1, 7, 4096];

fn open(bytes: &[u8], strict: bool) -> recfmt_core::Result<Recording> {
    let options = ReadOptions {
        strict,
        ..ReadOptions::default()
    };
    CarlaRecording::new_seekable(Cursor::new(bytes.to_vec()), &options, None)
}

/// Rows per stream and the final integrity through `read_frame`.
fn by_rows(reader: &mut dyn RecordingReader) -> recfmt_core::Result<(Rows, Integrity)> {
    let mut streams = vec![Vec::new(); reader.schema().streams.len()];
    let mut frame = FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        streams[frame.stream].push(frame.values.clone());
    }
    Ok((streams, reader.integrity().clone()))
}

/// The same through `read_batches`, taking the full batches after each call.
fn by_batches(
    reader: &mut dyn RecordingReader,
    capacity: usize,
    wanted: &dyn Fn(usize) -> bool,
) -> recfmt_core::Result<(Rows, Integrity)> {
    let schema = reader.schema().clone();
    let mut streams = vec![Vec::new(); schema.streams.len()];
    let mut set = BatchSet::with_streams(&schema, capacity, wanted);
    loop {
        let more = reader.read_batches(&mut set)?;
        if more {
            assert!(set.is_full(), "Ok(true) without a full batch");
        }
        for batch in set.take_ready(more) {
            batch.check_consistent().unwrap();
            assert!(batch.rows() <= capacity, "a batch past its capacity");
            for row in 0..batch.rows() {
                streams[batch.stream()].push(batch.row_values(row));
            }
        }
        if !more {
            break;
        }
    }
    Ok((streams, reader.integrity().clone()))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

fn assert_same(
    what: &str,
    rows: &recfmt_core::Result<(Rows, Integrity)>,
    batches: recfmt_core::Result<(Rows, Integrity)>,
    wanted: &dyn Fn(usize) -> bool,
) {
    match (rows, batches) {
        (Ok((rows, rows_integrity)), Ok((batches, batch_integrity))) => {
            assert_eq!(rows.len(), batches.len(), "{what}: streams");
            for (stream, (r, b)) in rows.iter().zip(&batches).enumerate() {
                if !wanted(stream) {
                    assert!(b.is_empty(), "{what}: unwanted stream {stream} got rows");
                    continue;
                }
                assert_eq!(r.len(), b.len(), "{what}: stream {stream} row count");
                for (i, (x, y)) in r.iter().zip(b).enumerate() {
                    let equal = x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b));
                    assert!(equal, "{what}: stream {stream} row {i}:\n{x:?}\n{y:?}");
                }
            }
            assert_eq!(rows_integrity, &batch_integrity, "{what}: integrity");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: errors"),
        (a, b) => panic!(
            "{what}: one path failed: rows {:?}, batches {:?}",
            a.as_ref().err(),
            b.err()
        ),
    }
}

fn stream(name: &str) -> usize {
    recfmt_carla::STREAM_NAMES
        .iter()
        .position(|n| *n == name)
        .unwrap()
}

/// Compares both paths on one recording, lenient and strict, with every stream and with
/// subsets, at every capacity (`quick`: capacity 7 only for the subsets; strict: every
/// stream at capacity 7 only). Returns the rows of the lenient row path (0 when it failed).
fn check_bytes(bytes: &[u8], what: &str, quick: bool) -> usize {
    let mut total = 0;
    for strict in [false, true] {
        let what = format!("{what} (strict {strict})");
        let Ok(mut reader) = open(bytes, strict) else {
            // Opening is shared by both paths; nothing more to compare.
            continue;
        };
        let rows = by_rows(&mut reader);
        if !strict && let Ok((r, _)) = &rows {
            total = r.iter().map(Vec::len).sum();
        }
        let (position, anim, frame) = (stream("position"), stream("vehicle_anim"), stream("frame"));
        let subsets: [(&str, &dyn Fn(usize) -> bool); 4] = [
            ("all", &|_| true),
            ("position and vehicle_anim", &|i| i == position || i == anim),
            ("odd streams and frame", &|i| i % 2 == 1 || i == frame),
            ("none", &|_| false),
        ];
        for (k, (name, wanted)) in subsets.into_iter().enumerate() {
            for capacity in CAPACITIES {
                let skip_strict = strict && (k > 0 || capacity != 7);
                if skip_strict || quick && k > 0 && capacity != 7 {
                    continue;
                }
                let batches = by_batches(&mut open(bytes, strict).unwrap(), capacity, wanted);
                assert_same(
                    &format!("{what}, {name}, capacity {capacity}"),
                    &rows,
                    batches,
                    wanted,
                );
            }
        }
    }
    total
}

#[test]
fn samples_read_the_same_in_batches() {
    for path in common::sample_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let rows = check_bytes(&bytes, &name, false);
        assert!(rows > 1000, "{name}: only {rows} rows");
        // The file path too (a BufReader over the file).
        let mut reader = CarlaRecording::open(&path, &ReadOptions::default()).unwrap();
        let all = |_: usize| true;
        let expected = by_rows(&mut open(&bytes, false).unwrap());
        assert_same(&name, &expected, by_batches(&mut reader, 4096, &all), &all);
    }
}

#[test]
fn truncated_samples_read_the_same_in_batches() {
    // The smallest sample of each PhysicsControl layout: 0.9.10 and 0.9.13.
    let files = common::sample_files();
    for path in files
        .iter()
        .filter(|p| p.to_string_lossy().contains("LaneCenter"))
    {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let len = bytes.len();
        let mut cuts = vec![0, 3, 20, 47, 100, 1000];
        cuts.extend((1..5).map(|k| len * k / 5 + k * 13));
        cuts.extend([len - 7, len - 1]);
        cuts.retain(|&c| c < len);
        for cut in cuts {
            check_bytes(&bytes[..cut], &format!("{name} cut at {cut}"), true);
        }
    }
}

/// Frames with every packet kind the flavour has, several records each, bools both ways,
/// NaNs and infinities among the floats.
fn synthetic(flavour: Flavour, frames: u64, actors: u32) -> Vec<u8> {
    let w = flavour.vector_width();
    let v = |x: f64, y: f64, z: f64| Vector3::new(w, x, y, z);
    let has = |kind| flavour.id_of(kind).is_some();
    use PacketKind as K;
    let mut out = Writer::new(Vec::new(), flavour);
    let mut header = Header::new("Town10HD_Opt", 1_700_000_000);
    header.version = flavour.header_version();
    out.write_header(&header).unwrap();
    let odd = |x: f32| match (x as i64) % 17 {
        0 => f32::NAN,
        1 => f32::NEG_INFINITY,
        2 => -0.0,
        _ => x * 0.37,
    };
    for frame in 1..=frames {
        let t = frame as f32;
        let mut packets = vec![Packet::FrameStart(FrameStart {
            id: frame,
            duration_this: 0.05,
            elapsed: 0.05 * (frame - 1) as f64,
        })];
        if has(K::VisualTime) {
            packets.push(Packet::VisualTime(frame as f64 + 100.0));
        }
        packets.push(Packet::EventAdd(if frame % 5 == 1 {
            vec![EventAdd {
                database_id: frame as u32,
                actor_type: 1,
                location: v(10.0, 20.0, 0.3),
                rotation: v(0.0, 0.0, 89.99),
                description: ActorDescription {
                    uid: 7,
                    id: "vehicle.lincoln.mkz_2017".into(),
                    attributes: vec![ActorAttribute {
                        kind: 3,
                        id: "role_name".into(),
                        value: "hero".into(),
                    }],
                },
            }]
        } else {
            vec![]
        }));
        packets.push(Packet::EventDel(
            (0..frame as u32 % 3)
                .map(|i| EventDel { database_id: i })
                .collect(),
        ));
        packets.push(Packet::EventParent(vec![EventParent {
            database_id: 25,
            database_id_parent: frame as u32,
        }]));
        packets.push(Packet::Collision(
            (0..frame as u32 % 4)
                .map(|i| Collision {
                    id: i,
                    database_id1: i + 1,
                    database_id2: i + 2,
                    is_actor1_hero: i % 2 == 0,
                    is_actor2_hero: i % 3 == 0,
                })
                .collect(),
        ));
        if has(K::VehicleDoor) {
            packets.push(Packet::VehicleDoor(
                (0..2)
                    .map(|i| VehicleDoor {
                        database_id: i,
                        doors: (frame % 7) as u8,
                        is_open: (frame + u64::from(i)) % 2 == 0,
                    })
                    .collect(),
            ));
        }
        packets.push(Packet::Position(
            (0..actors)
                .map(|a| {
                    let x = f64::from(odd(t + a as f32));
                    Position {
                        database_id: a,
                        location: v(x, -x * 3.1, 0.3 + f64::from(a)),
                        rotation: v(0.0, f64::from(a) * 0.1, -89.99),
                    }
                })
                .collect(),
        ));
        packets.push(Packet::TrafficLight(
            (0..3)
                .map(|i| TrafficLightState {
                    database_id: 90 + i,
                    is_frozen: (frame + u64::from(i)) % 2 == 0,
                    elapsed_time: odd(t * 1.5),
                    state: (i % 3) as u8,
                })
                .collect(),
        ));
        packets.push(Packet::VehicleAnim(
            (0..actors)
                .map(|a| VehicleAnim {
                    database_id: a,
                    steering: odd(t - a as f32),
                    throttle: 0.7,
                    brake: a as f32 * 0.01,
                    handbrake: (frame + u64::from(a)) % 3 == 0,
                    gear: a as i32 - 1,
                })
                .collect(),
        ));
        packets.push(Packet::WalkerAnim(vec![WalkerAnim {
            database_id: 40,
            speed: odd(t),
        }]));
        packets.push(Packet::VehicleLight(vec![VehicleLight {
            database_id: 24,
            state: frame as u32 * 0x9,
        }]));
        packets.push(Packet::SceneLight(vec![SceneLight {
            light_id: -(frame as i32),
            intensity: 3000.0,
            color: [1.0, 0.9, odd(t), 1.0],
            on: frame % 2 == 0,
            light_type: 2,
        }]));
        if has(K::VehicleWheels) {
            packets.push(Packet::VehicleWheels(vec![VehicleWheels {
                database_id: 24,
                wheels: (0..4)
                    .map(|i| WheelAnim {
                        location: i,
                        steering_angle: 1.0,
                        tire_rotation: odd(t),
                    })
                    .collect(),
            }]));
            packets.push(Packet::BikerAnim(vec![BikerAnim {
                database_id: 26,
                forward_speed: 500.0,
                engine_rotation: odd(t),
            }]));
        }
        if has(K::Weather) {
            packets.push(Packet::Weather(vec![Weather::from_array(
                std::array::from_fn(|i| odd(t + i as f32)),
            )]));
        }
        packets.push(Packet::Kinematics(
            (0..actors)
                .map(|a| Kinematics {
                    database_id: a,
                    linear_velocity: v(1.0, f64::from(a), 0.0),
                    angular_velocity: v(0.0, 0.0, f64::from(odd(t))),
                })
                .collect(),
        ));
        packets.push(Packet::BoundingBox(vec![BoundingBox {
            database_id: 24,
            origin: v(0.0, 0.0, 70.0),
            extent: v(240.0, 90.0, 70.0),
        }]));
        packets.push(Packet::TriggerVolume(vec![BoundingBox {
            database_id: 91,
            origin: v(100.0, 100.0, 0.0),
            extent: v(50.0, 50.0, 100.0),
        }]));
        packets.push(Packet::PlatformTime(0.0123 * frame as f64));
        packets.push(Packet::TrafficLightTime(vec![TrafficLightTime {
            database_id: 90,
            green_time: 10.0,
            yellow_time: 3.0,
            red_time: odd(t),
        }]));
        if has(K::WalkerBones) {
            packets.push(Packet::WalkerBones(vec![WalkerBones {
                database_id: 40,
                bones: vec![Bone {
                    name: FString::from_bytes(vec![0xff, b'x']),
                    location: v(1.0, 2.0, 3.0),
                    rotation: v(4.0, 5.0, 6.0),
                }],
            }]));
        }
        packets.push(Packet::User {
            id: 140,
            data: vec![1, 2, 3],
        });
        packets.push(Packet::FrameEnd);
        for p in &packets {
            out.write_packet(p).unwrap();
        }
    }
    out.into_inner().unwrap()
}

#[test]
fn synthetic_recordings_of_every_flavour_read_the_same_in_batches() {
    for flavour in Flavour::ALL {
        let bytes = synthetic(flavour, 12, 9);
        let what = format!("{flavour}");
        assert!(check_bytes(&bytes, &what, false) > 12 * 40, "{what}");
        // Cut everywhere in the last two frames, and at a few places before.
        let len = bytes.len();
        let mut cuts: Vec<usize> = (len * 5 / 6..len).step_by(7).collect();
        cuts.extend([0, 10, 50, len / 3, len / 2]);
        for cut in cuts {
            check_bytes(&bytes[..cut], &format!("{what} cut at {cut}"), true);
        }
    }
}

/// Damaged bytes: bad bools, wrong counts and sizes, unknown ids, in the per-actor packets
/// and elsewhere: the same rows, integrity and errors on both paths.
#[test]
fn damaged_recordings_read_the_same_in_batches() {
    for flavour in [Flavour::Carla0912, Flavour::Ue5, Flavour::Ue4DevWeather] {
        let bytes = synthetic(flavour, 4, 3);
        let start = Header::new("Town10HD_Opt", 0).encoded_len();
        for at in (start..bytes.len()).step_by(4) {
            for value in [2u8, 0xff] {
                let mut damaged = bytes.clone();
                if damaged[at] == value {
                    continue;
                }
                damaged[at] = value;
                check_bytes(&damaged, &format!("{flavour} byte {at} = {value}"), true);
            }
        }
    }
}

/// Calls of both kinds mixed, after seeks: the rows follow on from each other.
#[test]
fn mixed_calls_and_seeks_give_the_row_sequence() {
    let bytes = synthetic(Flavour::Carla0916, 30, 11);
    for seek in [None, Some(0.0), Some(0.52), Some(1e9)] {
        let opened = || {
            let mut r = open(&bytes, false).unwrap();
            if let Some(s) = seek {
                assert!(r.seek_time(s).unwrap());
            }
            r
        };
        let expected = by_rows(&mut opened());
        for capacity in CAPACITIES {
            let all = |_: usize| true;
            assert_same(
                &format!("seek {seek:?}, capacity {capacity}"),
                &expected,
                by_batches(&mut opened(), capacity, &all),
                &all,
            );
            // Alternate: a batch call, then one row, and so on.
            let mut r = opened();
            let schema = r.schema().clone();
            let mut rows: Rows = vec![Vec::new(); schema.streams.len()];
            let mut set = BatchSet::new(&schema, capacity);
            let mut frame = FrameBuf::default();
            loop {
                let more = r.read_batches(&mut set).unwrap();
                for batch in set.take_at_least(1) {
                    for row in 0..batch.rows() {
                        rows[batch.stream()].push(batch.row_values(row));
                    }
                }
                if !more {
                    break;
                }
                for _ in 0..3 {
                    if r.read_frame(&mut frame).unwrap() {
                        rows[frame.stream].push(frame.values.clone());
                    }
                }
            }
            assert_same(
                &format!("seek {seek:?}, mixed, capacity {capacity}"),
                &expected,
                Ok((rows, r.integrity().clone())),
                &all,
            );
        }
    }
}

/// Throughput of both paths on the largest sample and on a synthetic 0.9.16 recording of
/// 3000 frames of 200 actors. `cargo test --release -p recfmt-carla --test batches -- \
/// --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn throughput() {
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    if let Some(biggest) = common::sample_files()
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
    {
        let name = biggest.file_name().unwrap().to_string_lossy().into_owned();
        inputs.push((name, std::fs::read(&biggest).unwrap()));
    }
    inputs.push((
        "synthetic 0.9.16, 3000 frames x 200 actors".into(),
        synthetic(Flavour::Carla0916, 3000, 200),
    ));
    for (name, bytes) in inputs {
        let size = bytes.len() as f64 / 1e6;
        // read_frame alone, the row-by-row default read_batches, the native read_batches.
        let mut best = [f64::INFINITY; 3];
        let mut n = [0usize; 3];
        for _ in 0..5 {
            let t = Instant::now();
            let mut r = open(&bytes, false).unwrap();
            let mut frame = FrameBuf::default();
            n[0] = 0;
            while r.read_frame(&mut frame).unwrap() {
                n[0] += 1;
            }
            best[0] = best[0].min(t.elapsed().as_secs_f64());
            for native in [false, true] {
                let k = 1 + usize::from(native);
                let t = Instant::now();
                n[k] = batch_count(&mut open(&bytes, false).unwrap(), native);
                best[k] = best[k].min(t.elapsed().as_secs_f64());
            }
        }
        assert!(n[0] == n[1] && n[1] == n[2]);
        println!("{name}: {size:.2} MB, {} rows", n[0]);
        for (k, label) in [
            "read_frame",
            "read_batches_by_rows",
            "read_batches (native)",
        ]
        .iter()
        .enumerate()
        {
            println!(
                "  {label:>22}: {:8.1} ms {:10.0} rows/s {:7.1} MB/s",
                best[k] * 1e3,
                n[k] as f64 / best[k],
                size / best[k]
            );
        }
    }
}

/// Rows through `read_batches` (native or the row-by-row default) at capacity 4096.
fn batch_count(r: &mut Recording, native: bool) -> usize {
    let schema = r.schema().clone();
    let mut set = BatchSet::new(&schema, 4096);
    let mut rows = 0;
    loop {
        let more = if native {
            r.read_batches(&mut set).unwrap()
        } else {
            recfmt_core::read_batches_by_rows(r, &mut set).unwrap()
        };
        rows += set.take_ready(more).iter().map(|b| b.rows()).sum::<usize>();
        if !more {
            return rows;
        }
    }
}
