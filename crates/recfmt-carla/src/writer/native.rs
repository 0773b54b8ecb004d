//! Writing the adapter's own streams: rows gathered into the packets of each frame.

use std::io::{Seek, Write};

use recfmt_core::{FrameBuf, Value};

use super::invalid;
use crate::error::Error;
use crate::flavour::{Flavour, PacketKind};
use crate::io::Writer;
use crate::packet::{
    ActorAttribute, ActorDescription, BikerAnim, Bone, BoundingBox, Collision, EventAdd, EventDel,
    EventParent, FrameStart, Gear, Kinematics, Packet, PhysicsControl, Position, SceneLight,
    TrafficLightState, TrafficLightTime, VehicleAnim, VehicleDoor, VehicleLight, VehicleWheels,
    WalkerAnim, WalkerBones, Weather, WheelAnim, WheelPhysics,
};
use crate::record::{FixedRecord, RowValues};
use crate::tracks::empty_packet;

#[derive(Debug)]
pub(super) struct Native<W: Write + Seek> {
    pub(super) w: Writer<W>,
    pub(super) flavour: Flavour,
    /// Stream index → packet kind.
    pub(super) kinds: Vec<Option<PacketKind>>,
    pub(super) frame: Option<FrameStart>,
    pub(super) packets: Vec<(PacketKind, Packet)>,
    pub(super) additional: bool,
}

/// The attribute type byte a value suggests (version-1 numbering).
fn guess_attribute_type(value: &str) -> u8 {
    let is_int = |s: &str| {
        !s.is_empty()
            && s.trim_start_matches('-')
                .bytes()
                .all(|b| b.is_ascii_digit())
    };
    if value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false") {
        0
    } else if is_int(value) {
        1
    } else if value.parse::<f64>().is_ok() && value.contains('.') {
        2
    } else if value.split(',').count() == 3 && value.split(',').all(|p| is_int(p.trim())) {
        4
    } else {
        3
    }
}

fn parse_attributes(text: &str, version: u16) -> Vec<ActorAttribute> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split("; ")
        .map(|pair| {
            let (id, value) = pair.split_once('=').unwrap_or((pair, ""));
            let kind = guess_attribute_type(value) + u8::from(version >= 2);
            ActorAttribute {
                kind,
                id: id.into(),
                value: value.into(),
            }
        })
        .collect()
}

impl<W: Write + Seek> Native<W> {
    pub(super) fn row(&mut self, frame: &FrameBuf, row: u64) -> recfmt_core::Result<()> {
        let kind = self
            .kinds
            .get(frame.stream)
            .copied()
            .flatten()
            .ok_or_else(|| {
                invalid(format!(
                    "row {row}: stream {} is not in the schema",
                    frame.stream
                ))
            })?;
        let name = if kind == PacketKind::FrameStart {
            "frame"
        } else {
            kind.name()
        };
        let r = RowValues {
            v: &frame.values,
            row,
            stream: name,
        };
        if kind == PacketKind::FrameStart {
            self.flush_frame()?;
            self.frame = Some(FrameStart {
                id: r.u64(1)?,
                elapsed: r.f64(0)?,
                duration_this: r.f64(2)?,
            });
            return Ok(());
        }
        if self.frame.is_none() {
            return Err(invalid(format!(
                "row {row} (stream {name:?}) comes before the first \"frame\" row"
            )));
        }
        let width = self.flavour.vector_width();
        let version = self.flavour.header_version();
        // The packet of this kind in the current frame (created on first use).
        let at = match self.packets.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                self.packets.push((kind, empty_packet(kind)));
                self.packets.len() - 1
            }
        };
        let packet = &mut self.packets[at].1;
        match packet {
            Packet::EventAdd(v) => v.push(EventAdd {
                database_id: r.u32(2)?,
                actor_type: r.u8(3)?,
                location: r.vector(4, width)?,
                rotation: r.vector(7, width)?,
                description: ActorDescription {
                    uid: r.u32(10)?,
                    id: r.str(11)?.into(),
                    attributes: parse_attributes(r.str(12)?, version),
                },
            }),
            Packet::EventDel(v) => v.push(EventDel::from_row(&r, 2, width)?),
            Packet::EventParent(v) => v.push(EventParent::from_row(&r, 2, width)?),
            Packet::Collision(v) => v.push(Collision::from_row(&r, 2, width)?),
            Packet::Position(v) => v.push(Position::from_row(&r, 2, width)?),
            Packet::TrafficLight(v) => v.push(TrafficLightState::from_row(&r, 2, width)?),
            Packet::VehicleAnim(v) => v.push(VehicleAnim::from_row(&r, 2, width)?),
            Packet::WalkerAnim(v) => v.push(WalkerAnim::from_row(&r, 2, width)?),
            Packet::VehicleLight(v) => v.push(VehicleLight::from_row(&r, 2, width)?),
            Packet::SceneLight(v) => v.push(SceneLight::from_row(&r, 2, width)?),
            Packet::Kinematics(v) => v.push(Kinematics::from_row(&r, 2, width)?),
            Packet::BoundingBox(v) | Packet::TriggerVolume(v) => {
                v.push(BoundingBox::from_row(&r, 2, width)?);
            }
            Packet::PlatformTime(t) => {
                *t = r.f64(2)?;
                self.additional = true;
            }
            Packet::VisualTime(t) => *t = r.f64(2)?,
            Packet::TrafficLightTime(v) => v.push(TrafficLightTime::from_row(&r, 2, width)?),
            Packet::BikerAnim(v) => v.push(BikerAnim::from_row(&r, 2, width)?),
            Packet::VehicleDoor(v) => v.push(VehicleDoor::from_row(&r, 2, width)?),
            Packet::Weather(v) => v.push(Weather::from_row(&r, 2, width)?),
            Packet::WalkerBones(v) => {
                let id = r.u32(2)?;
                let bone = Bone {
                    name: r.str(3)?.into(),
                    location: r.vector(4, width)?,
                    rotation: r.vector(7, width)?,
                };
                match v.last_mut() {
                    Some(w) if w.database_id == id => w.bones.push(bone),
                    _ => v.push(WalkerBones {
                        database_id: id,
                        bones: vec![bone],
                    }),
                }
            }
            Packet::VehicleWheels(v) => {
                let id = r.u32(2)?;
                let wheel = WheelAnim {
                    location: r.u8(3)?,
                    steering_angle: r.f32(4)?,
                    tire_rotation: r.f32(5)?,
                };
                match v.last_mut() {
                    Some(w) if w.database_id == id => w.wheels.push(wheel),
                    _ => v.push(VehicleWheels {
                        database_id: id,
                        wheels: vec![wheel],
                    }),
                }
            }
            Packet::PhysicsControl(v) => {
                if self.flavour.wheel_physics() == crate::WheelPhysicsLayout::Opaque {
                    let Some(Value::Bytes(b)) = frame.values.get(2) else {
                        return Err(r.err(2, "expected the opaque body bytes"));
                    };
                    *packet = Packet::PhysicsControlOpaque(b.clone());
                } else {
                    v.push(physics(&r, self.flavour)?);
                }
            }
            Packet::PhysicsControlOpaque(_)
            | Packet::FrameStart(_)
            | Packet::FrameEnd
            | Packet::FrameCounter(_)
            | Packet::User { .. }
            | Packet::Unknown { .. } => {
                return Err(invalid(format!(
                    "row {row}: stream {name:?} cannot be written"
                )));
            }
        }
        Ok(())
    }

    pub(super) fn flush_frame(&mut self) -> recfmt_core::Result<()> {
        let Some(start) = self.frame.take() else {
            return Ok(());
        };
        let flavour = self.flavour;
        self.w.write_packet(&Packet::FrameStart(start))?;
        let mut packets = std::mem::take(&mut self.packets);
        for (kind, always) in flavour.frame_order(self.additional) {
            if kind == PacketKind::FrameStart {
                continue;
            }
            let given = packets
                .iter()
                .position(|(k, _)| *k == kind)
                .map(|i| packets.swap_remove(i).1);
            match given {
                Some(p) if p.record_count() > 0 || always => {
                    self.w.write_packet(&p)?;
                }
                Some(_) => {}
                None if always => {
                    let p = if kind == PacketKind::VisualTime {
                        Packet::VisualTime(start.elapsed)
                    } else {
                        empty_packet(kind)
                    };
                    self.w.write_packet(&p)?;
                }
                None => {}
            }
        }
        if let Some((kind, _)) = packets.first() {
            return Err(Error::NotInFlavour {
                packet: kind.name(),
                flavour,
            }
            .into());
        }
        self.additional = false;
        Ok(())
    }
}

fn physics(r: &RowValues<'_>, flavour: Flavour) -> recfmt_core::Result<PhysicsControl> {
    let pairs = |v: Vec<f32>| v.chunks_exact(2).map(|c| [c[0], c[1]]).collect::<Vec<_>>();
    let lists: Vec<Vec<f32>> = (19..31)
        .map(|i| match r.v.get(i) {
            Some(Value::Null) => Ok(Vec::new()),
            _ => r.f32_list(i),
        })
        .collect::<recfmt_core::Result<_>>()?;
    let stiffness = flavour.wheel_physics() == crate::WheelPhysicsLayout::Wheel48;
    let n = lists[0].len();
    let get = |l: usize, k: usize| lists[l].get(k).copied().unwrap_or(0.0);
    let wheels = (0..n)
        .map(|k| WheelPhysics {
            tire_friction: get(0, k),
            damping_rate: get(1, k),
            max_steer_angle: get(2, k),
            radius: get(3, k),
            max_brake_torque: get(4, k),
            max_handbrake_torque: get(5, k),
            stiffness: stiffness.then(|| [get(6, k), get(7, k), get(8, k)]),
            position: [get(9, k), get(10, k), get(11, k)],
        })
        .collect();
    Ok(PhysicsControl {
        database_id: r.u32(2)?,
        max_rpm: r.f32(3)?,
        moi: r.f32(4)?,
        damping_rate_full_throttle: r.f32(5)?,
        damping_rate_zero_throttle_clutch_engaged: r.f32(6)?,
        damping_rate_zero_throttle_clutch_disengaged: r.f32(7)?,
        use_gear_autobox: r.bool(8)?,
        clutch_strength: r.f32(9)?,
        final_ratio: r.f32(10)?,
        mass: r.f32(11)?,
        drag_coefficient: r.f32(12)?,
        center_of_mass: [r.f32(13)?, r.f32(14)?, r.f32(15)?],
        torque_curve: pairs(r.f32_list(16)?),
        forward_gears: r
            .f32_list(17)?
            .chunks_exact(3)
            .map(|c| Gear {
                ratio: c[0],
                down_ratio: c[1],
                up_ratio: c[2],
            })
            .collect(),
        steering_curve: pairs(r.f32_list(18)?),
        wheels,
    })
}
