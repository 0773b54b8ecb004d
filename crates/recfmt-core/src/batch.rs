//! Columns of many rows: the batch read path.
//!
//! [`crate::RecordingReader::read_frame`] hands out one row at a time as [`Value`]s, which is
//! simple but costs a dispatch per value. The batch path fills typed column buffers instead: a
//! [`BatchSet`] holds one [`StreamBatch`] per stream, each a [`ColumnBuf`] per signal backed by
//! a plain `Vec` of the signal's native type (`Vec<f32>` for an `f32` signal). Fixed-layout
//! readers decode straight into those vectors; every other reader gets the default
//! [`crate::RecordingReader::read_batches`], which pushes its rows through the same checks the
//! row path applies. The vectors can be handed to Arrow without a copy.
//!
//! ```
//! use recfmt_core::{BatchSet, ColumnData, DType, Schema, SignalDesc, StreamDesc, TimeBase, Value};
//! let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
//! nav.signals.push(SignalDesc::scalar("x", DType::F32));
//! let schema = Schema { streams: vec![nav] };
//!
//! let mut batches = BatchSet::new(&schema, 2);
//! let nav = batches.stream_mut(0);
//! nav.push_values(&[Value::UInt(0), Value::Float(0.5)])?;
//! nav.push_values(&[Value::UInt(10), Value::Null])?;
//! assert!(batches.is_full());
//!
//! let batch = batches.take(0);
//! assert_eq!(batch.rows(), 2);
//! assert_eq!(batch.columns()[1].data(), &ColumnData::F32(vec![0.5, 0.0]));
//! assert_eq!(batch.columns()[1].validity(), Some(&[true, false][..]));
//! assert_eq!(batches.stream(0).rows(), 0);
//! # Ok::<(), recfmt_core::BatchValueError>(())
//! ```

use std::fmt;

use crate::{ArrayValue, DType, Error, FrameBuf, Result, Schema, Shape, SignalDesc, Value};

/// Most rows a fresh column reserves room for; it grows past that as rows arrive, so a
/// recording with many small streams does not reserve a full batch for each.
const MAX_PREALLOCATED_ROWS: usize = 4096;

/// Variable-size elements (text or bytes): `offsets[i]..offsets[i + 1]` of `data` is element
/// `i`. Offsets are `i32`, as Arrow's `Utf8` and `Binary` arrays want them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VarBytes {
    offsets: Vec<i32>,
    data: Vec<u8>,
}

impl VarBytes {
    fn with_capacity(elements: usize) -> Self {
        let mut offsets = Vec::with_capacity(elements + 1);
        offsets.push(0);
        VarBytes {
            offsets,
            data: Vec::with_capacity(elements * 8),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element offsets into [`VarBytes::data`]: one more than there are elements, from 0.
    pub fn offsets(&self) -> &[i32] {
        &self.offsets
    }

    /// The bytes of all elements, back to back.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let start = usize::try_from(*self.offsets.get(i)?).ok()?;
        let end = usize::try_from(*self.offsets.get(i + 1)?).ok()?;
        self.data.get(start..end)
    }

    /// Offsets and data, for handing to Arrow without a copy.
    pub fn into_parts(self) -> (Vec<i32>, Vec<u8>) {
        (self.offsets, self.data)
    }

    /// Checks that `extra` more bytes still fit the `i32` offsets.
    fn check_room(&self, extra: usize) -> std::result::Result<(), String> {
        let end = self.data.len().checked_add(extra);
        if end.is_some_and(|e| i32::try_from(e).is_ok()) {
            Ok(())
        } else {
            Err(format!(
                "more than {} bytes of text or bytes in one batch; use smaller batches",
                i32::MAX
            ))
        }
    }

    /// Keeps the first `n` elements.
    fn truncate(&mut self, n: usize) {
        self.offsets.truncate(n + 1);
        let end = self
            .offsets
            .last()
            .map_or(0, |&e| usize::try_from(e).unwrap_or(0));
        self.data.truncate(end);
    }

    /// Appends one element. Callers check the room first ([`ColumnBuf::push_str`] does).
    fn push(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
        self.offsets
            .push(i32::try_from(self.data.len()).unwrap_or(i32::MAX));
    }
}

/// The elements of one column, in the signal's native type.
///
/// For a scalar signal there is one element per row; for a fixed shape of `n` elements, `n`
/// per row, row-major; for a variable shape, as many as [`ColumnBuf::list_offsets`] says.
/// A null row still takes its elements (zeros, or an empty text) so positions stay aligned.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ColumnData {
    /// Booleans.
    Bool(Vec<bool>),
    /// `i8` elements.
    I8(Vec<i8>),
    /// `i16` elements.
    I16(Vec<i16>),
    /// `i32` elements.
    I32(Vec<i32>),
    /// `i64` elements.
    I64(Vec<i64>),
    /// `u8` elements.
    U8(Vec<u8>),
    /// `u16` elements.
    U16(Vec<u16>),
    /// `u32` elements.
    U32(Vec<u32>),
    /// `u64` elements.
    U64(Vec<u64>),
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
    /// UTF-8 text.
    Str(VarBytes),
    /// Opaque bytes.
    Bytes(VarBytes),
}

/// Calls `$body` with `$v` bound to the vector of whichever numeric variant `$e` is, or
/// evaluates `$text` with `$t` bound to the [`VarBytes`] of a text or bytes column.
macro_rules! each_data {
    ($e:expr, $v:ident => $body:expr, $t:ident => $text:expr) => {
        match $e {
            ColumnData::Bool($v) => $body,
            ColumnData::I8($v) => $body,
            ColumnData::I16($v) => $body,
            ColumnData::I32($v) => $body,
            ColumnData::I64($v) => $body,
            ColumnData::U8($v) => $body,
            ColumnData::U16($v) => $body,
            ColumnData::U32($v) => $body,
            ColumnData::U64($v) => $body,
            ColumnData::F32($v) => $body,
            ColumnData::F64($v) => $body,
            ColumnData::Str($t) | ColumnData::Bytes($t) => $text,
        }
    };
}

impl ColumnData {
    fn new(dtype: DType, n: usize) -> Self {
        match dtype {
            DType::Bool => ColumnData::Bool(Vec::with_capacity(n)),
            DType::I8 => ColumnData::I8(Vec::with_capacity(n)),
            DType::I16 => ColumnData::I16(Vec::with_capacity(n)),
            DType::I32 => ColumnData::I32(Vec::with_capacity(n)),
            DType::I64 => ColumnData::I64(Vec::with_capacity(n)),
            DType::U8 => ColumnData::U8(Vec::with_capacity(n)),
            DType::U16 => ColumnData::U16(Vec::with_capacity(n)),
            DType::U32 => ColumnData::U32(Vec::with_capacity(n)),
            DType::U64 => ColumnData::U64(Vec::with_capacity(n)),
            DType::F32 => ColumnData::F32(Vec::with_capacity(n)),
            DType::F64 => ColumnData::F64(Vec::with_capacity(n)),
            DType::Str => ColumnData::Str(VarBytes::with_capacity(n)),
            DType::Bytes => ColumnData::Bytes(VarBytes::with_capacity(n)),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        each_data!(self, v => v.len(), t => t.len())
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the elements take (text and bytes: their contents and offsets).
    pub fn byte_len(&self) -> usize {
        each_data!(
            self,
            v => std::mem::size_of_val(v.as_slice()),
            t => t.data.len() + 4 * t.offsets.len()
        )
    }

    /// Keeps the first `n` elements.
    fn truncate(&mut self, n: usize) {
        each_data!(self, v => v.truncate(n), t => t.truncate(n));
    }

    /// Appends `n` placeholder elements (zeros, false, empty text) for a null row.
    fn push_defaults(&mut self, n: usize) {
        each_data!(self, v => v.resize(v.len() + n, Default::default()), t => {
            for _ in 0..n {
                t.push(&[]);
            }
        });
    }
}

impl ColumnData {
    /// Appends the elements of `other` (same variant); false when the variants differ.
    fn append(&mut self, other: ColumnData) -> bool {
        macro_rules! both {
            ($($v:ident),*) => {
                match (self, other) {
                    $((ColumnData::$v(a), ColumnData::$v(mut b)) => {
                        if a.is_empty() {
                            *a = b;
                        } else {
                            a.append(&mut b);
                        }
                        true
                    })*
                    (ColumnData::Str(a), ColumnData::Str(b))
                    | (ColumnData::Bytes(a), ColumnData::Bytes(b)) => a.append(&b),
                    _ => false,
                }
            };
        }
        both!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64)
    }

    /// Keeps the elements `i` for which `keep(i)` is true.
    fn retain_elements(&mut self, keep: &dyn Fn(usize) -> bool) {
        each_data!(self, v => {
            let mut i = 0;
            v.retain(|_| {
                let k = keep(i);
                i += 1;
                k
            });
        }, t => {
            let mut kept = VarBytes::with_capacity(t.len());
            for i in (0..t.len()).filter(|&i| keep(i)) {
                kept.push(t.get(i).unwrap_or_default());
            }
            *t = kept;
        });
    }
}

impl VarBytes {
    /// Appends the elements of `other`; false when the offsets would overflow `i32`.
    fn append(&mut self, other: &VarBytes) -> bool {
        if self.check_room(other.data.len()).is_err() {
            return false;
        }
        let base = i32::try_from(self.data.len()).unwrap_or(i32::MAX);
        self.data.extend_from_slice(&other.data);
        self.offsets.extend(
            other
                .offsets
                .iter()
                .skip(1)
                .map(|&o| o.saturating_add(base)),
        );
        true
    }
}

/// How a column's elements make up its rows.
#[derive(Debug, Clone, PartialEq)]
enum RowShape {
    /// `n` elements per row (1 for scalars).
    Fixed(usize),
    /// Per-row offsets into the elements, one more than there are rows, from 0.
    Variable(Vec<i32>),
}

/// One signal's values for the rows of a [`StreamBatch`].
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnBuf {
    dtype: DType,
    shape: RowShape,
    data: ColumnData,
    /// One flag per row, or empty while every row so far is valid (the common case costs
    /// nothing).
    validity: Vec<bool>,
    /// Not read at all: the caller asked for other columns only (see
    /// [`BatchSet::with_columns`]). A skipped column holds no values.
    skipped: bool,
}

impl ColumnBuf {
    /// An empty column for `signal`, with room for about `rows` rows.
    pub fn new(signal: &SignalDesc, rows: usize) -> Self {
        let width = match &signal.shape {
            Shape::Variable => None,
            fixed => Some(fixed.element_count().unwrap_or(1)),
        };
        let rows = rows.min(MAX_PREALLOCATED_ROWS);
        Self::empty(signal.dtype, width, rows, MAX_PREALLOCATED_ROWS * 16)
    }

    /// An empty column of the same type and shape with room for `rows` rows (none when
    /// skipped).
    /// A variable-shape column gets room for as many elements as this one holds: its next
    /// batch is likely as large, and a vector grown by doubling to a few MiB would be
    /// reallocated a dozen times per batch.
    fn empty_like(&self, rows: usize) -> Self {
        let rows = if self.skipped { 0 } else { rows };
        let elements = match self.width() {
            None if !self.skipped => self.data.len(),
            width => rows.saturating_mul(width.unwrap_or(1)),
        };
        let shape = match &self.shape {
            RowShape::Fixed(n) => RowShape::Fixed(*n),
            RowShape::Variable(_) => {
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0);
                RowShape::Variable(offsets)
            }
        };
        ColumnBuf {
            dtype: self.dtype,
            shape,
            data: ColumnData::new(self.dtype, elements),
            validity: Vec::new(),
            skipped: self.skipped,
        }
    }

    /// An empty column of `width` elements per row (`None`: variable rows), with room for
    /// `rows` rows and at most `max_elements` elements.
    fn empty(dtype: DType, width: Option<usize>, rows: usize, max_elements: usize) -> Self {
        let shape = match width {
            Some(n) => RowShape::Fixed(n),
            None => {
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0);
                RowShape::Variable(offsets)
            }
        };
        let elements = rows.saturating_mul(width.unwrap_or(1)).min(max_elements);
        ColumnBuf {
            dtype,
            shape,
            data: ColumnData::new(dtype, elements),
            validity: Vec::new(),
            skipped: false,
        }
    }

    /// True when the column is not read (see [`BatchSet::with_columns`]): it holds no values,
    /// and readers that decode natively may leave it alone.
    pub fn is_skipped(&self) -> bool {
        self.skipped
    }

    /// The signal's element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Elements per row: 1 for scalars, `n` for fixed shapes, `None` for variable shapes.
    pub fn width(&self) -> Option<usize> {
        match self.shape {
            RowShape::Fixed(n) => Some(n),
            RowShape::Variable(_) => None,
        }
    }

    /// The elements.
    pub fn data(&self) -> &ColumnData {
        &self.data
    }

    /// The elements, for readers that decode straight into them. A reader that appends the
    /// elements of `n` rows to every column then calls [`StreamBatch::commit_rows`]`(n)`.
    pub fn data_mut(&mut self) -> &mut ColumnData {
        &mut self.data
    }

    /// [`ColumnBuf::data_mut`] for a column the caller asked for, `None` for a skipped one
    /// (see [`BatchSet::with_columns`]), which a reader leaves empty.
    pub fn kept_data_mut(&mut self) -> Option<&mut ColumnData> {
        (!self.skipped).then_some(&mut self.data)
    }

    /// Per-row validity, or `None` when every row holds a value.
    pub fn validity(&self) -> Option<&[bool]> {
        (!self.validity.is_empty()).then_some(&self.validity[..])
    }

    /// Per-row offsets into the elements for a variable-shape column (one more than rows).
    pub fn list_offsets(&self) -> Option<&[i32]> {
        match &self.shape {
            RowShape::Variable(offsets) => Some(offsets),
            RowShape::Fixed(_) => None,
        }
    }

    /// Elements, validity and list offsets, for handing to Arrow without a copy.
    pub fn into_parts(self) -> (ColumnData, Option<Vec<bool>>, Option<Vec<i32>>) {
        let validity = (!self.validity.is_empty()).then_some(self.validity);
        let offsets = match self.shape {
            RowShape::Variable(o) => Some(o),
            RowShape::Fixed(_) => None,
        };
        (self.data, validity, offsets)
    }

    /// Appends one text row to a scalar text or bytes column.
    pub fn push_str(&mut self, text: &str) -> std::result::Result<(), String> {
        self.push_var(text.as_bytes())
    }

    /// Appends one row of bytes to a scalar bytes column.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> std::result::Result<(), String> {
        if matches!(self.data, ColumnData::Str(_)) {
            return Err(format!(
                "{} bytes cannot be stored in a str column",
                bytes.len()
            ));
        }
        self.push_var(bytes)
    }

    fn push_var(&mut self, bytes: &[u8]) -> std::result::Result<(), String> {
        if self.skipped {
            return Ok(());
        }
        match &mut self.data {
            ColumnData::Str(t) | ColumnData::Bytes(t) => {
                t.check_room(bytes.len())?;
                t.push(bytes);
                if !self.validity.is_empty() {
                    self.validity.push(true);
                }
                Ok(())
            }
            _ => Err(format!("text cannot be stored in a {} column", self.dtype)),
        }
    }

    /// Marks row `row` (the number of rows before it) null and gives it placeholder elements.
    fn push_null(&mut self, row: usize) {
        if self.skipped {
            return;
        }
        if self.validity.is_empty() {
            self.validity.resize(row, true);
        }
        self.validity.push(false);
        match &mut self.shape {
            RowShape::Fixed(n) => self.data.push_defaults(*n),
            RowShape::Variable(offsets) => {
                let last = offsets.last().copied().unwrap_or(0);
                offsets.push(last);
            }
        }
    }

    /// Checks (`write == false`) or appends (`write == true`) one row's value; `row` is the
    /// number of rows before it.
    fn put(&mut self, value: &Value, row: usize, write: bool) -> std::result::Result<(), String> {
        if self.skipped {
            return Ok(());
        }
        let dtype = self.dtype;
        if let Value::Null = value {
            if write {
                self.push_null(row);
            }
            return Ok(());
        }
        match &mut self.shape {
            RowShape::Fixed(1) if !matches!(value, Value::Array(_)) => {
                put_scalar(&mut self.data, value, dtype, write)?;
            }
            RowShape::Fixed(n) => {
                let n = *n;
                match value {
                    Value::Array(a) if a.len() == n => put_array(&mut self.data, a, dtype, write)?,
                    Value::Array(a) if n == 1 => {
                        return Err(format!(
                            "an array of {} elements cannot be stored in a scalar {dtype} column",
                            a.len()
                        ));
                    }
                    Value::Array(a) => {
                        return Err(format!(
                            "an array of {} elements does not match the fixed shape of {n} elements",
                            a.len()
                        ));
                    }
                    v => {
                        return Err(format!(
                            "{} cannot be stored in a column of {n}-element {dtype} arrays",
                            describe(v)
                        ));
                    }
                }
            }
            RowShape::Variable(offsets) => {
                let Value::Array(a) = value else {
                    return Err(format!(
                        "{} cannot be stored in a column of variable-length {dtype} lists",
                        describe(value)
                    ));
                };
                let last = offsets.last().copied().unwrap_or(0);
                let end = i32::try_from(a.len())
                    .ok()
                    .and_then(|n| last.checked_add(n))
                    .ok_or_else(|| {
                        format!(
                            "more than {} list elements in one batch; use smaller batches",
                            i32::MAX
                        )
                    })?;
                put_array(&mut self.data, a, dtype, write)?;
                if write {
                    offsets.push(end);
                }
            }
        }
        if write && !self.validity.is_empty() {
            self.validity.push(true);
        }
        Ok(())
    }

    /// Appends one row's value with the row path's checks; `row` is the number of rows the
    /// column held before it. On error nothing is appended.
    pub fn push_value(&mut self, value: &Value, row: usize) -> std::result::Result<(), String> {
        self.put(value, row, false)?;
        self.put(value, row, true)
    }

    /// Appends one valid scalar `value` to a column of its own type (one `Vec::push`), or
    /// through [`ColumnBuf::push_value`]'s exact conversions to any other; `row` is the number
    /// of rows the column held before it. The [`crate::RowWriter`] fast path.
    #[inline]
    pub(crate) fn push_native<T: crate::RowElement>(
        &mut self,
        value: T,
        row: usize,
    ) -> std::result::Result<(), String> {
        if self.skipped {
            return Ok(());
        }
        if let RowShape::Fixed(1) = self.shape
            && let Some(data) = T::elements_mut(&mut self.data)
        {
            data.push(value);
            if !self.validity.is_empty() {
                self.validity.push(true);
            }
            return Ok(());
        }
        self.push_value(&value.into_value(), row)
    }

    /// Appends one value per row of a run (see [`crate::RowWriter::begin_rows`]): straight
    /// into the column's `Vec` when `T` is its type, else value by value as
    /// [`ColumnBuf::push_native`] does (`row`: the rows the batch holds before the run).
    /// Returns the values taken.
    pub(crate) fn extend_native<T: crate::RowElement>(
        &mut self,
        values: impl Iterator<Item = T>,
        row: usize,
    ) -> std::result::Result<usize, String> {
        if self.skipped {
            return Ok(values.count());
        }
        if let RowShape::Fixed(1) = self.shape
            && let Some(data) = T::elements_mut(&mut self.data)
        {
            let before = data.len();
            data.extend(values);
            let added = data.len() - before;
            if !self.validity.is_empty() {
                self.validity.extend(std::iter::repeat_n(true, added));
            }
            return Ok(added);
        }
        let mut added = 0;
        for value in values {
            self.push_value(&value.into_value(), row + added)?;
            added += 1;
        }
        Ok(added)
    }

    /// Drops every row past the first `rows` (the values of a row a reader did not finish).
    fn truncate_rows(&mut self, rows: usize) {
        if self.skipped {
            return;
        }
        self.validity.truncate(rows);
        match &mut self.shape {
            RowShape::Fixed(n) => self.data.truncate(rows.saturating_mul(*n)),
            RowShape::Variable(offsets) => {
                offsets.truncate(rows + 1);
                let end = offsets
                    .last()
                    .map_or(0, |&e| usize::try_from(e).unwrap_or(0));
                self.data.truncate(end);
            }
        }
    }

    /// Checks that one more row of `elements` elements fits this batch: list elements for a
    /// variable-shape column, bytes for a text or bytes column (both are addressed by `i32`
    /// offsets, as Arrow's are). Fixed-shape numeric and skipped columns always fit.
    ///
    /// A reader that appends a row column by column with [`ColumnBuf::push_slice`] or
    /// [`ColumnBuf::push_str`] checks every column first, so that a refused row leaves the
    /// batch unchanged, as [`StreamBatch::push_values`] does. The message is the row path's.
    pub fn room_for(&self, elements: usize) -> std::result::Result<(), String> {
        if self.skipped {
            return Ok(());
        }
        if let ColumnData::Str(t) | ColumnData::Bytes(t) = &self.data {
            return t.check_room(elements);
        }
        match &self.shape {
            RowShape::Fixed(_) => Ok(()),
            RowShape::Variable(offsets) => {
                let last = offsets.last().copied().unwrap_or(0);
                i32::try_from(elements)
                    .ok()
                    .and_then(|n| last.checked_add(n))
                    .map(|_| ())
                    .ok_or_else(|| {
                        format!(
                            "more than {} list elements in one batch; use smaller batches",
                            i32::MAX
                        )
                    })
            }
        }
    }

    /// Appends one valid row whose elements are `items`, already in the column's element
    /// type: a list of any length for a variable shape (its offset is pushed), exactly the
    /// shape's element count for a fixed shape (one for a scalar).
    ///
    /// This is one `extend_from_slice`, with no [`Value`] and no per-element conversion, for
    /// readers whose decoded data already has the column's type (packed protobuf arrays, for
    /// instance); it gives the same row [`ColumnBuf::push_value`] gives for the equivalent
    /// array. A skipped column takes nothing. On error (another element type, a fixed shape
    /// of another size, more list elements than the offsets can address) nothing is
    /// appended. Call [`StreamBatch::commit_rows`] once every column of the row is pushed.
    pub fn push_slice<T: NativeElement>(&mut self, items: &[T]) -> std::result::Result<(), String> {
        if self.skipped {
            return Ok(());
        }
        if let RowShape::Fixed(n) = self.shape
            && n != items.len()
        {
            return Err(format!(
                "an array of {} elements does not match the fixed shape of {n} elements",
                items.len()
            ));
        }
        self.room_for(items.len())?;
        let Some(data) = T::elements_mut(&mut self.data) else {
            return Err(format!(
                "{} elements cannot be stored in a {} column",
                T::DTYPE,
                self.dtype
            ));
        };
        data.extend_from_slice(items);
        if let RowShape::Variable(offsets) = &mut self.shape {
            let end = i32::try_from(data.len()).unwrap_or(i32::MAX);
            offsets.push(end);
        }
        if !self.validity.is_empty() {
            self.validity.push(true);
        }
        Ok(())
    }

    /// Turns an `f32` column into an `f64` one (every `f32` is exactly an `f64`); other
    /// columns are left as they are.
    pub fn widen_to_f64(&mut self) {
        if let ColumnData::F32(v) = &self.data {
            self.data = ColumnData::F64(v.iter().map(|&x| f64::from(x)).collect());
            self.dtype = DType::F64;
        }
    }

    /// Appends the rows of `other`, a column of the same type and shape holding
    /// `other_rows` rows, after this column's `rows` rows.
    fn append(
        &mut self,
        other: ColumnBuf,
        rows: usize,
        other_rows: usize,
    ) -> std::result::Result<(), String> {
        if self.dtype != other.dtype {
            return Err(format!(
                "a {} column cannot take {} rows",
                self.dtype, other.dtype
            ));
        }
        if self.skipped || other.skipped {
            self.skipped = true;
            return Ok(());
        }
        match (&mut self.shape, other.shape) {
            (RowShape::Fixed(a), RowShape::Fixed(b)) if *a == b => {}
            (RowShape::Variable(a), RowShape::Variable(b)) => {
                let base = a.last().copied().unwrap_or(0);
                let last = b.last().copied().unwrap_or(0);
                if base.checked_add(last).is_none() {
                    return Err(format!(
                        "more than {} list elements in one batch; use smaller batches",
                        i32::MAX
                    ));
                }
                a.extend(b.iter().skip(1).map(|&o| o + base));
            }
            _ => return Err("columns of different shapes".into()),
        }
        if !self.data.append(other.data) {
            return Err(
                "text or bytes past the 2 GiB a batch can hold; use smaller batches".into(),
            );
        }
        match (self.validity.is_empty(), other.validity.is_empty()) {
            (true, true) => {}
            (false, true) => self.validity.resize(rows + other_rows, true),
            (true, false) => {
                self.validity.resize(rows, true);
                self.validity.extend(other.validity);
            }
            (false, false) => self.validity.extend(other.validity),
        }
        Ok(())
    }

    /// Keeps the rows `r` for which `keep[r]` is true.
    fn retain_rows(&mut self, keep: &[bool]) {
        if self.skipped {
            return;
        }
        match &mut self.shape {
            RowShape::Fixed(n) => {
                let n = (*n).max(1);
                self.data
                    .retain_elements(&|i| keep.get(i / n).copied().unwrap_or(false));
            }
            RowShape::Variable(offsets) => {
                // Element i belongs to the row whose offset range holds it.
                let mut owner = Vec::with_capacity(self.data.len());
                for (row, pair) in offsets.windows(2).enumerate() {
                    let len = usize::try_from(pair[1] - pair[0]).unwrap_or(0);
                    owner.extend(std::iter::repeat_n(row, len));
                }
                self.data.retain_elements(&|i| {
                    owner
                        .get(i)
                        .is_some_and(|&r| keep.get(r).copied().unwrap_or(false))
                });
                let mut kept = Vec::with_capacity(offsets.len());
                kept.push(0i32);
                let mut end = 0i32;
                for (row, pair) in offsets.windows(2).enumerate() {
                    if keep.get(row).copied().unwrap_or(false) {
                        end += pair[1] - pair[0];
                        kept.push(end);
                    }
                }
                *offsets = kept;
            }
        }
        if !self.validity.is_empty() {
            let mut row = 0;
            self.validity.retain(|_| {
                let k = keep.get(row).copied().unwrap_or(false);
                row += 1;
                k
            });
        }
    }

    /// Pads validity with "valid" up to `rows` rows (after a reader appended elements directly).
    fn fill_validity(&mut self, rows: usize) {
        if self.skipped {
            return;
        }
        if !self.validity.is_empty() && self.validity.len() < rows {
            self.validity.resize(rows, true);
        }
    }

    /// Number of rows the elements make up (list offsets for variable shapes).
    pub fn rows(&self) -> usize {
        match &self.shape {
            RowShape::Fixed(0) => 0,
            RowShape::Fixed(n) => self.data.len() / n,
            RowShape::Variable(offsets) => offsets.len().saturating_sub(1),
        }
    }

    /// Element `i` of this column as a [`Value`] element (for tests and the row view).
    fn element(&self, i: usize) -> Value {
        match &self.data {
            ColumnData::Bool(v) => v.get(i).map_or(Value::Null, |&b| Value::Bool(b)),
            ColumnData::I8(v) => v.get(i).map_or(Value::Null, |&x| Value::Int(x.into())),
            ColumnData::I16(v) => v.get(i).map_or(Value::Null, |&x| Value::Int(x.into())),
            ColumnData::I32(v) => v.get(i).map_or(Value::Null, |&x| Value::Int(x.into())),
            ColumnData::I64(v) => v.get(i).map_or(Value::Null, |&x| Value::Int(x)),
            ColumnData::U8(v) => v.get(i).map_or(Value::Null, |&x| Value::UInt(x.into())),
            ColumnData::U16(v) => v.get(i).map_or(Value::Null, |&x| Value::UInt(x.into())),
            ColumnData::U32(v) => v.get(i).map_or(Value::Null, |&x| Value::UInt(x.into())),
            ColumnData::U64(v) => v.get(i).map_or(Value::Null, |&x| Value::UInt(x)),
            ColumnData::F32(v) => v.get(i).map_or(Value::Null, |&x| Value::Float(x.into())),
            ColumnData::F64(v) => v.get(i).map_or(Value::Null, |&x| Value::Float(x)),
            ColumnData::Str(t) => t.get(i).map_or(Value::Null, |b| {
                Value::Str(String::from_utf8_lossy(b).into())
            }),
            ColumnData::Bytes(t) => t.get(i).map_or(Value::Null, |b| Value::Bytes(b.to_vec())),
        }
    }

    /// Row `row` as a [`Value`], exactly as [`crate::RecordingReader::read_frame`] would give
    /// it (`f32` widened to `f64`, arrays typed by element).
    pub fn value(&self, row: usize) -> Value {
        if self.skipped {
            return Value::Null;
        }
        if self.validity.get(row) == Some(&false) {
            return Value::Null;
        }
        let range = match &self.shape {
            RowShape::Fixed(1) => return self.element(row),
            RowShape::Fixed(n) => row * n..row * n + n,
            RowShape::Variable(offsets) => {
                let (Some(&a), Some(&b)) = (offsets.get(row), offsets.get(row + 1)) else {
                    return Value::Null;
                };
                usize::try_from(a).unwrap_or(0)..usize::try_from(b).unwrap_or(0)
            }
        };
        Value::Array(match &self.data {
            ColumnData::Bool(v) => ArrayValue::Bool(v.get(range).unwrap_or_default().to_vec()),
            ColumnData::F32(v) => ArrayValue::F32(v.get(range).unwrap_or_default().to_vec()),
            ColumnData::F64(v) => ArrayValue::F64(v.get(range).unwrap_or_default().to_vec()),
            ColumnData::I8(_) | ColumnData::I16(_) | ColumnData::I32(_) | ColumnData::I64(_) => {
                ArrayValue::Int(range.filter_map(|i| self.element(i).as_i64()).collect())
            }
            _ => ArrayValue::UInt(range.filter_map(|i| self.element(i).as_u64()).collect()),
        })
    }
}

/// Element types a column holds natively, for readers that copy decoded slices straight into
/// a column with [`ColumnBuf::push_slice`]: every numeric type and `bool`. Text and bytes go
/// through [`ColumnBuf::push_str`] and [`ColumnBuf::push_bytes`]. Sealed: the set of column
/// types is [`ColumnData`]'s.
pub trait NativeElement: Copy + sealed::Sealed {
    /// The column type that holds `Self`.
    const DTYPE: DType;
    /// The elements of `data` when it is a column of `Self`.
    #[doc(hidden)]
    fn elements_mut(data: &mut ColumnData) -> Option<&mut Vec<Self>>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! native_element {
    ($($t:ty => $v:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl NativeElement for $t {
            const DTYPE: DType = DType::$v;
            fn elements_mut(data: &mut ColumnData) -> Option<&mut Vec<Self>> {
                match data {
                    ColumnData::$v(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}
native_element!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16,
    u32 => U32, u64 => U64, f32 => F32, f64 => F64
);

/// A value that does not fit its column: which signal, and why (the message names the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchValueError {
    /// Index of the signal in the stream.
    pub signal: usize,
    /// What is wrong with the value.
    pub message: String,
}

impl fmt::Display for BatchValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "signal {}: {}", self.signal, self.message)
    }
}

impl std::error::Error for BatchValueError {}

/// Rows of one stream, a [`ColumnBuf`] per signal.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamBatch {
    stream: usize,
    rows: usize,
    columns: Vec<ColumnBuf>,
}

impl StreamBatch {
    /// An empty batch for stream `stream` with the given signals, with room for about `rows`
    /// rows.
    pub fn new(stream: usize, signals: &[SignalDesc], rows: usize) -> Self {
        StreamBatch {
            stream,
            rows: 0,
            columns: signals.iter().map(|s| ColumnBuf::new(s, rows)).collect(),
        }
    }

    fn empty_like(&self, rows: usize) -> Self {
        StreamBatch {
            stream: self.stream,
            rows: 0,
            columns: self.columns.iter().map(|c| c.empty_like(rows)).collect(),
        }
    }

    /// Index of the stream in the schema.
    pub fn stream(&self) -> usize {
        self.stream
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Bytes the values held take (list offsets and validity left out).
    pub fn byte_len(&self) -> usize {
        self.columns.iter().map(|c| c.data.byte_len()).sum()
    }

    /// True when this batch is to be handed on: `capacity` rows, or
    /// [`BatchSet::MAX_BATCH_BYTES`] of values, whichever comes first.
    pub fn is_full(&self, capacity: usize) -> bool {
        BatchSet::full_at(capacity, self.rows, self.byte_len())
    }

    /// True when a column other than `column` (the time, say) is kept: a reader asked for
    /// the times alone can frame its records without visiting their fields.
    pub fn keeps_other_than(&self, column: usize) -> bool {
        self.columns
            .iter()
            .enumerate()
            .any(|(i, c)| i != column && !c.skipped)
    }

    /// Rows this batch takes before it is full ([`StreamBatch::is_full`]): for readers that
    /// append runs of rows of fixed width (the byte bound is met by the last of them).
    pub fn room(&self, capacity: usize) -> usize {
        let rows = capacity.saturating_sub(self.rows);
        match self.fixed_row_bytes() {
            0 => rows,
            row => {
                let bytes = BatchSet::MAX_BATCH_BYTES.saturating_sub(self.byte_len());
                rows.min(bytes.div_ceil(row).max(1))
            }
        }
    }

    /// Bytes one row adds to the kept columns of fixed width: exact for a stream of numbers
    /// (a reader that appends rows itself can count bytes without [`StreamBatch::byte_len`]),
    /// a lower bound where text, bytes or variable-length lists add more.
    pub fn fixed_row_bytes(&self) -> usize {
        self.columns
            .iter()
            .filter(|c| !c.skipped)
            .map(|c| c.dtype.size().unwrap_or(0) * c.width().unwrap_or(0))
            .sum()
    }

    /// True when no row is held.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The columns, one per signal.
    pub fn columns(&self) -> &[ColumnBuf] {
        &self.columns
    }

    /// The columns, for readers that append elements directly (then call
    /// [`StreamBatch::commit_rows`]).
    pub fn columns_mut(&mut self) -> &mut [ColumnBuf] {
        &mut self.columns
    }

    /// The columns, taken apart.
    pub fn into_columns(self) -> Vec<ColumnBuf> {
        self.columns
    }

    /// Counts `n` rows whose elements a reader appended to every column itself.
    pub fn commit_rows(&mut self, n: usize) {
        self.rows += n;
        for column in &mut self.columns {
            column.fill_validity(self.rows);
        }
    }

    /// Counts the rows whose values a [`crate::RowWriter`] pushed, one run per column.
    pub(crate) fn commit_pushed_rows(&mut self, rows: usize) {
        self.rows += rows;
    }

    /// Takes back the values of a row that was begun but not finished.
    pub(crate) fn drop_unfinished_row(&mut self) {
        for column in &mut self.columns {
            column.truncate_rows(self.rows);
        }
    }

    /// Checks that every column holds exactly [`StreamBatch::rows`] rows; a reader that
    /// appends elements directly is held to this before its batch is used.
    pub fn check_consistent(&self) -> std::result::Result<(), BatchValueError> {
        for (signal, column) in self.columns.iter().enumerate().filter(|(_, c)| !c.skipped) {
            let held = column.rows();
            let flags = column.validity.len();
            if held != self.rows || (flags != 0 && flags != self.rows) {
                return Err(BatchValueError {
                    signal,
                    message: format!(
                        "the column holds {held} rows ({flags} validity flags) but the batch has {}",
                        self.rows
                    ),
                });
            }
        }
        Ok(())
    }

    /// Appends one row given as values, one per signal, with the same checks as the row path:
    /// integers must fit the column type, floats stored in integer columns are refused,
    /// arrays must match a fixed shape. On error nothing of the row is kept.
    pub fn push_values(&mut self, values: &[Value]) -> std::result::Result<(), BatchValueError> {
        if values.len() != self.columns.len() {
            return Err(BatchValueError {
                signal: values.len().min(self.columns.len()),
                message: format!(
                    "a row has {} values but the stream has {} signals",
                    values.len(),
                    self.columns.len()
                ),
            });
        }
        let rows = self.rows;
        for (signal, (column, value)) in self.columns.iter_mut().zip(values).enumerate() {
            column
                .put(value, rows, false)
                .map_err(|message| BatchValueError { signal, message })?;
        }
        for (signal, (column, value)) in self.columns.iter_mut().zip(values).enumerate() {
            column
                .put(value, rows, true)
                .map_err(|message| BatchValueError { signal, message })?;
        }
        self.rows += 1;
        Ok(())
    }

    /// A batch of `rows` rows made of whole columns; fails when a column holds another number
    /// of rows.
    pub fn from_columns(
        stream: usize,
        rows: usize,
        columns: Vec<ColumnBuf>,
    ) -> std::result::Result<Self, BatchValueError> {
        let batch = StreamBatch {
            stream,
            rows,
            columns,
        };
        batch.check_consistent()?;
        Ok(batch)
    }

    /// Appends the rows of `other` (a batch of the same signals); moves them when this batch
    /// is empty, so the common case copies nothing.
    pub fn append(&mut self, other: StreamBatch) -> std::result::Result<(), BatchValueError> {
        if other.columns.len() != self.columns.len() {
            return Err(BatchValueError {
                signal: 0,
                message: format!(
                    "a batch of {} columns cannot take one of {}",
                    self.columns.len(),
                    other.columns.len()
                ),
            });
        }
        if self.rows == 0 {
            self.rows = other.rows;
            self.columns = other.columns;
            return Ok(());
        }
        let rows = self.rows;
        for (signal, (column, theirs)) in self.columns.iter_mut().zip(other.columns).enumerate() {
            column
                .append(theirs, rows, other.rows)
                .map_err(|message| BatchValueError { signal, message })?;
        }
        self.rows += other.rows;
        Ok(())
    }

    /// Keeps the rows `r` for which `keep[r]` is true (rows past `keep`'s end are dropped).
    pub fn retain_rows(&mut self, keep: &[bool]) {
        for column in &mut self.columns {
            column.retain_rows(keep);
        }
        self.rows = keep.iter().take(self.rows).filter(|&&k| k).count();
    }

    /// The time of every row in seconds on the recording's axis (`None` where the time is
    /// null), from the time column `desc` names: what [`FrameBuf::time_seconds`] gives row by
    /// row.
    pub fn times(&self, desc: &crate::StreamDesc) -> Vec<Option<f64>> {
        let mut times = Vec::with_capacity(self.rows);
        self.for_each_time(desc, |t| times.push(t));
        times
    }

    /// Calls `f` with the time of every row in order, as [`StreamBatch::times`] gives them,
    /// without collecting them first: a scan over every row of a recording (`validate`,
    /// `info`) needs only a running minimum, maximum and order check.
    pub fn for_each_time(&self, desc: &crate::StreamDesc, mut f: impl FnMut(Option<f64>)) {
        let Some(column) = self.columns.get(desc.time) else {
            (0..self.rows).for_each(|_| f(None));
            return;
        };
        let base = desc.time_base;
        let valid = column.validity();
        let is_valid = |row: usize| valid.is_none_or(|v| v.get(row).copied().unwrap_or(true));
        macro_rules! scalar {
            ($v:expr) => {
                for (row, &x) in $v.iter().take(self.rows).enumerate() {
                    f(is_valid(row).then(|| base.to_seconds_f64(x as f64)));
                }
            };
        }
        match (&column.data, column.width()) {
            (ColumnData::U64(v), Some(1)) => scalar!(v),
            (ColumnData::I64(v), Some(1)) => scalar!(v),
            (ColumnData::F64(v), Some(1)) => scalar!(v),
            (ColumnData::F32(v), Some(1)) => scalar!(v),
            (ColumnData::U32(v), Some(1)) => scalar!(v),
            (ColumnData::I32(v), Some(1)) => scalar!(v),
            _ => {
                for row in 0..self.rows {
                    let seconds = column.value(row).as_f64().map(|x| base.to_seconds_f64(x));
                    f(seconds.filter(|_| is_valid(row)));
                }
            }
        }
    }

    /// The first, last, smallest and largest time of this batch's rows and how many go back
    /// in time, as a fold of [`StreamBatch::for_each_time`] gives them, in one pass the
    /// compiler vectorises where every row has a time: the per-row closure cost a `validate`
    /// of 1 GB of USVLOG about a fifth of its time.
    pub fn time_summary(&self, desc: &crate::StreamDesc) -> TimeSummary {
        let base = desc.time_base;
        let dense = self
            .columns
            .get(desc.time)
            .filter(|c| c.validity.is_empty());
        macro_rules! dense {
            ($v:expr) => {{
                let mut summary = TimeSummary::default();
                let mut times = [0f64; TimeSummary::BLOCK];
                for block in $v[..self.rows.min($v.len())].chunks(TimeSummary::BLOCK) {
                    let times = &mut times[..block.len()];
                    for (t, &x) in times.iter_mut().zip(block) {
                        *t = base.to_seconds_f64(x as f64);
                    }
                    summary.add_block(times);
                }
                summary
            }};
        }
        match dense.map(|c| (&c.data, c.width())) {
            Some((ColumnData::F64(v), Some(1))) => dense!(v),
            Some((ColumnData::U64(v), Some(1))) => dense!(v),
            Some((ColumnData::I64(v), Some(1))) => dense!(v),
            Some((ColumnData::F32(v), Some(1))) => dense!(v),
            Some((ColumnData::U32(v), Some(1))) => dense!(v),
            Some((ColumnData::I32(v), Some(1))) => dense!(v),
            _ => {
                let mut summary = TimeSummary::default();
                self.for_each_time(desc, |t| {
                    if let Some(t) = t {
                        summary.add_block(&[t]);
                    }
                });
                summary
            }
        }
    }

    /// Row `row` as values, as the row path gives it.
    pub fn row_values(&self, row: usize) -> Vec<Value> {
        self.columns.iter().map(|c| c.value(row)).collect()
    }
}

/// A summary of the times of consecutive rows: see [`StreamBatch::time_summary`]. Rows
/// without a time are left out; NaN times count in no minimum or maximum (unless every time
/// is NaN) and never as going back, as `f64::min` and `<` treat them. Where the smallest or
/// largest time is zero and both `-0.0` and `0.0` occur, either sign may be reported.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimeSummary {
    /// The time of the first row that has one.
    pub first: Option<f64>,
    /// The time of the last row that has one.
    pub last: Option<f64>,
    /// The smallest time.
    pub min: Option<f64>,
    /// The largest time.
    pub max: Option<f64>,
    /// Rows whose time is earlier than the time of the row with a time before them.
    pub backwards: u64,
}

impl TimeSummary {
    /// Times converted and summarised at a time: small enough for the stack and L1.
    const BLOCK: usize = 512;

    /// Adds the rows summarised by `next`, which come after these rows.
    pub fn merge(&mut self, next: &TimeSummary) {
        let (Some(first), Some(last)) = (next.first, next.last) else {
            return;
        };
        if self.last.is_some_and(|before| first < before) {
            self.backwards += 1;
        }
        self.backwards += next.backwards;
        self.first = self.first.or(Some(first));
        self.last = Some(last);
        self.min = match (self.min, next.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = match (self.max, next.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Adds consecutive times, with eight independent lanes so that the loop vectorises.
    fn add_block(&mut self, times: &[f64]) {
        let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
            return;
        };
        let mut low = [f64::NAN; 8];
        let mut high = [f64::NAN; 8];
        let lanes = times.chunks_exact(8);
        for &t in lanes.remainder() {
            low[0] = low[0].min(t);
            high[0] = high[0].max(t);
        }
        for lane in lanes {
            for i in 0..8 {
                low[i] = low[i].min(lane[i]);
                high[i] = high[i].max(lane[i]);
            }
        }
        let backwards = times.windows(2).filter(|w| w[1] < w[0]).count() as u64;
        self.merge(&TimeSummary {
            first: Some(first),
            last: Some(last),
            min: Some(low.iter().copied().fold(f64::NAN, f64::min)),
            max: Some(high.iter().copied().fold(f64::NAN, f64::max)),
            backwards,
        });
    }
}

/// One [`StreamBatch`] per stream of a schema, filled in file order by
/// [`crate::RecordingReader::read_batches`] until one stream's batch is full (see
/// [`BatchSet::is_full`]).
///
/// Streams the caller does not want are never filled, and readers that decode natively skip
/// their records without decoding them.
#[derive(Debug, Clone)]
pub struct BatchSet {
    batches: Vec<StreamBatch>,
    wanted: Vec<bool>,
    capacity: usize,
    /// The row the default (row by row) read path reuses.
    pub(crate) scratch: FrameBuf,
}

impl BatchSet {
    /// Batches for every stream of `schema`, each full at `capacity` rows (at least 1).
    pub fn new(schema: &Schema, capacity: usize) -> Self {
        Self::with_streams(schema, capacity, |_| true)
    }

    /// Batches for the streams for which `wanted(index)` is true; rows of other streams are
    /// skipped by the reader.
    pub fn with_streams(schema: &Schema, capacity: usize, wanted: impl Fn(usize) -> bool) -> Self {
        Self::with_columns(schema, capacity, wanted, |_, _| true)
    }

    /// Batches for the streams for which `wanted(stream)` is true, holding only the columns
    /// for which `column(stream, signal)` is true: the others are skipped (they hold no
    /// values, and readers of fixed layouts do not decode them). For scans that need a few
    /// columns, such as the time column.
    pub fn with_columns(
        schema: &Schema,
        capacity: usize,
        wanted: impl Fn(usize) -> bool,
        column: impl Fn(usize, usize) -> bool,
    ) -> Self {
        let capacity = capacity.max(1);
        BatchSet {
            batches: schema
                .streams
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let mut batch = StreamBatch::new(i, &s.signals, capacity);
                    for (signal, c) in batch.columns.iter_mut().enumerate() {
                        c.skipped = !column(i, signal);
                    }
                    batch
                })
                .collect(),
            wanted: (0..schema.streams.len()).map(wanted).collect(),
            capacity,
            scratch: FrameBuf::default(),
        }
    }

    /// Rows per stream at which a batch is full.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of streams (wanted or not).
    pub fn len(&self) -> usize {
        self.batches.len()
    }

    /// True when the schema has no stream.
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }

    /// True when rows of stream `stream` are to be read.
    pub fn wants(&self, stream: usize) -> bool {
        self.wanted.get(stream).copied().unwrap_or(false)
    }

    /// The batch of stream `stream`.
    ///
    /// # Panics
    /// When `stream` is not a stream of the schema the set was made for.
    pub fn stream(&self, stream: usize) -> &StreamBatch {
        &self.batches[stream]
    }

    /// The batch of stream `stream`, for a reader to fill.
    ///
    /// # Panics
    /// When `stream` is not a stream of the schema the set was made for.
    pub fn stream_mut(&mut self, stream: usize) -> &mut StreamBatch {
        &mut self.batches[stream]
    }

    /// Values one stream's batch may hold before it is handed on, whatever its row count:
    /// rows of large arrays (a NanoVer frame of 10,000 particles is 240 KB) would otherwise
    /// fill a batch of [`BatchSet::capacity`] rows with gigabytes.
    pub const MAX_BATCH_BYTES: usize = 8 << 20;

    /// True when some stream's batch is full ([`StreamBatch::is_full`]: it holds
    /// [`BatchSet::capacity`] rows or [`BatchSet::MAX_BATCH_BYTES`] of values): the reader
    /// stops and the caller takes the full batches.
    pub fn is_full(&self) -> bool {
        self.batches.iter().any(|b| b.is_full(self.capacity))
    }

    /// The rule of [`StreamBatch::is_full`] for a batch of `rows` rows and `bytes` of values,
    /// for readers that count both as they append.
    pub fn full_at(capacity: usize, rows: usize, bytes: usize) -> bool {
        rows >= capacity || (rows > 0 && bytes >= Self::MAX_BATCH_BYTES)
    }

    /// Rows held over all streams.
    pub fn rows(&self) -> usize {
        self.batches.iter().map(|b| b.rows).sum()
    }

    /// Takes the rows of stream `stream`, leaving an empty batch in their place.
    ///
    /// # Panics
    /// When `stream` is not a stream of the schema the set was made for.
    pub fn take(&mut self, stream: usize) -> StreamBatch {
        // Room for as many rows as the taken batch held: a stream that filled one batch will
        // likely fill the next, and reserving up front spares the copies of growing vectors.
        let rows = self.batches[stream].rows.min(self.capacity);
        let fresh = self.batches[stream].empty_like(rows);
        std::mem::replace(&mut self.batches[stream], fresh)
    }

    /// The batches to hand on after a [`crate::RecordingReader::read_batches`] call that
    /// returned `more`: the full ones while rows may follow (so every batch but a stream's last
    /// is whole), every non-empty one once the recording has ended.
    pub fn take_ready(&mut self, more: bool) -> Vec<StreamBatch> {
        if !more {
            return self.take_at_least(1);
        }
        let capacity = self.capacity;
        self.take_where(|b| b.is_full(capacity))
    }

    /// Takes every batch that holds at least `min_rows` rows, in stream order.
    pub fn take_at_least(&mut self, min_rows: usize) -> Vec<StreamBatch> {
        let min_rows = min_rows.max(1);
        self.take_where(|b| b.rows >= min_rows)
    }

    /// Takes every batch `take` picks, in stream order.
    fn take_where(&mut self, take: impl Fn(&StreamBatch) -> bool) -> Vec<StreamBatch> {
        (0..self.batches.len())
            .filter(|&i| take(&self.batches[i]))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|i| self.take(i))
            .collect()
    }

    /// Appends a row read by [`crate::RecordingReader::read_frame`] to its stream's batch.
    pub fn push_frame(&mut self, frame: &FrameBuf, schema: &Schema) -> Result<()> {
        let Some(batch) = self.batches.get_mut(frame.stream) else {
            return Err(Error::invalid(format!(
                "the reader returned a row of stream {}, but the schema has {} streams",
                frame.stream,
                self.batches.len()
            )));
        };
        batch.push_values(&frame.values).map_err(|e| {
            let desc = schema.streams.get(frame.stream);
            let stream = desc.map_or("?", |d| d.name.as_str());
            let signal = desc
                .and_then(|d| d.signals.get(e.signal))
                .map_or("?", |s| s.name.as_str());
            Error::Value {
                stream: stream.to_owned(),
                signal: signal.to_owned(),
                message: e.message,
            }
        })
    }
}

/// The default [`crate::RecordingReader::read_batches`]: rows from `read_frame`, pushed one by
/// one with the row path's checks.
pub fn read_batches_by_rows<R: crate::RecordingReader + ?Sized>(
    reader: &mut R,
    dst: &mut BatchSet,
) -> Result<bool> {
    let mut frame = std::mem::take(&mut dst.scratch);
    let result = (|| {
        if dst.is_full() {
            return Ok(true);
        }
        loop {
            if !reader.read_frame(&mut frame)? {
                return Ok(false);
            }
            let stream = frame.stream;
            // `push_frame` refuses a stream the schema lacks.
            if stream >= dst.len() || dst.wants(stream) {
                dst.push_frame(&frame, reader.schema())?;
                if dst.stream(stream).is_full(dst.capacity) {
                    return Ok(true);
                }
            }
        }
    })();
    dst.scratch = frame;
    result
}

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
    };
    format!("a {kind} array cannot be stored in a {dtype} column")
}

/// Exact conversions into an element type.
trait Element: Copy {
    fn from_int(v: i64, dtype: DType) -> std::result::Result<Self, String>;
    fn from_uint(v: u64, dtype: DType) -> std::result::Result<Self, String>;
    fn from_float(v: f64, dtype: DType) -> std::result::Result<Self, String>;
}

macro_rules! int_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn from_int(v: i64, dtype: DType) -> std::result::Result<Self, String> {
                <$t>::try_from(v).map_err(|_| format!("value {v} does not fit in {dtype}"))
            }
            fn from_uint(v: u64, dtype: DType) -> std::result::Result<Self, String> {
                <$t>::try_from(v).map_err(|_| format!("value {v} does not fit in {dtype}"))
            }
            fn from_float(v: f64, dtype: DType) -> std::result::Result<Self, String> {
                Err(mismatch(&Value::Float(v), dtype))
            }
        }
    )*};
}
int_element!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn from_int(v: i64, dtype: DType) -> std::result::Result<Self, String> {
                let f = v as $t;
                if f as i128 == i128::from(v) {
                    Ok(f)
                } else {
                    Err(format!("integer {v} is not exactly representable as {dtype}"))
                }
            }
            fn from_uint(v: u64, dtype: DType) -> std::result::Result<Self, String> {
                let f = v as $t;
                if f as u128 == u128::from(v) {
                    Ok(f)
                } else {
                    Err(format!("integer {v} is not exactly representable as {dtype}"))
                }
            }
            fn from_float(v: f64, _: DType) -> std::result::Result<Self, String> {
                // Readers widen f32 signals to f64 without loss, so narrowing back is exact.
                Ok(v as $t)
            }
        }
    )*};
}
float_element!(f32, f64);

fn put_number<T: Element>(
    out: &mut Vec<T>,
    value: &Value,
    dtype: DType,
    write: bool,
) -> std::result::Result<(), String> {
    let x = match *value {
        Value::Int(i) => T::from_int(i, dtype)?,
        Value::UInt(u) => T::from_uint(u, dtype)?,
        Value::Float(f) => T::from_float(f, dtype)?,
        ref v => return Err(mismatch(v, dtype)),
    };
    if write {
        out.push(x);
    }
    Ok(())
}

fn put_number_array<T: Element>(
    out: &mut Vec<T>,
    array: &ArrayValue,
    dtype: DType,
    write: bool,
) -> std::result::Result<(), String> {
    fn each<T: Element, S: Copy>(
        out: &mut Vec<T>,
        items: &[S],
        write: bool,
        convert: impl Fn(S) -> std::result::Result<T, String>,
    ) -> std::result::Result<(), String> {
        if write {
            out.reserve(items.len());
            for &s in items {
                out.push(convert(s)?);
            }
        } else {
            for &s in items {
                convert(s)?;
            }
        }
        Ok(())
    }
    match array {
        ArrayValue::Int(v) => each(out, v, write, |x| T::from_int(x, dtype)),
        ArrayValue::UInt(v) => each(out, v, write, |x| T::from_uint(x, dtype)),
        ArrayValue::F32(v) => each(out, v, write, |x| T::from_float(f64::from(x), dtype)),
        ArrayValue::F64(v) => each(out, v, write, |x| T::from_float(x, dtype)),
        a @ ArrayValue::Bool(_) => Err(array_mismatch(a, dtype)),
    }
}

fn put_scalar(
    data: &mut ColumnData,
    value: &Value,
    dtype: DType,
    write: bool,
) -> std::result::Result<(), String> {
    match data {
        ColumnData::Bool(v) => match value {
            Value::Bool(b) => {
                if write {
                    v.push(*b);
                }
                Ok(())
            }
            other => Err(mismatch(other, dtype)),
        },
        ColumnData::I8(v) => put_number(v, value, dtype, write),
        ColumnData::I16(v) => put_number(v, value, dtype, write),
        ColumnData::I32(v) => put_number(v, value, dtype, write),
        ColumnData::I64(v) => put_number(v, value, dtype, write),
        ColumnData::U8(v) => put_number(v, value, dtype, write),
        ColumnData::U16(v) => put_number(v, value, dtype, write),
        ColumnData::U32(v) => put_number(v, value, dtype, write),
        ColumnData::U64(v) => put_number(v, value, dtype, write),
        ColumnData::F32(v) => put_number(v, value, dtype, write),
        ColumnData::F64(v) => put_number(v, value, dtype, write),
        ColumnData::Str(t) => match value {
            Value::Str(s) => {
                t.check_room(s.len())?;
                if write {
                    t.push(s.as_bytes());
                }
                Ok(())
            }
            other => Err(mismatch(other, dtype)),
        },
        ColumnData::Bytes(t) => {
            let bytes = match value {
                Value::Bytes(b) => b.as_slice(),
                Value::Str(s) => s.as_bytes(),
                other => return Err(mismatch(other, dtype)),
            };
            t.check_room(bytes.len())?;
            if write {
                t.push(bytes);
            }
            Ok(())
        }
    }
}

fn put_array(
    data: &mut ColumnData,
    array: &ArrayValue,
    dtype: DType,
    write: bool,
) -> std::result::Result<(), String> {
    match data {
        ColumnData::Bool(v) => match array {
            ArrayValue::Bool(items) => {
                if write {
                    v.extend_from_slice(items);
                }
                Ok(())
            }
            a => Err(array_mismatch(a, dtype)),
        },
        ColumnData::I8(v) => put_number_array(v, array, dtype, write),
        ColumnData::I16(v) => put_number_array(v, array, dtype, write),
        ColumnData::I32(v) => put_number_array(v, array, dtype, write),
        ColumnData::I64(v) => put_number_array(v, array, dtype, write),
        ColumnData::U8(v) => put_number_array(v, array, dtype, write),
        ColumnData::U16(v) => put_number_array(v, array, dtype, write),
        ColumnData::U32(v) => put_number_array(v, array, dtype, write),
        ColumnData::U64(v) => put_number_array(v, array, dtype, write),
        ColumnData::F32(v) => put_number_array(v, array, dtype, write),
        ColumnData::F64(v) => put_number_array(v, array, dtype, write),
        ColumnData::Str(_) | ColumnData::Bytes(_) => Err(array_mismatch(array, dtype)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{StreamDesc, TimeBase};

    fn signals() -> Vec<SignalDesc> {
        vec![
            SignalDesc::scalar("t", DType::U64),
            SignalDesc::scalar("b", DType::U8),
            SignalDesc::scalar("v", DType::F32).with_shape(Shape::Fixed(vec![2])),
            SignalDesc::scalar("l", DType::I16).with_shape(Shape::Variable),
            SignalDesc::scalar("s", DType::Str),
        ]
    }

    /// [`StreamBatch::time_summary`] against the row-by-row fold a scan used to make, over
    /// lengths around the block and lane sizes, NaN times, times going back, and nulls.
    #[test]
    fn time_summary_is_the_fold_of_every_row() {
        fn fold(batch: &StreamBatch, desc: &StreamDesc) -> TimeSummary {
            let mut s = TimeSummary::default();
            batch.for_each_time(desc, |t| {
                let Some(t) = t else { return };
                s.first = s.first.or(Some(t));
                s.min = Some(s.min.map_or(t, |v| v.min(t)));
                s.max = Some(s.max.map_or(t, |v| v.max(t)));
                if s.last.is_some_and(|last| t < last) {
                    s.backwards += 1;
                }
                s.last = Some(t);
            });
            s
        }
        let bits = |x: Option<f64>| x.map(f64::to_bits);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in [0usize, 1, 7, 8, 9, 63, 511, 512, 513, 1500] {
            for (dtype, nulls, nans) in [
                (DType::F64, false, false),
                (DType::F64, false, true),
                (DType::F64, true, true),
                (DType::U64, false, false),
                (DType::I32, true, false),
            ] {
                let signals = vec![SignalDesc::scalar("t", dtype)];
                let desc = StreamDesc::new("S", signals[0].clone(), TimeBase::MICROSECONDS);
                let values: Vec<Value> = (0..len)
                    .map(|i| {
                        let r = next();
                        let t = i as f64 * 10.0 - (r % 25) as f64;
                        if nulls && r % 11 == 0 {
                            Value::Null
                        } else if nans && r % 13 == 0 {
                            Value::Float(f64::NAN)
                        } else {
                            match dtype {
                                DType::F64 => Value::Float(t),
                                DType::U64 => Value::UInt(t.max(0.0) as u64),
                                _ => Value::Int(t as i64),
                            }
                        }
                    })
                    .collect();
                let batch_of = |values: &[Value]| {
                    let mut batch = StreamBatch::new(0, &signals, values.len());
                    for v in values {
                        batch.push_values(std::slice::from_ref(v)).unwrap();
                    }
                    batch
                };
                let batch = batch_of(&values);
                let what = format!("{len} rows of {dtype:?}, nulls {nulls}, NaN {nans}");
                let same = |want: &TimeSummary, got: &TimeSummary, how: &str| {
                    assert_eq!(bits(want.first), bits(got.first), "{what}{how}: first");
                    assert_eq!(bits(want.last), bits(got.last), "{what}{how}: last");
                    assert_eq!(bits(want.min), bits(got.min), "{what}{how}: min");
                    assert_eq!(bits(want.max), bits(got.max), "{what}{how}: max");
                    assert_eq!(want.backwards, got.backwards, "{what}{how}: backwards");
                };
                let want = fold(&batch, &desc);
                same(&want, &batch.time_summary(&desc), "");
                // Two batches of consecutive rows, merged, summarise as the whole.
                let (head, tail) = values.split_at(len / 3);
                let mut merged = batch_of(head).time_summary(&desc);
                merged.merge(&batch_of(tail).time_summary(&desc));
                same(&want, &merged, ", merged");
            }
        }
    }

    #[test]
    fn rows_round_trip_through_columns() {
        let mut batch = StreamBatch::new(0, &signals(), 8);
        let rows = [
            vec![
                Value::UInt(1),
                Value::Int(255),
                Value::Array(ArrayValue::F64(vec![0.5, 2.0])),
                Value::Array(ArrayValue::Int(vec![-1, 2, 3])),
                Value::Str("a".into()),
            ],
            vec![
                Value::UInt(2),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
            vec![
                Value::UInt(3),
                Value::UInt(7),
                Value::Array(ArrayValue::F32(vec![1.0, -1.0])),
                Value::Array(ArrayValue::Int(vec![])),
                Value::Str(String::new()),
            ],
        ];
        for row in &rows {
            batch.push_values(row).unwrap();
        }
        batch.check_consistent().unwrap();
        let expected_v = Value::Array(ArrayValue::F32(vec![0.5, 2.0]));
        assert_eq!(batch.row_values(0)[2], expected_v);
        assert_eq!(batch.row_values(1), rows[1]);
        assert_eq!(batch.row_values(0)[3], rows[0][3]);
        assert_eq!(batch.row_values(2)[4], rows[2][4]);
        assert_eq!(batch.columns()[2].data().len(), 6);
        let desc = crate::StreamDesc {
            signals: signals(),
            ..crate::StreamDesc::new("S", signals()[0].clone(), crate::TimeBase::MICROSECONDS)
        };
        assert_eq!(batch.times(&desc), [Some(1e-6), Some(2e-6), Some(3e-6)]);
    }

    #[test]
    fn a_bad_value_leaves_the_batch_unchanged() {
        let mut batch = StreamBatch::new(0, &signals(), 8);
        let bad = [
            Value::UInt(1),
            Value::Int(300),
            Value::Null,
            Value::Null,
            Value::Null,
        ];
        let err = batch.push_values(&bad).unwrap_err();
        assert_eq!(err.signal, 1);
        assert!(err.message.contains("300"), "{err}");
        assert_eq!(batch.rows(), 0);
        batch.check_consistent().unwrap();
        let wrong_shape = [
            Value::UInt(1),
            Value::Null,
            Value::Array(ArrayValue::F32(vec![1.0])),
            Value::Null,
            Value::Null,
        ];
        assert!(batch.push_values(&wrong_shape).is_err());
        assert!(batch.push_values(&[Value::Float(1.5)]).is_err());
        let float_in_int = [
            Value::UInt(1),
            Value::Float(1.5),
            Value::Null,
            Value::Null,
            Value::Null,
        ];
        assert!(batch.push_values(&float_in_int).is_err());
        assert_eq!(batch.rows(), 0);
    }

    #[test]
    fn direct_appends_are_checked_and_padded() {
        let mut batch = StreamBatch::new(0, &signals()[..2], 8);
        batch.push_values(&[Value::UInt(1), Value::Null]).unwrap();
        if let ColumnData::U64(t) = batch.columns_mut()[0].data_mut() {
            t.extend([2, 3]);
        }
        if let ColumnData::U8(b) = batch.columns_mut()[1].data_mut() {
            b.extend([4, 5]);
        }
        batch.commit_rows(2);
        batch.check_consistent().unwrap();
        assert_eq!(
            batch.columns()[1].validity(),
            Some(&[false, true, true][..])
        );
        if let ColumnData::U64(t) = batch.columns_mut()[0].data_mut() {
            t.push(9);
        }
        assert!(batch.check_consistent().is_err());
    }

    #[test]
    fn slices_append_as_the_equivalent_values_do() {
        let mut direct = StreamBatch::new(0, &signals(), 8);
        let mut by_value = StreamBatch::new(0, &signals(), 8);
        type Row<'a> = (u64, Option<&'a [f32]>, Option<&'a [i16]>);
        let rows: [Row; 3] = [
            (1, Some(&[0.5, 2.0]), Some(&[-1, 2, 3])),
            (2, None, None),
            (3, Some(&[1.0, -1.0]), Some(&[])),
        ];
        for (t, v, l) in rows {
            let row = direct.rows();
            let cols = direct.columns_mut();
            cols[0].push_slice(&[t]).unwrap();
            cols[1].push_value(&Value::Null, row).unwrap();
            match v {
                Some(v) => cols[2].push_slice(v).unwrap(),
                None => cols[2].push_value(&Value::Null, row).unwrap(),
            }
            match l {
                Some(l) => {
                    cols[3].room_for(l.len()).unwrap();
                    cols[3].push_slice(l).unwrap();
                }
                None => cols[3].push_value(&Value::Null, row).unwrap(),
            }
            cols[4].room_for(1).unwrap();
            cols[4].push_str("x").unwrap();
            direct.commit_rows(1);
            let array = |a: Option<ArrayValue>| a.map_or(Value::Null, Value::Array);
            by_value
                .push_values(&[
                    Value::UInt(t),
                    Value::Null,
                    array(v.map(|v| ArrayValue::F32(v.to_vec()))),
                    array(l.map(|l| ArrayValue::Int(l.iter().map(|&x| x.into()).collect()))),
                    Value::Str("x".into()),
                ])
                .unwrap();
        }
        direct.check_consistent().unwrap();
        assert_eq!(direct, by_value);
        // Refused: another element type, a fixed shape of another size; nothing appended.
        let cols = direct.columns_mut();
        assert!(cols[2].push_slice(&[1.0f64, 2.0]).is_err());
        assert!(cols[2].push_slice(&[1.0f32]).is_err());
        assert!(cols[0].push_slice(&[1u64, 2]).is_err());
        assert_eq!(cols[2].data().len(), 6);
        assert!(cols[3].room_for(usize::MAX).is_err());
        assert!(cols[4].room_for(usize::MAX).is_err());
        assert!(cols[2].room_for(usize::MAX).is_ok());
        direct.check_consistent().unwrap();
    }

    #[test]
    fn append_and_retain_keep_rows_aligned() {
        let rows = |t: u64, null: bool| {
            vec![
                Value::UInt(t),
                if null { Value::Null } else { Value::UInt(t) },
                Value::Array(ArrayValue::F32(vec![t as f32, -(t as f32)])),
                Value::Array(ArrayValue::Int((0..(t as i64 % 3)).collect())),
                Value::Str(format!("r{t}")),
            ]
        };
        let mut a = StreamBatch::new(0, &signals(), 8);
        let mut b = StreamBatch::new(0, &signals(), 8);
        let mut all = StreamBatch::new(0, &signals(), 8);
        for t in 0..5 {
            a.push_values(&rows(t, t == 1)).unwrap();
            all.push_values(&rows(t, t == 1)).unwrap();
        }
        for t in 5..9 {
            b.push_values(&rows(t, t == 7)).unwrap();
            all.push_values(&rows(t, t == 7)).unwrap();
        }
        a.append(b).unwrap();
        a.check_consistent().unwrap();
        assert_eq!(a, all);
        let keep: Vec<bool> = (0..9).map(|t| t % 2 == 1).collect();
        a.retain_rows(&keep);
        a.check_consistent().unwrap();
        assert_eq!(a.rows(), 4);
        for (i, t) in [1u64, 3, 5, 7].into_iter().enumerate() {
            assert_eq!(a.row_values(i), {
                let mut r = rows(t, t == 1 || t == 7);
                if let Value::Array(ArrayValue::F32(_)) = r[2] {
                    r[2] = Value::Array(ArrayValue::F32(vec![t as f32, -(t as f32)]));
                }
                r
            });
        }
        let mut empty = StreamBatch::new(0, &signals(), 8);
        empty.append(a.clone()).unwrap();
        assert_eq!(empty, a);
    }

    #[test]
    fn skipped_columns_hold_nothing_and_stay_consistent() {
        let stream = StreamDesc {
            signals: signals(),
            ..StreamDesc::new("S", signals()[0].clone(), TimeBase::MICROSECONDS)
        };
        let schema = Schema {
            streams: vec![stream],
        };
        let mut set = BatchSet::with_columns(&schema, 8, |_| true, |_, signal| signal == 0);
        let row = |t: u64| FrameBuf {
            stream: 0,
            values: vec![
                Value::UInt(t),
                Value::UInt(3),
                Value::Array(ArrayValue::F32(vec![1.0, 2.0])),
                Value::Null,
                Value::Str("x".into()),
            ],
        };
        set.push_frame(&row(1), &schema).unwrap();
        set.push_frame(&row(2), &schema).unwrap();
        let batch = set.take(0);
        batch.check_consistent().unwrap();
        assert_eq!(batch.rows(), 2);
        assert!(batch.columns()[1].is_skipped() && !batch.columns()[0].is_skipped());
        assert!(batch.columns()[4].data().is_empty());
        assert_eq!(batch.row_values(1)[0], Value::UInt(2));
        assert_eq!(batch.row_values(1)[2], Value::Null);
        assert!(set.stream(0).columns()[2].is_skipped());
    }

    #[test]
    fn the_set_fills_wanted_streams_and_reports_full() {
        let a = StreamDesc::new("A", SignalDesc::scalar("t", DType::U64), TimeBase::SECONDS);
        let b = StreamDesc::new("B", SignalDesc::scalar("t", DType::U64), TimeBase::SECONDS);
        let schema = Schema {
            streams: vec![a, b],
        };
        let mut set = BatchSet::with_streams(&schema, 2, |i| i == 1);
        assert!(!set.wants(0) && set.wants(1));
        let frame = FrameBuf {
            stream: 1,
            values: vec![Value::UInt(5)],
        };
        set.push_frame(&frame, &schema).unwrap();
        assert!(!set.is_full());
        set.push_frame(&frame, &schema).unwrap();
        assert!(set.is_full());
        let full = set.take_at_least(2);
        assert_eq!(full.len(), 1);
        assert_eq!(full[0].stream(), 1);
        assert_eq!(set.rows(), 0);
        let stray = FrameBuf {
            stream: 7,
            values: vec![],
        };
        assert!(set.push_frame(&stray, &schema).is_err());
    }
}
