//! `google.protobuf.Value` as JSON.

use crate::proto::{Kind, Struct, Value};

/// Converts a `Value` to JSON: integral numbers print without a fraction; NaN and infinities,
/// which JSON cannot hold, become the strings `"NaN"`, `"inf"` and `"-inf"`; a value with no
/// kind set becomes `null`, like a `null_value`.
///
/// ```
/// use recfmt_nanover::{number, value_to_json};
/// assert_eq!(value_to_json(&number(3.0)).to_string(), "3");
/// assert_eq!(value_to_json(&number(0.5)).to_string(), "0.5");
/// ```
pub fn value_to_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match &v.kind {
        None | Some(Kind::NullValue(_)) => J::Null,
        Some(Kind::BoolValue(b)) => J::Bool(*b),
        Some(Kind::StringValue(s)) => J::String(s.clone()),
        Some(Kind::NumberValue(n)) => number_to_json(*n),
        Some(Kind::ListValue(l)) => J::Array(l.values.iter().map(value_to_json).collect()),
        Some(Kind::StructValue(s)) => struct_to_json(s),
    }
}

/// Converts a `Struct` to a JSON object (keys in order).
pub fn struct_to_json(s: &Struct) -> serde_json::Value {
    serde_json::Value::Object(
        s.fields
            .iter()
            .map(|(k, v)| (k.clone(), value_to_json(v)))
            .collect(),
    )
}

fn number_to_json(n: f64) -> serde_json::Value {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        serde_json::Value::from(n as i64)
    } else if let Some(num) = serde_json::Number::from_f64(n) {
        serde_json::Value::Number(num)
    } else if n.is_nan() {
        serde_json::Value::from("NaN")
    } else if n > 0.0 {
        serde_json::Value::from("inf")
    } else {
        serde_json::Value::from("-inf")
    }
}
