//! The `/metadata` `schema` attribute: Vulcan's JSON list of signals, read leniently and
//! written exactly as Vulcan lays it out.

use std::collections::HashSet;
use std::fmt::Write as _;

use recfmt_core::{Integrity, Result};

use super::malformed;

/// One entry of the `/metadata` `schema` attribute.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SchemaSignal {
    pub(super) name: String,
    pub(super) type_name: String,
    pub(super) lifecycle: Lifecycle,
    pub(super) unit: Option<String>,
    pub(super) semantic: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lifecycle {
    Dynamic,
    Static,
}

impl Lifecycle {
    pub(super) fn name(self) -> &'static str {
        match self {
            Lifecycle::Dynamic => "dynamic",
            Lifecycle::Static => "static",
        }
    }
}

pub(super) fn parse_schema(
    text: &str,
    integrity: &mut Integrity,
    strict: bool,
) -> Result<Vec<SchemaSignal>> {
    let bad = |what: String| malformed(format!("/metadata attribute schema: {what}"));
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        bad(format!(
            "a JSON object (line {} column {}: {e})",
            e.line(),
            e.column()
        ))
    })?;
    let signals = value
        .get("signals")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| bad("a JSON object with a \"signals\" array".into()))?;
    let mut out = Vec::with_capacity(signals.len());
    let mut seen = HashSet::new();
    for (i, s) in signals.iter().enumerate() {
        let text_of = |key: &str| s.get(key).and_then(serde_json::Value::as_str);
        let name = text_of("name")
            .ok_or_else(|| bad(format!("signals[{i}] with a string \"name\"")))?
            .to_string();
        if !seen.insert(name.clone()) {
            return Err(bad(format!(
                "unique signal names, found {name:?} twice (signals[{i}])"
            )));
        }
        let type_name = text_of("type").unwrap_or("double").to_string();
        let lifecycle = match text_of("lifecycle") {
            Some("static") => Lifecycle::Static,
            Some("dynamic") => Lifecycle::Dynamic,
            other => {
                let found = other.map_or_else(|| "none".into(), |o| format!("{o:?}"));
                if strict {
                    return Err(bad(format!(
                        "signals[{i}] ({name:?}) with lifecycle \"static\" or \"dynamic\", found {found}"
                    )));
                }
                integrity.warn(format!(
                    "/metadata schema: signal {name:?} has lifecycle {found}; read as dynamic"
                ));
                Lifecycle::Dynamic
            }
        };
        out.push(SchemaSignal {
            name,
            type_name,
            lifecycle,
            unit: text_of("unit").map(str::to_string),
            semantic: text_of("semantic").map(str::to_string),
        });
    }
    Ok(out)
}

/// The `schema` attribute text, laid out exactly as Vulcan's `TelemetrySchema::to_json`
/// (whose reader is a hand-written parser), with JSON escaping added.
pub(super) fn schema_text(signals: &[SchemaSignal]) -> String {
    let quoted = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let mut json = String::from("{\n  \"signals\": [\n");
    for (i, s) in signals.iter().enumerate() {
        json.push_str("    {\n");
        let _ = writeln!(json, "      \"name\": {},", quoted(&s.name));
        let _ = writeln!(json, "      \"type\": {},", quoted(&s.type_name));
        let _ = writeln!(json, "      \"lifecycle\": {},", quoted(s.lifecycle.name()));
        let _ = write!(json, "      \"offset\": {}", 8 * i);
        if let Some(u) = s.unit.as_deref().filter(|u| !u.is_empty()) {
            let _ = write!(json, ",\n      \"unit\": {}", quoted(u));
        }
        if let Some(m) = s.semantic.as_deref().filter(|m| !m.is_empty()) {
            let _ = write!(json, ",\n      \"semantic\": {}", quoted(m));
        }
        json.push_str("\n    }");
        if i + 1 < signals.len() {
            json.push(',');
        }
        json.push('\n');
    }
    json.push_str("  ],\n");
    let _ = write!(json, "  \"frame_size_bytes\": {}\n}}", 8 * signals.len());
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_text_matches_vulcan_layout() {
        let specs = [
            SchemaSignal {
                name: "position.x".into(),
                type_name: "double".into(),
                lifecycle: Lifecycle::Dynamic,
                unit: Some("m".into()),
                semantic: None,
            },
            SchemaSignal {
                name: "gnc.phase".into(),
                type_name: "int32".into(),
                lifecycle: Lifecycle::Static,
                unit: None,
                semantic: Some("enum".into()),
            },
        ];
        let text = schema_text(&specs);
        assert_eq!(
            text,
            "{\n  \"signals\": [\n    {\n      \"name\": \"position.x\",\n      \"type\": \"double\",\n      \"lifecycle\": \"dynamic\",\n      \"offset\": 0,\n      \"unit\": \"m\"\n    },\n    {\n      \"name\": \"gnc.phase\",\n      \"type\": \"int32\",\n      \"lifecycle\": \"static\",\n      \"offset\": 8,\n      \"semantic\": \"enum\"\n    }\n  ],\n  \"frame_size_bytes\": 16\n}"
        );
        let mut integrity = Integrity::default();
        let parsed = parse_schema(&text, &mut integrity, true).unwrap();
        assert_eq!(parsed, specs);
        assert!(integrity.warnings.is_empty());
    }

    #[test]
    fn schema_errors_name_the_attribute() {
        let mut integrity = Integrity::default();
        let e = parse_schema("{\"signals\": 3}", &mut integrity, false).unwrap_err();
        assert!(e.to_string().contains("/metadata attribute schema"), "{e}");
        let e = parse_schema(
            "{\"signals\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
            &mut integrity,
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = parse_schema("not json", &mut integrity, false).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
