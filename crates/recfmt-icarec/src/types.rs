//! The ICAREC type table: names, sizes, element encoding and column expansion (spec A.4).

use std::fmt;

use recfmt_core::DType;

/// The type of one schema signal.
///
/// | type | size | encoding (little-endian) | columns |
/// |---|---|---|---|
/// | `double` | 8 | IEEE f64 | `name` |
/// | `int64` | 8 | i64 | `name` |
/// | `int32` | 8 | i32 sign-extended to i64 | `name` |
/// | `bool` | 8 | i64, non-zero is true | `name` |
/// | `Vec3<double>` | 24 | 3 × f64 | `name.x`, `name.y`, `name.z` |
/// | `Quat<double>` | 32 | 4 × f64, scalar first | `name.w`, `name.x`, `name.y`, `name.z` |
/// | `Mat3<double>` | 72 | 9 × f64, row-major | `name.xx`, `name.xy`, … `name.zz` |
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SignalType {
    /// IEEE 754 double.
    Double,
    /// Signed 64-bit integer.
    Int64,
    /// Signed 32-bit integer in an 8-byte slot, sign-extended.
    Int32,
    /// Boolean in an 8-byte slot (an extension of ours; upstream uses `int32` with
    /// `"semantic": "boolean"`).
    Bool,
    /// Three doubles `x, y, z`.
    Vec3,
    /// Four doubles `w, x, y, z` (scalar first).
    Quat,
    /// Nine doubles, row-major `xx, xy, xz, yx, …, zz`.
    Mat3,
    /// A type this crate does not know, kept as opaque bytes of the declared size (only when
    /// the reader is told to skip unknown types).
    Opaque(String),
}

const VEC3: &[&str] = &["x", "y", "z"];
const QUAT: &[&str] = &["w", "x", "y", "z"];
const MAT3: &[&str] = &["xx", "xy", "xz", "yx", "yy", "yz", "zx", "zy", "zz"];

impl SignalType {
    /// Parses a type name. Accepts the canonical names and the aliases of the spec (`float64`,
    /// `Double`, `Int64`, `Int32`, `boolean`, and `Vec3<Scalar>`-style spellings with
    /// `double`/`float64` as the scalar). Unknown names give `None`.
    ///
    /// ```
    /// use recfmt_icarec::SignalType;
    /// assert_eq!(SignalType::parse("float64"), Some(SignalType::Double));
    /// assert_eq!(SignalType::parse("Quat<double>"), Some(SignalType::Quat));
    /// assert_eq!(SignalType::parse("Vec3<float>"), None);
    /// ```
    pub fn parse(name: &str) -> Option<SignalType> {
        let compact: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        Some(match compact.as_str() {
            "double" | "float64" | "Double" | "Float64" => SignalType::Double,
            "int64" | "Int64" => SignalType::Int64,
            "int32" | "Int32" => SignalType::Int32,
            "bool" | "boolean" | "Bool" | "Boolean" => SignalType::Bool,
            _ => {
                let (head, scalar) = compact.split_once('<')?;
                let scalar = scalar.strip_suffix('>')?;
                if !matches!(scalar, "double" | "float64" | "Double" | "Float64") {
                    return None;
                }
                match head {
                    "Vec3" => SignalType::Vec3,
                    "Quat" => SignalType::Quat,
                    "Mat3" => SignalType::Mat3,
                    _ => return None,
                }
            }
        })
    }

    /// The canonical name, as our writer spells it.
    pub fn name(&self) -> &str {
        match self {
            SignalType::Double => "double",
            SignalType::Int64 => "int64",
            SignalType::Int32 => "int32",
            SignalType::Bool => "bool",
            SignalType::Vec3 => "Vec3<double>",
            SignalType::Quat => "Quat<double>",
            SignalType::Mat3 => "Mat3<double>",
            SignalType::Opaque(name) => name,
        }
    }

    /// Size in bytes, `None` for opaque types (whose size the schema declares).
    pub fn size(&self) -> Option<u64> {
        Some(match self {
            SignalType::Double | SignalType::Int64 | SignalType::Int32 | SignalType::Bool => 8,
            SignalType::Vec3 => 24,
            SignalType::Quat => 32,
            SignalType::Mat3 => 72,
            SignalType::Opaque(_) => return None,
        })
    }

    /// Suffixes of the expanded columns (`["x", "y", "z"]` for `Vec3`); empty for scalars and
    /// opaque types.
    pub fn components(&self) -> &'static [&'static str] {
        match self {
            SignalType::Vec3 => VEC3,
            SignalType::Quat => QUAT,
            SignalType::Mat3 => MAT3,
            _ => &[],
        }
    }

    /// True for `Vec3`, `Quat` and `Mat3`.
    pub fn is_composite(&self) -> bool {
        !self.components().is_empty()
    }

    /// The recfmt dtype of one column of this type, `None` for opaque types.
    pub fn dtype(&self) -> Option<DType> {
        Some(match self {
            SignalType::Double | SignalType::Vec3 | SignalType::Quat | SignalType::Mat3 => {
                DType::F64
            }
            SignalType::Int64 => DType::I64,
            SignalType::Int32 => DType::I32,
            SignalType::Bool => DType::Bool,
            SignalType::Opaque(_) => return None,
        })
    }

    /// Number of columns this type expands to (1 for scalars, 0 for opaque types).
    pub fn column_count(&self) -> usize {
        match self {
            SignalType::Opaque(_) => 0,
            t if t.is_composite() => t.components().len(),
            _ => 1,
        }
    }

    /// Decodes a value from its slot (`bytes.len()` must be the type's size).
    ///
    /// Returns the value and whether the slot was irregular: an `int32` whose upper four bytes
    /// are neither its sign extension nor zero (the value is then the lower four bytes).
    /// Opaque types decode to `None`.
    ///
    /// ```
    /// use recfmt_icarec::{SignalType, SignalValue};
    /// let slot = (-5i64).to_le_bytes();
    /// assert_eq!(SignalType::Int32.decode(&slot), Some((SignalValue::Int32(-5), false)));
    /// ```
    pub fn decode(&self, bytes: &[u8]) -> Option<(SignalValue, bool)> {
        let f = |i: usize| f64_at(bytes, i * 8);
        Some(match self {
            SignalType::Double => (SignalValue::Double(f(0)), false),
            SignalType::Int64 => (SignalValue::Int64(i64_at(bytes, 0)), false),
            SignalType::Int32 => {
                let low = i32::from_le_bytes(arr4(bytes));
                let high = i32::from_le_bytes(arr4(bytes.get(4..).unwrap_or(&[])));
                let sign = if low < 0 { -1 } else { 0 };
                (SignalValue::Int32(low), high != sign && high != 0)
            }
            SignalType::Bool => (SignalValue::Bool(i64_at(bytes, 0) != 0), false),
            SignalType::Vec3 => (SignalValue::Vec3([f(0), f(1), f(2)]), false),
            SignalType::Quat => (SignalValue::Quat([f(0), f(1), f(2), f(3)]), false),
            SignalType::Mat3 => {
                let mut m = [0.0; 9];
                for (i, v) in m.iter_mut().enumerate() {
                    *v = f(i);
                }
                (SignalValue::Mat3(m), false)
            }
            SignalType::Opaque(_) => return None,
        })
    }
}

impl fmt::Display for SignalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn arr4(bytes: &[u8]) -> [u8; 4] {
    let mut a = [0u8; 4];
    if let Some(src) = bytes.get(..4) {
        a.copy_from_slice(src);
    }
    a
}

fn arr8(bytes: &[u8], at: usize) -> [u8; 8] {
    let mut a = [0u8; 8];
    if let Some(src) = bytes.get(at..at + 8) {
        a.copy_from_slice(src);
    }
    a
}

/// Reads a little-endian f64 at `at` (0.0 when out of range; callers check sizes first).
pub(crate) fn f64_at(bytes: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(arr8(bytes, at))
}

/// Reads a little-endian i64 at `at` (0 when out of range; callers check sizes first).
pub(crate) fn i64_at(bytes: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(arr8(bytes, at))
}

/// The value of one signal, without heap allocation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SignalValue {
    /// A `double`.
    Double(f64),
    /// An `int64`.
    Int64(i64),
    /// An `int32`.
    Int32(i32),
    /// A `bool`.
    Bool(bool),
    /// A `Vec3<double>`: `x, y, z`.
    Vec3([f64; 3]),
    /// A `Quat<double>`: `w, x, y, z`.
    Quat([f64; 4]),
    /// A `Mat3<double>`, row-major.
    Mat3([f64; 9]),
}

impl SignalValue {
    /// The type this value belongs to.
    pub fn signal_type(&self) -> SignalType {
        match self {
            SignalValue::Double(_) => SignalType::Double,
            SignalValue::Int64(_) => SignalType::Int64,
            SignalValue::Int32(_) => SignalType::Int32,
            SignalValue::Bool(_) => SignalType::Bool,
            SignalValue::Vec3(_) => SignalType::Vec3,
            SignalValue::Quat(_) => SignalType::Quat,
            SignalValue::Mat3(_) => SignalType::Mat3,
        }
    }

    /// Encodes the value into its slot; `out` must be exactly the type's size.
    ///
    /// ```
    /// use recfmt_icarec::SignalValue;
    /// let mut slot = [0u8; 8];
    /// SignalValue::Int32(-2).encode(&mut slot);
    /// assert_eq!(slot, [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    /// ```
    pub fn encode(&self, out: &mut [u8]) {
        let mut put = |i: usize, bytes: [u8; 8]| {
            if let Some(dst) = out.get_mut(i * 8..i * 8 + 8) {
                dst.copy_from_slice(&bytes);
            }
        };
        match *self {
            SignalValue::Double(v) => put(0, v.to_le_bytes()),
            SignalValue::Int64(v) => put(0, v.to_le_bytes()),
            SignalValue::Int32(v) => put(0, i64::from(v).to_le_bytes()),
            SignalValue::Bool(v) => put(0, i64::from(v).to_le_bytes()),
            SignalValue::Vec3(v) => v
                .iter()
                .enumerate()
                .for_each(|(i, x)| put(i, x.to_le_bytes())),
            SignalValue::Quat(v) => v
                .iter()
                .enumerate()
                .for_each(|(i, x)| put(i, x.to_le_bytes())),
            SignalValue::Mat3(v) => v
                .iter()
                .enumerate()
                .for_each(|(i, x)| put(i, x.to_le_bytes())),
        }
    }

    /// The elements as doubles (one for scalars; integers and booleans converted).
    pub fn elements(&self) -> impl Iterator<Item = f64> + '_ {
        let (slice, scalar): (&[f64], Option<f64>) = match self {
            SignalValue::Double(v) => (&[], Some(*v)),
            SignalValue::Int64(v) => (&[], Some(*v as f64)),
            SignalValue::Int32(v) => (&[], Some(f64::from(*v))),
            SignalValue::Bool(v) => (&[], Some(f64::from(u8::from(*v)))),
            SignalValue::Vec3(v) => (v, None),
            SignalValue::Quat(v) => (v, None),
            SignalValue::Mat3(v) => (v, None),
        };
        scalar.into_iter().chain(slice.iter().copied())
    }

    /// Element `i` as a recfmt value in the column's dtype (scalars have only element 0).
    pub fn element(&self, i: usize) -> recfmt_core::Value {
        use recfmt_core::Value;
        match *self {
            SignalValue::Double(v) => Value::Float(v),
            SignalValue::Int64(v) => Value::Int(v),
            SignalValue::Int32(v) => Value::Int(i64::from(v)),
            SignalValue::Bool(v) => Value::Bool(v),
            SignalValue::Vec3(v) => v.get(i).map_or(Value::Null, |x| Value::Float(*x)),
            SignalValue::Quat(v) => v.get(i).map_or(Value::Null, |x| Value::Float(*x)),
            SignalValue::Mat3(v) => v.get(i).map_or(Value::Null, |x| Value::Float(*x)),
        }
    }
}

impl fmt::Display for SignalValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignalValue::Double(v) => write!(f, "{v}"),
            SignalValue::Int64(v) => write!(f, "{v}"),
            SignalValue::Int32(v) => write!(f, "{v}"),
            SignalValue::Bool(v) => write!(f, "{v}"),
            other => {
                f.write_str("[")?;
                for (i, x) in other.elements().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_columns_follow_the_table() {
        for (t, size, cols) in [
            (SignalType::Double, 8, 1),
            (SignalType::Int64, 8, 1),
            (SignalType::Int32, 8, 1),
            (SignalType::Bool, 8, 1),
            (SignalType::Vec3, 24, 3),
            (SignalType::Quat, 32, 4),
            (SignalType::Mat3, 72, 9),
        ] {
            assert_eq!(t.size(), Some(size), "{t}");
            assert_eq!(t.column_count(), cols, "{t}");
            assert_eq!(SignalType::parse(t.name()), Some(t.clone()));
        }
        assert_eq!(SignalType::parse("Vec3< double >"), Some(SignalType::Vec3));
        assert_eq!(SignalType::parse("Mat3<float64>"), Some(SignalType::Mat3));
        assert_eq!(SignalType::parse("float32"), None);
        assert_eq!(SignalType::parse("Vec4<double>"), None);
    }

    #[test]
    fn int32_slots_accept_sign_extension_and_zero_padding() {
        let sign_extended = (-7i64).to_le_bytes();
        assert_eq!(
            SignalType::Int32.decode(&sign_extended),
            Some((SignalValue::Int32(-7), false))
        );
        let mut zero_padded = [0u8; 8];
        zero_padded[..4].copy_from_slice(&(-7i32).to_le_bytes());
        assert_eq!(
            SignalType::Int32.decode(&zero_padded),
            Some((SignalValue::Int32(-7), false))
        );
        let mut garbage = zero_padded;
        garbage[6] = 0x12;
        assert_eq!(
            SignalType::Int32.decode(&garbage),
            Some((SignalValue::Int32(-7), true))
        );
        let big = (i64::from(i32::MAX) + 1).to_le_bytes();
        assert_eq!(
            SignalType::Int32.decode(&big),
            Some((SignalValue::Int32(i32::MIN), false)),
            "upper bytes zero are accepted as padding"
        );
    }

    #[test]
    fn values_round_trip_through_slots() {
        let values = [
            SignalValue::Double(-1.25),
            SignalValue::Int64(i64::MIN),
            SignalValue::Int32(i32::MIN),
            SignalValue::Bool(true),
            SignalValue::Vec3([1.0, -2.0, 3.5]),
            SignalValue::Quat([1.0, 0.0, -0.0, 0.5]),
            SignalValue::Mat3([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
        ];
        for v in values {
            let t = v.signal_type();
            let mut slot = vec![0u8; t.size().unwrap_or(0) as usize];
            v.encode(&mut slot);
            assert_eq!(t.decode(&slot), Some((v, false)));
        }
    }
}
