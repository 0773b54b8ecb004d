//! Icarus HDF5 recordings (feature `hdf5`): the layout Vulcan's `HDF5Writer` writes, read
//! into the generic model, written back, and converted to and from ICAREC.
#![cfg(feature = "hdf5")]
#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use std::path::{Path, PathBuf};

use hdf5_pure::{AttrValue, FileBuilder, MaxExtent};
use recfmt_core::{
    DType, ErrorKind, FrameBuf, IntegrityStatus, ReadOptions, RecordingReader, Score, TimeSystem,
    Value,
};
use recfmt_icarec::{HDF5_FORMAT, IcarecRecording, IcarusH5Options, generate, write_icarus_h5};

/// One signal of a hand-made Icarus file.
struct Sig {
    name: &'static str,
    ty: &'static str,
    lifecycle: &'static str,
    unit: Option<&'static str>,
    semantic: Option<&'static str>,
}

const SIGNALS: &[Sig] = &[
    Sig {
        name: "Vehicle.Nav.position.x",
        ty: "double",
        lifecycle: "dynamic",
        unit: Some("m"),
        semantic: None,
    },
    Sig {
        name: "Vehicle.mass",
        ty: "double",
        lifecycle: "static",
        unit: Some("kg"),
        semantic: None,
    },
    Sig {
        name: "Vehicle.GNC.phase",
        ty: "int32",
        lifecycle: "dynamic",
        unit: None,
        semantic: Some("enum"),
    },
    Sig {
        name: "Vehicle.GNC.step",
        ty: "int64",
        lifecycle: "dynamic",
        unit: None,
        semantic: None,
    },
    Sig {
        name: "Vehicle.config_rev",
        ty: "int32",
        lifecycle: "static",
        unit: None,
        semantic: None,
    },
];

fn time_of(i: u64) -> f64 {
    i as f64 * 0.01
}
fn x_of(i: u64) -> f64 {
    (i as f64) * 0.5 - 7.25
}
fn phase_of(i: u64) -> i32 {
    (i % 5) as i32 - 2
}
fn step_of(i: u64) -> i64 {
    i as i64 * 1_000_000_007 - (1 << 40)
}

/// Schema JSON as Vulcan's `TelemetrySchema::to_json` lays it out.
fn vulcan_schema_json() -> String {
    let mut s = String::from("{\n  \"signals\": [\n");
    for (i, sig) in SIGNALS.iter().enumerate() {
        s += &format!(
            "    {{\n      \"name\": \"{}\",\n      \"type\": \"{}\",\n      \"lifecycle\": \"{}\",\n      \"offset\": {}",
            sig.name,
            sig.ty,
            sig.lifecycle,
            8 * i
        );
        if let Some(u) = sig.unit {
            s += &format!(",\n      \"unit\": \"{u}\"");
        }
        if let Some(m) = sig.semantic {
            s += &format!(",\n      \"semantic\": \"{m}\"");
        }
        s += "\n    }";
        if i + 1 < SIGNALS.len() {
            s += ",";
        }
        s += "\n";
    }
    s += &format!("  ],\n  \"frame_size_bytes\": {}\n}}", 8 * SIGNALS.len());
    s
}

/// Writes an Icarus-layout file with hdf5-pure directly, the way HighFive lays it out:
/// `/time` and every `/signals/<name>` chunked at 1000 with unlimited maxshape, `unit` and
/// `semantic` string attributes, `/metadata` a group with `schema` and `created_at`.
fn write_vulcan_like(path: &Path, frames: u64) {
    let ext = |d: &mut hdf5_pure::DatasetBuilder| {
        d.with_maxshape(&[MaxExtent::Unlimited])
            .with_chunks(&[1000]);
    };
    let mut b = FileBuilder::new();
    let mut signals = b.create_group("signals");
    for sig in SIGNALS {
        let d = signals.create_dataset(sig.name);
        match (sig.name, sig.ty) {
            ("Vehicle.Nav.position.x", _) => {
                d.with_f64_data(&(0..frames).map(x_of).collect::<Vec<_>>());
            }
            ("Vehicle.mass", _) => {
                d.with_f64_data(&vec![950.5; frames as usize]);
            }
            ("Vehicle.GNC.phase", _) => {
                d.with_i32_data(&(0..frames).map(phase_of).collect::<Vec<_>>());
            }
            ("Vehicle.GNC.step", _) => {
                d.with_i64_data(&(0..frames).map(step_of).collect::<Vec<_>>());
            }
            (_, "int32") => {
                d.with_i32_data(&vec![-3; frames as usize]);
            }
            _ => unreachable!(),
        }
        ext(d);
        if let Some(u) = sig.unit {
            d.set_attr("unit", AttrValue::VarLenAsciiString(u.into()));
        }
        if let Some(m) = sig.semantic {
            d.set_attr("semantic", AttrValue::VarLenString(m.into()));
        }
    }
    b.add_group(signals.finish());
    let mut metadata = b.create_group("metadata");
    metadata.set_attr("schema", AttrValue::VarLenAsciiString(vulcan_schema_json()));
    metadata.set_attr(
        "created_at",
        AttrValue::VarLenAsciiString("2026-03-01T08:15:00Z".into()),
    );
    b.add_group(metadata.finish());
    let t = b.create_dataset("time");
    t.with_f64_data(&(0..frames).map(time_of).collect::<Vec<_>>());
    ext(t);
    b.write(path).unwrap();
}

fn open_err(path: &Path, options: &ReadOptions) -> recfmt_core::Error {
    match (HDF5_FORMAT.open)(path, options) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e,
    }
}

fn open(path: &Path) -> Box<dyn RecordingReader> {
    (HDF5_FORMAT.open)(path, &ReadOptions::default()).unwrap()
}

#[test]
fn reads_the_vulcan_layout_value_by_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.h5");
    // More rows than one read window (65 536), and not a multiple of the 1000-row chunks.
    let frames = 150_001;
    write_vulcan_like(&path, frames);
    let head = std::fs::read(&path).unwrap();
    assert_eq!((HDF5_FORMAT.score)(&head[..64]), Score::Yes(100));

    let mut rec = open(&path);
    assert_eq!(rec.header().format, "icarus-h5");
    assert_eq!(rec.header().metadata["created_at"], "2026-03-01T08:15:00Z");
    assert_eq!(rec.header().metadata["frame_count"], frames.to_string());
    assert_eq!(rec.header().metadata["frame_size_bytes"], "40");
    assert_eq!(rec.header().time.unwrap().system, TimeSystem::Met);
    let schema = rec.schema().clone();
    let names = |s: usize| -> Vec<&str> {
        schema.streams[s]
            .signals
            .iter()
            .map(|c| c.name.as_str())
            .collect()
    };
    assert_eq!(schema.streams[0].name, "dynamic");
    assert_eq!(schema.streams[1].name, "static");
    assert_eq!(
        names(0),
        [
            "t",
            "Vehicle.Nav.position.x",
            "Vehicle.GNC.phase",
            "Vehicle.GNC.step"
        ]
    );
    assert_eq!(names(1), ["t", "Vehicle.mass", "Vehicle.config_rev"]);
    let d = &schema.streams[0].signals;
    assert_eq!(
        d.iter().map(|s| s.dtype).collect::<Vec<_>>(),
        [DType::F64, DType::F64, DType::I32, DType::I64]
    );
    assert_eq!(d[1].unit.as_deref(), Some("m"));
    assert_eq!(d[1].metadata["lifecycle"], "dynamic");
    assert_eq!(d[1].metadata["icarec.type"], "double");
    assert_eq!(d[2].metadata["semantic"], "enum");
    assert_eq!(d[2].metadata["icarec.type"], "int32");
    let s = &schema.streams[1].signals;
    assert_eq!(s[1].unit.as_deref(), Some("kg"));
    assert_eq!(s[1].metadata["lifecycle"], "static");
    assert_eq!(s[2].dtype, DType::I32);

    let mut row = FrameBuf::default();
    assert!(rec.read_frame(&mut row).unwrap());
    assert_eq!(row.stream, 1);
    assert_eq!(
        row.values,
        [Value::Float(0.0), Value::Float(950.5), Value::Int(-3)]
    );
    let mut i = 0u64;
    while rec.read_frame(&mut row).unwrap() {
        assert_eq!(row.stream, 0);
        let expected = [
            Value::Float(time_of(i)),
            Value::Float(x_of(i)),
            Value::Int(i64::from(phase_of(i))),
            Value::Int(step_of(i)),
        ];
        assert_eq!(row.values, expected, "frame {i}");
        i += 1;
    }
    assert_eq!(i, frames);
    assert_eq!(rec.integrity().status, IntegrityStatus::Complete);
    assert!(
        rec.integrity().warnings.is_empty(),
        "{:?}",
        rec.integrity().warnings
    );
    assert_eq!(rec.progress(), (frames, Some(frames)));
}

#[test]
fn vulcan_layout_converts_to_icarec_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let h5 = dir.path().join("run.h5");
    write_vulcan_like(&h5, 2_345);
    // run.h5 → icarec through the registry's generic writer.
    let icarec = dir.path().join("run.icarec");
    let mut reader = open(&h5);
    let mut writer = (recfmt_icarec::FORMAT.create.unwrap())(&icarec, &Default::default()).unwrap();
    writer
        .write_header(reader.header(), reader.schema())
        .unwrap();
    let mut row = FrameBuf::default();
    while reader.read_frame(&mut row).unwrap() {
        writer.write_frame(&row).unwrap();
    }
    writer.finish().unwrap();

    let dir_rec = recfmt_icarec::IcarecDir::open(&icarec, &Default::default()).unwrap();
    let doc = dir_rec.schema().doc();
    assert_eq!(doc.created_at, "2026-03-01T08:15:00Z");
    let sig = |n: &str| doc.signals.iter().find(|s| s.name == n).unwrap();
    assert_eq!(
        sig("Vehicle.mass").lifecycle,
        recfmt_icarec::Lifecycle::Static
    );
    assert_eq!(sig("Vehicle.mass").units.as_deref(), Some("kg"));
    assert_eq!(sig("Vehicle.GNC.phase").type_name, "int32");
    assert_eq!(sig("Vehicle.GNC.phase").semantic.as_deref(), Some("enum"));
    assert_eq!(sig("Vehicle.GNC.step").type_name, "int64");
    assert_eq!(dir_rec.frame_count(), 2_345);

    // And back: icarec → Icarus HDF5 equals the original, value by value.
    let back = dir.path().join("back.h5");
    let mut rec = IcarecRecording::open(&icarec, &Default::default()).unwrap();
    assert_eq!(
        write_icarus_h5(&mut rec, &back, &IcarusH5Options::default()).unwrap(),
        2_345
    );
    let (mut a, mut b) = (open(&h5), open(&back));
    assert_eq!(assert_same_rows(&mut *a, &mut *b), 1 + 2_345);
    // Dtypes, units, lifecycles, Icarus types and semantics survive too.
    for (sa, sb) in a.schema().streams.iter().zip(&b.schema().streams) {
        for (x, y) in sa.signals.iter().zip(&sb.signals) {
            assert_eq!((x.dtype, &x.unit), (y.dtype, &y.unit), "{}", x.name);
            for key in ["lifecycle", "icarec.type", "semantic"] {
                assert_eq!(x.metadata.get(key), y.metadata.get(key), "{} {key}", x.name);
            }
        }
    }
    assert_eq!(b.header().metadata["created_at"], "2026-03-01T08:15:00Z");
}

/// Every row of `a` equals the row of `b` (stream names, column names and values; booleans
/// compare as 0/1, NaN equals NaN).
fn assert_same_rows(a: &mut dyn RecordingReader, b: &mut dyn RecordingReader) -> u64 {
    let (sa, sb) = (a.schema().clone(), b.schema().clone());
    let (mut ra, mut rb) = (FrameBuf::default(), FrameBuf::default());
    let mut rows = 0;
    loop {
        let (more_a, more_b) = (
            a.read_frame(&mut ra).unwrap(),
            b.read_frame(&mut rb).unwrap(),
        );
        assert_eq!(more_a, more_b, "row {rows}: one side ended first");
        if !more_a {
            return rows;
        }
        let (da, db) = (&sa.streams[ra.stream], &sb.streams[rb.stream]);
        assert_eq!(da.name, db.name, "row {rows}");
        let names = |d: &recfmt_core::StreamDesc| {
            d.signals.iter().map(|s| s.name.clone()).collect::<Vec<_>>()
        };
        assert_eq!(names(da), names(db), "row {rows}");
        for (k, (x, y)) in ra.values.iter().zip(&rb.values).enumerate() {
            assert!(
                same_value(x, y),
                "row {rows} stream {} column {}: {x:?} vs {y:?}",
                da.name,
                da.signals[k].name
            );
        }
        rows += 1;
    }
}

fn same_value(x: &Value, y: &Value) -> bool {
    if x == y {
        return true;
    }
    match (x.as_f64(), y.as_f64()) {
        (Some(a), Some(b)) => a == b || (a.is_nan() && b.is_nan()),
        _ => false,
    }
}

#[test]
fn icarec_to_icarus_h5_to_icarec_keeps_every_value() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("orig.icarec");
    generate::write_all_types(&original, 300).unwrap();

    let h5 = dir.path().join("run.h5");
    let mut rec = IcarecRecording::open(&original, &Default::default()).unwrap();
    write_icarus_h5(&mut rec, &h5, &IcarusH5Options::default()).unwrap();

    // The HDF5 file read directly matches the ICAREC recording it came from.
    let mut a = IcarecRecording::open(&original, &Default::default()).unwrap();
    let mut b = open(&h5);
    assert_eq!(assert_same_rows(&mut a, &mut *b), 1 + 300);
    // The time reference (GPS with an epoch) survives in the /time attributes.
    let (ta, tb) = (a.header().time.unwrap(), b.header().time.unwrap());
    assert_eq!(ta, tb);
    assert_eq!(b.header().metadata["created_at"], generate::CREATED_AT);

    // Back to ICAREC through the registry's writer.
    let back = dir.path().join("back.icarec");
    let mut reader = open(&h5);
    let mut writer = (recfmt_icarec::FORMAT.create.unwrap())(&back, &Default::default()).unwrap();
    writer
        .write_header(reader.header(), reader.schema())
        .unwrap();
    let mut row = FrameBuf::default();
    while reader.read_frame(&mut row).unwrap() {
        writer.write_frame(&row).unwrap();
    }
    writer.finish().unwrap();
    let mut a = IcarecRecording::open(&original, &Default::default()).unwrap();
    let mut c = IcarecRecording::open(&back, &Default::default()).unwrap();
    assert_eq!(assert_same_rows(&mut a, &mut c), 1 + 300);
    assert_eq!(a.header().time, c.header().time);
    let back_doc = c.dir().schema().doc();
    // Booleans come back as Icarus's int32 + semantic "boolean".
    let engine = back_doc
        .signals
        .iter()
        .find(|s| s.name == "Vehicle.Prop.engine_on")
        .unwrap();
    assert_eq!(engine.type_name, "int32");
    assert_eq!(engine.semantic.as_deref(), Some("boolean"));
}

#[test]
fn writer_expands_vectors_and_maps_types() {
    use recfmt_core::{ArrayValue, Header, Schema, Shape, SignalDesc, StreamDesc, TimeBase};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gen.h5");
    let mut s = StreamDesc::new(
        "nav",
        SignalDesc::scalar("ts", DType::U64),
        TimeBase::MILLISECONDS,
    );
    s.signals
        .push(SignalDesc::scalar("q", DType::F64).with_shape(Shape::Fixed(vec![4])));
    s.signals.push(SignalDesc::scalar("ok", DType::Bool));
    s.signals
        .push(SignalDesc::scalar("n", DType::U32).with_unit("count"));
    s.signals.push(SignalDesc::scalar("f", DType::F32));
    let schema = Schema { streams: vec![s] };
    let header = Header {
        format: "test",
        version: "1".into(),
        time: None,
        metadata: Default::default(),
    };
    let mut w = recfmt_icarec::IcarusH5Writer::new(
        &path,
        IcarusH5Options {
            chunk_rows: Some(7),
            deflate: Some(1),
        },
    );
    use recfmt_core::RecordingWriter;
    w.write_header(&header, &schema).unwrap();
    for i in 0..20u64 {
        let row = FrameBuf {
            stream: 0,
            values: vec![
                Value::UInt(i * 250),
                Value::Array(ArrayValue::F64(vec![1.0, i as f64, -(i as f64), 0.5])),
                Value::Bool(i.is_multiple_of(3)),
                Value::UInt(i * 7),
                if i == 4 {
                    Value::Null
                } else {
                    Value::Float(i as f64 / 4.0)
                },
            ],
        };
        w.write_frame(&row).unwrap();
    }
    assert!(!path.exists(), "the file appears only when finished");
    w.finish().unwrap();
    assert_eq!(w.frames(), 20);

    let mut rec = open(&path);
    let d = &rec.schema().streams[0];
    let names: Vec<_> = d.signals.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["t", "q.w", "q.x", "q.y", "q.z", "ok", "n", "f"]);
    assert_eq!(d.signals[5].dtype, DType::I32);
    assert_eq!(d.signals[5].metadata["semantic"], "boolean");
    assert_eq!(d.signals[6].dtype, DType::I64);
    assert_eq!(d.signals[6].unit.as_deref(), Some("count"));
    assert!(
        rec.schema().streams[1].signals.len() == 1,
        "no static signals"
    );
    let mut row = FrameBuf::default();
    let mut i = 0u64;
    while rec.read_frame(&mut row).unwrap() {
        assert_eq!(row.stream, 0);
        assert_eq!(row.values[0], Value::Float(i as f64 * 0.25));
        assert_eq!(row.values[2], Value::Float(i as f64));
        assert_eq!(row.values[5], Value::Int(i64::from(i.is_multiple_of(3))));
        assert_eq!(row.values[6], Value::Int(i as i64 * 7));
        match &row.values[7] {
            Value::Float(f) if i == 4 => assert!(f.is_nan()),
            v => assert_eq!(*v, Value::Float(i as f64 / 4.0)),
        }
        i += 1;
    }
    assert_eq!(i, 20);
    // What Vulcan's reader needs: the exact JSON layout and a /metadata group.
    let file = hdf5_pure::File::open(&path).unwrap();
    let meta = file.group("metadata").unwrap().attrs().unwrap();
    let schema_json = meta["schema"].as_str().unwrap();
    assert!(schema_json.starts_with("{\n  \"signals\": [\n    {\n      \"name\": \"q.w\",\n      \"type\": \"double\",\n      \"lifecycle\": \"dynamic\",\n      \"offset\": 0\n    },"), "{schema_json}");
    assert!(
        schema_json.ends_with("  \"frame_size_bytes\": 56\n}"),
        "{schema_json}"
    );
    assert_eq!(
        file.dataset("time").unwrap().chunk_shape().unwrap(),
        Some(vec![7])
    );
    assert_eq!(file.dataset("signals/ok").unwrap().filters(), [2, 1]);
}

#[test]
fn writer_refuses_what_icarus_cannot_hold() {
    use recfmt_core::{Header, RecordingWriter, Schema, SignalDesc, StreamDesc, TimeBase};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.h5");
    let mut s = StreamDesc::new("a", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
    s.signals.push(SignalDesc::scalar("name", DType::Str));
    s.signals.push(SignalDesc::scalar("x/y", DType::F64));
    let header = Header {
        format: "test",
        version: "1".into(),
        time: None,
        metadata: Default::default(),
    };
    let mut w = recfmt_icarec::IcarusH5Writer::new(&path, Default::default());
    let e = w
        .write_header(
            &header,
            &Schema {
                streams: vec![s.clone()],
            },
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("a.name (str"), "{e}");
    s.signals.remove(1);
    let mut w = recfmt_icarec::IcarusH5Writer::new(&path, Default::default());
    let e = w
        .write_header(
            &header,
            &Schema {
                streams: vec![s.clone()],
            },
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"x/y\" (not an HDF5 link name)"), "{e}");
    // A u64 beyond int64 fails the row and leaves no file behind.
    let mut s = StreamDesc::new("a", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
    s.signals.push(SignalDesc::scalar("big", DType::U64));
    let mut w = recfmt_icarec::IcarusH5Writer::new(&path, Default::default());
    w.write_header(&header, &Schema { streams: vec![s] })
        .unwrap();
    let e = w
        .write_frame(&FrameBuf {
            stream: 0,
            values: vec![Value::Float(0.0), Value::UInt(u64::MAX)],
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("fits int64"), "{e}");
    assert!(w.finish().is_err());
    drop(w);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A file shaped like recfmt's own HDF5 export: a group per stream, no Icarus layout.
fn write_export_like(path: &Path) {
    let mut b = FileBuilder::new();
    b.set_attr("recfmt.format", AttrValue::VarLenString("icarec".into()));
    let mut g = b.create_group("dynamic");
    g.create_dataset("t").with_f64_data(&[0.0, 0.1]);
    g.create_dataset("x").with_f64_data(&[1.0, 2.0]);
    b.add_group(g.finish());
    b.write(path).unwrap();
}

#[test]
fn other_hdf5_files_get_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export.h5");
    write_export_like(&path);
    let head = std::fs::read(&path).unwrap();
    assert_eq!((HDF5_FORMAT.score)(&head), Score::Yes(100));
    let e = open_err(&path, &ReadOptions::default());
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    let text = e.to_string();
    assert!(
        text.contains("not an Icarus recording: no /metadata schema attribute"),
        "{text}"
    );
    assert!(
        text.contains("no /time dataset, no /signals group"),
        "{text}"
    );
    assert!(text.contains("/dynamic (group)"), "{text}");
    assert!(text.starts_with(&path.display().to_string()), "{text}");

    // Only /time missing: the error names it.
    let path = dir.path().join("no_time.h5");
    let mut b = FileBuilder::new();
    let mut s = b.create_group("signals");
    s.create_dataset("x").with_f64_data(&[1.0]);
    b.add_group(s.finish());
    let mut m = b.create_group("metadata");
    m.set_attr(
        "schema",
        AttrValue::VarLenString("{\"signals\": []}".into()),
    );
    b.add_group(m.finish());
    b.write(&path).unwrap();
    let e = open_err(&path, &ReadOptions::default()).to_string();
    assert!(
        e.contains("not an Icarus recording: no /time dataset"),
        "{e}"
    );

    // Not HDF5 at all.
    let path = dir.path().join("text.h5");
    std::fs::write(&path, "hello").unwrap();
    let e = open_err(&path, &ReadOptions::default()).to_string();
    assert!(e.contains("not an HDF5 file"), "{e}");
}

#[test]
fn schema_and_datasets_that_disagree_are_warnings_or_strict_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.h5");
    let mut b = FileBuilder::new();
    let mut s = b.create_group("signals");
    s.create_dataset("a").with_f64_data(&[1.0, 2.0, 3.0]);
    s.create_dataset("b").with_i32_data(&[1, 2]); // one row short, and declared double
    s.create_dataset("extra").with_i64_data(&[7, 8, 9]);
    b.add_group(s.finish());
    let mut m = b.create_group("metadata");
    m.set_attr(
        "schema",
        AttrValue::VarLenString(
            r#"{"signals":[{"name":"a","type":"double","lifecycle":"dynamic","offset":0},
                {"name":"b","type":"double","lifecycle":"dynamic","offset":8},
                {"name":"gone","type":"double","lifecycle":"static","offset":16}],
               "frame_size_bytes":24}"#
                .into(),
        ),
    );
    b.add_group(m.finish());
    b.create_dataset("time").with_f64_data(&[0.0, 1.0, 2.0]);
    b.write(&path).unwrap();

    let mut rec = open(&path);
    let names: Vec<_> = rec.schema().streams[0]
        .signals
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names, ["t", "a", "b", "extra"]);
    let mut row = FrameBuf::default();
    let mut rows = 0;
    while rec.read_frame(&mut row).unwrap() {
        rows += 1;
    }
    assert_eq!(rows, 2);
    let integrity = rec.integrity();
    assert_eq!(integrity.status, IntegrityStatus::Truncated);
    let warnings = integrity.warnings.join("\n");
    assert!(
        warnings.contains("\"gone\" is in the /metadata schema but has no dataset"),
        "{warnings}"
    );
    assert!(
        warnings.contains("/signals/extra is not in the /metadata schema"),
        "{warnings}"
    );
    assert!(
        warnings.contains("/signals/b is stored as i32"),
        "{warnings}"
    );
    assert!(warnings.contains("the shortest has 2 rows"), "{warnings}");

    let strict = ReadOptions {
        strict: true,
        ..Default::default()
    };
    let e = open_err(&path, &strict).to_string();
    assert!(e.contains("/signals/gone"), "{e}");
}

#[test]
fn metadata_may_be_a_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("meta_ds.h5");
    let mut b = FileBuilder::new();
    let mut s = b.create_group("signals");
    s.create_dataset("v").with_i64_data(&[5, 6]);
    b.add_group(s.finish());
    b.create_dataset("metadata").with_u8_data(&[0]).set_attr(
        "schema",
        AttrValue::String(
            r#"{"signals":[{"name":"v","type":"int64","lifecycle":"static","offset":0}],"frame_size_bytes":8}"#
                .into(),
        ),
    );
    b.create_dataset("time").with_f64_data(&[0.5, 1.5]);
    b.write(&path).unwrap();
    let mut rec = open(&path);
    let mut row = FrameBuf::default();
    assert!(rec.read_frame(&mut row).unwrap());
    assert_eq!(rec.schema().streams[row.stream].name, "static");
    assert_eq!(row.values, [Value::Float(0.5), Value::Int(5)]);
    assert!(rec.read_frame(&mut row).unwrap());
    assert_eq!(row.values, [Value::Float(0.5)]);
    assert!(rec.read_frame(&mut row).unwrap());
    assert_eq!(row.values, [Value::Float(1.5)]);
    assert!(!rec.read_frame(&mut row).unwrap());
}

#[test]
fn limits_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.h5");
    write_vulcan_like(&path, 10);
    let mut options = ReadOptions::default();
    options.limits.max_signals = 3;
    let e = open_err(&path, &options);
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
    let mut options = ReadOptions::default();
    options.limits.max_side_file_len = 100;
    let e = open_err(&path, &options);
    assert_eq!(e.kind(), ErrorKind::Limit, "{e}");
}

#[test]
fn zero_frames() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("orig.icarec");
    generate::write_all_types(&original, 0).unwrap();
    let h5 = dir.path().join("run.h5");
    let mut rec = IcarecRecording::open(&original, &Default::default()).unwrap();
    assert_eq!(
        write_icarus_h5(&mut rec, &h5, &Default::default()).unwrap(),
        0
    );
    let mut rec = open(&h5);
    let mut row = FrameBuf::default();
    assert!(!rec.read_frame(&mut row).unwrap());
    assert_eq!(rec.integrity().status, IntegrityStatus::Complete);
}

// ---------------------------------------------------------------------------------------------
// Interoperability with libhdf5 through h5py (skipped when that Python is not there)
// ---------------------------------------------------------------------------------------------

fn python() -> Option<PathBuf> {
    let candidate = std::env::var_os("RECFMT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv/bin/python")
        });
    let ok = std::process::Command::new(&candidate)
        .args(["-c", "import h5py, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(candidate)
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/icarus_h5py.py")
}

#[test]
fn reads_a_file_written_by_h5py_like_highfive() {
    let Some(py) = python() else {
        eprintln!("skipped: no python with h5py (set RECFMT_PYTHON or create target/pyenv)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("highfive.h5");
    let frames = 2_500u64;
    let out = std::process::Command::new(&py)
        .arg(script())
        .arg("write")
        .arg(&path)
        .arg(frames.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut rec = open(&path);
    assert_eq!(rec.header().metadata["created_at"], "2026-03-01T08:15:00Z");
    let schema = rec.schema().clone();
    let dynamic: Vec<_> = schema.streams[0]
        .signals
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        dynamic,
        [
            "t",
            "Vehicle.Nav.position.x",
            "Vehicle.Nav.position.y",
            "Vehicle.Nav.position.z",
            "Vehicle.GNC.phase",
            "Vehicle.GNC.step",
            "Vehicle.GNC.engaged"
        ]
    );
    let d = &schema.streams[0].signals;
    assert_eq!(d[1].unit.as_deref(), Some("m"));
    assert_eq!(d[4].dtype, DType::I32);
    assert_eq!(d[4].metadata["semantic"], "enum");
    assert_eq!(d[5].dtype, DType::I64);
    assert_eq!(d[6].metadata["semantic"], "boolean");
    let s = &schema.streams[1].signals;
    assert_eq!(s[1].name, "Vehicle.mass");
    assert_eq!(s[1].unit.as_deref(), Some("kg"));

    // The values the script writes (see icarus_h5py.py).
    let mut row = FrameBuf::default();
    assert!(rec.read_frame(&mut row).unwrap());
    assert_eq!(row.values, [Value::Float(0.0), Value::Float(950.5)]);
    let mut i = 0u64;
    while rec.read_frame(&mut row).unwrap() {
        let f = i as f64;
        let expected = [
            Value::Float(f * 0.01),
            Value::Float(f * 0.5 - 7.25),
            Value::Float(-f),
            Value::Float(1000.0 + f / 8.0),
            Value::Int((i % 5) as i64 - 2),
            Value::Int(i as i64 * 1_000_000_007 - (1 << 40)),
            Value::Int((i % 2) as i64),
        ];
        assert_eq!(row.values, expected, "frame {i}");
        i += 1;
    }
    assert_eq!(i, frames);
    assert!(
        rec.integrity().warnings.is_empty(),
        "{:?}",
        rec.integrity().warnings
    );
}

#[test]
fn h5py_reads_what_the_writer_writes() {
    let Some(py) = python() else {
        eprintln!("skipped: no python with h5py (set RECFMT_PYTHON or create target/pyenv)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("orig.icarec");
    generate::write_all_types(&original, 70_000).unwrap();
    let h5 = dir.path().join("run.h5");
    let mut rec = IcarecRecording::open(&original, &Default::default()).unwrap();
    write_icarus_h5(&mut rec, &h5, &IcarusH5Options::default()).unwrap();

    // The script checks the layout Vulcan's HDF5Reader needs and prints every value's sum per
    // dataset; compare with the sums of the ICAREC recording.
    let out = std::process::Command::new(&py)
        .arg(script())
        .arg("check")
        .arg(&h5)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["frames"], 70_000);
    assert_eq!(report["created_at"], generate::CREATED_AT);

    let mut rec = IcarecRecording::open(&original, &Default::default()).unwrap();
    let schema = rec.schema().clone();
    let mut sums: std::collections::BTreeMap<String, f64> = Default::default();
    let mut row = FrameBuf::default();
    while rec.read_frame(&mut row).unwrap() {
        let desc = &schema.streams[row.stream];
        let static_row = desc.name == "static";
        for (s, v) in desc.signals.iter().zip(&row.values) {
            let name = if s.name == "t" {
                "time".to_string()
            } else {
                s.name.clone()
            };
            if static_row && name == "time" {
                continue;
            }
            // Static values are repeated in every frame.
            let times = if static_row { 70_000.0 } else { 1.0 };
            *sums.entry(name).or_default() += v.as_f64().unwrap() * times;
        }
    }
    let got = report["sums"].as_object().unwrap();
    assert_eq!(got.len(), sums.len(), "{got:?}");
    for (name, sum) in &sums {
        let g = got[name].as_f64().unwrap();
        assert!(
            (g - sum).abs() <= 1e-9 * sum.abs().max(1.0),
            "{name}: h5py {g} vs icarec {sum}"
        );
    }
    // Signals, types and lifecycles in the schema attribute, parsed by h5py's side.
    assert_eq!(
        report["schema_signals"].as_u64().unwrap() as usize,
        sums.len() - 1
    );
}
