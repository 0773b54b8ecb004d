//! Values and rows. A [`FrameBuf`] is reused from row to row so reading allocates nothing per value.

/// One value of one signal in one row.
///
/// Numbers are held widened without loss (`f32` as `f64`, `u8` as `u64`); the signal's
/// [`crate::DType`] says what they are on disk and in the output.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum Value {
    /// No value in this row (not sampled, not updated).
    #[default]
    Null,
    /// Boolean.
    Bool(bool),
    /// Any signed integer type.
    Int(i64),
    /// Any unsigned integer type.
    UInt(u64),
    /// Any floating-point type.
    Float(f64),
    /// Text.
    Str(String),
    /// Opaque bytes.
    Bytes(Vec<u8>),
    /// A fixed or variable array, row-major.
    Array(ArrayValue),
}

/// The elements of an array value, typed so an array of `f32` costs four bytes an element.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ArrayValue {
    /// Booleans.
    Bool(Vec<bool>),
    /// Signed integers.
    Int(Vec<i64>),
    /// Unsigned integers.
    UInt(Vec<u64>),
    /// Single precision floats.
    F32(Vec<f32>),
    /// Double precision floats.
    F64(Vec<f64>),
}

impl ArrayValue {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            ArrayValue::Bool(v) => v.len(),
            ArrayValue::Int(v) => v.len(),
            ArrayValue::UInt(v) => v.len(),
            ArrayValue::F32(v) => v.len(),
            ArrayValue::F64(v) => v.len(),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Value {
    /// The value as `f64`, for numbers and booleans.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Bool(b) => Some(f64::from(u8::from(b))),
            Value::Int(i) => Some(i as f64),
            Value::UInt(u) => Some(u as f64),
            Value::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The value as `i64` when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(i) => Some(i),
            Value::UInt(u) => i64::try_from(u).ok(),
            Value::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }

    /// The value as `u64` when it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt(u) => Some(u),
            Value::Int(i) => u64::try_from(i).ok(),
            Value::Bool(b) => Some(u64::from(b)),
            _ => None,
        }
    }

    /// Sets this value to `text`, reusing the existing string allocation when there is one.
    ///
    /// ```
    /// use recfmt_core::Value;
    /// let mut v = Value::Null;
    /// v.set_str("hello");
    /// v.set_str("hi");
    /// assert_eq!(v, Value::Str("hi".into()));
    /// ```
    pub fn set_str(&mut self, text: &str) {
        if let Value::Str(s) = self {
            s.clear();
            s.push_str(text);
        } else {
            *self = Value::Str(text.to_owned());
        }
    }

    /// Sets this value to `bytes`, reusing the existing allocation when there is one.
    pub fn set_bytes(&mut self, bytes: &[u8]) {
        if let Value::Bytes(b) = self {
            b.clear();
            b.extend_from_slice(bytes);
        } else {
            *self = Value::Bytes(bytes.to_vec());
        }
    }

    /// Makes this value an `f32` array and returns it cleared, reusing the allocation.
    pub fn f32_array(&mut self) -> &mut Vec<f32> {
        if !matches!(self, Value::Array(ArrayValue::F32(_))) {
            *self = Value::Array(ArrayValue::F32(Vec::new()));
        }
        match self {
            Value::Array(ArrayValue::F32(v)) => {
                v.clear();
                v
            }
            _ => unreachable!("set to an f32 array just above"),
        }
    }

    /// Makes this value an `f64` array and returns it cleared, reusing the allocation.
    pub fn f64_array(&mut self) -> &mut Vec<f64> {
        if !matches!(self, Value::Array(ArrayValue::F64(_))) {
            *self = Value::Array(ArrayValue::F64(Vec::new()));
        }
        match self {
            Value::Array(ArrayValue::F64(v)) => {
                v.clear();
                v
            }
            _ => unreachable!("set to an f64 array just above"),
        }
    }
}

/// One row of one stream: `values[i]` belongs to `schema.streams[stream].signals[i]`.
///
/// Readers fill a caller-owned `FrameBuf` and reuse its vectors, so a steady read loop does
/// not allocate.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrameBuf {
    /// Index of the stream in [`crate::Schema::streams`].
    pub stream: usize,
    /// One value per signal of the stream, time column included.
    pub values: Vec<Value>,
}

impl FrameBuf {
    /// Prepares the buffer for a row of `stream` with `signals` values, keeping allocations.
    pub fn reset(&mut self, stream: usize, signals: usize) {
        self.stream = stream;
        self.values.resize(signals, Value::Null);
    }

    /// Time of this row in seconds, read from the stream's time column.
    pub fn time_seconds(&self, desc: &crate::StreamDesc) -> Option<f64> {
        self.values
            .get(desc.time)
            .and_then(Value::as_f64)
            .map(|t| desc.time_base.to_seconds_f64(t))
    }
}
