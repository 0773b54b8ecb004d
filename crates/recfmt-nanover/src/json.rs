//! `google.protobuf.Value` as JSON.

use crate::proto::{Kind, ListValue, NullValue, Struct, Value, ValueArray, Values};

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

pub(crate) fn number_to_json(n: f64) -> serde_json::Value {
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

/// Writes a `Value` as JSON text that reads back exactly: what Python's `json.dumps` writes
/// and `json.loads` reads. Integral numbers print without a fraction (`3`, but `-0.0` keeps
/// its sign), other numbers with the shortest text that parses back to the same `f64`, and
/// NaN and infinities as `NaN`, `Infinity` and `-Infinity` (Python's spelling; strict JSON
/// parsers refuse these three, which occur in practice: NanoVer's interactions set
/// `max_force` to infinity). A value with no kind set is written as `null`.
///
/// ```
/// use recfmt_nanover::{json_text_to_value, number, value_to_json_text};
/// assert_eq!(value_to_json_text(&number(3.0)), "3");
/// assert_eq!(value_to_json_text(&number(f64::INFINITY)), "Infinity");
/// let v = number(0.1 + 0.2);
/// assert_eq!(json_text_to_value(&value_to_json_text(&v)).unwrap(), v);
/// ```
pub fn value_to_json_text(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v);
    out
}

fn write_value(out: &mut String, v: &Value) {
    match &v.kind {
        None | Some(Kind::NullValue(_)) => out.push_str("null"),
        Some(Kind::BoolValue(b)) => out.push_str(if *b { "true" } else { "false" }),
        Some(Kind::NumberValue(n)) => write_number(out, *n),
        Some(Kind::StringValue(s)) => write_string(out, s),
        Some(Kind::ListValue(l)) => {
            out.push('[');
            for (i, item) in l.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Some(Kind::StructValue(s)) => {
            out.push('{');
            for (i, (k, item)) in s.fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    match serde_json::to_string(s) {
        Ok(text) => out.push_str(&text),
        // Serialising a &str cannot fail; keep the output valid JSON regardless.
        Err(_) => out.push_str("\"\""),
    }
}

/// Writes a number as exact JSON text (see [`value_to_json_text`]).
pub(crate) fn write_number(out: &mut String, n: f64) {
    use std::fmt::Write as _;
    if n.is_nan() {
        out.push_str("NaN");
    } else if n.is_infinite() {
        out.push_str(if n > 0.0 { "Infinity" } else { "-Infinity" });
    } else if n == 0.0 && n.is_sign_negative() {
        out.push_str("-0.0");
    } else if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        let _ = write!(out, "{}", n as i64);
    } else if let Some(num) = serde_json::Number::from_f64(n) {
        // Shortest text that parses back to the same f64 (ryu).
        let _ = write!(out, "{num}");
    } else {
        let _ = write!(out, "{n:e}");
    }
}

/// Parses JSON text as written by [`value_to_json_text`] (standard JSON plus `NaN`,
/// `Infinity`, `-Infinity`) into a `Value`: numbers become `number_value` parsed exactly,
/// `null` a `null_value`, arrays lists and objects structs (a repeated key keeps its last
/// value). Nesting deeper than 256 levels is refused.
pub fn json_text_to_value(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        pos: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.pos != p.s.len() {
        return Err(format!("unexpected text at {}", p.pos));
    }
    Ok(v)
}

const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.s[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at {}", self.pos))
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        self.ws();
        let kind = match self.s.get(self.pos) {
            None => return self.err("unexpected end"),
            Some(b'{') => {
                self.pos += 1;
                let mut fields = std::collections::BTreeMap::new();
                self.ws();
                if !self.eat("}") {
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        if !self.eat(":") {
                            return self.err("expected ':'");
                        }
                        let v = self.value(depth + 1)?;
                        fields.insert(k, v);
                        self.ws();
                        if self.eat(",") {
                            continue;
                        }
                        if self.eat("}") {
                            break;
                        }
                        return self.err("expected ',' or '}'");
                    }
                }
                Kind::StructValue(Struct { fields })
            }
            Some(b'[') => {
                self.pos += 1;
                let mut values = Vec::new();
                self.ws();
                if !self.eat("]") {
                    loop {
                        values.push(self.value(depth + 1)?);
                        self.ws();
                        if self.eat(",") {
                            continue;
                        }
                        if self.eat("]") {
                            break;
                        }
                        return self.err("expected ',' or ']'");
                    }
                }
                Kind::ListValue(ListValue { values })
            }
            Some(b'"') => Kind::StringValue(self.string()?),
            Some(_) if self.eat("true") => Kind::BoolValue(true),
            Some(_) if self.eat("false") => Kind::BoolValue(false),
            Some(_) if self.eat("null") => Kind::NullValue(NullValue::NullValue as i32),
            Some(_) if self.eat("NaN") => Kind::NumberValue(f64::NAN),
            Some(_) if self.eat("Infinity") => Kind::NumberValue(f64::INFINITY),
            Some(_) if self.eat("-Infinity") => Kind::NumberValue(f64::NEG_INFINITY),
            Some(b'-' | b'0'..=b'9') => Kind::NumberValue(self.number()?),
            Some(_) => return self.err("unexpected character"),
        };
        Ok(Value { kind: Some(kind) })
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
        {
            self.pos += 1;
        }
        // Rust's parser rounds correctly, so the number comes back exactly.
        self.text[start..self.pos]
            .parse::<f64>()
            .or_else(|_| self.err("bad number"))
    }

    fn string(&mut self) -> Result<String, String> {
        if self.s.get(self.pos) != Some(&b'"') {
            return self.err("expected a string");
        }
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.s.get(self.pos) {
                None => return self.err("unterminated string"),
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => self.pos += 1,
            }
        }
        let slice = self
            .text
            .get(start..self.pos)
            .ok_or_else(|| format!("bad string at {start}"))?;
        serde_json::from_str::<String>(slice).map_err(|e| format!("bad string at {start}: {e}"))
    }
}

/// A `ValueArray` as JSON text (see [`value_to_json_text`]): floats and indices as
/// numbers, strings as strings (an array with no variant set is `[]`).
pub(crate) fn array_to_json_text(a: &ValueArray) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("[");
    match &a.values {
        Some(Values::FloatValues(f)) => {
            for (i, &x) in f.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_number(&mut out, f64::from(x));
            }
        }
        Some(Values::IndexValues(v)) => {
            for (i, x) in v.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{x}");
            }
        }
        Some(Values::StringValues(v)) => {
            for (i, x) in v.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(&mut out, x);
            }
        }
        None => {}
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::number;

    #[test]
    fn json_text_round_trips_every_kind_exactly() {
        let cases = [
            "null",
            "true",
            "[1,-0.0,0.30000000000000004,1e300,-2.5e-308,NaN,Infinity,-Infinity]",
            r#"{"a":{"b":["x\"y\u00e9\n",false]},"c":[]}"#,
            "123456789012345680000",
        ];
        for text in cases {
            let v = json_text_to_value(text).unwrap();
            let again = value_to_json_text(&v);
            let back = json_text_to_value(&again).unwrap();
            assert_eq!(value_to_json_text(&back), again, "{text}");
        }
        for n in [f64::MIN_POSITIVE, 5e-324, f64::MAX, -0.0, 0.1, 1.0 / 3.0] {
            let back = json_text_to_value(&value_to_json_text(&number(n))).unwrap();
            match back.kind {
                Some(Kind::NumberValue(m)) => assert_eq!(m.to_bits(), n.to_bits()),
                other => panic!("{other:?}"),
            }
        }
        assert!(json_text_to_value("[1,").is_err());
        assert!(json_text_to_value("[1] x").is_err());
        assert!(json_text_to_value(&"[".repeat(1000)).is_err());
    }
}
