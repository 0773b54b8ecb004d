//! Rows and column batches of one stream to Arrow record batches.

use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, FixedSizeListArray, ListArray, PrimitiveArray,
    RecordBatch, RecordBatchOptions, StringArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, SchemaRef};
use recfmt_core::{ColumnBuf, ColumnData, FrameBuf, Header, Metadata, StreamBatch, StreamDesc};

use crate::Error;
use crate::mapping::arrow_schema_with;

/// Builds Arrow [`RecordBatch`]es for one stream from rows ([`FrameBuf`]s).
///
/// The batch schema is [`crate::arrow_schema()`] of the stream. Values are converted exactly:
/// an `f32` signal becomes a `Float32` column, integers are range-checked against the column
/// type, and a value that does not fit is an [`Error::Value`] naming stream, signal and value.
/// A row that fails is not added at all, so the rows pushed before it stay consistent.
///
/// Rows are gathered in a [`StreamBatch`] of native-typed vectors, the same buffers the batch
/// read path ([`recfmt_core::RecordingReader::read_batches`]) fills, and handed to Arrow
/// without a copy.
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
    desc: StreamDesc,
    schema: SchemaRef,
    rows: StreamBatch,
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
        StreamBatcher {
            schema: Arc::new(arrow_schema_with(header, stream, extra)),
            rows: StreamBatch::new(0, &stream.signals, capacity),
            desc: stream.clone(),
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
        self.rows.rows()
    }

    /// True when no row is waiting.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// True when [`StreamBatcher::capacity`] rows are waiting and the batch should be finished.
    pub fn is_full(&self) -> bool {
        self.rows.rows() >= self.capacity
    }

    /// Appends one row. `frame.values` must hold one value per signal of the stream;
    /// `frame.stream` is not looked at.
    ///
    /// On error nothing of the row is kept.
    pub fn push(&mut self, frame: &FrameBuf) -> Result<(), Error> {
        if frame.values.len() != self.desc.signals.len() {
            return Err(Error::Invalid(format!(
                "stream {:?}: a row has {} values but the stream has {} signals",
                self.desc.name,
                frame.values.len(),
                self.desc.signals.len()
            )));
        }
        self.rows
            .push_values(&frame.values)
            .map_err(|e| Error::Value {
                stream: self.desc.name.clone(),
                signal: self
                    .desc
                    .signals
                    .get(e.signal)
                    .map_or_else(String::new, |s| s.name.clone()),
                message: e.message,
            })
    }

    /// Turns the waiting rows into a batch (possibly empty) and starts the next one.
    pub fn finish_batch(&mut self) -> Result<RecordBatch, Error> {
        let fresh = StreamBatch::new(0, &self.desc.signals, self.capacity);
        let rows = std::mem::replace(&mut self.rows, fresh);
        record_batch(&self.schema, rows)
    }
}

/// The Arrow record batch of a [`StreamBatch`] whose stream has the Arrow schema `schema`
/// ([`crate::arrow_schema()`] of the stream, possibly with other metadata).
///
/// The column vectors become Arrow buffers without a copy (booleans are packed into bits).
/// Fails when the batch does not match the schema.
///
/// ```
/// use std::sync::Arc;
/// use recfmt_core::{DType, Header, SignalDesc, StreamBatch, StreamDesc, TimeBase, Value};
/// let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
/// nav.signals.push(SignalDesc::scalar("x", DType::F32));
/// let schema = Arc::new(recfmt_export::arrow_schema(&Header::default(), &nav));
///
/// let mut batch = StreamBatch::new(0, &nav.signals, 16);
/// batch.push_values(&[Value::UInt(5), Value::Float(1.5)])?;
/// let arrow = recfmt_export::record_batch(&schema, batch)?;
/// assert_eq!(arrow.num_rows(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn record_batch(schema: &SchemaRef, batch: StreamBatch) -> Result<RecordBatch, Error> {
    if batch.columns().len() != schema.fields().len() {
        return Err(Error::Invalid(format!(
            "a batch of {} columns does not match a schema of {} fields",
            batch.columns().len(),
            schema.fields().len()
        )));
    }
    batch.check_consistent().map_err(|e| {
        Error::Invalid(format!(
            "column {:?}: {}",
            schema.field(e.signal).name(),
            e.message
        ))
    })?;
    let rows = batch.rows();
    let arrays = batch
        .into_columns()
        .into_iter()
        .zip(schema.fields())
        .map(|(column, field)| column_array(column, field.data_type(), rows))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::arrow(None, e))?;
    RecordBatch::try_new_with_options(
        schema.clone(),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| Error::arrow(None, e))
}

/// One column as an Arrow array of type `data_type`.
fn column_array(
    column: ColumnBuf,
    data_type: &DataType,
    rows: usize,
) -> Result<ArrayRef, ArrowError> {
    let width = column.width();
    let (data, validity, list_offsets) = column.into_parts();
    let nulls = validity.map(NullBuffer::from);
    match data_type {
        DataType::FixedSizeList(item, size) => {
            let values = elements_array(data, None)?;
            Ok(Arc::new(FixedSizeListArray::try_new_with_length(
                item.clone(),
                *size,
                values,
                nulls,
                rows,
            )?))
        }
        DataType::List(item) => {
            let offsets = match (list_offsets, width) {
                (Some(o), _) => o,
                (None, Some(n)) => {
                    let n = i32::try_from(n).map_err(|_| {
                        ArrowError::InvalidArgumentError("list elements overflow i32".into())
                    })?;
                    (0..=rows)
                        .map(|r| i32::try_from(r).ok().and_then(|r| r.checked_mul(n)))
                        .collect::<Option<Vec<i32>>>()
                        .ok_or_else(|| {
                            ArrowError::InvalidArgumentError("list elements overflow i32".into())
                        })?
                }
                (None, None) => vec![0; rows + 1],
            };
            let values = elements_array(data, None)?;
            Ok(Arc::new(ListArray::try_new(
                item.clone(),
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                values,
                nulls,
            )?))
        }
        _ => elements_array(data, nulls),
    }
}

/// The elements of a column as a flat Arrow array, with `nulls` for scalar columns.
fn elements_array(data: ColumnData, nulls: Option<NullBuffer>) -> Result<ArrayRef, ArrowError> {
    fn primitive<T: arrow_array::types::ArrowPrimitiveType>(
        values: Vec<T::Native>,
        nulls: Option<NullBuffer>,
    ) -> Result<ArrayRef, ArrowError> {
        Ok(Arc::new(PrimitiveArray::<T>::try_new(
            ScalarBuffer::from(values),
            nulls,
        )?))
    }
    match data {
        ColumnData::Bool(v) => Ok(Arc::new(BooleanArray::new(
            BooleanBuffer::from_iter(v),
            nulls,
        ))),
        ColumnData::I8(v) => primitive::<Int8Type>(v, nulls),
        ColumnData::I16(v) => primitive::<Int16Type>(v, nulls),
        ColumnData::I32(v) => primitive::<Int32Type>(v, nulls),
        ColumnData::I64(v) => primitive::<Int64Type>(v, nulls),
        ColumnData::U8(v) => primitive::<UInt8Type>(v, nulls),
        ColumnData::U16(v) => primitive::<UInt16Type>(v, nulls),
        ColumnData::U32(v) => primitive::<UInt32Type>(v, nulls),
        ColumnData::U64(v) => primitive::<UInt64Type>(v, nulls),
        ColumnData::F32(v) => primitive::<Float32Type>(v, nulls),
        ColumnData::F64(v) => primitive::<Float64Type>(v, nulls),
        ColumnData::Str(t) => {
            let (offsets, bytes) = t.into_parts();
            Ok(Arc::new(StringArray::try_new(
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                Buffer::from_vec(bytes),
                nulls,
            )?))
        }
        ColumnData::Bytes(t) => {
            let (offsets, bytes) = t.into_parts();
            Ok(Arc::new(BinaryArray::try_new(
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                Buffer::from_vec(bytes),
                nulls,
            )?))
        }
        _ => Err(ArrowError::NotYetImplemented(
            "a column type this build of recfmt-export does not know".into(),
        )),
    }
}
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, UInt8Type};
    use recfmt_core::{ArrayValue, DType, Shape, SignalDesc, TimeBase, Value};

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
