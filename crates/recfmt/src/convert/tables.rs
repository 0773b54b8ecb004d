//! Into tables (or HDF5, MCAP) through the exporters: the options the exporters take, the
//! provenance metadata, and the notes a conversion reports.

use super::*;

pub(super) fn delimiter(text: &str) -> Result<u8> {
    match text {
        "tab" | "\\t" => Ok(b'\t'),
        t if t.len() == 1 && t.is_ascii() => Ok(t.as_bytes()[0]),
        t => Err(Error::Invalid(format!(
            "--delimiter must be one ASCII character or `tab`, not {t:?}"
        ))),
    }
}

/// Into tables (or HDF5) through the exporters, with provenance metadata.
pub(super) fn to_tables(
    registry: &Registry,
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
    mut reader: Box<dyn RecordingReader + '_>,
    mut notes: Vec<String>,
    on_progress: &(dyn Fn(u64, Option<u64>) + Sync),
) -> Result<ConvertReport> {
    let target = options.target.as_str();
    if options.partition && target != "parquet" {
        return Err(Error::Invalid(format!(
            "a partitioned dataset is written as Parquet, not {target}"
        )));
    }
    let hdf5 = target == "hdf5";
    let mcap = target == "mcap" && cfg!(feature = "export-mcap");
    let table = table_targets()
        .into_iter()
        .find(|(id, _, _)| *id == target)
        .map(|(_, _, f)| f);
    let format = match (table, hdf5) {
        (Some(f), _) => f,
        // HDF5 is written by its own writer below; the table options still apply.
        (None, true) => TableFormat::Parquet,
        // MCAP is written by its own writer below, with the same provenance.
        (None, false) if mcap => TableFormat::Parquet,
        (None, false) => {
            let known: Vec<_> = targets(registry).iter().map(|t| t.id).collect();
            return Err(Error::Invalid(format!(
                "unknown target {target:?} (known: {})",
                known.join(", ")
            )));
        }
    };
    // Existing tables are refused before the input is read for anything (its digest).
    if table.is_some() {
        let check = ExportOptions {
            replace: options.replace(),
            ..ExportOptions::new(format)
        };
        if options.partition {
            recfmt_export::check_partitioned(
                reader.schema(),
                output,
                &source_of(options, input),
                &check,
            )?;
        } else {
            recfmt_export::check_tables(reader.schema(), output, &check)?;
        }
    }
    // The input's digest is computed on a thread of its own while the export decodes. A time
    // window goes without: hashing reads the whole input, which the window's seek avoids (a
    // 1 s window of 10 GB of USVLOG took 7.2 s, 83 % of it in SHA-256); `recfmt.time_range`
    // and `source.*` say where its rows come from.
    // CSV goes without too: it has no place for table metadata, so its tables would wait for
    // the whole input to be hashed before their first row only to drop the digest (and the
    // hashing took a core's share from the formatting, issue 24).
    let windowed = options.start.is_some() || options.end.is_some();
    let csv = table == Some(TableFormat::Csv) && !hdf5 && !mcap;
    let digest = (!windowed && !csv).then(|| {
        let input = input.to_path_buf();
        let cancel = options.open.cancel.clone();
        recfmt_export::PendingMetadata::spawn(move || {
            let sha256 =
                sha256_of(&input, cancel.as_ref()).map_err(|e| crate::error::chain_text(&e))?;
            Ok([("source.sha256".to_owned(), sha256)].into_iter().collect())
        })
    });
    let mut export = ExportOptions::new(format);
    export.batch_rows = options.batch_rows;
    export.row_group_rows = options.row_group_rows;
    export.row_group_bytes = options.row_group_bytes;
    export.row_group_memory = options.row_group_memory;
    export.byte_stream_split = options.byte_stream_split;
    export.compression = options.compression;
    export.csv = CsvOptions {
        delimiter: delimiter(&options.delimiter)?,
        units_row: options.units_row,
    };
    export.pending_metadata.clone_from(&digest);
    export.replace = options.replace();
    export.threads = options.open.threads.unwrap_or(0);
    let meta = &mut export.metadata;
    meta.insert(
        "source.file".into(),
        input.file_name().map_or_else(
            || input.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
    );
    meta.insert("source.path".into(), input.display().to_string());
    meta.insert("source.format".into(), reader.header().format.to_string());
    meta.insert("source.version".into(), reader.header().version.clone());
    meta.insert("recfmt.recfmt_version".into(), crate::VERSION.into());
    if windowed {
        let range = serde_json::json!({"start": options.start, "end": options.end, "carry_last": options.carry_last});
        meta.insert("recfmt.time_range".into(), range.to_string());
    }
    let reserved: &[&str] = if options.partition {
        &[recfmt_export::SOURCE_COLUMN]
    } else if mcap || format == TableFormat::Ndjson {
        &[recfmt_export::json::STREAM_KEY]
    } else {
        &[]
    };
    renamed_notes(reader.schema(), reserved, &mut notes);
    let mut progress = |done, total: Option<u64>| on_progress(done, total);
    #[cfg(feature = "export-mcap")]
    if mcap {
        let options = recfmt_export::mcap::McapOptions {
            metadata: export.metadata.clone(),
            pending_metadata: digest,
            scene: crate::pictures::mcap_scene(reader.header(), reader.schema()),
            replace: options.replace(),
        };
        let written =
            recfmt_export::mcap::export_mcap(reader.as_mut(), output, &options, &mut progress)
                .context_with(|| {
                    format!("converting {} into {}", input.display(), output.display())
                })?;
        mcap_notes(output, &written, &mut notes);
        return Ok(report(input, output, notes, reader.integrity()));
    }
    let written = if hdf5 {
        #[cfg(feature = "export-hdf5")]
        {
            for o in recfmt_export::hdf5::omitted_columns(&reader.schema().streams) {
                notes.push(format!(
                    "note: HDF5 has no column for {}.{} ({}); it is listed in the group's recfmt.omitted_columns",
                    o.stream, o.signal, o.reason
                ));
            }
            let string_width = match options.string_width {
                Some(width) => width,
                None => longest_text(registry, input, options)?,
            };
            // The digest is set as a root attribute when the file is finished: hashing
            // overlaps the writing (waiting for it first made it a third of a conversion).
            let hdf5 = recfmt_export::hdf5::Hdf5Options {
                string_width,
                metadata: export.metadata.clone(),
                pending_metadata: digest,
                skip_omitted_values: true,
                compression_threads: options.open.threads.unwrap_or(0),
                replace: options.replace(),
                ..Default::default()
            };
            recfmt_export::export_hdf5(
                reader.as_mut(),
                output,
                &hdf5,
                export.batch_rows,
                &mut progress,
            )
        }
        #[cfg(not(feature = "export-hdf5"))]
        Err(recfmt_export::Error::Invalid(
            "this build of recfmt has no HDF5 export".into(),
        ))
    } else if options.partition {
        let source = source_of(options, input);
        recfmt_export::export_partitioned(reader.as_mut(), output, &source, &export, &mut progress)
    } else {
        recfmt_export::export_tables(reader.as_mut(), output, &export, &mut progress)
    }
    .context_with(|| format!("converting {} into {}", input.display(), output.display()))?;
    if hdf5 {
        let rows: u64 = written.outputs.iter().map(|o| o.rows).sum();
        notes.push(format!(
            "wrote {} ({} streams, {rows} rows)",
            output.display(),
            written.outputs.len()
        ));
    } else {
        for o in &written.outputs {
            notes.push(format!("wrote {} ({} rows)", o.path.display(), o.rows));
        }
    }
    if written.outputs.is_empty() {
        notes.push(format!(
            "{}: no rows selected, nothing written",
            input.display()
        ));
    }
    let mut r = report(input, output, notes, reader.integrity());
    r.files = written
        .outputs
        .iter()
        .map(|o| OutputFile {
            path: o.path.clone(),
            stream: Some(o.stream.clone()),
            rows: o.rows,
        })
        .collect();
    Ok(r)
}

/// A note for each signal whose column cannot carry its name (a signal `t` beside the time
/// column `t`): which column holds it instead ([`recfmt_export::column_names`]).
pub(super) fn renamed_notes(
    schema: &recfmt_core::Schema,
    reserved: &[&str],
    notes: &mut Vec<String>,
) {
    for stream in &schema.streams {
        let names = recfmt_export::column_names(stream, reserved);
        for (signal, name) in stream.signals.iter().zip(&names) {
            if signal.name != *name {
                notes.push(format!(
                    "note: stream {:?}: signal {:?} is written as column {name:?}, since another column has its name (Parquet, Arrow and MCAP record this in {})",
                    stream.name,
                    signal.name,
                    recfmt_export::RENAMED_COLUMNS_KEY
                ));
            }
        }
    }
}

/// The lines `convert --to mcap` prints about what it wrote.
#[cfg(feature = "export-mcap")]
pub(super) fn mcap_notes(
    output: &Path,
    written: &recfmt_export::mcap::McapReport,
    notes: &mut Vec<String>,
) {
    let messages: u64 = written.channels.iter().map(|c| c.1).sum();
    let mut line = format!(
        "wrote {} ({} channels, {messages} messages",
        output.display(),
        written.channels.len()
    );
    if written.scene_messages > 0 {
        line.push_str(&format!(
            ", {} scene updates on /scene",
            written.scene_messages
        ));
    }
    line.push(')');
    notes.push(line);
    if written.clamped > 0 {
        notes.push(format!(
            "note: {} rows had times before zero and were logged at time 0",
            written.clamped
        ));
    }
    if let Some((stream, t)) = &written.first_overflowed {
        notes.push(format!(
            "note: {} rows had times past the last MCAP log time (2^64 - 1 ns, about 584 years after its zero: the Unix epoch, or the recording's zero when it has no epoch) and were logged at the time of their stream's row before them (first: stream {stream:?}, t = {t:e} s)",
            written.overflowed
        ));
    }
    if written.untimed > 0 {
        notes.push(format!(
            "note: {} rows had no time (or a NaN time) and were logged at the time of their stream's row before them",
            written.untimed
        ));
    }
    if let Some((id, time)) = &written.first_scene_skipped {
        notes.push(format!(
            "note: {} scene entities had a position or rotation that is not a finite number (NaN, infinite, or too large in metres) and were left out of the scene updates (first: entity {id} logged at {time} ns)",
            written.scene_skipped
        ));
    }
}

/// The byte length of the longest text value the conversion will write (at least 1), read in
/// a first streaming pass, so HDF5's fixed-width strings fit without cutting anything.
#[cfg(feature = "export-hdf5")]
pub(super) fn longest_text(
    registry: &Registry,
    input: &Path,
    options: &ConvertOptions,
) -> Result<u32> {
    let pipeline = options.pipeline()?;
    let reader = crate::open_with(registry, input, &options.open)?.into_reader();
    let mut reader = SelectedReader::new(reader, &pipeline)?;
    let texts: Vec<Vec<usize>> = reader
        .schema()
        .streams
        .iter()
        .map(|s| {
            s.signals
                .iter()
                .enumerate()
                .filter(|(_, sig)| sig.dtype == recfmt_core::DType::Str)
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    if texts.iter().all(Vec::is_empty) {
        return Ok(1);
    }
    let mut longest = 1usize;
    let mut frame = recfmt_core::FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        for &i in &texts[frame.stream] {
            if let Some(recfmt_core::Value::Str(text)) = frame.values.get(i) {
                longest = longest.max(text.len());
            }
        }
    }
    u32::try_from(longest).map_err(|_| Error::Invalid("a text value longer than 4 GiB".into()))
}
