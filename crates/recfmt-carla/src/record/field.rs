//! The field types of fixed records: how each is stored, checked, shown as columns, pushed
//! into a row and taken from one.

use std::marker::PhantomData;

use recfmt_core::{DType, RowElement, RowWriter, SignalDesc};

use crate::codec::cursor::Put;
use crate::flavour::VectorWidth;
use crate::primitive::Vector3;
use crate::record::RowValues;

/// A field type of a fixed record.
pub(crate) trait Field: Sized {
    /// True when some byte values are invalid (a C++ `bool` is 0 or 1).
    const CHECKED: bool = false;
    /// Bytes the field takes.
    fn size(width: VectorWidth) -> usize;
    /// The value from the field's bytes (`bytes` starts at the field), unchecked.
    fn read(bytes: &[u8], width: VectorWidth) -> Self;
    /// What is wrong with the field's bytes, if anything.
    fn check(bytes: &[u8]) -> Option<String> {
        let _ = bytes;
        None
    }
    /// Appends the field's bytes.
    fn encode(&self, out: &mut Vec<u8>);
    /// The type of the field's columns.
    fn dtype(width: VectorWidth) -> DType;
    /// Pushes the field's columns for a run of records (`fields`: the field's bytes in
    /// each), decoding only the wanted columns.
    fn emit<'a>(
        fields: impl Iterator<Item = &'a [u8]> + Clone,
        width: VectorWidth,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()>;
    /// The value from a row's columns starting at `at`.
    fn from_row(row: &RowValues<'_>, at: usize, width: VectorWidth) -> recfmt_core::Result<Self>;
}

/// `N` bytes at the start of `bytes` (zeros when shorter, which a checked record never is).
#[inline(always)]
fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes.first_chunk::<N>().copied().unwrap_or([0; N])
}

/// Bytes from `at` on (empty past the end).
#[inline(always)]
fn from(bytes: &[u8], at: usize) -> &[u8] {
    bytes.get(at..).unwrap_or_default()
}

/// Pushes one column of a run, decoding it only when wanted.
#[inline(always)]
fn emit_one<T: RowElement>(
    row: &mut RowWriter<'_>,
    values: impl Iterator<Item = T>,
) -> recfmt_core::Result<()> {
    if row.wants_next() {
        row.push_column(values)
    } else {
        row.skip()
    }
}

macro_rules! number_field {
    ($($t:ty => $dtype:ident, $put:ident, $get:ident;)*) => {$(
        impl Field for $t {
            #[inline(always)]
            fn size(_: VectorWidth) -> usize {
                size_of::<$t>()
            }
            #[inline(always)]
            fn read(bytes: &[u8], _: VectorWidth) -> Self {
                <$t>::from_le_bytes(le(bytes))
            }
            fn encode(&self, out: &mut Vec<u8>) {
                out.$put(*self);
            }
            fn dtype(_: VectorWidth) -> DType {
                DType::$dtype
            }
            #[inline(always)]
            fn emit<'a>(fields: impl Iterator<Item = &'a [u8]> + Clone, width: VectorWidth, row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
                emit_one(row, fields.map(|b| Self::read(b, width)))
            }
            fn from_row(row: &RowValues<'_>, at: usize, _: VectorWidth) -> recfmt_core::Result<Self> {
                row.$get(at)
            }
        }
    )*};
}
number_field! {
    u8 => U8, put_u8, u8;
    u32 => U32, put_u32, u32;
    i32 => I32, put_i32, i32;
    f32 => F32, put_f32, f32;
}

/// A C++ `bool`: one byte, 0 or 1.
impl Field for bool {
    const CHECKED: bool = true;
    fn size(_: VectorWidth) -> usize {
        1
    }
    #[inline(always)]
    fn read(bytes: &[u8], _: VectorWidth) -> Self {
        bytes.first().is_some_and(|&b| b != 0)
    }
    fn check(bytes: &[u8]) -> Option<String> {
        match bytes.first() {
            Some(0 | 1) => None,
            Some(b) => Some(format!("bool byte must be 0 or 1, found {b}")),
            None => Some("a bool byte".into()),
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.put_bool(*self);
    }
    fn dtype(_: VectorWidth) -> DType {
        DType::Bool
    }
    #[inline(always)]
    fn emit<'a>(
        fields: impl Iterator<Item = &'a [u8]> + Clone,
        width: VectorWidth,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()> {
        emit_one(row, fields.map(|b| Self::read(b, width)))
    }
    fn from_row(row: &RowValues<'_>, at: usize, _: VectorWidth) -> recfmt_core::Result<Self> {
        row.bool(at)
    }
}

/// Four `f32` (an RGBA colour), one column each.
impl Field for [f32; 4] {
    fn size(_: VectorWidth) -> usize {
        16
    }
    fn read(bytes: &[u8], width: VectorWidth) -> Self {
        [0, 4, 8, 12].map(|at| f32::read(from(bytes, at), width))
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.put_f32s(self);
    }
    fn dtype(_: VectorWidth) -> DType {
        DType::F32
    }
    fn emit<'a>(
        fields: impl Iterator<Item = &'a [u8]> + Clone,
        width: VectorWidth,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()> {
        for at in [0, 4, 8, 12] {
            emit_one(row, fields.clone().map(|b| f32::read(from(b, at), width)))?;
        }
        Ok(())
    }
    fn from_row(row: &RowValues<'_>, at: usize, _: VectorWidth) -> recfmt_core::Result<Self> {
        Ok([
            row.f32(at)?,
            row.f32(at + 1)?,
            row.f32(at + 2)?,
            row.f32(at + 3)?,
        ])
    }
}

/// An `FVector` of the build's width: three columns of its float type.
impl Field for Vector3 {
    fn size(width: VectorWidth) -> usize {
        width.vector_size()
    }
    #[inline(always)]
    fn read(bytes: &[u8], width: VectorWidth) -> Self {
        match width {
            VectorWidth::F32 => {
                Vector3::F32([0, 4, 8].map(|at| f32::from_le_bytes(le(from(bytes, at)))))
            }
            VectorWidth::F64 => {
                Vector3::F64([0, 8, 16].map(|at| f64::from_le_bytes(le(from(bytes, at)))))
            }
        }
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.put_vector(self);
    }
    fn dtype(width: VectorWidth) -> DType {
        match width {
            VectorWidth::F32 => DType::F32,
            VectorWidth::F64 => DType::F64,
        }
    }
    #[inline(always)]
    fn emit<'a>(
        fields: impl Iterator<Item = &'a [u8]> + Clone,
        width: VectorWidth,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()> {
        match width {
            VectorWidth::F32 => {
                for at in [0, 4, 8] {
                    emit_one(
                        row,
                        fields.clone().map(|b| f32::from_le_bytes(le(from(b, at)))),
                    )?;
                }
            }
            VectorWidth::F64 => {
                for at in [0, 8, 16] {
                    emit_one(
                        row,
                        fields.clone().map(|b| f64::from_le_bytes(le(from(b, at)))),
                    )?;
                }
            }
        }
        Ok(())
    }
    fn from_row(row: &RowValues<'_>, at: usize, width: VectorWidth) -> recfmt_core::Result<Self> {
        row.vector(at, width)
    }
}

/// Column names: one for a scalar field, one per component otherwise.
pub(crate) trait Names {
    /// The names.
    fn names(&'static self) -> &'static [&'static str];
}

impl Names for &'static str {
    fn names(&'static self) -> &'static [&'static str] {
        std::slice::from_ref(self)
    }
}

impl<const N: usize> Names for [&'static str; N] {
    fn names(&'static self) -> &'static [&'static str] {
        self
    }
}

/// One field of a record as declared: its offset for a width, column names and unit.
pub(crate) struct FieldDecl<T> {
    at: usize,
    names: &'static [&'static str],
    unit: Option<&'static str>,
    ty: PhantomData<fn() -> T>,
}

impl<T: Field> FieldDecl<T> {
    #[inline(always)]
    pub(crate) fn new(
        at: usize,
        names: &'static [&'static str],
        unit: Option<&'static str>,
    ) -> Self {
        FieldDecl {
            at,
            names,
            unit,
            ty: PhantomData,
        }
    }

    /// Appends the field's columns.
    pub(crate) fn signals(&self, width: VectorWidth, out: &mut Vec<SignalDesc>) {
        for name in self.names {
            let signal = SignalDesc::scalar(*name, T::dtype(width));
            out.push(match self.unit {
                Some(unit) => signal.with_unit(unit),
                None => signal,
            });
        }
    }

    /// What is wrong with the field in `record`: its offset in the record and why.
    pub(crate) fn check(&self, record: &[u8]) -> Option<(usize, String)> {
        if !T::CHECKED {
            return None;
        }
        T::check(from(record, self.at)).map(|why| (self.at, why))
    }

    /// The field's value in `record`, unchecked.
    #[inline(always)]
    pub(crate) fn read(&self, record: &[u8], width: VectorWidth) -> T {
        T::read(from(record, self.at), width)
    }

    /// Pushes the field's columns for the run of records `records` (each `size` bytes).
    #[inline(always)]
    pub(crate) fn emit(
        &self,
        records: &[u8],
        size: usize,
        width: VectorWidth,
        row: &mut RowWriter<'_>,
    ) -> recfmt_core::Result<()> {
        let at = self.at;
        T::emit(
            records.chunks_exact(size).map(move |r| from(r, at)),
            width,
            row,
        )
    }

    /// The field's value from a row's columns at `*at`; moves `*at` past them.
    pub(crate) fn value_in_row(
        &self,
        row: &RowValues<'_>,
        at: &mut usize,
        width: VectorWidth,
    ) -> recfmt_core::Result<T> {
        let value = T::from_row(row, *at, width)?;
        *at += self.names.len();
        Ok(value)
    }
}
