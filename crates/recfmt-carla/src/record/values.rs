//! Typed values out of a row of the generic model, for the writer.

use recfmt_core::{ArrayValue, Value};

use crate::primitive::Vector3;

fn invalid(msg: impl Into<String>) -> recfmt_core::Error {
    recfmt_core::Error::invalid(msg.into())
}

/// Reads typed values out of a row, naming the row and column on failure.
pub(crate) struct RowValues<'a> {
    pub(crate) v: &'a [Value],
    pub(crate) row: u64,
    pub(crate) stream: &'a str,
}

impl RowValues<'_> {
    pub(crate) fn err(&self, i: usize, what: &str) -> recfmt_core::Error {
        invalid(format!(
            "row {} (stream {:?}), column {i}: {what}, found {:?}",
            self.row,
            self.stream,
            self.v.get(i)
        ))
    }
    pub(crate) fn f64(&self, i: usize) -> recfmt_core::Result<f64> {
        self.v
            .get(i)
            .and_then(Value::as_f64)
            .ok_or_else(|| self.err(i, "expected a number"))
    }
    /// A 32-bit float field: a finite value beyond its range is refused, not made infinite.
    pub(crate) fn f32(&self, i: usize) -> recfmt_core::Result<f32> {
        let v = self.f64(i)?;
        let narrow = v as f32;
        if v.is_finite() && narrow.is_infinite() {
            return Err(self.err(i, "expected a value within the range of a 32-bit float"));
        }
        Ok(narrow)
    }
    pub(crate) fn u64(&self, i: usize) -> recfmt_core::Result<u64> {
        self.v
            .get(i)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.err(i, "expected an unsigned integer"))
    }
    pub(crate) fn u32(&self, i: usize) -> recfmt_core::Result<u32> {
        u32::try_from(self.u64(i)?).map_err(|_| self.err(i, "expected a u32"))
    }
    pub(crate) fn u8(&self, i: usize) -> recfmt_core::Result<u8> {
        u8::try_from(self.u64(i)?).map_err(|_| self.err(i, "expected a u8"))
    }
    pub(crate) fn i32(&self, i: usize) -> recfmt_core::Result<i32> {
        self.v
            .get(i)
            .and_then(Value::as_i64)
            .and_then(|x| i32::try_from(x).ok())
            .ok_or_else(|| self.err(i, "expected an i32"))
    }
    pub(crate) fn bool(&self, i: usize) -> recfmt_core::Result<bool> {
        match self.v.get(i) {
            Some(Value::Bool(b)) => Ok(*b),
            _ => Ok(self.u64(i)? != 0),
        }
    }
    pub(crate) fn str(&self, i: usize) -> recfmt_core::Result<&str> {
        match self.v.get(i) {
            Some(Value::Str(s)) => Ok(s),
            _ => Err(self.err(i, "expected text")),
        }
    }
    /// A vector of the build's width: in builds with 32-bit vectors, a finite component
    /// beyond their range is refused, not made infinite.
    pub(crate) fn vector(
        &self,
        i: usize,
        width: crate::VectorWidth,
    ) -> recfmt_core::Result<Vector3> {
        let (x, y, z) = (self.f64(i)?, self.f64(i + 1)?, self.f64(i + 2)?);
        Vector3::checked(width, x, y, z).ok_or_else(|| {
            self.err(
                i,
                "expected a vector within the range of this build's 32-bit floats",
            )
        })
    }
    pub(crate) fn f32_list(&self, i: usize) -> recfmt_core::Result<Vec<f32>> {
        match self.v.get(i) {
            Some(Value::Array(ArrayValue::F32(v))) => Ok(v.clone()),
            Some(Value::Array(ArrayValue::F64(v))) => Ok(v.iter().map(|x| *x as f32).collect()),
            _ => Err(self.err(i, "expected a list of floats")),
        }
    }
}
