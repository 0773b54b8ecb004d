//! `metadata.json`: scenario, timestamps, selection, and sizes and digests of the data files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::time::TimeSpec;

/// File name of the metadata inside a recording directory.
pub const METADATA_FILE: &str = "metadata.json";

/// The scenario that produced the recording.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Scenario {
    /// Scenario name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Path of the scenario configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
    /// SHA-256 (hex) of the configuration file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which signals were recorded (after upstream's `RecordingConfig`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SelectionSpec {
    /// `all`, `outputs` or `signals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Include patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Exclude patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Members this crate does not know (`include_derivatives`, `include_inputs`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Size and digest of one data file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// Length in bytes.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the content.
    pub sha256: String,
}

/// `metadata.json` as stored. Every member is optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MetadataDoc {
    /// Version of the simulator that recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icarus_version: Option<String>,
    /// `<tool>/<version>` of the recorder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorder: Option<String>,
    /// RFC 3339 creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// Time reference and span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<TimeSpec>,
    /// Number of complete frames in `dynamic_signals.bin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_count: Option<u64>,
    /// Every how many simulation steps a frame was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decimation: Option<u64>,
    /// Which signals were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionSpec>,
    /// Sizes and digests of `static_signals.bin` and `dynamic_signals.bin`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, FileDigest>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MetadataDoc {
    /// The pretty JSON text our writer stores (two-space indent, trailing newline).
    pub fn to_json_text(&self) -> crate::Result<String> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| crate::Error::invalid(format!("metadata.json cannot be written: {e}")))?;
        text.push('\n');
        Ok(text)
    }
}
