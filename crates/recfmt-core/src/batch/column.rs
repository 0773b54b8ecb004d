//! One signal's column ([`ColumnBuf`]): pushing values, slices and nulls, and the native
//! element types.

use super::MAX_PREALLOCATED_ROWS;
use super::convert::{describe, put_array, put_scalar};
use super::data::ColumnData;
use crate::{ArrayValue, DType, Shape, SignalDesc, Value};

/// How a column's elements make up its rows.
#[derive(Debug, Clone, PartialEq)]
enum RowShape {
    /// `n` elements per row (1 for scalars).
    Fixed(usize),
    /// Per-row offsets into the elements, one more than there are rows, from 0.
    Variable(Vec<i32>),
}

/// One signal's values for the rows of a [`StreamBatch`](crate::StreamBatch).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnBuf {
    pub(super) dtype: DType,
    shape: RowShape,
    pub(super) data: ColumnData,
    /// One flag per row, or empty while every row so far is valid (the common case costs
    /// nothing).
    pub(super) validity: Vec<bool>,
    /// Not read at all: the caller asked for other columns only (see
    /// [`BatchSet::with_columns`](crate::BatchSet::with_columns)). A skipped column holds no values.
    pub(super) skipped: bool,
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
    pub(super) fn empty_like(&self, rows: usize) -> Self {
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

    /// True when the column is not read (see [`BatchSet::with_columns`](crate::BatchSet::with_columns)): it holds no values,
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
    /// elements of `n` rows to every column then calls [`StreamBatch::commit_rows`](crate::StreamBatch::commit_rows)`(n)`.
    pub fn data_mut(&mut self) -> &mut ColumnData {
        &mut self.data
    }

    /// [`ColumnBuf::data_mut`] for a column the caller asked for, `None` for a skipped one
    /// (see [`BatchSet::with_columns`](crate::BatchSet::with_columns)), which a reader leaves empty.
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
    pub(super) fn put(
        &mut self,
        value: &Value,
        row: usize,
        write: bool,
    ) -> std::result::Result<(), String> {
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
        if self.push_same_type(value) {
            return Ok(());
        }
        self.push_value(&value.into_value(), row)
    }

    /// The common case of [`ColumnBuf::push_native`], small enough to inline into every
    /// reader's decode loop: a scalar of the column's own type goes straight into its `Vec`
    /// (a skipped column takes nothing). False, with nothing done, when the value needs a
    /// conversion.
    #[inline(always)]
    pub(crate) fn push_same_type<T: crate::RowElement>(&mut self, value: T) -> bool {
        if self.skipped {
            return true;
        }
        if let RowShape::Fixed(1) = self.shape
            && let Some(data) = T::elements_mut(&mut self.data)
        {
            data.push(value);
            if !self.validity.is_empty() {
                self.validity.push(true);
            }
            return true;
        }
        false
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

    /// Appends `width` elements per row for a run of rows of a fixed-shape array column
    /// (see [`crate::RowWriter::push_array_column`]), row after row: straight into the
    /// column's `Vec` when `T` is its element type and the shape is `width`, else row by row
    /// as [`ColumnBuf::push_value`] does (`row`: the rows the batch holds before the run).
    /// Returns the whole rows taken; `values` must hold a whole number of rows.
    pub(crate) fn extend_fixed_native<T: crate::RowElement>(
        &mut self,
        values: impl Iterator<Item = T>,
        width: usize,
        row: usize,
    ) -> std::result::Result<usize, String> {
        let width = width.max(1);
        if self.skipped {
            return Ok(values.count() / width);
        }
        if let RowShape::Fixed(n) = self.shape
            && n == width
            && let Some(data) = T::elements_mut(&mut self.data)
        {
            let before = data.len();
            data.extend(values);
            let added = data.len() - before;
            if added % width != 0 {
                data.truncate(before);
                return Err(format!(
                    "{added} elements do not make whole rows of {width} elements"
                ));
            }
            if !self.validity.is_empty() {
                self.validity
                    .extend(std::iter::repeat_n(true, added / width));
            }
            return Ok(added / width);
        }
        let mut items = Vec::with_capacity(width);
        let mut added = 0;
        for value in values {
            items.push(value);
            if items.len() == width {
                self.push_value(&Value::Array(T::array(&items)), row + added)?;
                items.clear();
                added += 1;
            }
        }
        if !items.is_empty() {
            return Err(format!(
                "{} elements left over after {added} rows of {width} elements",
                items.len()
            ));
        }
        Ok(added)
    }

    /// Drops every row past the first `rows` (the values of a row a reader did not finish).
    pub(super) fn truncate_rows(&mut self, rows: usize) {
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
    /// batch unchanged, as [`StreamBatch::push_values`](crate::StreamBatch::push_values) does. The message is the row path's.
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
    /// appended. Call [`StreamBatch::commit_rows`](crate::StreamBatch::commit_rows) once every column of the row is pushed.
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
    pub(super) fn append(
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
    pub(super) fn retain_rows(&mut self, keep: &[bool]) {
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
    pub(super) fn fill_validity(&mut self, rows: usize) {
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
