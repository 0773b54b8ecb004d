//! Record layouts: the built-in table of the spec, and user-defined layouts read from JSON or
//! TOML so records this crate has never seen can be decoded without code.

use std::collections::BTreeMap;
use std::path::Path;

use recfmt_core::{ColumnBuf, ColumnData, DType, Shape, SignalDesc, Value};
use serde::Deserialize;

use crate::error::{Error, Result};

/// The element type of a field, as packed in the payload (little-endian, no alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A value of this dtype.
    Value(DType),
    /// `n` padding bytes (ignored when reading, written as zero).
    Pad(usize),
}

/// One field of a record payload.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldLayout {
    /// Field name (empty for padding).
    pub name: String,
    /// Element type.
    pub ty: FieldType,
    /// Elements per field (1 for scalars).
    pub count: usize,
    /// Physical unit.
    pub unit: Option<String>,
}

impl FieldLayout {
    /// Bytes the field occupies.
    pub fn size(&self) -> usize {
        match self.ty {
            FieldType::Pad(n) => n,
            FieldType::Value(d) => d.size().unwrap_or(0) * self.count,
        }
    }
}

/// A layout with every field's offset precomputed, for decoding a record in one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledLayout {
    /// Payload size in bytes.
    pub size: usize,
    /// `(offset, dtype, count)` of each value field, in order.
    fields: Vec<(usize, DType, usize)>,
}

impl CompiledLayout {
    /// Number of value fields.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// True when the layout has no value fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Decodes `payload` (at least [`CompiledLayout::size`] bytes) into `out`, one value per
    /// value field, reusing `out`'s allocations. Returns false when the payload is too short.
    #[inline]
    pub fn decode_into(&self, payload: &[u8], out: &mut [Value]) -> bool {
        if payload.len() < self.size || out.len() < self.fields.len() {
            return false;
        }
        for (&(offset, dtype, count), value) in self.fields.iter().zip(out.iter_mut()) {
            let width = dtype.size().unwrap_or(1);
            let bytes = &payload[offset..offset + width * count];
            if count == 1 {
                *value = decode_scalar(dtype, bytes);
            } else {
                decode_array(dtype, bytes, value);
            }
        }
        true
    }
}

impl CompiledLayout {
    /// True when `columns` (one per value field) have the types and shapes of the layout's
    /// signals, as [`CompiledLayout::decode_columns_unchecked`] needs.
    pub fn columns_match(&self, columns: &[ColumnBuf]) -> bool {
        columns.len() >= self.fields.len()
            && self
                .fields
                .iter()
                .zip(columns)
                .all(|(&(_, dtype, count), column)| {
                    column.dtype() == dtype && column.width() == Some(count)
                })
    }

    /// Appends the value fields of `payload` to `columns`, one column per value field: the
    /// batch path's counterpart of [`CompiledLayout::decode_into`], with no `Value` in
    /// between. Returns false, appending nothing, when the payload is too short or the
    /// columns do not match ([`CompiledLayout::columns_match`]).
    pub fn decode_columns(&self, payload: &[u8], columns: &mut [ColumnBuf]) -> bool {
        if !self.columns_match(columns) {
            return false;
        }
        self.decode_columns_unchecked(payload, columns)
    }

    /// [`CompiledLayout::decode_columns`] for columns already known to match: each field is
    /// appended to whatever column type it meets, so columns of another layout get the wrong
    /// number of elements (which [`recfmt_core::StreamBatch::check_consistent`] reports), never
    /// a panic.
    #[inline]
    pub fn decode_columns_unchecked(&self, payload: &[u8], columns: &mut [ColumnBuf]) -> bool {
        if payload.len() < self.size {
            return false;
        }
        for (&(offset, dtype, count), column) in self.fields.iter().zip(columns.iter_mut()) {
            if column.is_skipped() {
                continue;
            }
            let width = dtype.size().unwrap_or(1);
            let bytes = &payload[offset..offset + width * count];
            extend_column(column.data_mut(), bytes);
        }
        true
    }
}

/// Appends little-endian elements to a column of their type (one element: a plain push, the
/// common case of scalar fields).
#[inline]
fn extend_column(data: &mut ColumnData, bytes: &[u8]) {
    macro_rules! extend {
        ($v:expr, $t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            if bytes.len() == N {
                $v.push(<$t>::from_le_bytes(le(bytes)))
            } else {
                $v.extend(bytes.chunks_exact(N).map(|c| <$t>::from_le_bytes(le(c))))
            }
        }};
    }
    match data {
        ColumnData::Bool(v) => v.extend(bytes.iter().map(|&b| b != 0)),
        ColumnData::I8(v) => v.extend(bytes.iter().map(|&b| b as i8)),
        ColumnData::U8(v) => v.extend_from_slice(bytes),
        ColumnData::I16(v) => extend!(v, i16),
        ColumnData::I32(v) => extend!(v, i32),
        ColumnData::I64(v) => extend!(v, i64),
        ColumnData::U16(v) => extend!(v, u16),
        ColumnData::U32(v) => extend!(v, u32),
        ColumnData::U64(v) => extend!(v, u64),
        ColumnData::F32(v) => extend!(v, f32),
        ColumnData::F64(v) => extend!(v, f64),
        // Layouts hold numbers only.
        _ => {}
    }
}

/// How one record type's payload is laid out.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordLayout {
    /// Type id.
    pub type_id: u16,
    /// Record name (`REC_NAV_SOLUTION`, ...), also the stream name.
    pub name: String,
    /// Fields in payload order, padding included.
    pub fields: Vec<FieldLayout>,
}

impl RecordLayout {
    /// Payload size in bytes.
    pub fn size(&self) -> usize {
        self.fields.iter().map(FieldLayout::size).sum()
    }

    /// The non-padding fields.
    pub fn value_fields(&self) -> impl Iterator<Item = &FieldLayout> {
        self.fields
            .iter()
            .filter(|f| matches!(f.ty, FieldType::Value(_)))
    }

    /// Signal descriptions of the value fields (the time column is not included).
    pub fn signals(&self) -> Vec<SignalDesc> {
        self.value_fields()
            .map(|f| {
                let dtype = match f.ty {
                    FieldType::Value(d) => d,
                    FieldType::Pad(_) => DType::U8,
                };
                let mut s = SignalDesc::scalar(&f.name, dtype);
                if f.count != 1 {
                    s.shape = Shape::Fixed(vec![u32::try_from(f.count).unwrap_or(u32::MAX)]);
                }
                s.unit = f.unit.clone();
                s
            })
            .collect()
    }

    /// Precomputes field offsets (see [`CompiledLayout`]).
    pub fn compile(&self) -> CompiledLayout {
        let mut fields = Vec::new();
        let mut offset = 0;
        for f in &self.fields {
            if let FieldType::Value(dtype) = f.ty {
                fields.push((offset, dtype, f.count));
            }
            offset += f.size();
        }
        CompiledLayout {
            size: offset,
            fields,
        }
    }

    /// Decodes `payload` into `out` (one value per value field), reusing `out`'s allocations.
    /// `payload` must be at least [`RecordLayout::size`] bytes; extra bytes are ignored.
    pub fn decode_into(&self, payload: &[u8], out: &mut [Value]) -> bool {
        if payload.len() < self.size() {
            return false;
        }
        let mut pos = 0;
        let mut slot = 0;
        for field in &self.fields {
            let size = field.size();
            let bytes = &payload[pos..pos + size];
            pos += size;
            let FieldType::Value(dtype) = field.ty else {
                continue;
            };
            let Some(value) = out.get_mut(slot) else {
                return false;
            };
            slot += 1;
            if field.count == 1 {
                *value = decode_scalar(dtype, bytes);
            } else {
                decode_array(dtype, bytes, value);
            }
        }
        true
    }

    /// Encodes values (one per value field) into a payload, the inverse of `decode_into`.
    pub fn encode(&self, values: &[Value], out: &mut Vec<u8>) -> Result<()> {
        let mut values = values.iter();
        for field in &self.fields {
            let dtype = match field.ty {
                FieldType::Pad(n) => {
                    out.resize(out.len() + n, 0);
                    continue;
                }
                FieldType::Value(d) => d,
            };
            let value = values.next().unwrap_or(&Value::Null);
            let unwritable = || Error::Unwritable {
                what: format!(
                    "{value:?} as {} field {} of {}",
                    dtype, field.name, self.name
                ),
            };
            if field.count == 1 {
                encode_scalar(dtype, value, out).ok_or_else(unwritable)?;
            } else {
                let Value::Array(array) = value else {
                    return Err(unwritable());
                };
                if array.len() != field.count {
                    return Err(unwritable());
                }
                for i in 0..field.count {
                    let element = array_element(array, i);
                    encode_scalar(dtype, &element, out).ok_or_else(unwritable)?;
                }
            }
        }
        Ok(())
    }
}

fn array_element(array: &recfmt_core::ArrayValue, i: usize) -> Value {
    use recfmt_core::ArrayValue as A;
    match array {
        A::Bool(v) => v.get(i).map_or(Value::Null, |&b| Value::Bool(b)),
        A::Int(v) => v.get(i).map_or(Value::Null, |&x| Value::Int(x)),
        A::UInt(v) => v.get(i).map_or(Value::Null, |&x| Value::UInt(x)),
        A::F32(v) => v
            .get(i)
            .map_or(Value::Null, |&x| Value::Float(f64::from(x))),
        A::F64(v) => v.get(i).map_or(Value::Null, |&x| Value::Float(x)),
        _ => Value::Null,
    }
}

fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

#[inline]
fn decode_scalar(dtype: DType, b: &[u8]) -> Value {
    match dtype {
        DType::Bool => Value::Bool(b[0] != 0),
        DType::I8 => Value::Int(i64::from(b[0] as i8)),
        DType::I16 => Value::Int(i64::from(i16::from_le_bytes(le(b)))),
        DType::I32 => Value::Int(i64::from(i32::from_le_bytes(le(b)))),
        DType::I64 => Value::Int(i64::from_le_bytes(le(b))),
        DType::U8 => Value::UInt(u64::from(b[0])),
        DType::U16 => Value::UInt(u64::from(u16::from_le_bytes(le(b)))),
        DType::U32 => Value::UInt(u64::from(u32::from_le_bytes(le(b)))),
        DType::U64 => Value::UInt(u64::from_le_bytes(le(b))),
        DType::F32 => Value::Float(f64::from(f32::from_le_bytes(le(b)))),
        DType::F64 => Value::Float(f64::from_le_bytes(le(b))),
        _ => Value::Null,
    }
}

fn decode_array(dtype: DType, bytes: &[u8], out: &mut Value) {
    let width = dtype.size().unwrap_or(1).max(1);
    match dtype {
        DType::F32 => {
            let v = out.f32_array();
            v.extend(bytes.chunks_exact(4).map(|c| f32::from_le_bytes(le(c))));
        }
        DType::F64 => {
            let v = out.f64_array();
            v.extend(bytes.chunks_exact(8).map(|c| f64::from_le_bytes(le(c))));
        }
        _ => {
            let values = bytes.chunks_exact(width).map(|c| decode_scalar(dtype, c));
            *out = match dtype {
                DType::Bool => Value::Array(recfmt_core::ArrayValue::Bool(
                    values.map(|v| matches!(v, Value::Bool(true))).collect(),
                )),
                DType::I8 | DType::I16 | DType::I32 | DType::I64 => Value::Array(
                    recfmt_core::ArrayValue::Int(values.filter_map(|v| v.as_i64()).collect()),
                ),
                _ => Value::Array(recfmt_core::ArrayValue::UInt(
                    values.filter_map(|v| v.as_u64()).collect(),
                )),
            };
        }
    }
}

fn encode_scalar(dtype: DType, value: &Value, out: &mut Vec<u8>) -> Option<()> {
    match dtype {
        DType::Bool => out.push(u8::from(
            matches!(value, Value::Bool(true)) || value.as_u64()? != 0,
        )),
        DType::I8 => out.push(i8::try_from(value.as_i64()?).ok()? as u8),
        DType::I16 => out.extend(i16::try_from(value.as_i64()?).ok()?.to_le_bytes()),
        DType::I32 => out.extend(i32::try_from(value.as_i64()?).ok()?.to_le_bytes()),
        DType::I64 => out.extend(value.as_i64()?.to_le_bytes()),
        DType::U8 => out.push(u8::try_from(value.as_u64()?).ok()?),
        DType::U16 => out.extend(u16::try_from(value.as_u64()?).ok()?.to_le_bytes()),
        DType::U32 => out.extend(u32::try_from(value.as_u64()?).ok()?.to_le_bytes()),
        DType::U64 => out.extend(value.as_u64()?.to_le_bytes()),
        DType::F32 => out.extend((value.as_f64()? as f32).to_le_bytes()),
        DType::F64 => out.extend(value.as_f64()?.to_le_bytes()),
        _ => return None,
    }
    Some(())
}

/// `(name, dtype, unit)` of a built-in field; `None` name means padding of `unit.len()`... kept simple below.
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

/// One entry of `meta.json`'s `record_catalog`: the authority for id to name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CatalogEntry {
    /// Record name.
    pub name: String,
    /// Field names (types are not in the catalog).
    #[serde(default)]
    pub fields: Vec<String>,
}

/// The layouts in force for one session: which type id decodes how.
#[derive(Debug, Clone, Default)]
pub struct LayoutTable {
    by_id: BTreeMap<u16, RecordLayout>,
    /// Notes about decisions taken while resolving (catalog names without a layout, ...).
    pub notes: Vec<String>,
}

impl LayoutTable {
    /// Resolves layouts: `record_catalog` (when present) maps ids to names; a name's layout
    /// comes from the user layouts, then the built-in table. Without a catalog, user layouts
    /// win over built-in ones with the same id.
    pub fn resolve(
        catalog: Option<&BTreeMap<u16, CatalogEntry>>,
        user: &[RecordLayout],
    ) -> LayoutTable {
        let builtin = builtin_layouts();
        let mut table = LayoutTable::default();
        match catalog {
            Some(catalog) => {
                for (&id, entry) in catalog {
                    let known = user
                        .iter()
                        .find(|l| l.name == entry.name)
                        .or_else(|| builtin.iter().find(|l| l.name == entry.name))
                        .or_else(|| user.iter().find(|l| l.type_id == id));
                    let Some(known) = known else {
                        table.notes.push(format!(
                            "record_catalog names type {id} {:?}, which has no layout: kept as raw bytes",
                            entry.name
                        ));
                        continue;
                    };
                    let mut layout = known.clone();
                    layout.type_id = id;
                    layout.name.clone_from(&entry.name);
                    rename_fields(&mut layout, &entry.fields, &mut table.notes);
                    table.by_id.insert(id, layout);
                }
                // User layouts for ids the catalog does not mention still apply.
                for l in user {
                    table.by_id.entry(l.type_id).or_insert_with(|| l.clone());
                }
            }
            None => {
                for l in builtin.into_iter().chain(user.iter().cloned()) {
                    table.by_id.insert(l.type_id, l);
                }
            }
        }
        table
    }

    /// The layout of a type id.
    pub fn get(&self, type_id: u16) -> Option<&RecordLayout> {
        self.by_id.get(&type_id)
    }

    /// All layouts by ascending type id.
    pub fn layouts(&self) -> impl Iterator<Item = &RecordLayout> {
        self.by_id.values()
    }
}

/// Applies the catalog's field names when they match the layout's value fields one to one
/// (the 1f3c316 generator renamed `u_s_cmd` to `u_s_req` without changing types).
fn rename_fields(layout: &mut RecordLayout, names: &[String], notes: &mut Vec<String>) {
    let count = layout.value_fields().count();
    if names.is_empty() {
        return;
    }
    if names.len() != count {
        notes.push(format!(
            "record_catalog lists {} fields for {}, its layout has {count}: layout names kept",
            names.len(),
            layout.name
        ));
        return;
    }
    let mut names = names.iter();
    for f in layout
        .fields
        .iter_mut()
        .filter(|f| matches!(f.ty, FieldType::Value(_)))
    {
        if let Some(n) = names.next() {
            f.name.clone_from(n);
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFile {
    #[serde(alias = "records")]
    record: Vec<LayoutFileRecord>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFileRecord {
    #[serde(alias = "id")]
    type_id: u16,
    name: String,
    fields: Vec<LayoutFileField>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFileField {
    #[serde(default)]
    name: Option<String>,
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[serde(default)]
    pad: Option<usize>,
    #[serde(default)]
    count: Option<usize>,
    #[serde(default)]
    unit: Option<String>,
}

/// Parses user-defined record layouts from JSON or TOML text.
///
/// ```
/// let text = r#"
/// [[record]]
/// type_id = 42
/// name = "REC_BATTERY"
/// fields = [
///   { name = "voltage", type = "f32", unit = "V" },
///   { name = "cells", type = "u16", count = 4 },
///   { pad = 2 },
/// ]
/// "#;
/// let layouts = recfmt_tlv::parse_layouts(text, "battery.toml").unwrap();
/// assert_eq!(layouts[0].size(), 4 + 8 + 2);
/// ```
pub fn parse_layouts(text: &str, file_name: &str) -> Result<Vec<RecordLayout>> {
    let file: LayoutFile = if file_name.ends_with(".json") || text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| Error::Layout(format!("{file_name}: {e}").into()))?
    } else {
        toml::from_str(text).map_err(|e| Error::Layout(format!("{file_name}: {e}").into()))?
    };
    file.record
        .into_iter()
        .map(|r| {
            let fields = r
                .fields
                .into_iter()
                .enumerate()
                .map(|(i, f)| field_from_file(f, i, &r.name, file_name))
                .collect::<Result<Vec<_>>>()?;
            Ok(RecordLayout {
                type_id: r.type_id,
                name: r.name,
                fields,
            })
        })
        .collect()
}

fn field_from_file(
    f: LayoutFileField,
    index: usize,
    record: &str,
    file_name: &str,
) -> Result<FieldLayout> {
    let bad =
        |what: String| Error::Layout(format!("{file_name}: {record} field {index}: {what}").into());
    if let Some(pad) = f.pad {
        return Ok(FieldLayout {
            name: String::new(),
            ty: FieldType::Pad(pad),
            count: 1,
            unit: None,
        });
    }
    let name = f
        .name
        .ok_or_else(|| bad("needs a name (or pad = N)".into()))?;
    let ty_name = f.ty.ok_or_else(|| bad(format!("{name} needs a type")))?;
    let dtype = DType::parse(&ty_name)
        .filter(|d| d.size().is_some())
        .ok_or_else(|| {
            bad(format!(
                "{name}: type {ty_name:?} is not a fixed-size number or bool"
            ))
        })?;
    let count = f.count.unwrap_or(1);
    if count == 0 || count > 4096 {
        return Err(bad(format!("{name}: count {count} out of range 1..=4096")));
    }
    Ok(FieldLayout {
        name,
        ty: FieldType::Value(dtype),
        count,
        unit: f.unit,
    })
}

/// Reads a layout file from disk.
pub fn read_layout_file(path: &Path) -> Result<Vec<RecordLayout>> {
    let text = std::fs::read_to_string(path)?;
    parse_layouts(&text, &path.display().to_string())
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

    #[test]
    fn mission_state_decodes_mixed_fields() {
        #[rustfmt::skip]
        let payload = [
            7, 0,          // idx = 7
            1, 0,          // active = 1, done = 0
            0, 0, 0, 0,    // pad
            0, 0, 128, 63, // x0 = 1.0
            0, 0, 0, 64,   // y0 = 2.0
            0, 0, 64, 64,  // x1 = 3.0
            0, 0, 128, 64, // y1 = 4.0
            0, 0, 160, 64, // v_seg = 5.0
            0, 0, 192, 64, // d_wp = 6.0
        ];
        let layout = builtin_layouts()
            .into_iter()
            .find(|l| l.type_id == 6)
            .unwrap();
        let mut values = vec![Value::Null; layout.value_fields().count()];
        assert!(layout.decode_into(&payload, &mut values));
        assert_eq!(values[0], Value::UInt(7));
        assert_eq!(values[1], Value::UInt(1));
        assert_eq!(values[8], Value::Float(6.0));
        let mut encoded = Vec::new();
        layout.encode(&values, &mut encoded).unwrap();
        assert_eq!(encoded, payload);
    }

    #[test]
    fn catalog_renames_and_renumbers() {
        let mut catalog = BTreeMap::new();
        catalog.insert(
            3,
            CatalogEntry {
                name: "REC_ACTUATOR_CMD".into(),
                fields: vec![],
            },
        );
        catalog.insert(
            8,
            CatalogEntry {
                name: "REC_SPEED_CTRL_DEBUG".into(),
                fields: [
                    "v_d", "v_hat", "e_v", "u_s_raw", "u_s_cmd", "i_v", "sat_u_s",
                ]
                .map(String::from)
                .to_vec(),
            },
        );
        catalog.insert(
            99,
            CatalogEntry {
                name: "REC_MYSTERY".into(),
                fields: vec![],
            },
        );
        let table = LayoutTable::resolve(Some(&catalog), &[]);
        assert_eq!(table.get(3).unwrap().size(), 8);
        let speed = table.get(8).unwrap();
        assert_eq!(speed.value_fields().nth(4).unwrap().name, "u_s_cmd");
        assert!(table.get(99).is_none());
        assert!(table.get(1).is_none(), "the catalog is the authority");
        assert_eq!(table.notes.len(), 1);
    }

    #[test]
    fn layout_files_in_json_and_toml_agree() {
        let json = r#"{"record": [{"type_id": 42, "name": "REC_X", "fields": [
            {"name": "a", "type": "i16"}, {"pad": 2}, {"name": "b", "type": "float64", "count": 2}]}]}"#;
        let toml = "[[record]]\ntype_id = 42\nname = \"REC_X\"\nfields = [{name = \"a\", type = \"i16\"}, {pad = 2}, {name = \"b\", type = \"float64\", count = 2}]\n";
        let a = parse_layouts(json, "x.json").unwrap();
        let b = parse_layouts(toml, "x.toml").unwrap();
        assert_eq!(a, b);
        assert_eq!(a[0].size(), 2 + 2 + 16);
        let err = parse_layouts(
            "[[record]]\ntype_id = 1\nname = \"R\"\nfields = [{name = \"s\", type = \"str\"}]",
            "bad.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("bad.toml") && err.contains("not a fixed-size"),
            "{err}"
        );
    }
}
