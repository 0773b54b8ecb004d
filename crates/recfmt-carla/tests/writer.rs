//! The generic-model writer: recordings read by the adapter are written back.

mod common;

use std::io::Cursor;

use recfmt_carla::writer::{CarlaWriter, CarlaWriterOptions};
use recfmt_carla::{CarlaRecording, FORMAT, Packet, Reader};
use recfmt_core::{
    DType, FrameBuf, Header, ReadOptions, RecordingReader, RecordingWriter, Schema, SignalDesc,
    StreamDesc, TimeBase,
};

fn packets(bytes: &[u8]) -> (recfmt_carla::Header, Vec<Packet>) {
    let mut r = Reader::new(bytes);
    let h = r.read_header().expect("header");
    let mut p = Packet::default();
    let mut out = Vec::new();
    while r.read_packet(&mut p).expect("packet") {
        out.push(p.clone());
    }
    (h, out)
}

fn attribute_kinds_cleared(mut v: Vec<Packet>) -> (Vec<Packet>, usize, usize) {
    let (mut total, mut kinds) = (0, Vec::new());
    for p in &mut v {
        if let Packet::EventAdd(adds) = p {
            for a in adds {
                for attr in &mut a.description.attributes {
                    total += 1;
                    kinds.push(attr.kind);
                    attr.kind = 0;
                }
            }
        }
    }
    let n = kinds.len();
    (v, total, n)
}

/// Reads each sample with the adapter and writes its rows with the writer.
#[test]
fn samples_are_written_back_packet_for_packet() {
    assert!(FORMAT.create.is_some());
    for path in common::sample_files() {
        let original = std::fs::read(&path).expect("read");
        let mut rec =
            CarlaRecording::new(&original[..], &ReadOptions::default(), None).expect("open");
        let mut w = CarlaWriter::new(Cursor::new(Vec::new()), CarlaWriterOptions::default());
        w.write_header(rec.header(), rec.schema()).expect("header");
        let mut buf = FrameBuf::default();
        while rec.read_frame(&mut buf).expect("row") {
            w.write_frame(&buf).expect("write");
        }
        w.finish().expect("finish");
        let written = w.into_inner().expect("output").into_inner();

        let (h0, p0) = packets(&original);
        let (h1, p1) = packets(&written);
        assert_eq!(h0, h1);
        // Attribute types are not in the generic rows: compare them separately.
        let kinds = |v: &[Packet]| -> Vec<u8> {
            v.iter()
                .filter_map(|p| match p {
                    Packet::EventAdd(a) => Some(a),
                    _ => None,
                })
                .flatten()
                .flat_map(|a| a.description.attributes.iter().map(|x| x.kind))
                .collect()
        };
        let (k0, k1) = (kinds(&p0), kinds(&p1));
        let same = k0.iter().zip(&k1).filter(|(a, b)| a == b).count();
        assert_eq!(k0.len(), k1.len());
        assert!(
            same * 100 >= k0.len() * 95,
            "{path:?}: {same} of {} kinds guessed",
            k0.len()
        );
        let (p0, ..) = attribute_kinds_cleared(p0);
        let (p1, ..) = attribute_kinds_cleared(p1);
        assert_eq!(p0.len(), p1.len(), "{path:?}");
        for (i, (a, b)) in p0.iter().zip(&p1).enumerate() {
            // NaN values compare unequal: compare their text.
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{path:?} packet {i}");
        }
        // The samples' attribute types all follow from their values, so the file comes
        // back byte for byte.
        assert_eq!(same, k0.len());
        assert!(written == original, "{path:?}: not byte-identical");
    }
}

#[test]
fn other_schemas_are_refused_with_the_reasons() {
    let mut s = StreamDesc::new(
        "gps",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    s.signals.push(SignalDesc::scalar("id", DType::U32));
    s.signals.push(SignalDesc::scalar("x", DType::F64));
    let schema = Schema { streams: vec![s] };
    let mut w = CarlaWriter::new(Cursor::new(Vec::new()), CarlaWriterOptions::default());
    let err = w
        .write_header(&Header::default(), &schema)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("stream \"gps\" is not a carla stream"),
        "{err}"
    );
    assert!(err.contains("no \"frame\" stream"), "{err}");
    assert!(
        err.contains("lacks the tracks column(s) blueprint, y, z, roll, pitch, yaw"),
        "{err}"
    );
}

#[test]
fn create_writes_through_a_partial_file() {
    let dir = std::env::temp_dir().join(format!("recfmt-carla-writer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let target = dir.join("out.log");
    let create = FORMAT.create.expect("create");

    // A schema that does not fit leaves nothing behind.
    let s = StreamDesc::new("x", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
    let mut w = create(&target, &Default::default()).expect("writer");
    assert!(
        w.write_header(&Header::default(), &Schema { streams: vec![s] })
            .is_err()
    );
    drop(w);
    assert_eq!(std::fs::read_dir(&dir).expect("list").count(), 0);

    // A tracks table is written and renamed into place.
    let mut s = StreamDesc::new(
        "t",
        SignalDesc::scalar("time", DType::F64),
        TimeBase::SECONDS,
    );
    for n in ["id", "x", "y", "z", "roll", "pitch", "yaw"] {
        s.signals.push(SignalDesc::scalar(n, DType::F64));
    }
    s.signals
        .insert(2, SignalDesc::scalar("blueprint", DType::Str));
    let schema = Schema { streams: vec![s] };
    let mut w = create(&target, &Default::default()).expect("writer");
    let mut header = Header::default();
    header.metadata.insert("map".into(), "Town07".into());
    w.write_header(&header, &schema).expect("header");
    let mut row = FrameBuf::default();
    row.reset(0, 9);
    row.values = vec![
        recfmt_core::Value::Float(0.0),
        recfmt_core::Value::UInt(3),
        recfmt_core::Value::Str("walker.pedestrian.0002".into()),
        recfmt_core::Value::Float(1.0),
        recfmt_core::Value::Float(2.0),
        recfmt_core::Value::Float(3.0),
        recfmt_core::Value::Float(0.0),
        recfmt_core::Value::Float(0.0),
        recfmt_core::Value::Float(45.0),
    ];
    w.write_frame(&row).expect("row");
    assert!(!target.exists());
    w.finish().expect("finish");
    assert!(target.exists());
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, [std::ffi::OsString::from("out.log")]);
    let (h, p) = packets(&std::fs::read(&target).expect("read"));
    assert_eq!(h.map, "Town07");
    assert!(
        p.iter()
            .any(|p| matches!(p, Packet::EventAdd(v) if v.len() == 1 && v[0].actor_type == 2))
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

/// The `build` option reaches the writer the registry creates: a log converted from a UE5
/// build (f64 vectors) into 0.9.15 is written with 0.9.15's f32 vectors, and a position that
/// f32 cannot hold is refused instead of written as infinity.
#[test]
fn the_build_option_reaches_the_registry_writer() {
    let dir = std::env::temp_dir().join(format!("recfmt-carla-build-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let target = dir.join("out.log");
    let mut s = StreamDesc::new(
        "t",
        SignalDesc::scalar("time", DType::F64),
        TimeBase::SECONDS,
    );
    for n in ["id", "x", "y", "z", "roll", "pitch", "yaw"] {
        s.signals.push(SignalDesc::scalar(n, DType::F64));
    }
    s.signals
        .insert(2, SignalDesc::scalar("blueprint", DType::Str));
    let schema = Schema { streams: vec![s] };
    // The header says the rows came from a UE5 log.
    let mut header = Header::default();
    header.metadata.insert("flavour".into(), "ue5".into());
    let write = |build: Option<&str>, x: f64| -> recfmt_core::Result<()> {
        let mut options = recfmt_core::WriteOptions::default();
        if let Some(build) = build {
            options.format_options.push("build", build);
        }
        options.replace = recfmt_core::Replace::RegularFile;
        let mut w = (FORMAT.create.expect("create"))(&target, &options)?;
        w.write_header(&header, &schema)?;
        let mut row = FrameBuf::default();
        row.reset(0, 9);
        row.values = vec![
            recfmt_core::Value::Float(0.0),
            recfmt_core::Value::UInt(3),
            recfmt_core::Value::Str("vehicle.audi.tt".into()),
            recfmt_core::Value::Float(x),
            recfmt_core::Value::Float(2.0),
            recfmt_core::Value::Float(3.0),
            recfmt_core::Value::Float(0.0),
            recfmt_core::Value::Float(0.0),
            recfmt_core::Value::Float(45.0),
        ];
        w.write_frame(&row)?;
        w.finish()
    };
    let flavour = || {
        let bytes = std::fs::read(&target).expect("read");
        CarlaRecording::new(&bytes[..], &Default::default(), None)
            .expect("a log CARLA reads")
            .flavour()
            .map(|f| f.name())
    };
    write(None, 1.0).expect("written as the header says");
    assert_eq!(flavour(), Some("ue5"));
    write(Some("0.9.15"), 1.0).expect("written for 0.9.15");
    assert_eq!(flavour(), Some("0.9.15"), "the option wins over the header");
    let (_, p) = packets(&std::fs::read(&target).expect("read"));
    assert!(p.iter().any(|p| matches!(p, Packet::EventAdd(v)
        if v[0].location == recfmt_carla::Vector3::F32([100.0, 200.0, 300.0]))));
    // 1e37 m is 1e39 cm: beyond f32, fine for f64.
    let err = write(Some("0.9.15"), 1e37).expect_err("refused");
    assert!(err.to_string().contains("beyond the largest f32"), "{err}");
    write(Some("ue5"), 1e37).expect("f64 vectors hold it");
    std::fs::remove_dir_all(&dir).expect("cleanup");
}
