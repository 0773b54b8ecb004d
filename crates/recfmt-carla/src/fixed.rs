//! Fixed-size packet records decoded straight into batch columns.
//!
//! Most per-actor packets (positions, kinematics, animation, lights...) are a `u16` record
//! count followed by records of one size. The batch read path checks such a body once (size,
//! and every bool byte 0 or 1, exactly the checks the full decoder makes) and then copies each
//! field of a run of records into its column, one column at a time, without building a
//! [`crate::Packet`] or a [`recfmt_core::Value`] per value. A body that fails a check goes
//! through the full decoder instead, which reports the error the row path reports.

use recfmt_core::{ColumnBuf, ColumnData};

use crate::flavour::{PacketKind, VectorWidth};

/// The on-disk type of a record field and the column type it fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldType {
    /// `u32` into a `u32` column.
    U32,
    /// `i32` into an `i32` column.
    I32,
    /// `u8` into a `u8` column.
    U8,
    /// A C++ bool byte (0 or 1) into a bool column.
    Bool,
    /// `f32` into an `f32` column.
    F32,
    /// Three floats of the vector width into three columns.
    Vector,
}

/// One field: its byte offset in the record, type, and column (the first of three for a
/// vector).
#[derive(Debug, Clone, Copy)]
struct Field {
    at: usize,
    ty: FieldType,
    column: usize,
}

/// The layout of the records of one fixed-size packet kind.
#[derive(Debug, Clone)]
pub(crate) struct FixedLayout {
    size: usize,
    width: VectorWidth,
    fields: Vec<Field>,
}

/// Columns 0 and 1 of every stream are `elapsed` and `frame`; record fields start at 2.
const FIRST: usize = 2;

impl FixedLayout {
    /// The layout of `kind`'s records for vector width `width`, `None` for kinds whose
    /// records are not of one fixed size (or that are not lists of records).
    pub(crate) fn of(kind: PacketKind, width: VectorWidth) -> Option<Self> {
        use FieldType::{Bool, F32, I32, U8, U32, Vector};
        let vs = width.vector_size();
        let f = |at, ty, column| Field {
            at,
            ty,
            column: FIRST + column,
        };
        let (size, fields) = match kind {
            PacketKind::EventDel => (4, vec![f(0, U32, 0)]),
            PacketKind::EventParent | PacketKind::VehicleLight => {
                (8, vec![f(0, U32, 0), f(4, U32, 1)])
            }
            PacketKind::Collision => (
                14,
                vec![
                    f(0, U32, 0),
                    f(4, U32, 1),
                    f(8, U32, 2),
                    f(12, Bool, 3),
                    f(13, Bool, 4),
                ],
            ),
            PacketKind::Position
            | PacketKind::Kinematics
            | PacketKind::BoundingBox
            | PacketKind::TriggerVolume => (
                4 + 2 * vs,
                vec![f(0, U32, 0), f(4, Vector, 1), f(4 + vs, Vector, 4)],
            ),
            // Columns id, state, frozen, elapsed_time; bytes id, frozen, elapsed_time, state.
            PacketKind::TrafficLight => (
                10,
                vec![f(0, U32, 0), f(4, Bool, 2), f(5, F32, 3), f(9, U8, 1)],
            ),
            PacketKind::VehicleAnim => (
                21,
                vec![
                    f(0, U32, 0),
                    f(4, F32, 1),
                    f(8, F32, 2),
                    f(12, F32, 3),
                    f(16, Bool, 4),
                    f(17, I32, 5),
                ],
            ),
            PacketKind::WalkerAnim => (8, vec![f(0, U32, 0), f(4, F32, 1)]),
            PacketKind::SceneLight => (
                26,
                vec![
                    f(0, I32, 0),
                    f(4, F32, 1),
                    f(8, F32, 2),
                    f(12, F32, 3),
                    f(16, F32, 4),
                    f(20, F32, 5),
                    f(24, Bool, 6),
                    f(25, U8, 7),
                ],
            ),
            PacketKind::TrafficLightTime => (
                16,
                vec![f(0, U32, 0), f(4, F32, 1), f(8, F32, 2), f(12, F32, 3)],
            ),
            PacketKind::BikerAnim => (12, vec![f(0, U32, 0), f(4, F32, 1), f(8, F32, 2)]),
            PacketKind::VehicleDoor => (6, vec![f(0, U32, 0), f(4, U8, 1), f(5, Bool, 2)]),
            PacketKind::Weather => (56, (0..14).map(|i| f(4 * i, F32, i)).collect()),
            _ => return None,
        };
        Some(FixedLayout {
            size,
            width,
            fields,
        })
    }

    /// The number of records when `body` passes every check the full decoder makes (a
    /// count, exactly `count` records, bool bytes 0 or 1); `None` otherwise.
    pub(crate) fn check(&self, body: &[u8]) -> Option<usize> {
        let count = usize::from(u16::from_le_bytes([*body.first()?, *body.get(1)?]));
        let records = body.get(2..)?;
        if records.len() != count.checked_mul(self.size)? {
            return None;
        }
        for field in self.fields.iter().filter(|f| f.ty == FieldType::Bool) {
            let bad = records
                .chunks_exact(self.size)
                .any(|r| r.get(field.at).is_none_or(|&b| b > 1));
            if bad {
                return None;
            }
        }
        Some(count)
    }

    /// True when `columns` have the types this layout fills (checked before anything is
    /// appended, so a row is never left half written).
    pub(crate) fn columns_match(&self, columns: &[ColumnBuf]) -> bool {
        let is = |i: usize, want: fn(&ColumnData) -> bool| {
            columns
                .get(i)
                .is_some_and(|c| c.width() == Some(1) && want(c.data()))
        };
        let time_ok = is(0, |d| matches!(d, ColumnData::F64(_)))
            && is(1, |d| matches!(d, ColumnData::U64(_)));
        time_ok
            && self.fields.iter().all(|f| match f.ty {
                FieldType::U32 => is(f.column, |d| matches!(d, ColumnData::U32(_))),
                FieldType::I32 => is(f.column, |d| matches!(d, ColumnData::I32(_))),
                FieldType::U8 => is(f.column, |d| matches!(d, ColumnData::U8(_))),
                FieldType::Bool => is(f.column, |d| matches!(d, ColumnData::Bool(_))),
                FieldType::F32 => is(f.column, |d| matches!(d, ColumnData::F32(_))),
                FieldType::Vector => (0..3).all(|k| match self.width {
                    VectorWidth::F32 => is(f.column + k, |d| matches!(d, ColumnData::F32(_))),
                    VectorWidth::F64 => is(f.column + k, |d| matches!(d, ColumnData::F64(_))),
                }),
            })
    }

    /// Appends records `first..first + rows` of a body that passed [`FixedLayout::check`] to
    /// `columns` (which passed [`FixedLayout::columns_match`]), with `elapsed` and `frame`
    /// in the first two columns. Skipped columns (see `BatchSet::with_columns`) are left
    /// empty, so a scan of the time columns decodes nothing else. The caller commits the rows.
    pub(crate) fn append(
        &self,
        body: &[u8],
        first: usize,
        rows: usize,
        elapsed: f64,
        frame: u64,
        columns: &mut [ColumnBuf],
    ) {
        let records = body.get(2..).unwrap_or_default();
        let run = || records.chunks_exact(self.size).skip(first).take(rows);
        if let Some(ColumnData::F64(v)) = columns.get_mut(0).and_then(ColumnBuf::kept_data_mut) {
            v.extend(std::iter::repeat_n(elapsed, rows));
        }
        if let Some(ColumnData::U64(v)) = columns.get_mut(1).and_then(ColumnBuf::kept_data_mut) {
            v.extend(std::iter::repeat_n(frame, rows));
        }
        for field in &self.fields {
            let at = field.at;
            if field.ty == FieldType::Vector {
                // Three columns, each of which may be skipped on its own.
                for k in 0..3 {
                    let Some(column) = columns
                        .get_mut(field.column + k)
                        .and_then(ColumnBuf::kept_data_mut)
                    else {
                        continue;
                    };
                    match (self.width, column) {
                        (VectorWidth::F32, ColumnData::F32(v)) => {
                            v.extend(run().map(|r| f32::from_le_bytes(le(r, at + 4 * k))));
                        }
                        (VectorWidth::F64, ColumnData::F64(v)) => {
                            v.extend(run().map(|r| f64::from_le_bytes(le(r, at + 8 * k))));
                        }
                        _ => {}
                    }
                }
                continue;
            }
            let Some(column) = columns
                .get_mut(field.column)
                .and_then(ColumnBuf::kept_data_mut)
            else {
                continue;
            };
            match (field.ty, column) {
                (FieldType::U32, ColumnData::U32(v)) => {
                    v.extend(run().map(|r| u32::from_le_bytes(le(r, at))));
                }
                (FieldType::I32, ColumnData::I32(v)) => {
                    v.extend(run().map(|r| i32::from_le_bytes(le(r, at))));
                }
                (FieldType::U8, ColumnData::U8(v)) => {
                    v.extend(run().map(|r| r.get(at).copied().unwrap_or(0)));
                }
                (FieldType::Bool, ColumnData::Bool(v)) => {
                    v.extend(run().map(|r| r.get(at).is_some_and(|&b| b == 1)));
                }
                (FieldType::F32, ColumnData::F32(v)) => {
                    v.extend(run().map(|r| f32::from_le_bytes(le(r, at))));
                }
                _ => {}
            }
        }
    }
}

/// `N` bytes of `record` at `at` (zeros past its end, which a checked body never reaches).
fn le<const N: usize>(record: &[u8], at: usize) -> [u8; N] {
    record
        .get(at..at + N)
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .unwrap_or([0; N])
}
