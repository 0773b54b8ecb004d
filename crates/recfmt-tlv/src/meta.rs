//! `meta.json` of a session folder, kept verbatim and read through typed accessors.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::layout::CatalogEntry;

/// The session's `meta.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// The file's text, byte for byte (written back unchanged).
    pub raw: String,
    /// The parsed document.
    pub json: Json,
}

impl Meta {
    /// Parses `meta.json` text.
    ///
    /// ```
    /// let meta = recfmt_tlv::Meta::parse(r#"{"model_id": "m2", "fw_model_schema": 1}"#.into()).unwrap();
    /// assert_eq!(meta.fw_model_id(), Some("m2"));
    /// ```
    pub fn parse(raw: String) -> Result<Self> {
        let json: Json = serde_json::from_str(&raw)?;
        if !json.is_object() {
            return Err(Error::Layout(
                "meta.json: expected a JSON object at the top level".into(),
            ));
        }
        Ok(Meta { raw, json })
    }

    /// The firmware model id (`fw_model_id`, or `model_id` as `check_compat` spells it).
    pub fn fw_model_id(&self) -> Option<&str> {
        self.json
            .get("fw_model_id")
            .or_else(|| self.json.get("model_id"))
            .and_then(Json::as_str)
    }

    /// `fw_model_schema`, when present.
    pub fn fw_model_schema(&self) -> Option<u64> {
        self.json.get("fw_model_schema").and_then(Json::as_u64)
    }

    fn timeseries(&self) -> Option<&Json> {
        self.json.get("files")?.get("timeseries.bin")
    }

    /// `files["timeseries.bin"].record_catalog`: the authority for type id to record name.
    pub fn record_catalog(&self) -> Result<Option<BTreeMap<u16, CatalogEntry>>> {
        let Some(catalog) = self.timeseries().and_then(|t| t.get("record_catalog")) else {
            return Ok(None);
        };
        let map: BTreeMap<String, CatalogEntry> = serde_json::from_value(catalog.clone())?;
        map.into_iter()
            .map(|(id, entry)| {
                id.trim().parse::<u16>().map(|id| (id, entry)).map_err(|_| {
                    Error::Layout(
                        format!("meta.json: record_catalog key {id:?} is not a u16 type id").into(),
                    )
                })
            })
            .collect::<Result<_>>()
            .map(Some)
    }

    /// `files["timeseries.bin"].record_counts`, when present.
    pub fn record_counts(&self) -> BTreeMap<String, u64> {
        self.timeseries()
            .and_then(|t| t.get("record_counts"))
            .and_then(Json::as_object)
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `files["events.jsonl"].event_count`, when present.
    pub fn event_count(&self) -> Option<u64> {
        self.json
            .get("files")?
            .get("events.jsonl")?
            .get("event_count")?
            .as_u64()
    }

    /// Scalar entries flattened to dotted keys (`scenario.name`, `time.dt_us`, ...), for
    /// recording metadata. The record catalog and counts are left out.
    pub fn flattened(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        flatten("", &self.json, &mut out);
        out
    }
}

fn flatten(prefix: &str, value: &Json, out: &mut BTreeMap<String, String>) {
    match value {
        Json::Object(map) => {
            for (k, v) in map {
                if k == "record_catalog" || k == "record_counts" {
                    continue;
                }
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Json::Array(_) => {
            out.insert(prefix.to_string(), value.to_string());
        }
        Json::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        Json::Null => {}
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}
