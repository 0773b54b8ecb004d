//! PhysicsControl (id 15, additional data) as written by UE4 builds.
//!
//! UE5 builds dump raw memory (padding and heap pointers included), so their bodies are kept
//! as opaque bytes in [`crate::Packet::PhysicsControlOpaque`].

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;

/// The physics parameters of one vehicle (UE4 layout, variable size).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PhysicsControl {
    /// Recorded actor id.
    pub database_id: u32,
    /// Maximum engine rpm.
    pub max_rpm: f32,
    /// Engine moment of inertia.
    pub moi: f32,
    /// Damping rate at full throttle.
    pub damping_rate_full_throttle: f32,
    /// Damping rate at zero throttle, clutch engaged.
    pub damping_rate_zero_throttle_clutch_engaged: f32,
    /// Damping rate at zero throttle, clutch disengaged.
    pub damping_rate_zero_throttle_clutch_disengaged: f32,
    /// Automatic gear box.
    pub use_gear_autobox: bool,
    /// Clutch strength.
    pub clutch_strength: f32,
    /// Final drive ratio.
    pub final_ratio: f32,
    /// Mass, kg.
    pub mass: f32,
    /// Drag coefficient.
    pub drag_coefficient: f32,
    /// Centre of mass X, Y, Z.
    pub center_of_mass: [f32; 3],
    /// Torque curve points (x, y); `u32` count on disk.
    pub torque_curve: Vec<[f32; 2]>,
    /// Forward gears; `u32` count on disk.
    pub forward_gears: Vec<Gear>,
    /// Steering curve points (x, y); `u32` count on disk.
    pub steering_curve: Vec<[f32; 2]>,
    /// Wheels; `u32` count on disk.
    pub wheels: Vec<WheelPhysics>,
}

/// One forward gear. 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Gear {
    /// Gear ratio.
    pub ratio: f32,
    /// Down-shift ratio.
    pub down_ratio: f32,
    /// Up-shift ratio.
    pub up_ratio: f32,
}

/// The physics of one wheel: 36 bytes (0.9.10–0.9.11) or 48 bytes with stiffness (0.9.12+).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WheelPhysics {
    /// Tyre friction.
    pub tire_friction: f32,
    /// Damping rate.
    pub damping_rate: f32,
    /// Maximum steering angle, degrees.
    pub max_steer_angle: f32,
    /// Radius, cm.
    pub radius: f32,
    /// Maximum brake torque.
    pub max_brake_torque: f32,
    /// Maximum hand-brake torque.
    pub max_handbrake_torque: f32,
    /// `lat_stiff_max_load`, `lat_stiff_value`, `long_stiff_value`: present in the 48-byte
    /// layout only.
    pub stiffness: Option<[f32; 3]>,
    /// Position X, Y, Z.
    pub position: [f32; 3],
}

impl WheelPhysics {
    /// Size of the record on disk.
    pub fn size(&self) -> usize {
        if self.stiffness.is_some() { 48 } else { 36 }
    }
}

impl PhysicsControl {
    /// Decodes one record; `stiffness` selects the 48-byte wheel layout.
    pub(crate) fn decode(c: &mut Cursor<'_>, stiffness: bool) -> Result<Self> {
        let database_id = c.u32()?;
        let [
            max_rpm,
            moi,
            damping_rate_full_throttle,
            damping_rate_zero_throttle_clutch_engaged,
            damping_rate_zero_throttle_clutch_disengaged,
        ] = c.f32s()?;
        let use_gear_autobox = c.bool()?;
        let [clutch_strength, final_ratio, mass, drag_coefficient] = c.f32s()?;
        let center_of_mass = c.f32s()?;

        let n = c.array_count("torque curve length", 8)?;
        let mut torque_curve = Vec::with_capacity(n);
        for _ in 0..n {
            torque_curve.push(c.f32s()?);
        }
        let n = c.array_count("forward gear count", 12)?;
        let mut forward_gears = Vec::with_capacity(n);
        for _ in 0..n {
            let [ratio, down_ratio, up_ratio] = c.f32s()?;
            forward_gears.push(Gear {
                ratio,
                down_ratio,
                up_ratio,
            });
        }
        let n = c.array_count("steering curve length", 8)?;
        let mut steering_curve = Vec::with_capacity(n);
        for _ in 0..n {
            steering_curve.push(c.f32s()?);
        }
        let n = c.array_count("wheel count", if stiffness { 48 } else { 36 })?;
        let mut wheels = Vec::with_capacity(n);
        for _ in 0..n {
            let [
                tire_friction,
                damping_rate,
                max_steer_angle,
                radius,
                max_brake_torque,
                max_handbrake_torque,
            ] = c.f32s()?;
            let stiffness = if stiffness { Some(c.f32s()?) } else { None };
            wheels.push(WheelPhysics {
                tire_friction,
                damping_rate,
                max_steer_angle,
                radius,
                max_brake_torque,
                max_handbrake_torque,
                stiffness,
                position: c.f32s()?,
            });
        }
        Ok(PhysicsControl {
            database_id,
            max_rpm,
            moi,
            damping_rate_full_throttle,
            damping_rate_zero_throttle_clutch_engaged,
            damping_rate_zero_throttle_clutch_disengaged,
            use_gear_autobox,
            clutch_strength,
            final_ratio,
            mass,
            drag_coefficient,
            center_of_mass,
            torque_curve,
            forward_gears,
            steering_curve,
            wheels,
        })
    }

    /// Encodes one record; each wheel is written in the layout it holds.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_f32s(&[
            self.max_rpm,
            self.moi,
            self.damping_rate_full_throttle,
            self.damping_rate_zero_throttle_clutch_engaged,
            self.damping_rate_zero_throttle_clutch_disengaged,
        ]);
        out.put_bool(self.use_gear_autobox);
        out.put_f32s(&[
            self.clutch_strength,
            self.final_ratio,
            self.mass,
            self.drag_coefficient,
        ]);
        out.put_f32s(&self.center_of_mass);
        out.put_count_u32("torque curve length", self.torque_curve.len())?;
        for p in &self.torque_curve {
            out.put_f32s(p);
        }
        out.put_count_u32("forward gear count", self.forward_gears.len())?;
        for g in &self.forward_gears {
            out.put_f32s(&[g.ratio, g.down_ratio, g.up_ratio]);
        }
        out.put_count_u32("steering curve length", self.steering_curve.len())?;
        for p in &self.steering_curve {
            out.put_f32s(p);
        }
        out.put_count_u32("wheel count", self.wheels.len())?;
        for w in &self.wheels {
            out.put_f32s(&[
                w.tire_friction,
                w.damping_rate,
                w.max_steer_angle,
                w.radius,
                w.max_brake_torque,
                w.max_handbrake_torque,
            ]);
            if let Some(s) = &w.stiffness {
                out.put_f32s(s);
            }
            out.put_f32s(&w.position);
        }
        Ok(())
    }
}
