//! The schema checksum: `sha256:` + lowercase hex of SHA-256 over the RFC 8785 (JCS)
//! canonical JSON of `schema.json` without its `checksum` member.
//!
//! Canonicalisation is done by `serde_json_canonicalizer` (object members sorted by their
//! UTF-16 code units, no whitespace, strings with minimal escaping, numbers formatted as
//! ECMAScript's `Number.prototype.toString`). One step is ours: JCS treats every number as an
//! IEEE double, while `serde_json` keeps integers beyond 2^53 exact, so such integers are first
//! rounded to the nearest double, as an ECMAScript `JSON.parse` would.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The prefix of every checksum string.
pub const CHECKSUM_PREFIX: &str = "sha256:";

/// The RFC 8785 canonical form of a JSON value.
///
/// ```
/// let v: serde_json::Value = serde_json::from_str(r#"{"b": [1.50, 1e21], "a": "\u00e9"}"#).unwrap();
/// assert_eq!(recfmt_icarec::canonical_json(&v), r#"{"a":"é","b":[1.5,1e+21]}"#);
/// ```
pub fn canonical_json(value: &Value) -> String {
    let normalized = as_doubles(value);
    // Only non-finite numbers or non-string keys make the canonicaliser fail, and a
    // `serde_json::Value` holds neither.
    serde_json_canonicalizer::to_string(&normalized).unwrap_or_default()
}

/// Rounds integers outside ±2^53 to doubles, as JCS requires.
fn as_doubles(value: &Value) -> Value {
    const EXACT: u64 = 1 << 53;
    match value {
        Value::Number(n) => {
            let big = n.as_u64().is_some_and(|u| u > EXACT)
                || n.as_i64().is_some_and(|i| i.unsigned_abs() > EXACT);
            match (big, n.as_f64()) {
                (true, Some(f)) => {
                    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
                }
                _ => value.clone(),
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(as_doubles).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), as_doubles(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The checksum of a `schema.json` document (its `checksum` member, if any, is left out).
///
/// ```
/// let doc: serde_json::Value = serde_json::from_str(r#"{"schema_version": "1.0.0", "checksum": "x"}"#).unwrap();
/// let same: serde_json::Value = serde_json::from_str(r#"{ "schema_version" : "1.0.0" }"#).unwrap();
/// assert_eq!(recfmt_icarec::schema_checksum(&doc), recfmt_icarec::schema_checksum(&same));
/// assert!(recfmt_icarec::schema_checksum(&doc).starts_with("sha256:"));
/// ```
pub fn schema_checksum(schema: &Value) -> String {
    let text = match schema {
        Value::Object(map) => {
            let mut without = map.clone();
            without.remove("checksum");
            canonical_json(&Value::Object(without))
        }
        other => canonical_json(other),
    };
    format!("{CHECKSUM_PREFIX}{}", sha256_hex(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> String {
        canonical_json(&serde_json::from_str(text).unwrap())
    }

    /// Number formatting per ECMAScript, the examples of RFC 8785 appendix B and §3.2.2.3.
    #[test]
    fn numbers_are_formatted_like_ecmascript() {
        let cases = [
            ("0", "0"),
            ("-0.0", "0"),
            ("1.0", "1"),
            ("4.50", "4.5"),
            ("2e-3", "0.002"),
            ("0.000001", "0.000001"),
            ("1e-7", "1e-7"),
            ("1e21", "1e+21"),
            ("1E30", "1e+30"),
            ("123456789012345680000", "123456789012345680000"),
            ("333333333.33333329", "333333333.3333333"),
            ("-1.5e-300", "-1.5e-300"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("9007199254740992", "9007199254740992"),
            ("9007199254740993", "9007199254740992"),
            ("18446744073709551615", "18446744073709552000"),
            ("-9223372036854775808", "-9223372036854776000"),
            ("0.1", "0.1"),
            ("100", "100"),
            ("295147905179352830000", "295147905179352830000"),
        ];
        for (input, expected) in cases {
            assert_eq!(
                canon(&format!("[{input}]")),
                format!("[{expected}]"),
                "{input}"
            );
        }
    }

    /// Member order by UTF-16 code units (RFC 8785 §3.2.3 example).
    #[test]
    fn members_sort_by_utf16_code_units() {
        let text = r#"{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
            "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let canonical = canonical_json(&v);
        let order: Vec<String> = canonical
            .split("\":\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap_or_default().to_string())
            .collect();
        assert_eq!(
            order,
            [
                "Carriage Return",
                "One",
                "Control",
                "Latin Small Letter O With Diaeresis",
                "Euro Sign",
                "Emoji: Grinning Face",
                "Hebrew Letter Dalet With Dagesh"
            ]
        );
    }

    /// The complete example of RFC 8785 §3.2.2.
    #[test]
    fn rfc_8785_example_object() {
        let input = r#"{
            "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals": [null, true, false]
        }"#;
        let expected = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
        assert_eq!(canon(input), expected);
    }

    #[test]
    fn checksum_ignores_whitespace_key_order_and_the_checksum_member() {
        let a = r#"{"b": 1, "a": [true, "x"], "checksum": "sha256:00"}"#;
        let b = "{\n  \"a\" : [ true , \"x\" ] ,\n  \"b\" : 1.0\n}";
        let va: Value = serde_json::from_str(a).unwrap();
        let vb: Value = serde_json::from_str(b).unwrap();
        assert_eq!(schema_checksum(&va), schema_checksum(&vb));
        // The SHA-256 of the canonical text {"a":[true,"x"],"b":1}.
        assert_eq!(
            schema_checksum(&va),
            format!("sha256:{}", sha256_hex(br#"{"a":[true,"x"],"b":1}"#))
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// The worked example of docs/formats/icarec.md (the upstream `20_recording.md` schema);
    /// the expected canonical text and digest were computed independently (Python's
    /// `json.dumps(sort_keys=True, separators=(",", ":"))` and `hashlib.sha256`).
    #[test]
    fn documented_example_checksum() {
        let doc = r#"{
  "schema_version": "2.3.1",
  "icarus_version": "1.5.0",
  "created_at": "2024-12-22T10:30:00Z",
  "time": {"epoch": "2024-12-22T00:00:00Z", "system": "MET", "units": "seconds"},
  "signals": [
    {"name": "Vehicle.Nav.position", "type": "Vec3<double>", "units": "m",
     "lifecycle": "dynamic", "offset": 0, "size": 24},
    {"name": "Vehicle.Aero.alpha", "type": "double", "units": "rad",
     "lifecycle": "dynamic", "offset": 24, "size": 8}
  ],
  "components": [
    {"name": "Vehicle.EOM", "type": "RigidBody6DOF", "state_offset": 0, "state_size": 13}
  ],
  "compatibility": {"min_icarus_version": "1.0.0", "warmstart_compatible": true, "breaking_changes": []},
  "checksum": "sha256:..."
}"#;
        let v: Value = serde_json::from_str(doc).unwrap();
        let mut without = v.clone();
        without.as_object_mut().unwrap().remove("checksum");
        assert_eq!(
            canonical_json(&without),
            r#"{"compatibility":{"breaking_changes":[],"min_icarus_version":"1.0.0","warmstart_compatible":true},"components":[{"name":"Vehicle.EOM","state_offset":0,"state_size":13,"type":"RigidBody6DOF"}],"created_at":"2024-12-22T10:30:00Z","icarus_version":"1.5.0","schema_version":"2.3.1","signals":[{"lifecycle":"dynamic","name":"Vehicle.Nav.position","offset":0,"size":24,"type":"Vec3<double>","units":"m"},{"lifecycle":"dynamic","name":"Vehicle.Aero.alpha","offset":24,"size":8,"type":"double","units":"rad"}],"time":{"epoch":"2024-12-22T00:00:00Z","system":"MET","units":"seconds"}}"#
        );
        assert_eq!(
            schema_checksum(&v),
            "sha256:80fb364e856f6fdf6bcc1997f11174d8cdde60d161a40570ca97e5073bd90d35"
        );
    }
}
