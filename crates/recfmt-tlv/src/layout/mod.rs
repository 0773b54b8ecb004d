//! Record layouts: each record type is declared once, as a table of fields (the built-in
//! table of the spec, or a user layout read from JSON or TOML), and everything else follows
//! from that table: the stream's signals and units ([`RecordLayout::signals`]), the decoding
//! of payloads into rows ([`CompiledLayout::write_columns`], the one decode path of both the
//! row and the column views), and the encoding of a row into a payload
//! ([`RecordLayout::encode`]).

mod builtin;
mod file;
mod table;

pub use builtin::builtin_layouts;
pub use file::{parse_layouts, read_layout_file};
pub use table::{CatalogEntry, LayoutTable};

use recfmt_core::{DType, FrameBuf, RowWriter, Shape, SignalDesc, Value};

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

/// A layout with every value field's offset precomputed, for decoding a record in one pass.
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

    /// True when every value field is a number or bool, or a fixed-size array of them, so
    /// that records of this layout can be decoded as runs, column by column
    /// ([`CompiledLayout::write_columns`]).
    pub fn is_columnar(&self) -> bool {
        self.fields
            .iter()
            .all(|&(_, dtype, count)| count >= 1 && dtype.size().is_some())
    }

    /// Pushes the value fields of `rows` records to `row` (a run begun with
    /// [`RowWriter::begin_rows`] for `rows` rows), column by column: `payloads` holds the
    /// records' payloads back to back, each [`CompiledLayout::size`] bytes. Each field is
    /// decoded in its own type; a field a projection left out is skipped, not decoded. The
    /// one decode of a record layout: the row view (a run of one), the column view and
    /// USVLOG's decoding threads all come here; an array field fills a fixed-shape column
    /// (`count` elements per row). Fails when `payloads` is shorter than `rows`
    /// payloads.
    pub fn write_columns(
        &self,
        payloads: &[u8],
        rows: usize,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()> {
        let needed = rows.saturating_mul(self.size);
        let Some(payloads) = payloads.get(..needed) else {
            return Err(recfmt_core::Error::invalid(format!(
                "{} payload bytes for {rows} records of a {}-byte layout",
                payloads.len(),
                self.size
            )));
        };
        let stride = self.size.max(1);
        self.write_fields(|| payloads.chunks_exact(stride).take(rows), rows, row)
    }

    /// [`CompiledLayout::write_columns`] for payloads where they lie among other bytes: the
    /// payload of row `i` starts at byte `starts[i]` of `bytes` (a USVLOG block of whole
    /// records, which the decoding threads so read without first copying each stream's
    /// payloads together). Fails when fewer than `rows` starts are given or a payload would
    /// end past `bytes`.
    pub(crate) fn write_columns_at(
        &self,
        bytes: &[u8],
        starts: &[u32],
        rows: usize,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()> {
        let starts = starts.get(..rows).unwrap_or_default();
        let fits = |&s: &u32| (s as usize).saturating_add(self.size) <= bytes.len();
        if starts.len() < rows || !starts.iter().all(fits) {
            return Err(recfmt_core::Error::invalid(format!(
                "{rows} records of a {}-byte layout do not lie within {} bytes",
                self.size,
                bytes.len()
            )));
        }
        self.write_fields(|| starts.iter().map(|&s| &bytes[s as usize..]), rows, row)
    }

    /// Pushes every value field of the `rows` payloads `payloads` gives (each at least
    /// [`CompiledLayout::size`] bytes, checked by the caller), column by column.
    #[inline]
    fn write_fields<'a, I>(
        &self,
        payloads: impl Fn() -> I,
        rows: usize,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()>
    where
        I: ExactSizeIterator<Item = &'a [u8]>,
    {
        for &(offset, dtype, count) in &self.fields {
            if !row.wants_next() {
                row.skip()?;
            } else if count == 1 {
                push_scalars(dtype, payloads(), offset, rows, row)?;
            } else if rows == 1 {
                let width = dtype.size().unwrap_or(1);
                let first = payloads().next().unwrap_or_default();
                let array = first
                    .get(offset..offset + width * count)
                    .unwrap_or_default();
                push_array(dtype, array, row)?;
            } else {
                push_arrays(dtype, payloads(), offset, count, rows, row)?;
            }
        }
        Ok(())
    }
}

/// Pushes the array field of `count` elements at `offset` of the `rows` payloads
/// `payloads` gives, as one fixed-shape column of a run.
#[inline]
fn push_arrays<'a>(
    dtype: DType,
    payloads: impl Iterator<Item = &'a [u8]>,
    offset: usize,
    count: usize,
    rows: usize,
    row: &mut RowWriter<'_>,
) -> recfmt_core::Result<()> {
    macro_rules! column {
        ($t:ty, $from:expr) => {{
            const N: usize = std::mem::size_of::<$t>();
            // Decoded row by row into a vector first: a flattened iterator has no exact
            // length, so the column would take it element by element (measured: 5 % of a
            // read of every stream of the bench session, in `Take::next` alone).
            let mut elements = Vec::with_capacity(rows.saturating_mul(count));
            for payload in payloads {
                let array = &payload[offset..offset + N * count];
                elements.extend(array.chunks_exact(N).map(|bytes| $from(le::<N>(bytes))));
            }
            row.push_array_column(elements, count)
        }};
    }
    match dtype {
        DType::Bool => column!(u8, |b: [u8; 1]| b[0] != 0),
        DType::I8 => column!(i8, i8::from_le_bytes),
        DType::I16 => column!(i16, i16::from_le_bytes),
        DType::I32 => column!(i32, i32::from_le_bytes),
        DType::I64 => column!(i64, i64::from_le_bytes),
        DType::U8 => column!(u8, u8::from_le_bytes),
        DType::U16 => column!(u16, u16::from_le_bytes),
        DType::U32 => column!(u32, u32::from_le_bytes),
        DType::U64 => column!(u64, u64::from_le_bytes),
        DType::F32 => column!(f32, f32::from_le_bytes),
        DType::F64 => column!(f64, f64::from_le_bytes),
        // Layouts hold fixed-size numbers and bools only (checked when they are read).
        _ => Err(recfmt_core::Error::invalid(format!(
            "a {dtype} array field decoded for a run of {rows} rows"
        ))),
    }
}

/// Pushes the field at `offset` of the `rows` payloads `payloads` gives, as one column of a
/// run.
#[inline]
fn push_scalars<'a>(
    dtype: DType,
    payloads: impl ExactSizeIterator<Item = &'a [u8]>,
    offset: usize,
    rows: usize,
    row: &mut RowWriter<'_>,
) -> recfmt_core::Result<()> {
    macro_rules! column {
        ($t:ty, $from:expr) => {{
            const N: usize = std::mem::size_of::<$t>();
            row.push_column(payloads.map(|payload| $from(le::<N>(&payload[offset..]))))
        }};
    }
    match dtype {
        DType::Bool => column!(u8, |b: [u8; 1]| b[0] != 0),
        DType::I8 => column!(i8, i8::from_le_bytes),
        DType::I16 => column!(i16, i16::from_le_bytes),
        DType::I32 => column!(i32, i32::from_le_bytes),
        DType::I64 => column!(i64, i64::from_le_bytes),
        DType::U8 => column!(u8, u8::from_le_bytes),
        DType::U16 => column!(u16, u16::from_le_bytes),
        DType::U32 => column!(u32, u32::from_le_bytes),
        DType::U64 => column!(u64, u64::from_le_bytes),
        DType::F32 => column!(f32, f32::from_le_bytes),
        DType::F64 => column!(f64, f64::from_le_bytes),
        // Layouts hold fixed-size numbers and bools only (checked when they are read).
        _ if rows == 1 => row.push_null(),
        _ => Err(recfmt_core::Error::invalid(format!(
            "a {dtype} field decoded for a run of {rows} rows"
        ))),
    }
}

/// Pushes a fixed-length array of little-endian elements of `dtype`.
fn push_array(dtype: DType, bytes: &[u8], row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
    /// Arrays of up to this many elements are decoded on the stack, not into a `Vec` per row.
    const ON_STACK: usize = 16;
    macro_rules! array {
        ($t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            let count = bytes.len() / N;
            if count <= ON_STACK {
                let mut items = [<$t>::default(); ON_STACK];
                for (item, c) in items.iter_mut().zip(bytes.chunks_exact(N)) {
                    *item = <$t>::from_le_bytes(le(c));
                }
                row.push_slice(&items[..count])
            } else {
                let items: Vec<$t> = bytes
                    .chunks_exact(N)
                    .map(|c| <$t>::from_le_bytes(le(c)))
                    .collect();
                row.push_slice(&items)
            }
        }};
    }
    match dtype {
        DType::Bool => row.push_slice(&bytes.iter().map(|&b| b != 0).collect::<Vec<_>>()),
        DType::I8 => row.push_slice(&bytes.iter().map(|&b| b as i8).collect::<Vec<_>>()),
        DType::U8 => row.push_slice(bytes),
        DType::I16 => array!(i16),
        DType::I32 => array!(i32),
        DType::I64 => array!(i64),
        DType::U16 => array!(u16),
        DType::U32 => array!(u32),
        DType::U64 => array!(u64),
        DType::F32 => array!(f32),
        DType::F64 => array!(f64),
        _ => row.push_null(),
    }
}

fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[..N]);
    out
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

    /// Decodes `payload` into `out` (one value per value field), through the same decoding as
    /// the reader ([`CompiledLayout::write_columns`]). `payload` must be at least
    /// [`RecordLayout::size`] bytes (extra bytes are ignored) and `out` must have a slot per
    /// value field; false otherwise.
    pub fn decode_into(&self, payload: &[u8], out: &mut [Value]) -> bool {
        let compiled = self.compile();
        if payload.len() < compiled.size || out.len() < compiled.len() {
            return false;
        }
        let mut frame = FrameBuf::default();
        let mut row = RowWriter::frame(&mut frame);
        let written = row
            .begin_rows(0, 1)
            .and_then(|_| compiled.write_columns(payload, 1, &mut row));
        if written.and_then(|()| row.finish()).is_err() {
            return false;
        }
        drop(row);
        for (slot, value) in out.iter_mut().zip(frame.values) {
            *slot = value;
        }
        true
    }

    /// Encodes values (one per value field) into a payload, the inverse of the decoding.
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn arrays_decode_and_encode_through_the_same_table() {
        let text = "[[record]]\ntype_id = 42\nname = \"REC_X\"\nfields = [{name = \"a\", type = \"i16\", count = 2}, {pad = 1}, {name = \"f\", type = \"bool\", count = 3}, {name = \"d\", type = \"f64\"}]\n";
        let layout = parse_layouts(text, "x.toml").unwrap().remove(0);
        let mut payload = Vec::new();
        payload.extend((-2i16).to_le_bytes());
        payload.extend(7i16.to_le_bytes());
        payload.extend([0, 1, 0, 1]);
        payload.extend(2.5f64.to_le_bytes());
        let mut values = vec![Value::Null; 3];
        assert!(layout.decode_into(&payload, &mut values));
        assert_eq!(
            values[0],
            Value::Array(recfmt_core::ArrayValue::Int(vec![-2, 7]))
        );
        assert_eq!(
            values[1],
            Value::Array(recfmt_core::ArrayValue::Bool(vec![true, false, true]))
        );
        assert_eq!(values[2], Value::Float(2.5));
        let mut encoded = Vec::new();
        layout.encode(&values, &mut encoded).unwrap();
        assert_eq!(encoded, payload);
        assert!(!layout.decode_into(&payload[..5], &mut values));
    }
}
