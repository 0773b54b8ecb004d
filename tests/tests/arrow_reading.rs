//! The facade's Arrow reading: `recfmt::open(path)?.batches(stream)?` gives, batch for batch,
//! what the row path (`read_frame` into a `StreamBatcher`) gives; column selection and time
//! ranges; several streams in one pass; errors that name what was asked for and keep their
//! kind behind Arrow's error type.

use std::path::{Path, PathBuf};

use recfmt::core::{FrameBuf, RecordingReader};
use recfmt::export::{
    ArrowError, Pattern, Pipeline, RecordBatch, RecordBatchReader, SelectedReader, StreamBatcher,
    TimeBound,
};
use recfmt::{BatchOptions, OpenOptions};
use recfmt_tests::{fixture, samples};

/// Generated fixtures and one sample of each format that has them here.
fn inputs() -> Vec<PathBuf> {
    let mut all = vec![
        fixture("usvlog/all_types"),
        fixture("icarec/all_types.icarec"),
    ];
    all.extend(samples("carla", "log").into_iter().take(1));
    all.extend(samples("fgtape", "fgtape").into_iter().take(1));
    all
}

/// The batches of `stream` through the row path: every row `read_frame` gives, gathered by a
/// `StreamBatcher` of `capacity` rows.
fn by_rows(reader: &mut dyn RecordingReader, stream: usize, capacity: usize) -> Vec<RecordBatch> {
    let desc = reader.schema().streams[stream].clone();
    let mut batcher = StreamBatcher::new(reader.header(), &desc, capacity);
    let mut out = Vec::new();
    let mut frame = FrameBuf::default();
    while reader.read_frame(&mut frame).unwrap() {
        if frame.stream != stream {
            continue;
        }
        batcher.push(&frame).unwrap();
        if batcher.is_full() {
            out.push(batcher.finish_batch().unwrap());
        }
    }
    if !batcher.is_empty() {
        out.push(batcher.finish_batch().unwrap());
    }
    out
}

/// Asserts that two lists of batches hold the same columns, batch for batch.
fn assert_same_batches(what: &str, expected: &[RecordBatch], got: &[RecordBatch]) {
    assert_eq!(expected.len(), got.len(), "{what}: batch count");
    for (i, (a, b)) in expected.iter().zip(got).enumerate() {
        assert_eq!(
            a.schema().fields(),
            b.schema().fields(),
            "{what}: batch {i} fields"
        );
        assert_eq!(a.columns(), b.columns(), "{what}: batch {i} columns");
    }
}

/// Every row of `batches` as a batch of one row, so lists cut differently compare.
fn rows_of(batches: &[RecordBatch]) -> Vec<RecordBatch> {
    batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |r| b.slice(r, 1)))
        .collect()
}

#[test]
fn batches_of_every_stream_equal_the_rows_of_read_frame() {
    const CAPACITY: usize = 97;
    for path in inputs() {
        let streams = recfmt::open(&path).unwrap().schema().streams.clone();
        for (index, desc) in streams.iter().enumerate() {
            let what = format!("{} stream {}", path.display(), desc.name);
            let expected = by_rows(recfmt::open(&path).unwrap().reader_mut(), index, CAPACITY);
            let batches = recfmt::open(&path)
                .unwrap()
                .batches_with(&desc.name, &BatchOptions::default().batch_rows(CAPACITY))
                .unwrap();
            // The Arrow trait's schema.
            let schema = RecordBatchReader::schema(&batches);
            let got: Vec<RecordBatch> = batches.collect::<Result<_, _>>().unwrap();
            assert!(got.iter().all(|b| b.schema() == schema), "{what}: schema");
            assert_same_batches(&what, &expected, &got);
        }
    }
}

#[test]
fn a_column_selection_and_a_time_range_read_as_the_selected_rows() {
    let path = fixture("usvlog/all_types");
    let stream = "REC_NAV_SOLUTION";
    let (start, end) = (TimeBound::Relative(0.25), TimeBound::Relative(1.25));
    let options = BatchOptions::default()
        .columns(["psi", "x"])
        .start(start.clone())
        .end(end.clone())
        .batch_rows(16);
    let batches = recfmt::open(&path)
        .unwrap()
        .batches_with(stream, &options)
        .unwrap();
    let names: Vec<String> = batches
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    // The time column comes along; columns keep the stream's order.
    assert_eq!(names, ["t_us", "x", "psi"]);
    let got: Vec<RecordBatch> = batches.collect::<Result<_, _>>().unwrap();
    assert!(got.iter().all(|b| b.num_rows() <= 16));

    // The same selection read row by row.
    let mut pipeline = Pipeline::default();
    pipeline.selection.streams = vec![Pattern::Exact(stream.into())];
    pipeline.selection.signals = vec![Pattern::Exact("psi".into()), Pattern::Exact("x".into())];
    pipeline.range.start = Some(start);
    pipeline.range.end = Some(end);
    let inner = recfmt::open(&path).unwrap().into_reader();
    let mut selected = SelectedReader::new(inner, &pipeline).unwrap();
    let expected = by_rows(&mut selected, 0, 1_000);
    let (from, to) = selected.resolved_range().unwrap();
    assert_eq!(to - from, 1.0);

    let (expected, got) = (rows_of(&expected), rows_of(&got));
    // 200 rows at 100 Hz: a second of them.
    assert_eq!(got.len(), 100);
    assert_same_batches("selection", &expected, &got);
}

#[test]
fn two_streams_come_in_one_pass_each_with_its_schema() {
    let path = fixture("usvlog/all_types");
    let wanted = ["REC_ESC_OUTPUT", "REC_NAV_SOLUTION"];
    let batches = recfmt::open(&path)
        .unwrap()
        .stream_batches_with(&wanted, &BatchOptions::default().batch_rows(50))
        .unwrap();
    // In the recording's order, whatever the order asked.
    let streams: Vec<&str> = batches.streams().map(|(name, _)| name).collect();
    assert_eq!(streams, ["REC_NAV_SOLUTION", "REC_ESC_OUTPUT"]);
    let nav_schema = batches.schema("REC_NAV_SOLUTION").unwrap().clone();
    let esc_schema = batches.schema("REC_ESC_OUTPUT").unwrap().clone();
    assert_ne!(nav_schema.fields(), esc_schema.fields());
    assert!(batches.schema("REC_EKF_DIAG").is_none());

    let mut by_stream: Vec<(String, Vec<RecordBatch>)> = Vec::new();
    for item in batches {
        let (stream, batch) = item.unwrap();
        let schema = if stream == "REC_NAV_SOLUTION" {
            &nav_schema
        } else {
            &esc_schema
        };
        assert_eq!(&batch.schema(), schema, "{stream}");
        match by_stream.iter_mut().find(|(s, _)| *s == stream) {
            Some((_, list)) => list.push(batch),
            None => by_stream.push((stream, vec![batch])),
        }
    }
    assert_eq!(by_stream.len(), 2);
    for (stream, got) in &by_stream {
        let single: Vec<RecordBatch> = recfmt::open(&path)
            .unwrap()
            .batches_with(stream, &BatchOptions::default().batch_rows(50))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_same_batches(stream, &single, got);
        assert_eq!(got.iter().map(RecordBatch::num_rows).sum::<usize>(), 200);
    }
}

#[test]
fn a_wrong_stream_or_column_is_an_error_naming_it_and_the_file() {
    let path = fixture("usvlog/all_types");
    let shown = path.display().to_string();
    let error = recfmt::open(&path)
        .unwrap()
        .batches("REC_NOPE")
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("\"REC_NOPE\"") && text.contains(&shown),
        "{text}"
    );
    assert!(
        text.contains("REC_NAV_SOLUTION"),
        "lists the streams: {text}"
    );

    let error = recfmt::open(&path)
        .unwrap()
        .stream_batches(&["REC_NAV_SOLUTION", "REC_NOPE"])
        .unwrap_err();
    assert!(error.to_string().contains("\"REC_NOPE\""), "{error}");

    let options = BatchOptions::default().columns(["nope"]);
    let error = recfmt::open(&path)
        .unwrap()
        .batches_with("REC_NAV_SOLUTION", &options)
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("\"nope\"") && text.contains(&shown), "{text}");

    let options = BatchOptions::default().batch_rows(0);
    assert!(
        recfmt::open(&path)
            .unwrap()
            .batches_with("REC_NAV_SOLUTION", &options)
            .is_err()
    );
}

/// The chain of `e`'s messages.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[test]
fn a_read_error_is_a_recfmt_error_inside_the_arrow_error() {
    // A torn record is an error under --strict.
    let path: &Path = &fixture("usvlog/truncated");
    let options = OpenOptions {
        strict: true,
        ..OpenOptions::default()
    };
    let recording = recfmt::open_with(recfmt::default_registry(), path, &options).unwrap();
    let stream = recording.schema().streams[0].name.clone();
    let mut batches = recording.batches(&stream).unwrap();
    let error = batches
        .by_ref()
        .find_map(Result::err)
        .expect("a strict read of a truncated log fails");
    let ArrowError::ExternalError(inner) = &error else {
        panic!("not an external error: {error}");
    };
    let recfmt_error = inner
        .downcast_ref::<recfmt::Error>()
        .expect("a recfmt::Error inside");
    let core = match recfmt_error {
        recfmt::Error::Context { source, .. } => match source.as_ref() {
            recfmt::Error::Core(core) => core,
            other => panic!("not a read error: {other}"),
        },
        other => panic!("without the file: {other}"),
    };
    assert_eq!(core.kind(), recfmt::core::ErrorKind::Truncated, "{core}");
    // The facade's error says the same kind, through its context.
    assert_eq!(recfmt_error.kind(), recfmt::core::ErrorKind::Truncated);
    let text = chain(&error);
    assert!(text.contains(&path.display().to_string()), "{text}");
    // After an error the reader is not asked again.
    assert!(batches.next().is_none());
}

#[test]
fn table_writers_take_the_batches_as_the_export_writes_them() {
    use recfmt::export::{
        ExportOptions, RecordBatchWriter, TableFormat, TableWriter, export_tables,
    };

    let path = fixture("usvlog/all_types");
    let dir = tempfile::tempdir().unwrap();
    let csv = ExportOptions::new(TableFormat::Csv);
    export_tables(
        recfmt::open(&path).unwrap().reader_mut(),
        &dir.path().join("export"),
        &csv,
        &mut |_, _| {},
    )
    .unwrap();

    // A CSV table through the Arrow writer trait reads as the export's table of that stream.
    let batches = recfmt::open(&path)
        .unwrap()
        .batches_with("REC_NAV_SOLUTION", &BatchOptions::default().batch_rows(30))
        .unwrap();
    let table = dir.path().join("nav.csv");
    let mut writer = TableWriter::create(&table, &batches.schema(), &csv).unwrap();
    for batch in batches {
        writer.write(&batch.unwrap()).unwrap();
    }
    writer.close().unwrap();
    assert_eq!(
        std::fs::read(&table).unwrap(),
        std::fs::read(dir.path().join("export/REC_NAV_SOLUTION.csv")).unwrap()
    );

    // HDF5: each batch goes to the stream its schema names.
    let recording = recfmt::open(&path).unwrap();
    let header = recording.header().clone();
    let streams = recording.schema().streams.clone();
    let h5 = dir.path().join("two.h5");
    let mut writer =
        recfmt::export::hdf5::Hdf5Writer::create(&h5, &header, &streams, &Default::default())
            .unwrap();
    for item in recording
        .stream_batches(&["REC_NAV_SOLUTION", "REC_ESC_OUTPUT"])
        .unwrap()
    {
        let (_, batch) = item.unwrap();
        RecordBatchWriter::write(&mut writer, &batch).unwrap();
    }
    let nav = streams.iter().position(|s| s.name == "REC_NAV_SOLUTION");
    let esc = streams.iter().position(|s| s.name == "REC_ESC_OUTPUT");
    let ekf = streams.iter().position(|s| s.name == "REC_EKF_DIAG");
    assert_eq!(writer.rows(nav.unwrap()), Some(200));
    assert_eq!(writer.rows(esc.unwrap()), Some(200));
    assert_eq!(writer.rows(ekf.unwrap()), Some(0));
    writer.close().unwrap();
    assert!(h5.is_file());
}
