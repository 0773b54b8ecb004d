//! The protobuf messages stored in `.traj` and `.state` files, as prost structs.
//!
//! Field numbers follow NanoVer's `.proto` files (`nanover/protocol/array.proto`,
//! `trajectory/frame.proto`, `trajectory/get_frame.proto`, `state/state_service.proto`), which
//! have not changed since the Narupa era; the package name is not part of the bytes. Maps are
//! [`BTreeMap`]s, so encoding is deterministic (NanoVer's Python writer orders map entries
//! differently on every run) and two decoded messages compare with `==`.
//!
//! `google.protobuf.Struct`, `Value` and `ListValue` come from [`prost_types`]. In a `Value`,
//! every number is an `f64`.

use std::collections::BTreeMap;

pub use prost_types::{ListValue, NullValue, Struct, Value, value::Kind};

/// `nanover.protocol.FloatArray`: `repeated float values = 1` (packed).
///
/// Positions and velocities of every particle arrive as these, so decoding them is most of
/// reading a trajectory: [`prost::Message`] is implemented by hand to copy a packed run of
/// floats in one pass, where the derived code decodes and pushes one float at a time. Every
/// other case (unpacked elements, a damaged length, other fields) goes through prost's own
/// functions, so what is accepted and the errors are those of the derived code.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct FloatArray {
    /// The elements.
    pub values: Vec<f32>,
}

impl prost::Message for FloatArray {
    fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {
        prost::encoding::float::encode_packed(1, &self.values, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: prost::encoding::WireType,
        buf: &mut impl prost::bytes::Buf,
        ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        if tag != 1 {
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
        if wire_type == prost::encoding::WireType::LengthDelimited {
            let chunk = buf.chunk();
            let mut rest = chunk;
            if let Ok(len) = prost::decode_length_delimiter(&mut rest)
                && len % 4 == 0
                && let Some(packed) = rest.get(..len)
            {
                self.values.reserve(len / 4);
                self.values.extend(
                    packed
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
                let header = chunk.len() - rest.len();
                buf.advance(header + len);
                return Ok(());
            }
        }
        prost::encoding::float::merge_repeated(wire_type, &mut self.values, buf, ctx).map_err(
            |mut error| {
                // As the derived code names the field in its errors.
                error.push("FloatArray", "values");
                error
            },
        )
    }

    fn encoded_len(&self) -> usize {
        prost::encoding::float::encoded_len_packed(1, &self.values)
    }

    fn clear(&mut self) {
        self.values.clear();
    }
}

/// `nanover.protocol.IndexArray`: `repeated uint32 values = 1` (packed).
#[derive(Clone, PartialEq, prost::Message)]
pub struct IndexArray {
    /// The elements.
    #[prost(uint32, repeated, tag = "1")]
    pub values: Vec<u32>,
}

/// `nanover.protocol.StringArray`: `repeated string values = 1`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringArray {
    /// The elements.
    #[prost(string, repeated, tag = "1")]
    pub values: Vec<String>,
}

/// `nanover.protocol.ValueArray`: one typed array.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueArray {
    /// The array; `None` when the message sets none of the three (an empty message).
    #[prost(oneof = "Values", tags = "1, 2, 3")]
    pub values: Option<Values>,
}

/// The `oneof values` of [`ValueArray`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Values {
    /// `FloatArray float_values = 1`.
    #[prost(message, tag = "1")]
    FloatValues(FloatArray),
    /// `IndexArray index_values = 2`.
    #[prost(message, tag = "2")]
    IndexValues(IndexArray),
    /// `StringArray string_values = 3`.
    #[prost(message, tag = "3")]
    StringValues(StringArray),
}

/// `nanover.protocol.trajectory.FrameData`: a (delta) frame.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FrameData {
    /// `map<string, google.protobuf.Value> values = 1`: scalars and dynamic values.
    #[prost(btree_map = "string, message", tag = "1")]
    pub values: BTreeMap<String, Value>,
    /// `map<string, ValueArray> arrays = 2`: typed arrays.
    #[prost(btree_map = "string, message", tag = "2")]
    pub arrays: BTreeMap<String, ValueArray>,
}

/// `nanover.protocol.trajectory.GetFrameResponse`: one record of a version-2 `.traj`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetFrameResponse {
    /// `uint32 frame_index = 1`; 0 means "reset the aggregated frame".
    #[prost(uint32, tag = "1")]
    pub frame_index: u32,
    /// `FrameData frame = 2`. `None` (field absent) and `Some(empty)` are distinct messages.
    #[prost(message, optional, tag = "2")]
    pub frame: Option<FrameData>,
}

/// `nanover.protocol.state.StateUpdate`: one record of a `.state`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StateUpdate {
    /// `google.protobuf.Struct changed_keys = 1`: a `null_value` removes its key, any other
    /// value replaces the whole value under that key.
    #[prost(message, optional, tag = "1")]
    pub changed_keys: Option<Struct>,
}

impl ValueArray {
    /// A float array.
    pub fn floats(values: Vec<f32>) -> Self {
        ValueArray {
            values: Some(Values::FloatValues(FloatArray { values })),
        }
    }

    /// An index array.
    pub fn indices(values: Vec<u32>) -> Self {
        ValueArray {
            values: Some(Values::IndexValues(IndexArray { values })),
        }
    }

    /// A string array.
    pub fn strings(values: Vec<String>) -> Self {
        ValueArray {
            values: Some(Values::StringValues(StringArray { values })),
        }
    }

    /// Number of elements (0 when no variant is set).
    pub fn len(&self) -> usize {
        match &self.values {
            Some(Values::FloatValues(a)) => a.values.len(),
            Some(Values::IndexValues(a)) => a.values.len(),
            Some(Values::StringValues(a)) => a.values.len(),
            None => 0,
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The protobuf field name of the variant: `float_values`, `index_values`,
    /// `string_values`, or `none`.
    pub fn kind_name(&self) -> &'static str {
        match &self.values {
            Some(Values::FloatValues(_)) => "float_values",
            Some(Values::IndexValues(_)) => "index_values",
            Some(Values::StringValues(_)) => "string_values",
            None => "none",
        }
    }

    /// The elements of a float array.
    ///
    /// Quirk handled: NanoVer's Python websocket recorder writes an *empty* array as an index
    /// array (its type guess defaults to index when there is no element), so an empty array
    /// of any type, or no variant at all, reads as an empty float array.
    ///
    /// ```
    /// use recfmt_nanover::ValueArray;
    /// assert_eq!(ValueArray::floats(vec![1.5]).as_floats(), Some(&[1.5f32][..]));
    /// assert_eq!(ValueArray::indices(vec![]).as_floats(), Some(&[][..]));
    /// assert_eq!(ValueArray::indices(vec![3]).as_floats(), None);
    /// ```
    pub fn as_floats(&self) -> Option<&[f32]> {
        match &self.values {
            Some(Values::FloatValues(a)) => Some(&a.values),
            _ if self.is_empty() => Some(&[]),
            _ => None,
        }
    }

    /// The elements of an index array (an empty array of any type reads as empty).
    pub fn as_indices(&self) -> Option<&[u32]> {
        match &self.values {
            Some(Values::IndexValues(a)) => Some(&a.values),
            _ if self.is_empty() => Some(&[]),
            _ => None,
        }
    }

    /// The elements of a string array (an empty array of any type reads as empty).
    pub fn as_strings(&self) -> Option<&[String]> {
        match &self.values {
            Some(Values::StringValues(a)) => Some(&a.values),
            _ if self.is_empty() => Some(&[]),
            _ => None,
        }
    }

    /// Element `i` as text, whatever the array type.
    ///
    /// Used for `residue.ids`, which the Python server writes as strings and the Rust server
    /// as floats: a float with an integral value prints without a fraction (`1.0` → `"1"`).
    ///
    /// ```
    /// use recfmt_nanover::ValueArray;
    /// assert_eq!(ValueArray::floats(vec![1.0, 2.5]).text_at(0).as_deref(), Some("1"));
    /// assert_eq!(ValueArray::floats(vec![1.0, 2.5]).text_at(1).as_deref(), Some("2.5"));
    /// assert_eq!(ValueArray::strings(vec!["7A".into()]).text_at(0).as_deref(), Some("7A"));
    /// ```
    pub fn text_at(&self, i: usize) -> Option<String> {
        match &self.values {
            Some(Values::StringValues(a)) => a.values.get(i).cloned(),
            Some(Values::IndexValues(a)) => a.values.get(i).map(u32::to_string),
            Some(Values::FloatValues(a)) => a.values.get(i).map(|&f| format_number(f64::from(f))),
            None => None,
        }
    }
}

/// Formats a number as NanoVer users expect to read it: integral values without a fraction.
pub(crate) fn format_number(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

impl FrameData {
    /// The number under `key` in `values`, when it is a `number_value`.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.values.get(key)?.kind {
            Some(Kind::NumberValue(n)) => Some(n),
            _ => None,
        }
    }

    /// True when neither map has an entry.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.arrays.is_empty()
    }
}

impl GetFrameResponse {
    /// A record with this index and frame.
    pub fn new(frame_index: u32, frame: FrameData) -> Self {
        GetFrameResponse {
            frame_index,
            frame: Some(frame),
        }
    }
}

impl StateUpdate {
    /// An update from `(key, value)` pairs; use [`null`] as the value to remove a key.
    pub fn from_pairs<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Value)>) -> Self {
        StateUpdate {
            changed_keys: Some(Struct {
                fields: pairs.into_iter().map(|(k, v)| (k.into(), v)).collect(),
            }),
        }
    }

    /// The changed keys (empty when the struct is absent).
    pub fn changes(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.changed_keys.iter().flat_map(|s| s.fields.iter())
    }
}

/// A `null_value`, which removes a key in a [`StateUpdate`].
pub fn null() -> Value {
    Value {
        kind: Some(Kind::NullValue(NullValue::NullValue as i32)),
    }
}

/// A `number_value`.
pub fn number(n: f64) -> Value {
    Value {
        kind: Some(Kind::NumberValue(n)),
    }
}

/// True for a `null_value` (a removal in a state update).
pub fn is_null(v: &Value) -> bool {
    matches!(v.kind, Some(Kind::NullValue(_)))
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::FloatArray;

    mod derived {
        /// What `#[derive(prost::Message)]` makes of the same field (and name, which the
        /// errors carry): the reference the hand-written decoder must agree with.
        #[derive(Clone, PartialEq, prost::Message)]
        pub(super) struct FloatArray {
            #[prost(float, repeated, tag = "1")]
            pub(super) values: Vec<f32>,
        }
    }
    use derived::FloatArray as DerivedFloatArray;

    fn same_decoding(bytes: &[u8]) {
        let ours = FloatArray::decode(bytes).map(|m| m.values);
        let derived = DerivedFloatArray::decode(bytes).map(|m| m.values);
        match (&ours, &derived) {
            (Ok(a), Ok(b)) => {
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(a), bits(b), "{bytes:?}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{bytes:?}"),
            _ => panic!("{bytes:?}: ours {ours:?}, derived {derived:?}"),
        }
    }

    #[test]
    fn packed_floats_encode_and_decode_as_the_derived_code_does() {
        for n in [0usize, 1, 2, 3, 1000] {
            let values: Vec<f32> = (0..n)
                .map(|i| f32::from_bits(0x3f80_0000 ^ (i as u32).wrapping_mul(2_654_435_761)))
                .collect();
            let ours = FloatArray {
                values: values.clone(),
            }
            .encode_to_vec();
            assert_eq!(ours, DerivedFloatArray { values }.encode_to_vec());
            assert_eq!(
                FloatArray::decode(&ours[..]).unwrap().encoded_len(),
                ours.len()
            );
            // Every cut of the message, and the whole of it.
            for end in 0..=ours.len() {
                same_decoding(&ours[..end]);
            }
        }
    }

    #[test]
    fn unpacked_mixed_and_damaged_runs_decode_as_the_derived_code_does() {
        let mut bytes = Vec::new();
        // Two unpacked elements (field 1, wire type 5), a packed run of two, an unknown field.
        for x in [1.5f32, -2.0] {
            bytes.push(0x0d);
            bytes.extend(x.to_le_bytes());
        }
        bytes.extend([0x0a, 8]);
        bytes.extend(3.25f32.to_le_bytes());
        bytes.extend(f32::NAN.to_le_bytes());
        bytes.extend([0x10, 0x7f]);
        same_decoding(&bytes);
        for end in 0..=bytes.len() {
            same_decoding(&bytes[..end]);
        }
        // A packed length that is not a multiple of 4, and one past the end.
        same_decoding(&[0x0a, 3, 0, 0, 0x80]);
        same_decoding(&[0x0a, 5, 0, 0, 0x80, 0x3f, 0]);
        same_decoding(&[0x0a, 8, 0, 0, 0x80, 0x3f]);
        same_decoding(&[
            0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ]);
    }
}
