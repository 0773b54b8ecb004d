//! The generic-model schema of a CARLA log, in one place: the adapter reads into it and the
//! writer checks against it (so neither depends on the other).

use recfmt_core::{DType, Schema, Shape, SignalDesc, StreamDesc, TimeBase};

use crate::flavour::{Flavour, VectorWidth, WheelPhysicsLayout};
use crate::packet::Weather;

/// Stream names, in schema order.
pub const STREAM_NAMES: [&str; 23] = [
    "frame",
    "event_add",
    "event_del",
    "event_parent",
    "collision",
    "position",
    "traffic_light",
    "vehicle_anim",
    "walker_anim",
    "vehicle_light",
    "scene_light",
    "kinematics",
    "bounding_box",
    "trigger_volume",
    "platform_time",
    "physics_control",
    "traffic_light_time",
    "walker_bones",
    "visual_time",
    "vehicle_wheels",
    "biker_anim",
    "vehicle_door",
    "weather",
];

/// The schema for a flavour: every stream, whether or not the file holds its packets.
pub fn schema(flavour: Flavour) -> Schema {
    let vdt = match flavour.vector_width() {
        VectorWidth::F32 => DType::F32,
        VectorWidth::F64 => DType::F64,
    };
    let streams = STREAM_NAMES
        .iter()
        .map(|&name| {
            let mut s = StreamDesc::new(
                name,
                SignalDesc::scalar("elapsed", DType::F64).with_unit("s"),
                TimeBase::SECONDS,
            );
            s.signals.push(SignalDesc::scalar("frame", DType::U64));
            let sig = |n: &str, d: DType| SignalDesc::scalar(n, d);
            let unit = |n: &str, d: DType, u: &str| SignalDesc::scalar(n, d).with_unit(u);
            let vector = |prefix: &str, names: [&str; 3], u: &str| {
                names.map(|n| SignalDesc::scalar(format!("{prefix}{n}"), vdt).with_unit(u))
            };
            let id = || sig("id", DType::U32);
            let mut keyed = true;
            let extra: Vec<SignalDesc> = match name {
                "frame" => {
                    keyed = false;
                    vec![unit("duration", DType::F64, "s")]
                }
                "event_add" => {
                    let mut v = vec![id(), sig("actor_type", DType::U8)];
                    v.extend(vector("", ["x", "y", "z"], "cm"));
                    v.extend(vector("", ["roll", "pitch", "yaw"], "deg"));
                    v.push(sig("uid", DType::U32));
                    v.push(sig("blueprint", DType::Str));
                    let mut attrs = sig("attributes", DType::Str);
                    attrs
                        .metadata
                        .insert("format".into(), "id=value pairs joined by \"; \"".into());
                    v.push(attrs);
                    v
                }
                "event_del" => vec![id()],
                "event_parent" => vec![id(), sig("parent", DType::U32)],
                "collision" => {
                    keyed = false;
                    vec![
                        sig("collision_id", DType::U32),
                        sig("actor1", DType::U32),
                        sig("actor2", DType::U32),
                        sig("actor1_hero", DType::Bool),
                        sig("actor2_hero", DType::Bool),
                    ]
                }
                "position" => {
                    let mut v = vec![id()];
                    v.extend(vector("", ["x", "y", "z"], "cm"));
                    v.extend(vector("", ["roll", "pitch", "yaw"], "deg"));
                    v
                }
                "traffic_light" => vec![
                    id(),
                    sig("state", DType::U8),
                    sig("frozen", DType::Bool),
                    unit("elapsed_time", DType::F32, "s"),
                ],
                "vehicle_anim" => vec![
                    id(),
                    sig("steering", DType::F32),
                    sig("throttle", DType::F32),
                    sig("brake", DType::F32),
                    sig("handbrake", DType::Bool),
                    sig("gear", DType::I32),
                ],
                "walker_anim" => vec![id(), unit("speed", DType::F32, "cm/s")],
                "vehicle_light" => vec![id(), sig("state", DType::U32)],
                "scene_light" => vec![
                    sig("id", DType::I32),
                    sig("intensity", DType::F32),
                    sig("r", DType::F32),
                    sig("g", DType::F32),
                    sig("b", DType::F32),
                    sig("a", DType::F32),
                    sig("on", DType::Bool),
                    sig("light_type", DType::U8),
                ],
                "kinematics" => {
                    let mut v = vec![id()];
                    v.extend(vector("linear_velocity_", ["x", "y", "z"], "m/s"));
                    v.extend(vector("angular_velocity_", ["x", "y", "z"], "deg/s"));
                    v
                }
                "bounding_box" | "trigger_volume" => {
                    let mut v = vec![id()];
                    v.extend(vector("origin_", ["x", "y", "z"], "cm"));
                    v.extend(vector("extent_", ["x", "y", "z"], "cm"));
                    v
                }
                "platform_time" | "visual_time" => {
                    keyed = false;
                    vec![unit("time", DType::F64, "s")]
                }
                "physics_control" => {
                    if flavour.wheel_physics() == WheelPhysicsLayout::Opaque {
                        keyed = false;
                        vec![sig("data", DType::Bytes)]
                    } else {
                        physics_signals()
                    }
                }
                "traffic_light_time" => vec![
                    id(),
                    unit("green_time", DType::F32, "s"),
                    unit("yellow_time", DType::F32, "s"),
                    unit("red_time", DType::F32, "s"),
                ],
                "walker_bones" => {
                    let mut v = vec![id(), sig("bone", DType::Str)];
                    v.extend(vector("", ["x", "y", "z"], "cm"));
                    v.extend(vector("", ["roll", "pitch", "yaw"], "deg"));
                    v
                }
                "vehicle_wheels" => vec![
                    id(),
                    sig("wheel", DType::U8),
                    unit("steering_angle", DType::F32, "deg"),
                    unit("tire_rotation", DType::F32, "deg"),
                ],
                "biker_anim" => vec![
                    id(),
                    sig("forward_speed", DType::F32),
                    sig("engine_rotation", DType::F32),
                ],
                "vehicle_door" => vec![id(), sig("door", DType::U8), sig("open", DType::Bool)],
                "weather" => {
                    keyed = false;
                    Weather::FIELD_NAMES
                        .iter()
                        .map(|n| sig(n, DType::F32))
                        .collect()
                }
                _ => Vec::new(),
            };
            s.signals.extend(extra);
            if keyed {
                s.entity = Some(2);
            }
            s
        })
        .collect();
    Schema { streams }
}

fn physics_signals() -> Vec<SignalDesc> {
    let sig = |n: &str, d: DType| SignalDesc::scalar(n, d);
    let list = |n: &str| SignalDesc::scalar(n, DType::F32).with_shape(Shape::Variable);
    let mut v = vec![sig("id", DType::U32)];
    for n in [
        "max_rpm",
        "moi",
        "damping_rate_full_throttle",
        "damping_rate_zero_throttle_clutch_engaged",
        "damping_rate_zero_throttle_clutch_disengaged",
    ] {
        v.push(sig(n, DType::F32));
    }
    v.push(sig("use_gear_autobox", DType::Bool));
    v.push(sig("clutch_strength", DType::F32));
    v.push(sig("final_ratio", DType::F32));
    v.push(sig("mass", DType::F32).with_unit("kg"));
    v.push(sig("drag_coefficient", DType::F32));
    for n in ["center_of_mass_x", "center_of_mass_y", "center_of_mass_z"] {
        v.push(sig(n, DType::F32));
    }
    let mut torque = list("torque_curve");
    torque
        .metadata
        .insert("layout".into(), "x0, y0, x1, y1, ...".into());
    v.push(torque);
    let mut gears = list("forward_gears");
    gears.metadata.insert(
        "layout".into(),
        "ratio, down_ratio, up_ratio per gear".into(),
    );
    v.push(gears);
    let mut steering = list("steering_curve");
    steering
        .metadata
        .insert("layout".into(), "x0, y0, x1, y1, ...".into());
    v.push(steering);
    for n in [
        "wheel_tire_friction",
        "wheel_damping_rate",
        "wheel_max_steer_angle",
        "wheel_radius",
        "wheel_max_brake_torque",
        "wheel_max_handbrake_torque",
        "wheel_lat_stiff_max_load",
        "wheel_lat_stiff_value",
        "wheel_long_stiff_value",
        "wheel_x",
        "wheel_y",
        "wheel_z",
    ] {
        v.push(list(n));
    }
    v
}
