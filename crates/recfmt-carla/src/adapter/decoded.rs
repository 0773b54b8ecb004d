//! Rows of the packets whose records are not of one fixed size, from their decoded form
//! (fixed-size records go from their bytes to the row: [`crate::record::FixedRecord::emit`]).

use recfmt_core::RowWriter;

use crate::packet::{EventAdd, Packet, PhysicsControl};
use crate::primitive::Vector3;

/// Where the next row of a decoded packet comes from: record `rec` and, for packets with a
/// list per record (bones, wheels), element `sub` of it.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Cursor {
    pub rec: usize,
    pub sub: usize,
}

/// Reused buffers for the values that are built, not read, from a packet.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    text: String,
    floats: Vec<f32>,
}

/// The number of rows `packet` gives before `at`'s record runs out, having moved `at` past
/// records with empty lists; 0 when the packet gives no (more) rows.
fn rows_left(packet: &Packet, at: &mut Cursor) -> usize {
    let records = match packet {
        Packet::FrameStart(_)
        | Packet::PlatformTime(_)
        | Packet::VisualTime(_)
        | Packet::PhysicsControlOpaque(_) => 1,
        Packet::EventAdd(v) => v.len(),
        Packet::PhysicsControl(v) => v.len(),
        Packet::WalkerBones(v) => {
            while v.get(at.rec).is_some_and(|w| at.sub >= w.bones.len()) {
                at.rec += 1;
                at.sub = 0;
            }
            v.len()
        }
        Packet::VehicleWheels(v) => {
            while v.get(at.rec).is_some_and(|w| at.sub >= w.wheels.len()) {
                at.rec += 1;
                at.sub = 0;
            }
            v.len()
        }
        // Fixed-size records are emitted from their bytes; the rest give no rows.
        _ => 0,
    };
    records.saturating_sub(at.rec)
}

/// Writes the next row of `packet` (stream `stream`, time `elapsed`, frame `frame`) to `row`
/// and moves `at` on. Returns false when the packet has no more rows. A stream `row` does
/// not want skips the packet's remaining rows.
pub(super) fn emit_next(
    packet: &Packet,
    at: &mut Cursor,
    (stream, elapsed, frame): (usize, f64, u64),
    scratch: &mut Scratch,
    row: &mut RowWriter<'_>,
) -> recfmt_core::Result<bool> {
    if rows_left(packet, at) == 0 {
        return Ok(false);
    }
    if !row.begin(stream)? {
        at.rec = usize::MAX;
        return Ok(true);
    }
    row.push(elapsed)?;
    row.push(frame)?;
    let (rec, sub) = (at.rec, at.sub);
    match packet {
        Packet::FrameStart(p) => row.push(p.duration_this)?,
        Packet::PlatformTime(t) | Packet::VisualTime(t) => row.push(*t)?,
        Packet::PhysicsControlOpaque(data) => row.push_bytes(data)?,
        Packet::EventAdd(v) => {
            if let Some(r) = v.get(rec) {
                emit_event_add(r, scratch, row)?;
            }
        }
        Packet::PhysicsControl(v) => {
            if let Some(r) = v.get(rec) {
                emit_physics(r, &mut scratch.floats, row)?;
            }
        }
        Packet::WalkerBones(v) => {
            if let Some((w, b)) = v.get(rec).and_then(|w| Some((w, w.bones.get(sub)?))) {
                row.push(w.database_id)?;
                row.push_str(&b.name.to_string_lossy())?;
                push_vector(row, &b.location)?;
                push_vector(row, &b.rotation)?;
            }
        }
        Packet::VehicleWheels(v) => {
            if let Some((w, wheel)) = v.get(rec).and_then(|w| Some((w, w.wheels.get(sub)?))) {
                row.push(w.database_id)?;
                row.push(wheel.location)?;
                row.push(wheel.steering_angle)?;
                row.push(wheel.tire_rotation)?;
            }
        }
        _ => {}
    }
    row.finish()?;
    match packet {
        Packet::WalkerBones(_) | Packet::VehicleWheels(_) => at.sub += 1,
        _ => at.rec += 1,
    }
    Ok(true)
}

/// The three components in the vector's own width (the schema's for the flavour).
fn push_vector(row: &mut RowWriter<'_>, v: &Vector3) -> recfmt_core::Result<()> {
    match v {
        Vector3::F32(a) => a.iter().try_for_each(|&x| row.push(x)),
        Vector3::F64(a) => a.iter().try_for_each(|&x| row.push(x)),
    }
}

fn emit_event_add(
    r: &EventAdd,
    scratch: &mut Scratch,
    row: &mut RowWriter<'_>,
) -> recfmt_core::Result<()> {
    row.push(r.database_id)?;
    row.push(r.actor_type)?;
    push_vector(row, &r.location)?;
    push_vector(row, &r.rotation)?;
    row.push(r.description.uid)?;
    row.push_str(&r.description.id.to_string_lossy())?;
    let text = &mut scratch.text;
    text.clear();
    for (k, a) in r.description.attributes.iter().enumerate() {
        if k > 0 {
            text.push_str("; ");
        }
        text.push_str(&a.id.to_string_lossy());
        text.push('=');
        text.push_str(&a.value.to_string_lossy());
    }
    row.push_str(text)
}

fn emit_physics(
    r: &PhysicsControl,
    floats: &mut Vec<f32>,
    row: &mut RowWriter<'_>,
) -> recfmt_core::Result<()> {
    let mut list = |row: &mut RowWriter<'_>, items: &mut dyn Iterator<Item = f32>| {
        floats.clear();
        floats.extend(items);
        row.push_slice(floats)
    };
    row.push(r.database_id)?;
    for x in [
        r.max_rpm,
        r.moi,
        r.damping_rate_full_throttle,
        r.damping_rate_zero_throttle_clutch_engaged,
        r.damping_rate_zero_throttle_clutch_disengaged,
    ] {
        row.push(x)?;
    }
    row.push(r.use_gear_autobox)?;
    for x in [r.clutch_strength, r.final_ratio, r.mass, r.drag_coefficient] {
        row.push(x)?;
    }
    for x in r.center_of_mass {
        row.push(x)?;
    }
    list(row, &mut r.torque_curve.iter().flatten().copied())?;
    list(
        row,
        &mut r
            .forward_gears
            .iter()
            .flat_map(|g| [g.ratio, g.down_ratio, g.up_ratio]),
    )?;
    list(row, &mut r.steering_curve.iter().flatten().copied())?;
    let w = &r.wheels;
    list(row, &mut w.iter().map(|w| w.tire_friction))?;
    list(row, &mut w.iter().map(|w| w.damping_rate))?;
    list(row, &mut w.iter().map(|w| w.max_steer_angle))?;
    list(row, &mut w.iter().map(|w| w.radius))?;
    list(row, &mut w.iter().map(|w| w.max_brake_torque))?;
    list(row, &mut w.iter().map(|w| w.max_handbrake_torque))?;
    for k in 0..3 {
        if w.iter().all(|w| w.stiffness.is_some()) {
            list(row, &mut w.iter().filter_map(|w| w.stiffness.map(|s| s[k])))?;
        } else {
            row.push_null()?;
        }
    }
    for k in 0..3 {
        list(row, &mut w.iter().map(|w| w.position[k]))?;
    }
    Ok(())
}
