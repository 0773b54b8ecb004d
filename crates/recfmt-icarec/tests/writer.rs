//! The streaming writer: policies, crash behaviour, metadata written at the end.

#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use recfmt_icarec::{
    IcarecDir, MetadataMode, OpenOptions, RecordingPolicy, SignalValue, Writer, WriterOptions,
    generate,
};

#[test]
fn a_policy_records_only_the_selected_signals() {
    let tmp = tempfile::tempdir().unwrap();
    let full = generate::all_types_schema().unwrap();
    let statics = generate::statics(&full).unwrap();
    let policy = RecordingPolicy {
        exclude: vec!["Debug.*".into(), "*.raw_sensor_*".into()],
        ..RecordingPolicy::default()
    };
    let mut w = Writer::with_policy(
        tmp.path(),
        &full,
        &statics,
        &policy,
        WriterOptions::default(),
    )
    .unwrap();
    let mut payload = Vec::new();
    for i in 0..4 {
        generate::payload(&full, i, &mut payload).unwrap();
        w.append_full(i as f64, &payload).unwrap();
    }
    w.finish().unwrap();

    let rec = IcarecDir::open(
        tmp.path(),
        &OpenOptions {
            verify: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(rec.schema().placed("Debug.counter").is_none());
    assert_eq!(
        rec.schema().doc().signals.len(),
        full.doc().signals.len() - 1
    );
    assert_eq!(
        rec.schema().layout().dynamic_size,
        full.layout().dynamic_size - 8
    );
    assert!(rec.schema().doc().compatibility.warmstart_compatible);
    let selection = rec.metadata().unwrap().selection.as_ref().unwrap();
    assert_eq!(selection.mode.as_deref(), Some("signals"));
    assert_eq!(selection.exclude, ["Debug.*", "*.raw_sensor_*"]);
    let state = rec.state_at(2.0).unwrap().unwrap();
    for (name, value) in &state.values {
        let expected = generate::dynamic_value(name, 2)
            .or_else(|| generate::static_value(name))
            .unwrap();
        assert_eq!(*value, expected, "{name}");
    }
    // The recording is good for warmstart into the full schema: Debug.counter is optional.
    let report = rec.validate_against(full.doc());
    assert!(report.compatible, "{report}");
}

#[test]
fn a_policy_that_drops_a_required_input_refuses_to_start() {
    let tmp = tempfile::tempdir().unwrap();
    let full = generate::all_types_schema().unwrap();
    let statics = generate::statics(&full).unwrap();
    let policy = RecordingPolicy {
        exclude: vec!["Vehicle.Nav.*".into(), "Vehicle.mass".into()],
        ..RecordingPolicy::default()
    };
    let err = Writer::with_policy(
        tmp.path(),
        &full,
        &statics,
        &policy,
        WriterOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "recording policy excludes signals that warmstart requires (warmstart_compatible is true): \
         Vehicle.Nav.position, Vehicle.Nav.velocity, Vehicle.Nav.attitude, Vehicle.Nav.dcm, Vehicle.mass"
    );
    assert!(!tmp.path().join("schema.json").exists(), "nothing written");
}

#[test]
fn a_writer_that_dies_leaves_its_complete_frames_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = generate::all_types_schema().unwrap();
    let statics = generate::statics(&schema).unwrap();
    let mut w = Writer::create(tmp.path(), schema, &statics, WriterOptions::default()).unwrap();
    let mut payload = Vec::new();
    for i in 0..7 {
        generate::payload(w.schema(), i, &mut payload).unwrap();
        w.append(i as f64, &payload).unwrap();
    }
    w.flush().unwrap();
    // Readable while the writer is still alive.
    let live = IcarecDir::open(tmp.path(), &OpenOptions::default()).unwrap();
    assert_eq!(live.frame_count(), 7);
    assert!(live.metadata().is_none());
    assert!(
        live.integrity().warnings.is_empty(),
        "checksum written at start"
    );
    drop(w);
    let dead = IcarecDir::open(tmp.path(), &OpenOptions::default()).unwrap();
    assert_eq!(dead.frame_count(), 7);
    assert_eq!(
        dead.state_at(6.5).unwrap().unwrap().get("Vehicle.GNC.step"),
        Some(SignalValue::Int64(6 * 1_000_003 - 5))
    );
}

#[test]
fn writing_over_a_recording_needs_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    generate::write_all_types(tmp.path(), 1).unwrap();
    let schema = generate::dynamic_only_schema().unwrap();
    let err = Writer::create(tmp.path(), schema.clone(), &[], WriterOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("already holds a recording"), "{err}");
    let mut w = Writer::create(
        tmp.path(),
        schema,
        &[],
        WriterOptions {
            overwrite: true,
            metadata: MetadataMode::Verbatim(None),
            ..WriterOptions::default()
        },
    )
    .unwrap();
    assert!(
        !tmp.path().join("metadata.json").exists(),
        "stale metadata removed"
    );
    w.finish().unwrap();
    let rec = IcarecDir::open(tmp.path(), &OpenOptions::default()).unwrap();
    assert_eq!((rec.frame_count(), rec.statics().len()), (0, 0));
}

#[test]
fn bad_frames_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = generate::dynamic_only_schema().unwrap();
    let mut w = Writer::create(tmp.path(), schema, &[], WriterOptions::default()).unwrap();
    assert!(
        w.append(0.0, &[0u8; 3])
            .unwrap_err()
            .to_string()
            .contains("208 bytes, got 3")
    );
    let mut p = vec![0u8; 208];
    let err = w
        .schema()
        .encode(&mut p, "Vehicle.GNC.mode", SignalValue::Double(1.0))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "signal \"Vehicle.GNC.mode\" is int32, got a double value"
    );
    w.write_torn_tail(&[1, 2, 3]).unwrap();
    assert!(w.append(0.0, &p).is_err(), "no frame after a torn tail");
}
