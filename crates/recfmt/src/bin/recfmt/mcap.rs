//! `recfmt convert --to mcap`: one MCAP file for Foxglove and Lichtblick (see
//! `recfmt_export::mcap`), with the provenance a Parquet export carries.

use std::path::Path;

use anyhow::{Context, Result};
use recfmt_core::RecordingReader;
use recfmt_export::mcap::{McapOptions, export_mcap};

use crate::Outcome;
use crate::args::ConvertArgs;
use crate::commands::{outcome, report_loss};
use crate::convert::source_sha256;

/// Writes `reader` (already selected) into the MCAP file `output`.
pub fn convert_to_mcap(
    args: &ConvertArgs,
    input: &Path,
    output: &Path,
    mut reader: Box<dyn RecordingReader>,
    mut notes: Vec<String>,
) -> Result<(Outcome, Vec<String>)> {
    let digest = {
        let input = input.to_path_buf();
        recfmt_export::PendingMetadata::spawn(move || {
            let sha256 = source_sha256(&input).map_err(|e| format!("{e:#}"))?;
            Ok([("source.sha256".to_owned(), sha256)].into_iter().collect())
        })
    };
    // The keys `convert --to parquet` writes into every table's metadata.
    let mut metadata = recfmt_core::Metadata::new();
    metadata.insert(
        "source.file".into(),
        input.file_name().map_or_else(
            || input.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
    );
    metadata.insert("source.path".into(), input.display().to_string());
    metadata.insert("source.format".into(), reader.header().format.to_string());
    metadata.insert("source.version".into(), reader.header().version.clone());
    metadata.insert("recfmt.recfmt_version".into(), recfmt::VERSION.into());
    if args.start.is_some() || args.end.is_some() {
        let range = serde_json::json!({"start": args.start, "end": args.end, "carry_last": args.carry_last});
        metadata.insert("recfmt.time_range".into(), range.to_string());
    }
    let options = McapOptions {
        metadata,
        pending_metadata: Some(digest),
        scene: recfmt::pictures::mcap_scene(reader.header(), reader.schema()),
    };
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let report = export_mcap(reader.as_mut(), output, &options, &mut |_, _| {})
        .with_context(|| format!("converting {} into {}", input.display(), output.display()))?;
    let messages: u64 = report.channels.iter().map(|c| c.1).sum();
    let mut line = format!(
        "wrote {} ({} channels, {messages} messages",
        output.display(),
        report.channels.len()
    );
    if report.scene_messages > 0 {
        line.push_str(&format!(
            ", {} scene updates on /scene",
            report.scene_messages
        ));
    }
    line.push(')');
    notes.push(line);
    if report.clamped > 0 {
        notes.push(format!(
            "note: {} rows had times before zero and were logged at time 0",
            report.clamped
        ));
    }
    report_loss(reader.integrity());
    Ok((outcome(reader.integrity()), notes))
}
