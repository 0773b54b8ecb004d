//! The generic-model schema of a CARLA log, in one place: the adapter reads into it and the
//! writer checks against it (so neither depends on the other).

use recfmt_core::{DType, Schema, Shape, SignalDesc, StreamDesc, TimeBase};

use crate::flavour::PacketKind;
use crate::flavour::{Flavour, VectorWidth, WheelPhysicsLayout};
use crate::record::FixedKind;

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
    let width = flavour.vector_width();
    let vdt = match width {
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
            let fixed = stream_kind(name).and_then(|kind| FixedKind::of_kind(kind, width));
            let extra: Vec<SignalDesc> = if let Some(fixed) = fixed {
                // Actor records are keyed by their id; collisions and weather are not.
                let signals = (fixed.signals)(width);
                keyed = signals.first().is_some_and(|s| s.name == "id");
                signals
            } else {
                match name {
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
                    _ => Vec::new(),
                }
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

/// The packet kind whose rows a stream holds (`frame` holds FrameStart packets).
pub(crate) fn stream_kind(name: &str) -> Option<PacketKind> {
    if name == "frame" {
        return Some(PacketKind::FrameStart);
    }
    PacketKind::ALL.iter().copied().find(|k| k.name() == name)
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
