//! Column storage: the elements of one column in the signal's native type.

use crate::DType;

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
    pub(super) fn check_room(&self, extra: usize) -> std::result::Result<(), String> {
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

    /// Appends one element. Callers check the room first ([`ColumnBuf::push_str`](crate::ColumnBuf::push_str) does).
    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
        self.offsets
            .push(i32::try_from(self.data.len()).unwrap_or(i32::MAX));
    }
}

/// The elements of one column, in the signal's native type.
///
/// For a scalar signal there is one element per row; for a fixed shape of `n` elements, `n`
/// per row, row-major; for a variable shape, as many as [`ColumnBuf::list_offsets`](crate::ColumnBuf::list_offsets) says.
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
    pub(super) fn new(dtype: DType, n: usize) -> Self {
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
    pub(super) fn truncate(&mut self, n: usize) {
        each_data!(self, v => v.truncate(n), t => t.truncate(n));
    }

    /// Appends `n` placeholder elements (zeros, false, empty text) for a null row.
    pub(super) fn push_defaults(&mut self, n: usize) {
        each_data!(self, v => v.resize(v.len() + n, Default::default()), t => {
            for _ in 0..n {
                t.push(&[]);
            }
        });
    }
}

impl ColumnData {
    /// Appends the elements of `other` (same variant); false when the variants differ.
    pub(super) fn append(&mut self, other: ColumnData) -> bool {
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
    pub(super) fn retain_elements(&mut self, keep: &dyn Fn(usize) -> bool) {
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
