//! Generated CARLA inputs for the generic reader test: one recording per build (flavour) with
//! every packet kind it has, several records each, bools both ways, NaNs and infinities, and
//! damaged copies (cut inside a frame, a bad bool byte, a wrong record count).

use std::path::PathBuf;
use std::sync::OnceLock;

use recfmt::carla::{
    ActorAttribute, ActorDescription, BikerAnim, Bone, BoundingBox, Collision, EventAdd, EventDel,
    EventParent, FString, Flavour, FrameStart, Header, Kinematics, Packet, PacketKind, Position,
    RawPacket, Reader, SceneLight, TrafficLightState, TrafficLightTime, Vector3, VehicleAnim,
    VehicleDoor, VehicleLight, VehicleWheels, WalkerAnim, WalkerBones, Weather, WheelAnim, Writer,
};

/// The files, written once per test process into a temporary folder.
pub fn inputs() -> Vec<PathBuf> {
    static DIR: OnceLock<(tempfile::TempDir, Vec<PathBuf>)> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary folder");
        let mut files = Vec::new();
        let mut write = |name: String, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).expect("write a generated input");
            files.push(path);
        };
        for flavour in Flavour::ALL {
            let bytes = recording(flavour, 6, 4);
            write(format!("synthetic-{flavour}.log"), &bytes);
            if matches!(flavour, Flavour::Carla0912 | Flavour::Ue5) {
                write(format!("cut-{flavour}.log"), &bytes[..bytes.len() * 5 / 6]);
                write(format!("damaged-{flavour}.log"), &damaged(bytes, flavour));
            }
        }
        // Long enough for the seek's binary search to probe (see `long_inputs`).
        for (name, bytes) in long_inputs() {
            write(name.into(), &bytes);
        }
        (dir, files)
    })
    .1
    .clone()
}

/// Long recordings (a few MB: the binary search of `seek_time` probes them), one of which
/// is damaged: 40 KB of junk wrapped in a user packet in the middle, with copies of
/// FrameStart headers in it, which the search must not take for frame starts (a full scan
/// reads the junk as one user packet).
pub fn long_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let whole = long_recording(30_000, None);
    let damaged = long_recording(30_000, Some(15_000));
    vec![("long.log", whole), ("long-damaged.log", damaged)]
}

/// `frames` frames of 0.05 s: FrameStart, a Position packet of two actors, every seventh
/// frame a user packet whose body holds a FrameStart header and junk, FrameEnd; with
/// `junk_at`, 40 KB of junk (in a user packet) in that frame.
fn long_recording(frames: u64, junk_at: Option<u64>) -> Vec<u8> {
    let flavour = Flavour::Carla0912;
    let w = flavour.vector_width();
    let mut out = Writer::new(Vec::new(), flavour);
    out.write_header(&Header::new("Town01", 1_700_000_000))
        .expect("header");
    let lure = |frame: u64, len: usize| {
        let mut data = vec![0u8, 24, 0, 0, 0];
        data.extend_from_slice(&(frame + 3).to_le_bytes());
        data.extend_from_slice(&0.05f64.to_le_bytes());
        data.extend_from_slice(&(frame as f64 * 0.01).to_le_bytes());
        data.extend((0..len).map(|k| (k as u64 * 131 + frame) as u8));
        data
    };
    for frame in 1..=frames {
        let mut packets = vec![
            Packet::FrameStart(FrameStart {
                id: frame,
                duration_this: 0.05,
                elapsed: 0.05 * (frame - 1) as f64,
            }),
            Packet::Position(
                (0..2)
                    .map(|a| Position {
                        database_id: a,
                        location: Vector3::new(w, frame as f64, f64::from(a), 0.5),
                        rotation: Vector3::new(w, 0.0, 0.0, 1.0),
                    })
                    .collect(),
            ),
        ];
        if frame % 7 == 0 {
            packets.push(Packet::User {
                id: 140,
                data: lure(frame, 40),
            });
        }
        if junk_at == Some(frame) {
            let mut data = Vec::new();
            for k in 0..400 {
                data.extend(lure(frame + k, 95));
            }
            packets.push(Packet::User { id: 141, data });
        }
        packets.push(Packet::FrameEnd);
        for p in &packets {
            out.write_packet(p).expect("packet");
        }
    }
    out.into_inner().expect("bytes")
}

/// `bytes` with the first Collision record's hero byte set to 2 and the first Position
/// packet's count raised by one: two packets skipped as corrupt.
fn damaged(mut bytes: Vec<u8>, flavour: Flavour) -> Vec<u8> {
    let mut reader = Reader::new(&bytes[..]).with_flavour(Some(flavour));
    let mut raw = RawPacket::default();
    let (mut collision, mut position) = (None, None);
    while reader.read_raw_packet(&mut raw).expect("packet") {
        let body = usize::try_from(raw.offset).expect("offset") + 5;
        match flavour.kind_of(raw.id) {
            Some(PacketKind::Collision) if raw.body[0] > 0 => {
                collision.get_or_insert(body + 2 + 12);
            }
            Some(PacketKind::Position) => {
                position.get_or_insert(body);
            }
            _ => {}
        }
    }
    bytes[collision.expect("a collision")] = 2;
    bytes[position.expect("a position")] += 1;
    bytes
}

/// `frames` frames of every packet kind `flavour` has, `actors` records in the per-actor ones.
fn recording(flavour: Flavour, frames: u64, actors: u32) -> Vec<u8> {
    let w = flavour.vector_width();
    let v = |x: f64, y: f64, z: f64| Vector3::new(w, x, y, z);
    let odd = |x: f32| match (x as i64) % 7 {
        0 => f32::NAN,
        1 => f32::NEG_INFINITY,
        2 => -0.0,
        _ => x * 0.37,
    };
    let mut out = Writer::new(Vec::new(), flavour);
    let mut header = Header::new("Town10HD_Opt", 1_700_000_000);
    header.version = flavour.header_version();
    out.write_header(&header).expect("header");
    for frame in 1..=frames {
        let (t, n) = (frame as f32, frame as u32);
        let mut packets = Vec::new();
        for (kind, _) in flavour.frame_order(true) {
            packets.push(match kind {
                PacketKind::FrameStart => Packet::FrameStart(FrameStart {
                    id: frame,
                    duration_this: 0.05,
                    elapsed: 0.05 * (frame - 1) as f64,
                }),
                PacketKind::VisualTime => Packet::VisualTime(frame as f64 + 100.0),
                PacketKind::PlatformTime => Packet::PlatformTime(0.0123 * frame as f64),
                PacketKind::EventAdd => Packet::EventAdd(vec![EventAdd {
                    database_id: n,
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
                }]),
                PacketKind::EventDel => {
                    Packet::EventDel((0..n % 3).map(|i| EventDel { database_id: i }).collect())
                }
                PacketKind::EventParent => Packet::EventParent(vec![EventParent {
                    database_id: 25,
                    database_id_parent: n,
                }]),
                PacketKind::Collision => Packet::Collision(
                    (0..n % 4)
                        .map(|i| Collision {
                            id: i,
                            database_id1: i + 1,
                            database_id2: i + 2,
                            is_actor1_hero: i % 2 == 0,
                            is_actor2_hero: i % 3 == 0,
                        })
                        .collect(),
                ),
                PacketKind::VehicleDoor => Packet::VehicleDoor(vec![VehicleDoor {
                    database_id: 3,
                    doors: (frame % 7) as u8,
                    is_open: frame % 2 == 0,
                }]),
                PacketKind::Position => Packet::Position(
                    (0..actors)
                        .map(|a| Position {
                            database_id: a,
                            location: v(f64::from(odd(t + a as f32)), -3.1, 0.3),
                            rotation: v(0.0, f64::from(a) * 0.1, -89.99),
                        })
                        .collect(),
                ),
                PacketKind::TrafficLight => Packet::TrafficLight(vec![TrafficLightState {
                    database_id: 90,
                    is_frozen: frame % 2 == 0,
                    elapsed_time: odd(t * 1.5),
                    state: (n % 4) as u8,
                }]),
                PacketKind::VehicleAnim => Packet::VehicleAnim(
                    (0..actors)
                        .map(|a| VehicleAnim {
                            database_id: a,
                            steering: odd(t - a as f32),
                            throttle: 0.7,
                            brake: a as f32 * 0.01,
                            handbrake: (n + a) % 3 == 0,
                            gear: a as i32 - 1,
                        })
                        .collect(),
                ),
                PacketKind::WalkerAnim => Packet::WalkerAnim(vec![WalkerAnim {
                    database_id: 40,
                    speed: odd(t),
                }]),
                PacketKind::VehicleLight => Packet::VehicleLight(vec![VehicleLight {
                    database_id: 24,
                    state: n * 9,
                }]),
                PacketKind::SceneLight => Packet::SceneLight(vec![SceneLight {
                    light_id: -(n as i32),
                    intensity: 3000.0,
                    color: [1.0, 0.9, odd(t), 1.0],
                    on: frame % 2 == 0,
                    light_type: 2,
                }]),
                PacketKind::VehicleWheels => Packet::VehicleWheels(vec![VehicleWheels {
                    database_id: 24,
                    wheels: (0..4)
                        .map(|i| WheelAnim {
                            location: i,
                            steering_angle: 1.0,
                            tire_rotation: odd(t),
                        })
                        .collect(),
                }]),
                PacketKind::BikerAnim => Packet::BikerAnim(vec![BikerAnim {
                    database_id: 26,
                    forward_speed: 500.0,
                    engine_rotation: odd(t),
                }]),
                PacketKind::Weather => {
                    Packet::Weather(vec![Weather::from_array(std::array::from_fn(|i| {
                        odd(t + i as f32)
                    }))])
                }
                PacketKind::Kinematics => Packet::Kinematics(
                    (0..actors)
                        .map(|a| Kinematics {
                            database_id: a,
                            linear_velocity: v(1.0, f64::from(a), 0.0),
                            angular_velocity: v(0.0, 0.0, f64::from(odd(t))),
                        })
                        .collect(),
                ),
                PacketKind::BoundingBox | PacketKind::TriggerVolume => {
                    let b = vec![BoundingBox {
                        database_id: 24,
                        origin: v(0.0, 0.0, 70.0),
                        extent: v(240.0, 90.0, f64::from(t)),
                    }];
                    if kind == PacketKind::BoundingBox {
                        Packet::BoundingBox(b)
                    } else {
                        Packet::TriggerVolume(b)
                    }
                }
                PacketKind::TrafficLightTime => Packet::TrafficLightTime(vec![TrafficLightTime {
                    database_id: 90,
                    green_time: 10.0,
                    yellow_time: 3.0,
                    red_time: odd(t),
                }]),
                PacketKind::WalkerBones => Packet::WalkerBones(vec![WalkerBones {
                    database_id: 40,
                    bones: vec![Bone {
                        name: FString::from_bytes(vec![0xff, b'x']),
                        location: v(1.0, 2.0, 3.0),
                        rotation: v(4.0, 5.0, 6.0),
                    }],
                }]),
                // PhysicsControl (its own layouts are covered by the samples) and FrameEnd.
                _ => continue,
            });
        }
        packets.push(Packet::User {
            id: 140,
            data: vec![1, 2, 3],
        });
        packets.push(Packet::FrameEnd);
        for p in &packets {
            out.write_packet(p).expect("packet");
        }
    }
    out.into_inner().expect("bytes")
}
