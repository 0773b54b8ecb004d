//! The built-in record table of the spec (type ids 1 to 13): each layout declared once, as
//! data, from which the schema, the decoding and the encoding all follow.

use recfmt_core::DType;

use super::{FieldLayout, FieldType, RecordLayout};

/// `(name, dtype, unit)` of a built-in field; padding is named `""` with dtype `padN`.
type BuiltinField = (&'static str, &'static str, Option<&'static str>);

/// The built-in record table of usv-autopilot (type ids as of commit `5d4644d`).
/// Padding is spelled `("", "padN", None)`.
const BUILTIN: &[(u16, &str, &[BuiltinField])] = &[
    (
        1,
        "REC_NAV_SOLUTION",
        &[
            ("x", "f32", Some("m")),
            ("y", "f32", Some("m")),
            ("psi", "f32", Some("rad")),
            ("v", "f32", Some("m/s")),
            ("r", "f32", Some("rad/s")),
            ("b_g", "f32", Some("rad/s")),
        ],
    ),
    (
        2,
        "REC_GUIDANCE_REF",
        &[
            ("psi_d", "f32", Some("rad")),
            ("v_d", "f32", Some("m/s")),
            ("e_y", "f32", Some("m")),
            ("e_psi", "f32", Some("rad")),
        ],
    ),
    (
        3,
        "REC_ACTUATOR_REQ",
        &[
            ("u_s_req", "f32", Some("1")),
            ("u_d_req", "f32", Some("1")),
            ("src", "u8", None),
            ("", "pad3", None),
        ],
    ),
    (
        4,
        "REC_ACTUATOR_CMD",
        &[("u_s_cmd", "f32", Some("1")), ("u_d_cmd", "f32", Some("1"))],
    ),
    (
        5,
        "REC_ESC_OUTPUT",
        &[("u_L", "f32", Some("1")), ("u_R", "f32", Some("1"))],
    ),
    (
        6,
        "REC_MISSION_STATE",
        &[
            ("idx", "u16", None),
            ("active", "u8", None),
            ("done", "u8", None),
            ("", "pad4", None),
            ("x0", "f32", Some("m")),
            ("y0", "f32", Some("m")),
            ("x1", "f32", Some("m")),
            ("y1", "f32", Some("m")),
            ("v_seg", "f32", Some("m/s")),
            ("d_wp", "f32", Some("m")),
        ],
    ),
    (
        7,
        "REC_MIXER_FEEDBACK",
        &[
            ("u_s_ach", "f32", Some("1")),
            ("u_d_ach", "f32", Some("1")),
            ("sat_L", "u8", None),
            ("sat_R", "u8", None),
            ("sat_any", "u8", None),
            ("", "pad5", None),
            ("u_L_ach", "f32", Some("1")),
            ("u_R_ach", "f32", Some("1")),
        ],
    ),
    (
        8,
        "REC_SPEED_SCHED_DEBUG",
        &[
            ("v_seg", "f32", Some("m/s")),
            ("v_cap", "f32", Some("m/s")),
            ("v_d", "f32", Some("m/s")),
            ("e_psi", "f32", Some("rad")),
            ("d_wp", "f32", Some("m")),
            ("dv", "f32", Some("m/s")),
            ("cap_wp", "u8", None),
            ("cap_psi", "u8", None),
            ("", "pad2", None),
        ],
    ),
    (
        9,
        "REC_SPEED_CTRL_DEBUG",
        &[
            ("v_d", "f32", Some("m/s")),
            ("v_hat", "f32", Some("m/s")),
            ("e_v", "f32", Some("m/s")),
            ("u_s_raw", "f32", Some("1")),
            ("u_s_req", "f32", Some("1")),
            ("i_v", "f32", Some("m")),
            ("sat_u_s", "u8", None),
            ("", "pad3", None),
        ],
    ),
    (
        10,
        "REC_YAW_CTRL_DEBUG",
        &[
            ("psi_d", "f32", Some("rad")),
            ("psi", "f32", Some("rad")),
            ("e_psi", "f32", Some("rad")),
            ("r_d", "f32", Some("rad/s")),
            ("r", "f32", Some("rad/s")),
            ("e_r", "f32", Some("rad/s")),
            ("u_d_req", "f32", Some("1")),
            ("sat_u_d", "u8", None),
            ("", "pad3", None),
        ],
    ),
    (
        11,
        "REC_EKF_DIAG",
        &[
            ("P_xx", "f32", Some("m^2")),
            ("P_yy", "f32", Some("m^2")),
            ("P_psi", "f32", Some("rad^2")),
            ("P_v", "f32", Some("m^2/s^2")),
            ("P_r", "f32", Some("rad^2/s^2")),
            ("P_bg", "f32", Some("rad^2/s^2")),
            ("status_flags", "u32", None),
        ],
    ),
    (
        12,
        "REC_SENSOR_GNSS",
        &[
            ("x", "f32", Some("m")),
            ("y", "f32", Some("m")),
            ("cog", "f32", Some("rad")),
            ("sog", "f32", Some("m/s")),
            ("valid", "u8", None),
            ("", "pad3", None),
        ],
    ),
    (
        13,
        "REC_SENSOR_GYRO",
        &[
            ("z_gyro", "f32", Some("rad/s")),
            ("b_g_est", "f32", Some("rad/s")),
            ("valid", "u8", None),
            ("", "pad3", None),
        ],
    ),
];

fn builtin_field(&(name, ty, unit): &BuiltinField) -> FieldLayout {
    let ty = match ty.strip_prefix("pad") {
        Some(n) => FieldType::Pad(n.parse().unwrap_or(0)),
        None => FieldType::Value(DType::parse(ty).unwrap_or(DType::U8)),
    };
    FieldLayout {
        name: name.to_string(),
        ty,
        count: 1,
        unit: unit.map(str::to_string),
    }
}

/// The built-in layouts of the spec's table (type ids 1 to 13).
///
/// ```
/// let table = recfmt_tlv::builtin_layouts();
/// let nav = &table[0];
/// assert_eq!((nav.type_id, nav.name.as_str(), nav.size()), (1, "REC_NAV_SOLUTION", 24));
/// assert_eq!(table.iter().find(|l| l.type_id == 6).unwrap().size(), 32);
/// ```
pub fn builtin_layouts() -> Vec<RecordLayout> {
    BUILTIN
        .iter()
        .map(|(id, name, fields)| RecordLayout {
            type_id: *id,
            name: (*name).to_string(),
            fields: fields.iter().map(builtin_field).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_sizes_match_the_spec_table() {
        let expected = [
            (1, 24),
            (2, 16),
            (3, 12),
            (4, 8),
            (5, 8),
            (6, 32),
            (7, 24),
            (8, 28),
            (9, 28),
            (10, 32),
            (11, 28),
            (12, 20),
            (13, 12),
        ];
        let table = builtin_layouts();
        assert_eq!(table.len(), expected.len());
        for (id, size) in expected {
            let l = table.iter().find(|l| l.type_id == id).unwrap();
            assert_eq!(l.size(), size, "{}", l.name);
        }
    }
}
