//! The example format registered next to the built-in ones and converted to Parquet through
//! the same front door (`recfmt::convert::convert`) the command line uses.

#![allow(clippy::unwrap_used)] // tests may unwrap

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, UInt32Type};
use recfmt::convert::{ConvertOptions, convert};
use recfmt::core::{ErrorKind, FormatOptions, QueryForm, Registry};

const LOG: &str =
    "BEACONLOG 1\n# site: roof\n0.00 7 -61.5\n0.25 9 -80\n\n0.50 7 -62.25\n0.75 9 -95.5\n";

fn registry() -> Registry {
    let mut registry = recfmt::default_registry().clone();
    registry.register(&recfmt_example::FORMAT);
    registry
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The rows of one Parquet file as (t, beacon, rssi).
fn parquet_rows(path: &Path) -> Vec<(f64, u32, f32)> {
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let t = batch
            .column_by_name("t")
            .unwrap()
            .as_primitive::<Float64Type>();
        let b = batch
            .column_by_name("beacon")
            .unwrap()
            .as_primitive::<UInt32Type>();
        let r = batch
            .column_by_name("rssi")
            .unwrap()
            .as_primitive::<Float32Type>();
        for i in 0..batch.num_rows() {
            rows.push((t.value(i), b.value(i), r.value(i)));
        }
    }
    rows
}

#[test]
fn a_registered_format_converts_to_parquet_like_the_built_in_ones() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "site.beacon", LOG);
    let out = dir.path().join("tables");
    let registry = registry();
    let options = ConvertOptions {
        target: "parquet".into(),
        ..Default::default()
    };
    let report = convert(&registry, &input, &out, &options, None).unwrap();
    assert_eq!(report.outcome, recfmt::Outcome::Complete);
    assert_eq!(report.files.len(), 1);
    assert_eq!(report.files[0].path, out.join("pings.parquet"));
    assert_eq!(report.files[0].rows, 4);
    assert_eq!(
        parquet_rows(&out.join("pings.parquet")),
        [
            (0.0, 7, -61.5),
            (0.25, 9, -80.0),
            (0.5, 7, -62.25),
            (0.75, 9, -95.5)
        ]
    );

    // Without the registration the same input is no recording.
    let err = convert(
        recfmt::default_registry(),
        &input,
        &dir.path().join("x"),
        &options,
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("not a recognised recording"),
        "{err}"
    );
}

#[test]
fn its_option_and_query_go_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "site.beacon", LOG);
    let registry = registry();
    let mut options = ConvertOptions {
        target: "parquet".into(),
        ..Default::default()
    };
    options.open.format_options.push("beacon.min_rssi", "-85");
    let out = dir.path().join("strong");
    let report = convert(&registry, &input, &out, &options, None).unwrap();
    assert_eq!(report.files[0].rows, 3, "the -95.5 dBm ping is left out");

    // A value that is no number is refused before anything is read.
    options.open.format_options = FormatOptions::new();
    options.open.format_options.push("beacon.min_rssi", "loud");
    let err = convert(&registry, &input, &dir.path().join("bad"), &options, None).unwrap_err();
    assert!(
        err.to_string().contains("min_rssi=loud: expected a number"),
        "{err}"
    );

    let text = recfmt::ops::query_text(
        &registry,
        "beacon",
        "beacons",
        &input,
        &FormatOptions::new(),
        QueryForm::Text,
    )
    .unwrap();
    assert_eq!(text, "beacon 7: 2 pings\nbeacon 9: 2 pings\n");
    let json = recfmt::ops::query_text(
        &registry,
        "beacon",
        "beacons",
        &input,
        &FormatOptions::new(),
        QueryForm::Json,
    )
    .unwrap();
    assert_eq!(json, "{\"7\": 2, \"9\": 2}\n");
}

#[test]
fn a_cut_last_line_is_lost_data_and_a_bad_line_names_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry();
    let cut = write(
        dir.path(),
        "cut.beacon",
        "BEACONLOG 1\n0.00 7 -61.5\n0.25 9",
    );
    let info = recfmt::inspect::info(&registry, &cut, &Default::default()).unwrap();
    assert_eq!(info.rows, 1);
    assert_eq!(info.outcome(), recfmt::Outcome::DataLost);
    assert_eq!(info.integrity.truncated_at, Some(25));

    let strict = recfmt::OpenOptions {
        strict: true,
        ..Default::default()
    };
    let err = recfmt::inspect::info(&registry, &cut, &strict).unwrap_err();
    assert!(err.to_string().contains("at byte 25"), "{err}");

    let bad = write(
        dir.path(),
        "bad.beacon",
        "BEACONLOG 1\nzero 7 -61.5\n0.25 9 -80\n",
    );
    let err = recfmt::inspect::info(&registry, &bad, &Default::default()).unwrap_err();
    let recfmt::Error::Core(core) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(core.kind(), ErrorKind::Malformed);
    assert!(
        err.to_string()
            .ends_with("beacon: at byte 12: expected a ping: <seconds> <beacon id> <rssi dBm>"),
        "{err}"
    );
}
