//! Read-then-write is byte-identical; the adapter carries every type; time reaches the header.

#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use std::path::Path;

use recfmt_core::{
    DType, FrameBuf, IntegrityStatus, ReadOptions, RecordingReader, RecordingWriter, TimeSystem,
    Value,
};
use recfmt_icarec::{
    IcarecDir, IcarecRecording, IcarecWriter, OpenOptions, SignalType, SignalValue, copy_recording,
    generate,
};

const FILES: [&str; 4] = [
    "schema.json",
    "static_signals.bin",
    "dynamic_signals.bin",
    "metadata.json",
];

fn assert_same_files(a: &Path, b: &Path) {
    for f in FILES {
        let (x, y) = (a.join(f), b.join(f));
        assert_eq!(x.exists(), y.exists(), "{f} exists in one copy only");
        if x.exists() {
            assert!(
                std::fs::read(&x).unwrap() == std::fs::read(&y).unwrap(),
                "{f} differs"
            );
        }
    }
}

fn verify() -> OpenOptions {
    OpenOptions {
        verify: true,
        ..OpenOptions::default()
    }
}

#[test]
fn all_types_copy_is_byte_identical_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src.icarec");
    generate::write_all_types(&src, 64).unwrap();
    let found = copy_recording(&src, &tmp.path().join("dst.icarec"), &verify()).unwrap();
    assert_eq!(found.status, IntegrityStatus::Complete);
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    assert_same_files(&src, &tmp.path().join("dst.icarec"));
    // The copy verifies too: checksum and both digests.
    let copy = IcarecDir::open(&tmp.path().join("dst.icarec"), &verify()).unwrap();
    assert_eq!(copy.frame_count(), 64);
    let meta = copy.metadata().unwrap();
    assert_eq!(meta.frame_count, Some(64));
    assert_eq!(
        meta.files["dynamic_signals.bin"].bytes,
        64 * copy.schema().layout().stride() as u64
    );
    let time = meta.time.as_ref().unwrap();
    assert_eq!(time.t_start, Some(0.0));
    assert_eq!(time.t_end, Some(63.0 * generate::DT));
}

#[test]
fn empty_static_block_copies_byte_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    generate::write_empty_static(&src, 10).unwrap();
    assert_eq!(
        std::fs::metadata(src.join("static_signals.bin"))
            .unwrap()
            .len(),
        0
    );
    copy_recording(&src, &tmp.path().join("dst"), &verify()).unwrap();
    assert_same_files(&src, &tmp.path().join("dst"));
}

#[test]
fn zero_frames_copy_byte_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    generate::write_all_types(&src, 0).unwrap();
    copy_recording(&src, &tmp.path().join("dst"), &verify()).unwrap();
    assert_same_files(&src, &tmp.path().join("dst"));
}

#[test]
fn torn_recordings_keep_every_complete_frame_and_copy_byte_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let stride = generate::all_types_schema().unwrap().layout().stride();
    for (k, cut) in [1, 7, 8, 9, 100, stride - 1].into_iter().enumerate() {
        let src = tmp.path().join(format!("torn{k}"));
        generate::write_torn(&src, 20, cut).unwrap();
        assert!(!src.join("metadata.json").exists());

        let dir = IcarecDir::open(&src, &OpenOptions::default()).unwrap();
        assert_eq!(dir.frame_count(), 20);
        assert_eq!(dir.torn_bytes(), cut as u64);

        let mut rec = IcarecRecording::from_dir(dir, false).unwrap();
        let mut row = FrameBuf::default();
        let mut frames = 0;
        while rec.read_frame(&mut row).unwrap() {
            if row.stream == 0 {
                frames += 1;
            }
        }
        assert_eq!(frames, 20, "cut {cut}");
        let integrity = rec.integrity();
        assert_eq!(integrity.status, IntegrityStatus::Truncated);
        assert_eq!(integrity.truncated_at, Some(20 * stride as u64));
        assert_eq!(integrity.bytes_lost, cut as u64);

        let dst = tmp.path().join(format!("copy{k}"));
        let found = copy_recording(&src, &dst, &OpenOptions::default()).unwrap();
        assert_eq!(found.bytes_lost, cut as u64);
        assert_same_files(&src, &dst);

        // Strict reading refuses the torn frame, naming file, offset and expectation.
        let strict = OpenOptions {
            read: ReadOptions {
                strict: true,
                ..ReadOptions::default()
            },
            ..OpenOptions::default()
        };
        let err = IcarecDir::open(&src, &strict).unwrap_err();
        let core = recfmt_core::Error::from(IcarecDir::open(&src, &strict).unwrap_err());
        assert_eq!(core.kind(), recfmt_core::ErrorKind::Truncated, "{core}");
        let err = err.to_string();
        assert!(
            err.contains("dynamic_signals.bin: at byte ")
                && err.contains(&format!("the file ends after {cut}")),
            "{err}"
        );
    }
}

#[test]
fn the_adapter_exposes_every_type_with_expanded_columns() {
    let tmp = tempfile::tempdir().unwrap();
    generate::write_all_types(tmp.path(), 5).unwrap();
    let mut rec = IcarecRecording::open(tmp.path(), &OpenOptions::default()).unwrap();
    let schema = rec.schema().clone();
    let dynamic = &schema.streams[0];
    let statics = &schema.streams[1];
    assert_eq!(
        (dynamic.name.as_str(), statics.name.as_str()),
        ("dynamic", "static")
    );
    assert_eq!(dynamic.signals[0].name, "t");
    assert_eq!(dynamic.time_base, recfmt_core::TimeBase::SECONDS);
    let col = |name: &str| {
        dynamic
            .signal_index(name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(dynamic.signals[col("Vehicle.Nav.dcm.zy")].dtype, DType::F64);
    assert_eq!(dynamic.signals[col("Vehicle.GNC.mode")].dtype, DType::I32);
    assert_eq!(
        dynamic.signals[col("Vehicle.Prop.engine_on")].dtype,
        DType::Bool
    );
    assert_eq!(dynamic.signals[col("Vehicle.GNC.step")].dtype, DType::I64);
    let pos_x = &dynamic.signals[col("Vehicle.Nav.position.x")];
    assert_eq!(pos_x.unit.as_deref(), Some("m"));
    assert_eq!(pos_x.metadata["icarec.signal"], "Vehicle.Nav.position");
    assert_eq!(pos_x.metadata["icarec.element"], "x");
    assert_eq!(
        dynamic.signals[col("Vehicle.GNC.mode")].metadata["semantic"],
        "enum"
    );
    assert!(dynamic.signal_index("Vehicle.Nav.attitude.w").is_some());
    assert_eq!(dynamic.signals.len(), 1 + 3 + 3 + 4 + 9 + 7);

    let header = rec.header().clone();
    assert_eq!(header.format, "icarec");
    assert_eq!(header.metadata["icarus_version"], "0.5.0");
    assert_eq!(
        header.metadata["component.Vehicle.EOM"],
        "RigidBody6DOF state[0..13]"
    );
    let time = header.time.unwrap();
    assert_eq!(time.system, TimeSystem::Utc);
    assert_eq!(time.to_rfc3339(0.0).unwrap(), "2026-02-16T12:00:00.000000Z");

    let mut row = FrameBuf::default();
    assert!(rec.read_frame(&mut row).unwrap());
    assert_eq!(row.stream, 1);
    let s = |name: &str| row.values[statics.signal_index(name).unwrap()].clone();
    assert_eq!(s("Vehicle.config_rev"), Value::Int(-3));
    assert_eq!(s("Vehicle.id"), Value::Int(-42));
    assert_eq!(s("Vehicle.has_payload"), Value::Bool(true));
    assert_eq!(s("Vehicle.inertia.xz"), Value::Float(-0.5));
    let mut i = 0u64;
    while rec.read_frame(&mut row).unwrap() {
        assert_eq!(row.stream, 0);
        assert_eq!(row.values[0], Value::Float(i as f64 * generate::DT));
        for p in &rec.dir().schema().layout().placed {
            let spec = rec.dir().schema().spec(p);
            if p.lifecycle == recfmt_icarec::Lifecycle::Static {
                continue;
            }
            let expected = generate::dynamic_value(&spec.name, i).unwrap();
            if p.ty.is_composite() {
                for (k, e) in p.ty.components().iter().enumerate() {
                    let v = &row.values[col(&format!("{}.{e}", spec.name))];
                    assert_eq!(*v, expected.element(k), "{} frame {i}", spec.name);
                }
            } else {
                assert_eq!(
                    row.values[col(&spec.name)],
                    expected.element(0),
                    "{}",
                    spec.name
                );
            }
        }
        i += 1;
    }
    assert_eq!(i, 5);
    assert_eq!(rec.integrity().status, IntegrityStatus::Complete);
    assert_eq!(rec.progress(), (5 * 216, Some(5 * 216)));
}

#[test]
fn time_in_metadata_reaches_the_header() {
    let tmp = tempfile::tempdir().unwrap();
    generate::write_empty_static(tmp.path(), 3).unwrap();
    let rec = IcarecRecording::open(tmp.path(), &OpenOptions::default()).unwrap();
    let time = rec.header().time.unwrap();
    assert_eq!(time.system, TimeSystem::Gps);
    // 2026-02-16T12:00:00 GPS is 18 s before the same UTC reading.
    let utc = time.to_system(0.0, TimeSystem::Utc).unwrap();
    let reference =
        recfmt_core::TimeReference::parse(TimeSystem::Utc, Some("2026-02-16T12:00:00Z"))
            .unwrap()
            .to_system(0.0, TimeSystem::Utc)
            .unwrap();
    assert_eq!(reference - utc, 18.0);
}

/// icarec → generic → icarec keeps every signal, type, unit and value (composites are
/// rebuilt from their expanded columns).
#[test]
fn the_generic_writer_rebuilds_every_type() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    generate::write_all_types(&src, 12).unwrap();
    let dst = tmp.path().join("dst");
    let mut reader = IcarecRecording::open(&src, &OpenOptions::default()).unwrap();
    let mut writer: Box<dyn RecordingWriter> =
        (recfmt_icarec::FORMAT.create.unwrap())(&dst, &Default::default()).unwrap();
    writer
        .write_header(reader.header(), reader.schema())
        .unwrap();
    let mut row = FrameBuf::default();
    while reader.read_frame(&mut row).unwrap() {
        writer.write_frame(&row).unwrap();
    }
    writer.finish().unwrap();
    writer.finish().unwrap();

    let a = IcarecDir::open(&src, &verify()).unwrap();
    let b = IcarecDir::open(&dst, &verify()).unwrap();
    assert_eq!(a.statics(), b.statics());
    assert_eq!(
        std::fs::read(src.join("dynamic_signals.bin")).unwrap(),
        std::fs::read(dst.join("dynamic_signals.bin")).unwrap()
    );
    let (da, db) = (a.schema().doc(), b.schema().doc());
    assert_eq!(da.signals.len(), db.signals.len());
    for (x, y) in da.signals.iter().zip(&db.signals) {
        assert_eq!(
            (
                &x.name,
                &x.type_name,
                x.lifecycle,
                x.offset,
                x.size,
                &x.semantic,
                &x.enum_values
            ),
            (
                &y.name,
                &y.type_name,
                y.lifecycle,
                y.offset,
                y.size,
                &y.semantic,
                &y.enum_values
            )
        );
        assert_eq!(
            x.units.as_deref().filter(|u| !u.is_empty()),
            y.units.as_deref().filter(|u| !u.is_empty())
        );
    }
    assert_eq!(da.schema_version, db.schema_version);
    assert_eq!(da.created_at, db.created_at);
    assert_eq!(a.time(), b.time());
}

#[test]
fn the_generic_writer_takes_fixed_arrays_and_rejects_what_does_not_fit() {
    use recfmt_core::{Header, Schema, Shape, SignalDesc, StreamDesc, TimeBase};
    let tmp = tempfile::tempdir().unwrap();
    let mut s = StreamDesc::new(
        "NAV",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    s.signals
        .push(SignalDesc::scalar("q", DType::F64).with_shape(Shape::Fixed(vec![4])));
    s.signals.push(SignalDesc::scalar("n", DType::U8));
    let schema = Schema { streams: vec![s] };
    let mut w = IcarecWriter::new(&tmp.path().join("a"), false);
    w.write_header(&Header::default(), &schema).unwrap();
    let mut row = FrameBuf::default();
    row.reset(0, 3);
    row.values[0] = Value::UInt(1_500_000);
    row.values[1] = Value::Array(recfmt_core::ArrayValue::F64(vec![1.0, 0.0, 0.0, 0.5]));
    row.values[2] = Value::UInt(200);
    w.write_frame(&row).unwrap();
    w.finish().unwrap();
    let dir = IcarecDir::open(&tmp.path().join("a"), &verify()).unwrap();
    assert_eq!(dir.schema().placed("q").unwrap().ty, SignalType::Quat);
    assert_eq!(dir.schema().placed("n").unwrap().ty, SignalType::Int32);
    let state = dir.state_at(10.0).unwrap().unwrap();
    assert_eq!(state.t, 1.5);
    assert_eq!(
        state.get("q"),
        Some(SignalValue::Quat([1.0, 0.0, 0.0, 0.5]))
    );
    assert_eq!(state.get("n"), Some(SignalValue::Int32(200)));

    let mut bad = StreamDesc::new("X", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
    bad.signals.push(SignalDesc::scalar("name", DType::Str));
    let other = StreamDesc::new("Y", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
    let mut w = IcarecWriter::new(&tmp.path().join("b"), false);
    let err = w
        .write_header(
            &Header::default(),
            &Schema {
                streams: vec![bad.clone()],
            },
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("X.name"), "{err}");
    let err = w
        .write_header(
            &Header::default(),
            &Schema {
                streams: vec![bad, other],
            },
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"X\", \"Y\""), "{err}");
}

#[test]
fn the_registry_detects_and_opens_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run.icarec");
    generate::write_all_types(&dir, 2).unwrap();
    let mut registry = recfmt_core::Registry::default();
    registry.register(&recfmt_icarec::FORMAT);
    assert_eq!(registry.detect_path(&dir).unwrap().info.id, "icarec");
    let rec = registry
        .open_path(&dir, None, &ReadOptions::default())
        .unwrap();
    assert_eq!(rec.format().id, "icarec");
    // A file inside the directory opens the directory when the format is forced.
    let rec = registry
        .open_path(
            &dir.join("schema.json"),
            Some("icarec"),
            &ReadOptions::default(),
        )
        .unwrap();
    assert_eq!(rec.schema().streams.len(), 2);
    // Not a recording: no schema_version.
    std::fs::write(dir.join("schema.json"), "{\"signals\": []}").unwrap();
    assert!(registry.detect_path(&dir).is_err());
}
