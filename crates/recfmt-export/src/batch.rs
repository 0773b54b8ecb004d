//! Rows of one stream to Arrow record batches.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder, Int8Builder, Int16Builder,
    Int32Builder, Int64Builder, PrimitiveBuilder, StringBuilder, UInt8Builder, UInt16Builder,
    UInt32Builder, UInt64Builder,
};
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{ArrayRef, FixedSizeListArray, ListArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, FieldRef, SchemaRef};
use recfmt_core::{ArrayValue, DType, FrameBuf, Header, Metadata, StreamDesc, Value};

use crate::Error;
use crate::mapping::arrow_schema_with;

/// Most rows a builder reserves room for up front; it grows beyond that as rows arrive, so a
/// recording with many small streams does not preallocate a full batch for each.
const MAX_PREALLOCATED_ROWS: usize = 4096;

/// Builds Arrow [`RecordBatch`]es for one stream from rows ([`FrameBuf`]s).
///
/// The batch schema is [`crate::arrow_schema()`] of the stream. Values are converted exactly:
/// an `f32` signal becomes a `Float32` column, integers are range-checked against the column
/// type, and a value that does not fit is an [`Error::Value`] naming stream, signal and value.
/// A row that fails is not added at all, so the rows pushed before it stay consistent.
///
/// ```
/// use recfmt_core::{DType, FrameBuf, Header, SignalDesc, StreamDesc, TimeBase, Value};
/// use recfmt_export::StreamBatcher;
/// let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
/// nav.signals.push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
///
/// let mut batcher = StreamBatcher::new(&Header::default(), &nav, 1024);
/// let mut row = FrameBuf::default();
/// row.reset(0, 2);
/// row.values[0] = Value::UInt(1_000);
/// row.values[1] = Value::Float(0.5);
/// batcher.push(&row)?;
/// row.values[1] = Value::Null;
/// batcher.push(&row)?;
///
/// let batch = batcher.finish_batch()?;
/// assert_eq!(batch.num_rows(), 2);
/// assert_eq!(batch.column(1).data_type(), &arrow_schema::DataType::Float32);
/// assert_eq!(batch.column(1).null_count(), 1);
/// assert!(batcher.is_empty());
/// # Ok::<(), recfmt_export::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamBatcher {
    stream: String,
    schema: SchemaRef,
    columns: Vec<Column>,
    rows: usize,
    capacity: usize,
}

impl StreamBatcher {
    /// A batcher for `stream`, whose batches are meant to hold `capacity` rows
    /// (see [`StreamBatcher::is_full`]).
    pub fn new(header: &Header, stream: &StreamDesc, capacity: usize) -> Self {
        Self::with_metadata(header, stream, capacity, &Metadata::new())
    }

    /// Like [`StreamBatcher::new`], with `extra` entries added to (and overriding) the schema
    /// metadata, e.g. `source.file`.
    pub fn with_metadata(
        header: &Header,
        stream: &StreamDesc,
        capacity: usize,
        extra: &Metadata,
    ) -> Self {
        let capacity = capacity.max(1);
        let schema = Arc::new(arrow_schema_with(header, stream, extra));
        let reserve = capacity.min(MAX_PREALLOCATED_ROWS);
        let columns = stream
            .signals
            .iter()
            .zip(schema.fields())
            .map(|(signal, field)| {
                Column::new(&signal.name, signal.dtype, field.data_type(), reserve)
            })
            .collect();
        StreamBatcher {
            stream: stream.name.clone(),
            schema,
            columns,
            rows: 0,
            capacity,
        }
    }

    /// The schema of the batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows per batch this batcher was made for (at least 1).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Rows pushed since the last [`StreamBatcher::finish_batch`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when no row is waiting.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// True when [`StreamBatcher::capacity`] rows are waiting and the batch should be finished.
    pub fn is_full(&self) -> bool {
        self.rows >= self.capacity
    }

    /// Appends one row. `frame.values` must hold one value per signal of the stream;
    /// `frame.stream` is not looked at.
    ///
    /// On error nothing of the row is kept.
    pub fn push(&mut self, frame: &FrameBuf) -> Result<(), Error> {
        if frame.values.len() != self.columns.len() {
            return Err(Error::Invalid(format!(
                "stream {:?}: a row has {} values but the stream has {} signals",
                self.stream,
                frame.values.len(),
                self.columns.len()
            )));
        }
        // Check every value first, so that a failure cannot leave the columns with different
        // lengths.
        for (column, value) in self.columns.iter_mut().zip(&frame.values) {
            column.put(value, false).map_err(|message| Error::Value {
                stream: self.stream.clone(),
                signal: column.name.clone(),
                message,
            })?;
        }
        for (column, value) in self.columns.iter_mut().zip(&frame.values) {
            column.put(value, true).map_err(|message| Error::Value {
                stream: self.stream.clone(),
                signal: column.name.clone(),
                message,
            })?;
        }
        self.rows += 1;
        Ok(())
    }

    /// Turns the waiting rows into a batch (possibly empty) and starts the next one.
    pub fn finish_batch(&mut self) -> Result<RecordBatch, Error> {
        let rows = std::mem::take(&mut self.rows);
        let arrays = self
            .columns
            .iter_mut()
            .map(|c| c.finish(rows))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::arrow(None, e))?;
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| Error::arrow(None, e))
    }
}

/// How one column nests its elements.
#[derive(Debug)]
enum Kind {
    Scalar,
    Fixed {
        size: usize,
        item: FieldRef,
        nulls: NullBufferBuilder,
    },
    List {
        item: FieldRef,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
    },
}

#[derive(Debug)]
struct Column {
    name: String,
    dtype: DType,
    elements: Elements,
    kind: Kind,
}

impl Column {
    fn new(name: &str, dtype: DType, data_type: &DataType, reserve: usize) -> Self {
        let (kind, per_row) = match data_type {
            DataType::FixedSizeList(item, size) => {
                let size = usize::try_from(*size).unwrap_or(0);
                (
                    Kind::Fixed {
                        size,
                        item: item.clone(),
                        nulls: NullBufferBuilder::new(reserve),
                    },
                    size,
                )
            }
            DataType::List(item) => {
                let mut offsets = Vec::with_capacity(reserve + 1);
                offsets.push(0);
                (
                    Kind::List {
                        item: item.clone(),
                        offsets,
                        nulls: NullBufferBuilder::new(reserve),
                    },
                    1,
                )
            }
            _ => (Kind::Scalar, 1),
        };
        let reserve = reserve
            .saturating_mul(per_row)
            .min(MAX_PREALLOCATED_ROWS * 16);
        Column {
            name: name.to_owned(),
            dtype,
            elements: Elements::new(dtype, reserve),
            kind,
        }
    }

    /// Checks (`write == false`) or appends (`write == true`) one value.
    fn put(&mut self, value: &Value, write: bool) -> Result<(), String> {
        let dtype = self.dtype;
        match &mut self.kind {
            Kind::Scalar => match value {
                Value::Array(a) => Err(format!(
                    "an array of {} elements cannot be stored in a scalar {dtype} column",
                    a.len()
                )),
                v => self.elements.put_scalar(v, dtype, write),
            },
            Kind::Fixed { size, nulls, .. } => match value {
                Value::Null => {
                    if write {
                        self.elements.put_nulls(*size);
                        nulls.append_null();
                    }
                    Ok(())
                }
                Value::Array(a) if a.len() != *size => Err(format!(
                    "an array of {} elements does not match the fixed shape of {size} elements",
                    a.len()
                )),
                Value::Array(a) => {
                    self.elements.put_array(a, dtype, write)?;
                    if write {
                        nulls.append_non_null();
                    }
                    Ok(())
                }
                v => Err(format!(
                    "{} cannot be stored in a column of {size}-element {dtype} arrays",
                    describe(v)
                )),
            },
            Kind::List { offsets, nulls, .. } => {
                let last = offsets.last().copied().unwrap_or(0);
                match value {
                    Value::Null => {
                        if write {
                            offsets.push(last);
                            nulls.append_null();
                        }
                        Ok(())
                    }
                    Value::Array(a) => {
                        let end = i32::try_from(a.len())
                            .ok()
                            .and_then(|n| last.checked_add(n))
                            .ok_or_else(|| {
                                format!(
                                    "more than {} list elements in one batch; use smaller batches",
                                    i32::MAX
                                )
                            })?;
                        self.elements.put_array(a, dtype, write)?;
                        if write {
                            offsets.push(end);
                            nulls.append_non_null();
                        }
                        Ok(())
                    }
                    v => Err(format!(
                        "{} cannot be stored in a column of variable-length {dtype} lists",
                        describe(v)
                    )),
                }
            }
        }
    }

    /// The column of the waiting `rows` rows; starts the next batch.
    fn finish(&mut self, rows: usize) -> Result<ArrayRef, ArrowError> {
        let values = self.elements.finish();
        Ok(match &mut self.kind {
            Kind::Scalar => values,
            Kind::Fixed { size, item, nulls } => {
                let size = i32::try_from(*size).map_err(|_| {
                    ArrowError::InvalidArgumentError("fixed size list too long".into())
                })?;
                Arc::new(FixedSizeListArray::try_new_with_length(
                    item.clone(),
                    size,
                    values,
                    nulls.finish(),
                    rows,
                )?)
            }
            Kind::List {
                item,
                offsets,
                nulls,
            } => {
                let taken = std::mem::replace(offsets, vec![0]);
                let offsets = OffsetBuffer::new(ScalarBuffer::from(taken));
                Arc::new(ListArray::try_new(
                    item.clone(),
                    offsets,
                    values,
                    nulls.finish(),
                )?)
            }
        })
    }
}

/// A short description of a value for error messages.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Int(i) => format!("integer {i}"),
        Value::UInt(u) => format!("integer {u}"),
        Value::Float(f) => format!("float {f:?}"),
        Value::Str(s) if s.chars().count() > 40 => {
            let head: String = s.chars().take(40).collect();
            format!("text {head:?}...")
        }
        Value::Str(s) => format!("text {s:?}"),
        Value::Bytes(b) => format!("{} bytes", b.len()),
        Value::Array(a) => format!("an array of {} elements", a.len()),
        other => format!("{other:?}"),
    }
}

fn mismatch(value: &Value, dtype: DType) -> String {
    format!("{} cannot be stored in a {dtype} column", describe(value))
}

fn array_mismatch(array: &ArrayValue, dtype: DType) -> String {
    let kind = match array {
        ArrayValue::Bool(_) => "boolean",
        ArrayValue::Int(_) | ArrayValue::UInt(_) => "integer",
        ArrayValue::F32(_) => "f32",
        ArrayValue::F64(_) => "f64",
        _ => "unknown",
    };
    format!("a {kind} array cannot be stored in a {dtype} column")
}

fn out_of_range(value: impl std::fmt::Display, dtype: DType) -> String {
    format!("value {value} does not fit in {dtype}")
}

/// Float element types and their exact conversions.
trait FloatNative: Copy {
    fn from_f64(v: f64) -> Self;
    fn from_f32(v: f32) -> Self;
    fn from_i64_exact(v: i64) -> Option<Self>;
    fn from_u64_exact(v: u64) -> Option<Self>;
}

impl FloatNative for f32 {
    fn from_f64(v: f64) -> Self {
        // Readers widen f32 signals to f64 without loss, so this narrowing is exact.
        v as f32
    }
    fn from_f32(v: f32) -> Self {
        v
    }
    fn from_i64_exact(v: i64) -> Option<Self> {
        let f = v as f32;
        (f as i128 == i128::from(v)).then_some(f)
    }
    fn from_u64_exact(v: u64) -> Option<Self> {
        let f = v as f32;
        (f as u128 == u128::from(v)).then_some(f)
    }
}

impl FloatNative for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn from_f32(v: f32) -> Self {
        f64::from(v)
    }
    fn from_i64_exact(v: i64) -> Option<Self> {
        let f = v as f64;
        (f as i128 == i128::from(v)).then_some(f)
    }
    fn from_u64_exact(v: u64) -> Option<Self> {
        let f = v as f64;
        (f as u128 == u128::from(v)).then_some(f)
    }
}

fn put_int<T>(
    b: &mut PrimitiveBuilder<T>,
    value: &Value,
    dtype: DType,
    write: bool,
) -> Result<(), String>
where
    T: ArrowPrimitiveType,
    T::Native: TryFrom<i64> + TryFrom<u64>,
{
    let x = match *value {
        Value::Null => {
            if write {
                b.append_null();
            }
            return Ok(());
        }
        Value::Int(i) => T::Native::try_from(i).map_err(|_| out_of_range(i, dtype))?,
        Value::UInt(u) => T::Native::try_from(u).map_err(|_| out_of_range(u, dtype))?,
        ref v => return Err(mismatch(v, dtype)),
    };
    if write {
        b.append_value(x);
    }
    Ok(())
}

fn put_int_array<T>(
    b: &mut PrimitiveBuilder<T>,
    array: &ArrayValue,
    dtype: DType,
    write: bool,
) -> Result<(), String>
where
    T: ArrowPrimitiveType,
    T::Native: TryFrom<i64> + TryFrom<u64>,
{
    match array {
        ArrayValue::Int(v) => {
            for &i in v {
                let x = T::Native::try_from(i).map_err(|_| out_of_range(i, dtype))?;
                if write {
                    b.append_value(x);
                }
            }
        }
        ArrayValue::UInt(v) => {
            for &u in v {
                let x = T::Native::try_from(u).map_err(|_| out_of_range(u, dtype))?;
                if write {
                    b.append_value(x);
                }
            }
        }
        a => return Err(array_mismatch(a, dtype)),
    }
    Ok(())
}

fn put_float<T>(
    b: &mut PrimitiveBuilder<T>,
    value: &Value,
    dtype: DType,
    write: bool,
) -> Result<(), String>
where
    T: ArrowPrimitiveType,
    T::Native: FloatNative,
{
    let x = match *value {
        Value::Null => {
            if write {
                b.append_null();
            }
            return Ok(());
        }
        Value::Float(f) => T::Native::from_f64(f),
        Value::Int(i) => T::Native::from_i64_exact(i)
            .ok_or_else(|| format!("integer {i} is not exactly representable as {dtype}"))?,
        Value::UInt(u) => T::Native::from_u64_exact(u)
            .ok_or_else(|| format!("integer {u} is not exactly representable as {dtype}"))?,
        ref v => return Err(mismatch(v, dtype)),
    };
    if write {
        b.append_value(x);
    }
    Ok(())
}

fn put_float_array<T>(
    b: &mut PrimitiveBuilder<T>,
    array: &ArrayValue,
    dtype: DType,
    write: bool,
) -> Result<(), String>
where
    T: ArrowPrimitiveType,
    T::Native: FloatNative,
{
    match array {
        ArrayValue::F32(v) => {
            if write {
                b.extend(v.iter().map(|&f| Some(T::Native::from_f32(f))));
            }
        }
        ArrayValue::F64(v) => {
            if write {
                b.extend(v.iter().map(|&f| Some(T::Native::from_f64(f))));
            }
        }
        ArrayValue::Int(v) => {
            for &i in v {
                let x = T::Native::from_i64_exact(i).ok_or_else(|| {
                    format!("integer {i} is not exactly representable as {dtype}")
                })?;
                if write {
                    b.append_value(x);
                }
            }
        }
        ArrayValue::UInt(v) => {
            for &u in v {
                let x = T::Native::from_u64_exact(u).ok_or_else(|| {
                    format!("integer {u} is not exactly representable as {dtype}")
                })?;
                if write {
                    b.append_value(x);
                }
            }
        }
        a => return Err(array_mismatch(a, dtype)),
    }
    Ok(())
}

/// The builder of a column's elements (the whole column for scalars, the list child otherwise).
#[derive(Debug)]
enum Elements {
    Bool(BooleanBuilder),
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F32(Float32Builder),
    F64(Float64Builder),
    Str(StringBuilder),
    Bytes(BinaryBuilder),
}

/// Calls `$body` with `$b` bound to the builder of whichever variant `$e` is.
macro_rules! each_builder {
    ($e:expr, $b:ident => $body:expr) => {
        match $e {
            Elements::Bool($b) => $body,
            Elements::I8($b) => $body,
            Elements::I16($b) => $body,
            Elements::I32($b) => $body,
            Elements::I64($b) => $body,
            Elements::U8($b) => $body,
            Elements::U16($b) => $body,
            Elements::U32($b) => $body,
            Elements::U64($b) => $body,
            Elements::F32($b) => $body,
            Elements::F64($b) => $body,
            Elements::Str($b) => $body,
            Elements::Bytes($b) => $body,
        }
    };
}

impl Elements {
    fn new(dtype: DType, n: usize) -> Self {
        match dtype {
            DType::Bool => Elements::Bool(BooleanBuilder::with_capacity(n)),
            DType::I8 => Elements::I8(Int8Builder::with_capacity(n)),
            DType::I16 => Elements::I16(Int16Builder::with_capacity(n)),
            DType::I32 => Elements::I32(Int32Builder::with_capacity(n)),
            DType::I64 => Elements::I64(Int64Builder::with_capacity(n)),
            DType::U8 => Elements::U8(UInt8Builder::with_capacity(n)),
            DType::U16 => Elements::U16(UInt16Builder::with_capacity(n)),
            DType::U32 => Elements::U32(UInt32Builder::with_capacity(n)),
            DType::U64 => Elements::U64(UInt64Builder::with_capacity(n)),
            DType::F32 => Elements::F32(Float32Builder::with_capacity(n)),
            DType::F64 => Elements::F64(Float64Builder::with_capacity(n)),
            DType::Str => Elements::Str(StringBuilder::with_capacity(n, n * 8)),
            // Bytes, and any dtype added to recfmt-core later (declared `Binary` by
            // `arrow_type`).
            _ => Elements::Bytes(BinaryBuilder::with_capacity(n, n * 8)),
        }
    }

    fn put_scalar(&mut self, value: &Value, dtype: DType, write: bool) -> Result<(), String> {
        match self {
            Elements::Bool(b) => match value {
                Value::Null => {
                    if write {
                        b.append_null();
                    }
                    Ok(())
                }
                Value::Bool(x) => {
                    if write {
                        b.append_value(*x);
                    }
                    Ok(())
                }
                v => Err(mismatch(v, dtype)),
            },
            Elements::I8(b) => put_int(b, value, dtype, write),
            Elements::I16(b) => put_int(b, value, dtype, write),
            Elements::I32(b) => put_int(b, value, dtype, write),
            Elements::I64(b) => put_int(b, value, dtype, write),
            Elements::U8(b) => put_int(b, value, dtype, write),
            Elements::U16(b) => put_int(b, value, dtype, write),
            Elements::U32(b) => put_int(b, value, dtype, write),
            Elements::U64(b) => put_int(b, value, dtype, write),
            Elements::F32(b) => put_float(b, value, dtype, write),
            Elements::F64(b) => put_float(b, value, dtype, write),
            Elements::Str(b) => match value {
                Value::Null => {
                    if write {
                        b.append_null();
                    }
                    Ok(())
                }
                Value::Str(s) => {
                    if write {
                        b.append_value(s);
                    }
                    Ok(())
                }
                v => Err(mismatch(v, dtype)),
            },
            Elements::Bytes(b) => match value {
                Value::Null => {
                    if write {
                        b.append_null();
                    }
                    Ok(())
                }
                Value::Bytes(x) => {
                    if write {
                        b.append_value(x);
                    }
                    Ok(())
                }
                Value::Str(s) => {
                    if write {
                        b.append_value(s.as_bytes());
                    }
                    Ok(())
                }
                v => Err(mismatch(v, dtype)),
            },
        }
    }

    fn put_array(&mut self, array: &ArrayValue, dtype: DType, write: bool) -> Result<(), String> {
        match self {
            Elements::Bool(b) => match array {
                ArrayValue::Bool(v) => {
                    if write {
                        b.append_slice(v);
                    }
                    Ok(())
                }
                a => Err(array_mismatch(a, dtype)),
            },
            Elements::I8(b) => put_int_array(b, array, dtype, write),
            Elements::I16(b) => put_int_array(b, array, dtype, write),
            Elements::I32(b) => put_int_array(b, array, dtype, write),
            Elements::I64(b) => put_int_array(b, array, dtype, write),
            Elements::U8(b) => put_int_array(b, array, dtype, write),
            Elements::U16(b) => put_int_array(b, array, dtype, write),
            Elements::U32(b) => put_int_array(b, array, dtype, write),
            Elements::U64(b) => put_int_array(b, array, dtype, write),
            Elements::F32(b) => put_float_array(b, array, dtype, write),
            Elements::F64(b) => put_float_array(b, array, dtype, write),
            Elements::Str(_) | Elements::Bytes(_) => Err(array_mismatch(array, dtype)),
        }
    }

    fn put_nulls(&mut self, n: usize) {
        each_builder!(self, b => b.append_nulls(n));
    }

    fn finish(&mut self) -> ArrayRef {
        each_builder!(self, b => Arc::new(b.finish()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, UInt8Type};
    use recfmt_core::{Shape, SignalDesc, TimeBase};

    fn stream() -> StreamDesc {
        let mut s = StreamDesc::new(
            "S",
            SignalDesc::scalar("t", DType::U64),
            TimeBase::MICROSECONDS,
        );
        s.signals.push(SignalDesc::scalar("b", DType::U8));
        s.signals
            .push(SignalDesc::scalar("v", DType::F32).with_shape(Shape::Fixed(vec![2])));
        s.signals
            .push(SignalDesc::scalar("l", DType::I16).with_shape(Shape::Variable));
        s
    }

    fn row(values: Vec<Value>) -> FrameBuf {
        FrameBuf { stream: 0, values }
    }

    #[test]
    fn out_of_range_integer_names_stream_signal_and_value() {
        let mut b = StreamBatcher::new(&Header::default(), &stream(), 8);
        let err = b
            .push(&row(vec![
                Value::UInt(1),
                Value::Int(300),
                Value::Null,
                Value::Null,
            ]))
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("\"S\"") && text.contains("\"b\"") && text.contains("300"),
            "{text}"
        );
        // The failed row left nothing behind.
        assert_eq!(b.len(), 0);
        b.push(&row(vec![
            Value::UInt(1),
            Value::Int(255),
            Value::Array(ArrayValue::F64(vec![0.1f32 as f64, 2.0])),
            Value::Array(ArrayValue::Int(vec![-1, 2, 3])),
        ]))
        .unwrap();
        let batch = b.finish_batch().unwrap();
        assert_eq!(batch.num_rows(), 1);
        assert_eq!(batch.column(1).as_primitive::<UInt8Type>().value(0), 255);
        let v = batch.column(2).as_fixed_size_list();
        assert_eq!(
            v.values().as_primitive::<Float32Type>().values().to_vec(),
            vec![0.1f32, 2.0]
        );
        let l = batch.column(3).as_list::<i32>();
        assert_eq!(l.value_length(0), 3);
    }

    #[test]
    fn mismatched_values_are_rejected() {
        let mut b = StreamBatcher::new(&Header::default(), &stream(), 8);
        // Wrong array length for the fixed shape.
        assert!(
            b.push(&row(vec![
                Value::UInt(1),
                Value::Null,
                Value::Array(ArrayValue::F32(vec![1.0])),
                Value::Null,
            ]))
            .is_err()
        );
        // A scalar where an array is expected.
        assert!(
            b.push(&row(vec![
                Value::UInt(1),
                Value::Null,
                Value::Float(1.0),
                Value::Null
            ]))
            .is_err()
        );
        // A negative time for a u64 column.
        assert!(
            b.push(&row(vec![
                Value::Int(-1),
                Value::Null,
                Value::Null,
                Value::Null
            ]))
            .is_err()
        );
        // Too few values.
        assert!(b.push(&row(vec![Value::UInt(1)])).is_err());
        assert!(b.is_empty());
    }

    #[test]
    fn zero_column_streams_keep_their_row_count() {
        let mut s = stream();
        s.signals.clear();
        let mut b = StreamBatcher::new(&Header::default(), &s, 8);
        b.push(&row(vec![])).unwrap();
        b.push(&row(vec![])).unwrap();
        assert_eq!(b.finish_batch().unwrap().num_rows(), 2);
    }
}
