//! Arrow columns encoded as the little-endian bytes of HDF5 elements (see
//! [the module docs](super#types) for the types and [nulls](super#nulls)).

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, BooleanArray, PrimitiveArray, StringArray};
use arrow_buffer::NullBuffer;

use super::layout::Elem;

/// Which elements of a column are null: the element's own null bit, or its row's.
pub(super) struct Nulls<'a> {
    pub(super) values: &'a dyn Array,
    pub(super) rows: Option<&'a NullBuffer>,
    pub(super) per_row: usize,
}

impl Nulls<'_> {
    fn any(&self) -> bool {
        self.values.null_count() > 0 || self.rows.is_some_and(|n| n.null_count() > 0)
    }

    fn is_null(&self, element: usize) -> bool {
        self.values.is_null(element) || self.rows.is_some_and(|n| n.is_null(element / self.per_row))
    }
}

/// The typed elements of a column.
pub(super) enum Source<'a> {
    Bool(&'a BooleanArray),
    I8(&'a PrimitiveArray<Int8Type>),
    I16(&'a PrimitiveArray<Int16Type>),
    I32(&'a PrimitiveArray<Int32Type>),
    I64(&'a PrimitiveArray<Int64Type>),
    U8(&'a PrimitiveArray<UInt8Type>),
    U16(&'a PrimitiveArray<UInt16Type>),
    U32(&'a PrimitiveArray<UInt32Type>),
    U64(&'a PrimitiveArray<UInt64Type>),
    F32(&'a PrimitiveArray<Float32Type>),
    F64(&'a PrimitiveArray<Float64Type>),
    Str(&'a StringArray, u32),
}

/// An element that cannot be written: its index and what is wrong.
pub(super) type ElementError = (usize, String);

impl<'a> Source<'a> {
    pub(super) fn new(elem: Elem, values: &'a dyn Array) -> Option<Self> {
        Some(match elem {
            Elem::Bool => Source::Bool(values.as_boolean_opt()?),
            Elem::I8 => Source::I8(values.as_primitive_opt()?),
            Elem::I16 => Source::I16(values.as_primitive_opt()?),
            Elem::I32 => Source::I32(values.as_primitive_opt()?),
            Elem::I64 => Source::I64(values.as_primitive_opt()?),
            Elem::U8 => Source::U8(values.as_primitive_opt()?),
            Elem::U16 => Source::U16(values.as_primitive_opt()?),
            Elem::U32 => Source::U32(values.as_primitive_opt()?),
            Elem::U64 => Source::U64(values.as_primitive_opt()?),
            Elem::F32 => Source::F32(values.as_primitive_opt()?),
            Elem::F64 => Source::F64(values.as_primitive_opt()?),
            Elem::Str(width) => Source::Str(values.as_string_opt::<i32>()?, width),
        })
    }

    /// Appends the little-endian bytes of `elements` to `out`.
    pub(super) fn encode(
        &self,
        nulls: &Nulls<'_>,
        elements: Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), ElementError> {
        match self {
            Source::Bool(a) => {
                for i in elements {
                    if nulls.is_null(i) {
                        return Err((i, null_message("bool")));
                    }
                    out.push(u8::from(a.value(i)));
                }
                Ok(())
            }
            Source::I8(a) => put_ints(a, nulls, elements, out, "i8"),
            Source::I16(a) => put_ints(a, nulls, elements, out, "i16"),
            Source::I32(a) => put_ints(a, nulls, elements, out, "i32"),
            Source::I64(a) => put_ints(a, nulls, elements, out, "i64"),
            Source::U8(a) => put_ints(a, nulls, elements, out, "u8"),
            Source::U16(a) => put_ints(a, nulls, elements, out, "u16"),
            Source::U32(a) => put_ints(a, nulls, elements, out, "u32"),
            Source::U64(a) => put_ints(a, nulls, elements, out, "u64"),
            Source::F32(a) => {
                put_floats(a, nulls, elements, out);
                Ok(())
            }
            Source::F64(a) => {
                put_floats(a, nulls, elements, out);
                Ok(())
            }
            Source::Str(a, width) => put_strings(a, *width, nulls, elements, out),
        }
    }
}

fn null_message(dtype: &str) -> String {
    format!(
        "null in a {dtype} column: HDF5 {dtype} datasets cannot hold a null \
         (only float nulls have a form, NaN); export to Parquet to keep nulls"
    )
}

/// Numbers written as little-endian bytes.
trait LeBytes: Copy {
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le_bytes!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// Floats with a NaN for nulls.
trait FloatLe: LeBytes {
    const NAN: Self;
}

impl FloatLe for f32 {
    const NAN: Self = f32::NAN;
}

impl FloatLe for f64 {
    const NAN: Self = f64::NAN;
}

fn put_ints<T>(
    a: &PrimitiveArray<T>,
    nulls: &Nulls<'_>,
    elements: Range<usize>,
    out: &mut Vec<u8>,
    dtype: &str,
) -> Result<(), ElementError>
where
    T: ArrowPrimitiveType,
    T::Native: LeBytes,
{
    let any_null = nulls.any();
    for i in elements {
        if any_null && nulls.is_null(i) {
            return Err((i, null_message(dtype)));
        }
        a.value(i).put(out);
    }
    Ok(())
}

fn put_floats<T>(
    a: &PrimitiveArray<T>,
    nulls: &Nulls<'_>,
    elements: Range<usize>,
    out: &mut Vec<u8>,
) where
    T: ArrowPrimitiveType,
    T::Native: FloatLe,
{
    if nulls.any() {
        for i in elements {
            let v = if nulls.is_null(i) {
                T::Native::NAN
            } else {
                a.value(i)
            };
            v.put(out);
        }
    } else {
        for &v in &a.values()[elements] {
            v.put(out);
        }
    }
}

fn put_strings(
    a: &StringArray,
    width: u32,
    nulls: &Nulls<'_>,
    elements: Range<usize>,
    out: &mut Vec<u8>,
) -> Result<(), ElementError> {
    let width = width as usize;
    for i in elements {
        let text = if nulls.is_null(i) { "" } else { a.value(i) };
        let bytes = text.as_bytes();
        if bytes.len() > width {
            return Err((
                i,
                format!(
                    "a text of {} bytes does not fit the HDF5 string width of {width} bytes; \
                     raise the string width (Hdf5Options::string_width)",
                    bytes.len()
                ),
            ));
        }
        if bytes.contains(&0) {
            return Err((
                i,
                "a text holding a NUL character cannot be stored in a null-padded HDF5 string"
                    .to_owned(),
            ));
        }
        out.extend_from_slice(bytes);
        out.resize(out.len() + (width - bytes.len()), 0);
    }
    Ok(())
}
