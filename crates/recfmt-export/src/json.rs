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

/// The key of the stream's name in rows written with a stream key.
pub const STREAM_KEY: &str = "stream";

/// The keys of `desc`'s signals in JSON rows: [`crate::column_names`] with [`STREAM_KEY`]
/// reserved, so rows with and without the stream key name every signal alike (a signal `t`
/// beside the time column `t` is `t_2`, a signal `stream` is `stream_2`).
pub fn keys(desc: &recfmt_core::StreamDesc) -> Vec<String> {
    crate::column_names(desc, &[STREAM_KEY])
}

/// Writes rows of one stream as JSON objects, one key per signal named by [`keys`] (a JSON
/// object keeps only one value per key), after a `"stream"` key when asked.
#[derive(Debug, Clone)]
pub struct RowWriter {
    /// `"stream":"<name>",` or empty.
    prefix: String,
    /// `"<column>":` of each signal, JSON-escaped once.
    keys: Vec<String>,
    dtypes: Vec<DType>,
}

impl RowWriter {
    /// A writer of `desc`'s rows, with a [`STREAM_KEY`] first when `stream_key` is set.
    pub fn new(desc: &recfmt_core::StreamDesc, stream_key: bool) -> Self {
        let keys = keys(desc)
            .iter()
            .map(|name| {
                let mut key = String::new();
                string(&mut key, name);
                key.push(':');
                key
            })
            .collect();
        let mut prefix = String::new();
        if stream_key {
            string(&mut prefix, STREAM_KEY);
            prefix.push(':');
            string(&mut prefix, &desc.name);
        }
        RowWriter {
            prefix,
            keys,
            dtypes: desc.signals.iter().map(|s| s.dtype).collect(),
        }
    }

    /// Appends one row (`values` in signal order) as a JSON object.
    pub fn write(&self, out: &mut String, values: &[Value]) {
        out.push('{');
        out.push_str(&self.prefix);
        let mut first = self.prefix.is_empty();
        for ((key, dtype), v) in self.keys.iter().zip(&self.dtypes).zip(values) {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(key);
            value(out, v, *dtype);
        }
        out.push('}');
    }
}

/// Appends one row of `desc` as a JSON object: `{"<signal>": value, ...}`, preceded by
/// `"stream": <name>` when `stream_key` is set; keys are named as [`RowWriter`] says. For many
/// rows, make one [`RowWriter`] per stream instead.
pub fn row(out: &mut String, desc: &recfmt_core::StreamDesc, values: &[Value], stream_key: bool) {
    RowWriter::new(desc, stream_key).write(out, values);
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
