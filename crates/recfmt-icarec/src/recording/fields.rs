//! The ICAREC record layout, declared once: one [`Field`] per expanded column of a block
//! (a frame's payload or the static block), built from the schema's [`Layout`]. The reader's
//! columns and its row emission, the `int32` slot checks, and the writer's encoding all come
//! from it.

use recfmt_core::{DType, RowWriter, SignalDesc, Value};

use crate::schema::{Column, Layout, Lifecycle, Schema};
use crate::types::{SignalType, f64_at, i64_at};

/// How one column's value sits in its 8-byte slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldKind {
    /// IEEE f64 (a `double`, or one element of a `Vec3`/`Quat`/`Mat3`).
    F64,
    /// i64.
    I64,
    /// i32 sign-extended to i64.
    I32,
    /// i64, non-zero is true.
    Bool,
}

impl FieldKind {
    /// The kind of a column of type `ty` (each element of a composite is an f64).
    pub(crate) fn of(ty: &SignalType) -> FieldKind {
        match ty {
            SignalType::Int64 => FieldKind::I64,
            SignalType::Int32 => FieldKind::I32,
            SignalType::Bool => FieldKind::Bool,
            _ => FieldKind::F64,
        }
    }

    /// The column type the reader gives this kind.
    pub(crate) fn dtype(self) -> DType {
        match self {
            FieldKind::F64 => DType::F64,
            FieldKind::I64 => DType::I64,
            FieldKind::I32 => DType::I32,
            FieldKind::Bool => DType::Bool,
        }
    }

    /// The kind the writer stores a column of type `dtype` as, with its ICAREC type.
    pub(crate) fn for_dtype(dtype: DType) -> Option<(SignalType, FieldKind)> {
        Some(match dtype {
            DType::F32 | DType::F64 => (SignalType::Double, FieldKind::F64),
            DType::I64 | DType::U32 | DType::U64 => (SignalType::Int64, FieldKind::I64),
            DType::I8 | DType::I16 | DType::I32 | DType::U8 | DType::U16 => {
                (SignalType::Int32, FieldKind::I32)
            }
            DType::Bool => (SignalType::Bool, FieldKind::Bool),
            _ => return None,
        })
    }

    /// Decodes the slot at `at` of `bytes` and pushes it as the row's next value.
    #[inline]
    fn push(self, bytes: &[u8], at: usize, row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
        match self {
            FieldKind::F64 => row.push(f64_at(bytes, at)),
            FieldKind::I64 => row.push(i64_at(bytes, at)),
            FieldKind::I32 => row.push(i64_at(bytes, at) as i32),
            FieldKind::Bool => row.push(i64_at(bytes, at) != 0),
        }
    }

    /// Pushes the value of a slot outside the block: zero, as the row path always gave.
    fn push_zero(self, row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
        match self {
            FieldKind::F64 => row.push(0.0f64),
            FieldKind::I64 => row.push(0i64),
            FieldKind::I32 => row.push(0i32),
            FieldKind::Bool => row.push(false),
        }
    }

    /// Encodes `value` into an 8-byte slot; a null double is NaN. The error says what was
    /// expected.
    pub(crate) fn encode(self, value: &Value, slot: &mut [u8]) -> Result<(), &'static str> {
        let bytes = match self {
            FieldKind::F64 => {
                let v = if matches!(value, Value::Null) {
                    f64::NAN
                } else {
                    value.as_f64().ok_or("expected a number")?
                };
                v.to_le_bytes()
            }
            FieldKind::I64 => value
                .as_i64()
                .ok_or("expected an integer that fits int64")?
                .to_le_bytes(),
            FieldKind::I32 => {
                let v = value
                    .as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or("expected an integer that fits int32")?;
                i64::from(v).to_le_bytes()
            }
            FieldKind::Bool => {
                let v = match value {
                    Value::Bool(b) => *b,
                    other => other
                        .as_f64()
                        .map(|f| f != 0.0)
                        .ok_or("expected a boolean")?,
                };
                i64::from(v).to_le_bytes()
            }
        };
        slot.copy_from_slice(&bytes);
        Ok(())
    }
}

/// One expanded column of a block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    pub(crate) kind: FieldKind,
    /// Byte offset of the column's 8 bytes in the block, or `None` when the slot lies outside
    /// it (the value is then zero).
    pub(crate) at: Option<usize>,
}

/// The fields of one block (the dynamic payload or the static block), in column order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields {
    fields: Vec<Field>,
    /// The columns, parallel to `fields` (names, and the signals they belong to).
    columns: Vec<Column>,
}

impl Fields {
    /// The fields of the `lifecycle` block of `layout`.
    pub(crate) fn new(layout: &Layout, lifecycle: Lifecycle) -> Fields {
        let (columns, size) = match lifecycle {
            Lifecycle::Dynamic => (&layout.dynamic_columns, layout.dynamic_size),
            Lifecycle::Static => (&layout.static_columns, layout.static_size),
        };
        let fields = columns
            .iter()
            .map(|c| {
                let p = &layout.placed[c.signal];
                // Mirrors `Placed::slot`: an out-of-range slot or element reads as 0.
                let element = c.element.checked_mul(8);
                let in_slot = element
                    .and_then(|e| e.checked_add(8))
                    .is_some_and(|e| e <= p.size);
                let in_block = p.offset.checked_add(p.size).is_some_and(|e| e <= size);
                let at = element
                    .and_then(|e| p.offset.checked_add(e))
                    .filter(|_| in_slot && in_block);
                Field {
                    kind: FieldKind::of(&p.ty),
                    at,
                }
            })
            .collect();
        Fields {
            fields,
            columns: columns.clone(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The columns of the block, as the generic schema describes them.
    pub(crate) fn signals<'a>(
        &'a self,
        schema: &'a Schema,
    ) -> impl Iterator<Item = SignalDesc> + 'a {
        self.columns
            .iter()
            .zip(&self.fields)
            .map(|(c, f)| column_desc(schema, c, f.kind))
    }

    /// The column of field `i`.
    pub(crate) fn column(&self, i: usize) -> &Column {
        &self.columns[i]
    }

    /// The `int32` fields whose slot is inside the block (checked for irregular upper bytes).
    pub(crate) fn int32_fields(&self) -> impl Iterator<Item = usize> + '_ {
        self.fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind == FieldKind::I32 && f.at.is_some())
            .map(|(i, _)| i)
    }

    /// True when the `int32` slot of field `i` in `block` is irregular: its upper four bytes
    /// are neither its sign extension nor zero (as [`SignalType::decode`] decides).
    pub(crate) fn irregular(&self, i: usize, block: &[u8]) -> bool {
        let Some(at) = self.fields[i].at else {
            return false;
        };
        let slot = i64_at(block, at);
        let low = slot as i32;
        let high = (slot >> 32) as i32;
        let sign = if low < 0 { -1 } else { 0 };
        high != sign && high != 0
    }

    /// Byte offset of field `i` in its block.
    pub(crate) fn offset(&self, i: usize) -> usize {
        self.fields[i].at.unwrap_or(0)
    }

    /// Pushes every field of `block` as the row's next values, in column order. A column a
    /// projection left out is pushed too: a push into it stores nothing, and decoding an
    /// 8-byte slot costs less than asking [`RowWriter::wants_next`] first (which would double
    /// the calls per value of a full read).
    #[inline]
    pub(crate) fn emit(&self, block: &[u8], row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
        for field in &self.fields {
            match field.at {
                Some(at) => field.kind.push(block, at, row)?,
                None => field.kind.push_zero(row)?,
            }
        }
        Ok(())
    }
}

/// The generic description of one column: its name, type and unit, and the metadata the
/// writer uses to rebuild composite signals.
fn column_desc(schema: &Schema, column: &Column, kind: FieldKind) -> SignalDesc {
    let p = &schema.layout().placed[column.signal];
    let spec = schema.spec(p);
    let mut desc = SignalDesc::scalar(column.name.clone(), kind.dtype());
    if let Some(u) = spec.units.as_deref().filter(|u| !u.is_empty()) {
        desc = desc.with_unit(u);
    }
    let m = &mut desc.metadata;
    m.insert("lifecycle".into(), spec.lifecycle.name().into());
    m.insert("icarec.type".into(), spec.type_name.clone());
    if p.ty.is_composite() {
        m.insert("icarec.signal".into(), spec.name.clone());
        m.insert(
            "icarec.element".into(),
            p.ty.components()[column.element].into(),
        );
    }
    if let Some(s) = &spec.semantic {
        m.insert("semantic".into(), s.clone());
    }
    if let Some(e) = &spec.enum_values {
        m.insert("enum_values".into(), e.to_string());
    }
    if let Some(d) = &spec.description {
        m.insert("description".into(), d.clone());
    }
    desc
}
