//! User-defined record layouts, read from JSON or TOML files.

use std::path::Path;

use recfmt_core::DType;
use serde::Deserialize;

use super::{FieldLayout, FieldType, RecordLayout};
use crate::error::{Error, Result};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFile {
    #[serde(alias = "records")]
    record: Vec<LayoutFileRecord>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFileRecord {
    #[serde(alias = "id")]
    type_id: u16,
    name: String,
    fields: Vec<LayoutFileField>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFileField {
    #[serde(default)]
    name: Option<String>,
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[serde(default)]
    pad: Option<usize>,
    #[serde(default)]
    count: Option<usize>,
    #[serde(default)]
    unit: Option<String>,
}

/// Parses user-defined record layouts from JSON or TOML text.
///
/// ```
/// let text = r#"
/// [[record]]
/// type_id = 42
/// name = "REC_BATTERY"
/// fields = [
///   { name = "voltage", type = "f32", unit = "V" },
///   { name = "cells", type = "u16", count = 4 },
///   { pad = 2 },
/// ]
/// "#;
/// let layouts = recfmt_tlv::parse_layouts(text, "battery.toml").unwrap();
/// assert_eq!(layouts[0].size(), 4 + 8 + 2);
/// ```
pub fn parse_layouts(text: &str, file_name: &str) -> Result<Vec<RecordLayout>> {
    let file: LayoutFile = if file_name.ends_with(".json") || text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| Error::Layout(format!("{file_name}: {e}").into()))?
    } else {
        toml::from_str(text).map_err(|e| Error::Layout(format!("{file_name}: {e}").into()))?
    };
    file.record
        .into_iter()
        .map(|r| {
            let fields = r
                .fields
                .into_iter()
                .enumerate()
                .map(|(i, f)| field_from_file(f, i, &r.name, file_name))
                .collect::<Result<Vec<_>>>()?;
            Ok(RecordLayout {
                type_id: r.type_id,
                name: r.name,
                fields,
            })
        })
        .collect()
}

fn field_from_file(
    f: LayoutFileField,
    index: usize,
    record: &str,
    file_name: &str,
) -> Result<FieldLayout> {
    let bad =
        |what: String| Error::Layout(format!("{file_name}: {record} field {index}: {what}").into());
    if let Some(pad) = f.pad {
        return Ok(FieldLayout {
            name: String::new(),
            ty: FieldType::Pad(pad),
            count: 1,
            unit: None,
        });
    }
    let name = f
        .name
        .ok_or_else(|| bad("needs a name (or pad = N)".into()))?;
    let ty_name = f.ty.ok_or_else(|| bad(format!("{name} needs a type")))?;
    let dtype = DType::parse(&ty_name)
        .filter(|d| d.size().is_some())
        .ok_or_else(|| {
            bad(format!(
                "{name}: type {ty_name:?} is not a fixed-size number or bool"
            ))
        })?;
    let count = f.count.unwrap_or(1);
    if count == 0 || count > 4096 {
        return Err(bad(format!("{name}: count {count} out of range 1..=4096")));
    }
    Ok(FieldLayout {
        name,
        ty: FieldType::Value(dtype),
        count,
        unit: f.unit,
    })
}

/// Reads a layout file from disk.
pub fn read_layout_file(path: &Path) -> Result<Vec<RecordLayout>> {
    let text = std::fs::read_to_string(path)?;
    parse_layouts(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_files_in_json_and_toml_agree() {
        let json = r#"{"record": [{"type_id": 42, "name": "REC_X", "fields": [
            {"name": "a", "type": "i16"}, {"pad": 2}, {"name": "b", "type": "float64", "count": 2}]}]}"#;
        let toml = "[[record]]\ntype_id = 42\nname = \"REC_X\"\nfields = [{name = \"a\", type = \"i16\"}, {pad = 2}, {name = \"b\", type = \"float64\", count = 2}]\n";
        let a = parse_layouts(json, "x.json").unwrap();
        let b = parse_layouts(toml, "x.toml").unwrap();
        assert_eq!(a, b);
        assert_eq!(a[0].size(), 2 + 2 + 16);
        let err = parse_layouts(
            "[[record]]\ntype_id = 1\nname = \"R\"\nfields = [{name = \"s\", type = \"str\"}]",
            "bad.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("bad.toml") && err.contains("not a fixed-size"),
            "{err}"
        );
    }
}
