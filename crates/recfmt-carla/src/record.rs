//! Fixed-size packet records, each declared once.
//!
//! Most per-actor packets (positions, kinematics, animation, lights...) are a `u16` record
//! count followed by records of one size (for a vector width). Each such record is declared
//! with [`fixed_record!`]: its fields in byte order, each with its type, column name(s) and
//! unit. From that one declaration come the struct, its checked decode and its encode (the
//! [`crate::packet::Record`] the codec and [`crate::Writer`] use), its byte size per build,
//! the schema's columns and units, the row emission into a [`RowWriter`] (straight from the
//! record's bytes, decoding only the columns a projection keeps), the values the generic
//! writer takes from a row, and the unchecked read the query engine uses on its stale
//! buffers.
//!
//! What differs per build is the vector width ([`VectorWidth`]): a [`Vector3`] field is 12
//! bytes and fills `f32` columns in UE4 builds, 24 bytes and `f64` columns in UE5 builds.

mod field;
mod values;

use recfmt_core::{RowWriter, SignalDesc};

use crate::codec::cursor::Cursor;
use crate::error::Result;
use crate::flavour::{PacketKind, VectorWidth};
use crate::packet::{
    BikerAnim, BoundingBox, Collision, EventDel, EventParent, Kinematics, Position, SceneLight,
    TrafficLightState, TrafficLightTime, VehicleAnim, VehicleDoor, VehicleLight, WalkerAnim,
    Weather,
};

pub(crate) use field::{Field, FieldDecl, Names};
pub(crate) use values::RowValues;

/// A record of fixed size (for a vector width), declared with [`fixed_record!`].
pub(crate) trait FixedRecord: Sized {
    /// Size of one record in bytes.
    fn size(width: VectorWidth) -> usize;
    /// True when some field has bytes to check (a bool), so [`FixedRecord::check`] can fail.
    const CHECKED: bool;
    /// The record's columns (after a stream's `elapsed` and `frame`), with types and units.
    fn signals(width: VectorWidth) -> Vec<SignalDesc>;
    /// Why `record` (one record's bytes) would not decode: the offset in the record of the
    /// first bad byte and what is wrong with it.
    fn check(record: &[u8], width: VectorWidth) -> Option<(usize, String)>;
    /// The record from its bytes, unchecked (bools are "not zero"): the decode itself, used
    /// after [`FixedRecord::check`] and by the query engine, which reads what C++ reads.
    fn read(record: &[u8], width: VectorWidth) -> Self;
    /// Pushes the columns of a run of records (`records`: their bytes, one after the other)
    /// after [`RowWriter::begin_rows`], decoding only the columns the row wants.
    fn emit(records: &[u8], width: VectorWidth, row: &mut RowWriter<'_>)
    -> recfmt_core::Result<()>;
    /// The record from a row's values, its first column at `first`.
    fn from_row(row: &RowValues<'_>, first: usize, width: VectorWidth)
    -> recfmt_core::Result<Self>;
}

/// The checked decode of a fixed record (the codec's): the bytes, then the checks.
pub(crate) fn decode_fixed<T: FixedRecord>(c: &mut Cursor<'_>) -> Result<T> {
    let width = c.width;
    let start = c.file_offset();
    let bytes = c.bytes(T::size(width))?;
    if let Some((at, what)) = T::check(bytes, width) {
        return Err(c.malformed(start + at as u64, what));
    }
    Ok(T::read(bytes, width))
}

/// Declares a fixed-size record: the struct and its [`FixedRecord`] and
/// [`crate::packet::Record`] implementations.
///
/// Fields are given in byte order as `name: Type => columns in "unit"`, where `columns` is a
/// column name or an array of names (one per component), and the unit is optional. When the
/// columns are in another order than the bytes, `columns(a, b, ...)` after the struct gives
/// it.
macro_rules! fixed_record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty => $names:tt $(in $unit:literal)? ),* $(,)?
        }
    ) => {
        fixed_record! {
            $(#[$meta])*
            pub struct $name {
                $( $(#[$fmeta])* pub $field : $ty => $names $(in $unit)? ),*
            }
            columns($($field),*)
        }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty => $names:tt $(in $unit:literal)? ),* $(,)?
        }
        columns($($column:ident),*)
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $name {
            /// The fields with their offsets for `width`, in byte order; the record's size.
            #[inline(always)]
            #[allow(unused_assignments)]
            fn layout(width: $crate::flavour::VectorWidth) -> (($($crate::record::FieldDecl<$ty>,)*), usize) {
                let mut at = 0usize;
                let fields = ($({
                    let decl = $crate::record::FieldDecl::<$ty>::new(
                        at,
                        $crate::record::Names::names(&$names),
                        fixed_record!(@unit $($unit)?),
                    );
                    at += <$ty as $crate::record::Field>::size(width);
                    decl
                },)*);
                (fields, at)
            }
        }

        impl $crate::record::FixedRecord for $name {
            const CHECKED: bool = false $( || <$ty as $crate::record::Field>::CHECKED )*;

            #[inline]
            fn size(width: $crate::flavour::VectorWidth) -> usize {
                Self::layout(width).1
            }

            fn signals(width: $crate::flavour::VectorWidth) -> Vec<recfmt_core::SignalDesc> {
                let (($($field,)*), _) = Self::layout(width);
                let mut signals = Vec::new();
                $( $column.signals(width, &mut signals); )*
                signals
            }

            fn check(
                record: &[u8],
                width: $crate::flavour::VectorWidth,
            ) -> Option<(usize, String)> {
                let (($($field,)*), _) = Self::layout(width);
                $( if let Some(bad) = $field.check(record) { return Some(bad); } )*
                None
            }

            #[inline]
            fn read(record: &[u8], width: $crate::flavour::VectorWidth) -> Self {
                let (($($field,)*), _) = Self::layout(width);
                $name { $( $field: $field.read(record, width), )* }
            }

            #[inline]
            fn emit(
                records: &[u8],
                width: $crate::flavour::VectorWidth,
                row: &mut recfmt_core::RowWriter<'_>,
            ) -> recfmt_core::Result<()> {
                let (($($field,)*), size) = Self::layout(width);
                $( $column.emit(records, size, width, row)?; )*
                Ok(())
            }

            fn from_row(
                row: &$crate::record::RowValues<'_>,
                first: usize,
                width: $crate::flavour::VectorWidth,
            ) -> recfmt_core::Result<Self> {
                let (($($field,)*), _) = Self::layout(width);
                let mut at = first;
                $( let $column = $column.value_in_row(row, &mut at, width)?; )*
                Ok($name { $($field),* })
            }
        }

        impl $crate::packet::Record for $name {
            fn fixed_size(width: $crate::flavour::VectorWidth) -> Option<usize> {
                Some(<Self as $crate::record::FixedRecord>::size(width))
            }

            fn decode(c: &mut $crate::codec::cursor::Cursor<'_>) -> $crate::error::Result<Self> {
                $crate::record::decode_fixed(c)
            }

            fn encode(&self, out: &mut Vec<u8>) -> $crate::error::Result<()> {
                $( $crate::record::Field::encode(&self.$field, out); )*
                Ok(())
            }
        }
    };
    (@unit $unit:literal) => { Some($unit) };
    (@unit) => { None };
}
pub(crate) use fixed_record;

/// [`FixedRecord::check`]: what is wrong with a record, as (offset in it, why).
type CheckFn = fn(&[u8], VectorWidth) -> Option<(usize, String)>;

/// What the generic reader needs of a fixed record kind, for one vector width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FixedKind {
    /// Bytes per record.
    pub size: usize,
    /// [`FixedRecord::check`] of the kind's record, `None` when nothing can fail.
    pub check: Option<CheckFn>,
    /// [`FixedRecord::signals`] of the kind's record.
    pub signals: fn(VectorWidth) -> Vec<SignalDesc>,
    /// [`FixedRecord::emit`] of the kind's record.
    pub emit: fn(&[u8], VectorWidth, &mut RowWriter<'_>) -> recfmt_core::Result<()>,
    /// The width the functions are called with.
    pub width: VectorWidth,
}

impl FixedKind {
    fn of<T: FixedRecord>(width: VectorWidth) -> Self {
        FixedKind {
            size: T::size(width),
            check: if T::CHECKED { Some(T::check) } else { None },
            signals: T::signals,
            emit: T::emit,
            width,
        }
    }

    /// The record layout of `kind`, `None` for kinds whose records are not of one fixed size
    /// (or that are not lists of records).
    pub(crate) fn of_kind(kind: PacketKind, width: VectorWidth) -> Option<Self> {
        Some(match kind {
            PacketKind::EventDel => Self::of::<EventDel>(width),
            PacketKind::EventParent => Self::of::<EventParent>(width),
            PacketKind::Collision => Self::of::<Collision>(width),
            PacketKind::Position => Self::of::<Position>(width),
            PacketKind::TrafficLight => Self::of::<TrafficLightState>(width),
            PacketKind::VehicleAnim => Self::of::<VehicleAnim>(width),
            PacketKind::WalkerAnim => Self::of::<WalkerAnim>(width),
            PacketKind::VehicleLight => Self::of::<VehicleLight>(width),
            PacketKind::SceneLight => Self::of::<SceneLight>(width),
            PacketKind::Kinematics => Self::of::<Kinematics>(width),
            PacketKind::BoundingBox | PacketKind::TriggerVolume => Self::of::<BoundingBox>(width),
            PacketKind::TrafficLightTime => Self::of::<TrafficLightTime>(width),
            PacketKind::BikerAnim => Self::of::<BikerAnim>(width),
            PacketKind::VehicleDoor => Self::of::<VehicleDoor>(width),
            PacketKind::Weather => Self::of::<Weather>(width),
            _ => return None,
        })
    }

    /// The number of records when `body` holds a count and exactly that many records that
    /// all pass the checks (what the codec's decode accepts); `None` otherwise.
    pub(crate) fn records(&self, body: &[u8]) -> Option<usize> {
        let count = usize::from(u16::from_le_bytes([*body.first()?, *body.get(1)?]));
        let records = body.get(2..)?;
        if records.len() != count.checked_mul(self.size)? {
            return None;
        }
        let Some(check) = self.check else {
            return Some(count);
        };
        records
            .chunks_exact(self.size)
            .all(|r| check(r, self.width).is_none())
            .then_some(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Record;
    use crate::primitive::Vector3;

    #[test]
    fn sizes_per_build_are_the_recorders() {
        use PacketKind as K;
        let sizes = [
            (K::EventDel, 4, 4),
            (K::EventParent, 8, 8),
            (K::Collision, 14, 14),
            (K::Position, 28, 52),
            (K::TrafficLight, 10, 10),
            (K::VehicleAnim, 21, 21),
            (K::WalkerAnim, 8, 8),
            (K::VehicleLight, 8, 8),
            (K::SceneLight, 26, 26),
            (K::Kinematics, 28, 52),
            (K::BoundingBox, 28, 52),
            (K::TriggerVolume, 28, 52),
            (K::TrafficLightTime, 16, 16),
            (K::BikerAnim, 12, 12),
            (K::VehicleDoor, 6, 6),
            (K::Weather, 56, 56),
        ];
        for (kind, ue4, ue5) in sizes {
            let size = |w| FixedKind::of_kind(kind, w).map(|k| k.size);
            assert_eq!(size(VectorWidth::F32), Some(ue4), "{kind:?}");
            assert_eq!(size(VectorWidth::F64), Some(ue5), "{kind:?}");
        }
        assert!(FixedKind::of_kind(K::EventAdd, VectorWidth::F32).is_none());
    }

    #[test]
    fn columns_follow_the_declaration_and_the_build() {
        let names = |s: Vec<SignalDesc>| {
            s.into_iter()
                .map(|s| (s.name, s.dtype, s.unit))
                .collect::<Vec<_>>()
        };
        let p = names(Position::signals(VectorWidth::F64));
        assert_eq!(p.len(), 7);
        assert_eq!(p[0].0, "id");
        assert_eq!((p[3].0.as_str(), p[3].1), ("z", recfmt_core::DType::F64));
        assert_eq!(p[4].2.as_deref(), Some("deg"));
        // Traffic lights list their columns in another order than their bytes.
        let t = names(TrafficLightState::signals(VectorWidth::F32));
        let order: Vec<&str> = t.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(order, ["id", "state", "frozen", "elapsed_time"]);
    }

    #[test]
    fn encode_then_read_gives_the_record_back_and_bad_bools_are_named() {
        let width = VectorWidth::F64;
        let p = Position {
            database_id: 7,
            location: Vector3::new(width, 1.5, -2.0, f64::NAN),
            rotation: Vector3::new(width, 0.0, 90.0, 180.0),
        };
        let mut bytes = Vec::new();
        p.encode(&mut bytes).unwrap();
        assert_eq!(bytes.len(), Position::size(width));
        let back = Position::read(&bytes, width);
        assert_eq!(back.database_id, 7);
        assert!(back.location.z().is_nan());
        assert_eq!(back.rotation, p.rotation);

        let mut anim = Vec::new();
        VehicleAnim {
            handbrake: true,
            gear: -1,
            ..VehicleAnim::default()
        }
        .encode(&mut anim)
        .unwrap();
        assert_eq!(VehicleAnim::check(&anim, width), None);
        anim[16] = 2;
        assert_eq!(
            VehicleAnim::check(&anim, width),
            Some((16, "bool byte must be 0 or 1, found 2".into()))
        );
    }
}
