//! Exact conversion of [`Value`]s into column elements, with messages naming the value.

use super::data::ColumnData;
use crate::{ArrayValue, DType, Value};

pub(super) fn describe(value: &Value) -> String {
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

pub(super) fn put_scalar(
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

pub(super) fn put_array(
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
