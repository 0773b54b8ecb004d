//! Values and rows as JSON text, typed by their signal's dtype: an `f32` prints as the shortest
//! text that reads back to the same `f32`, and nothing is lost (non-finite floats become the
//! strings `"inf"`, `"-inf"` and `"NaN"`, bytes become lowercase hex).
//!
//! `recfmt cat --output ndjson` and the NDJSON export both use this, so they agree.
//!
//! ```
//! use recfmt_core::{DType, Value};
//! let mut out = String::new();
//! recfmt_export::json::value(&mut out, &Value::Float(f64::from(0.1f32)), DType::F32);
//! assert_eq!(out, "0.1");
//! ```

use std::fmt::Write;

use recfmt_core::{ArrayValue, DType, Value};

/// JSON has no infinities or NaN; they are written as the strings `"inf"`, `"-inf"` and
/// `"NaN"` so no value is lost (Python's `float()` reads all three back).
fn float(out: &mut String, x: f64, dtype: DType) {
    if x.is_nan() {
        out.push_str("\"NaN\"");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "\"inf\"" } else { "\"-inf\"" });
        return;
    }
    let text = if dtype == DType::F32 {
        serde_json::to_string(&(x as f32))
    } else {
        serde_json::to_string(&x)
    };
    out.push_str(&text.unwrap_or_else(|_| "null".into()));
}

/// Appends one row of `desc` as a JSON object: `{"<signal>": value, ...}`, preceded by
/// `"stream": <name>` when `stream_key` is set.
pub fn row(out: &mut String, desc: &recfmt_core::StreamDesc, values: &[Value], stream_key: bool) {
    out.push('{');
    let mut first = true;
    if stream_key {
        out.push_str("\"stream\":");
        string(out, &desc.name);
        first = false;
    }
    for (sig, v) in desc.signals.iter().zip(values) {
        if !first {
            out.push(',');
        }
        first = false;
        string(out, &sig.name);
        out.push(':');
        value(out, v, sig.dtype);
    }
    out.push('}');
}

/// Appends a JSON string literal.
pub fn string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()));
}

/// Appends one value.
pub fn value(out: &mut String, v: &Value, dtype: DType) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::UInt(u) => {
            let _ = write!(out, "{u}");
        }
        Value::Float(f) => float(out, *f, dtype),
        Value::Str(s) => string(out, s),
        Value::Bytes(b) => {
            out.push('"');
            for byte in b {
                let _ = write!(out, "{byte:02x}");
            }
            out.push('"');
        }
        Value::Array(a) => array(out, a, dtype),
        _ => out.push_str("null"),
    }
}

fn array(out: &mut String, a: &ArrayValue, dtype: DType) {
    out.push('[');
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
    };
    match a {
        ArrayValue::Bool(v) => v.iter().for_each(|x| {
            sep(out);
            out.push_str(if *x { "true" } else { "false" });
        }),
        ArrayValue::Int(v) => v.iter().for_each(|x| {
            sep(out);
            let _ = write!(out, "{x}");
        }),
        ArrayValue::UInt(v) => v.iter().for_each(|x| {
            sep(out);
            let _ = write!(out, "{x}");
        }),
        ArrayValue::F32(v) => v.iter().for_each(|x| {
            sep(out);
            float(out, f64::from(*x), DType::F32);
        }),
        ArrayValue::F64(v) => v.iter().for_each(|x| {
            sep(out);
            float(out, *x, dtype);
        }),
        _ => {}
    }
    out.push(']');
}
