//! HDF5 export: what `Hdf5Writer` writes reads back through hdf5-pure with every value,
//! type and attribute, and failures leave no file behind.

#![cfg(feature = "hdf5")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::path::Path;

use hdf5_pure::{AttrValue, Datatype, File, MaxExtent};
use recfmt_core::{
    ArrayValue, DType, FrameBuf, Header, Metadata, Shape, SignalDesc, StreamDesc, TimeBase,
    TimeReference, TimeSystem, Value,
};
use recfmt_export::hdf5::{Hdf5Options, Hdf5Writer, MAX_CHUNK_ROWS, omitted_columns};
use recfmt_export::{Error, StreamBatcher};

fn header() -> Header {
    let mut metadata = Metadata::new();
    metadata.insert("generator".into(), "unit test".into());
    metadata.insert("source.scenario".into(), "harbour".into());
    Header {
        format: "memory",
        version: "7".into(),
        time: Some(TimeReference::parse(TimeSystem::Utc, Some("2020-01-01T00:00:00Z")).unwrap()),
        metadata,
    }
}

/// `vehicle/nav`: every scalar type plus fixed shapes; `EVENTS`: an entity-keyed stream of
/// text; `raw`: columns HDF5 cannot stream, never written.
fn streams() -> Vec<StreamDesc> {
    let mut nav = StreamDesc::new(
        "vehicle/nav",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    nav.signals.extend([
        SignalDesc::scalar("x", DType::F32).with_unit("m"),
        SignalDesc::scalar("y", DType::F64).with_unit("rad"),
        SignalDesc::scalar("n", DType::I32),
        SignalDesc::scalar("b", DType::U8),
        SignalDesc::scalar("flag", DType::Bool),
        SignalDesc::scalar("label", DType::Str),
        SignalDesc::scalar("/pos/vec", DType::F64)
            .with_shape(Shape::Fixed(vec![3]))
            .with_unit("m"),
        SignalDesc::scalar("m", DType::I16).with_shape(Shape::Fixed(vec![2, 2])),
    ]);
    nav.signals[2]
        .metadata
        .insert("frame".into(), "body".into());
    nav.metadata.insert("rate_hz".into(), "10".into());

    let mut events = StreamDesc::new(
        "EVENTS",
        SignalDesc::scalar("time", DType::F64),
        TimeBase::SECONDS,
    );
    events.signals.extend([
        SignalDesc::scalar("id", DType::U32),
        SignalDesc::scalar("message", DType::Str),
        SignalDesc::scalar("level", DType::I64),
    ]);
    events.entity = Some(1);

    let mut raw = StreamDesc::new(
        "raw",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    raw.signals.extend([
        SignalDesc::scalar("payload", DType::Bytes),
        SignalDesc::scalar("xs", DType::F32).with_shape(Shape::Variable),
    ]);
    vec![nav, events, raw]
}

fn nav_row(i: u64) -> FrameBuf {
    let f = i as f64;
    FrameBuf {
        stream: 0,
        values: vec![
            Value::UInt(i * 100_000 + u64::MAX / 2),
            if i == 4 {
                Value::Null
            } else {
                Value::Float(f64::from((f * 0.1) as f32))
            },
            Value::Float(f * 1e-3 - 1.0 / 3.0),
            Value::Int(-(i as i64) * 1000 + i32::MAX as i64 - 5000),
            Value::UInt(250 + i % 6),
            Value::Bool(i.is_multiple_of(3)),
            match i {
                5 => Value::Null,
                6 => Value::Str("Größe ✓".into()),
                _ => Value::Str(format!("row {i}")),
            },
            if i == 7 {
                Value::Null
            } else {
                Value::Array(ArrayValue::F64(vec![f, f + 0.5, -f]))
            },
            Value::Array(ArrayValue::Int(vec![i as i64, -(i as i64), 300, -300])),
        ],
    }
}

fn event_row(i: u64) -> FrameBuf {
    FrameBuf {
        stream: 1,
        values: vec![
            Value::Float(i as f64 * 0.25),
            Value::UInt(i % 2),
            Value::Str("x".repeat(i as usize * 9)), // up to 54 of 64 bytes
            Value::Int(i as i64 - 3),
        ],
    }
}

fn small_options() -> Hdf5Options {
    let mut metadata = Metadata::new();
    metadata.insert("source.file".into(), "in.rec".into());
    metadata.insert("source.scenario".into(), "overridden".into());
    Hdf5Options {
        chunk_rows: 4,
        metadata,
        ..Hdf5Options::default()
    }
}

/// Pushes `rows` through one batcher per stream (batches of 3 rows), interleaved.
fn write_rows(
    writer: &mut Hdf5Writer,
    streams: &[StreamDesc],
    rows: &[FrameBuf],
) -> Result<(), Error> {
    let header = header();
    let mut batchers: Vec<StreamBatcher> = streams
        .iter()
        .map(|s| StreamBatcher::new(&header, s, 3))
        .collect();
    for row in rows {
        let batcher = &mut batchers[row.stream];
        batcher.push(row)?;
        if batcher.is_full() {
            writer.write_batch(row.stream, &batcher.finish_batch()?)?;
        }
    }
    for (i, batcher) in batchers.iter_mut().enumerate() {
        if !batcher.is_empty() {
            writer.write_batch(i, &batcher.finish_batch()?)?;
        }
    }
    Ok(())
}

fn all_rows() -> Vec<FrameBuf> {
    let mut rows = Vec::new();
    for i in 0..10 {
        rows.push(nav_row(i));
        if i < 7 {
            rows.push(event_row(i));
        }
    }
    rows
}

fn attrs_as_strings(attrs: HashMap<String, AttrValue>) -> HashMap<String, String> {
    attrs
        .into_iter()
        .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_owned())))
        .collect()
}

fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn f64s(raw: &[u8]) -> Vec<f64> {
    raw.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn every_value_type_and_attribute_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.h5");
    let streams = streams();
    let mut writer = Hdf5Writer::create(&path, &header(), &streams, &small_options()).unwrap();
    assert_eq!(writer.path(), path);
    write_rows(&mut writer, &streams, &all_rows()).unwrap();
    assert_eq!(writer.rows(0), Some(10));
    assert_eq!(writer.rows(1), Some(7));
    assert_eq!(writer.rows(2), Some(0));
    assert_eq!(writer.rows(3), None);
    // Only the temporary file exists until the writer finishes.
    let names = dir_names(dir.path());
    assert!(
        names.len() == 1 && names[0].starts_with(".out.h5.") && names[0].ends_with(".partial"),
        "{names:?}"
    );
    writer.finish().unwrap();
    assert_eq!(dir_names(dir.path()), ["out.h5"]);

    let file = File::open(&path).unwrap();

    // Root attributes.
    let root = attrs_as_strings(file.root().attrs().unwrap());
    assert_eq!(root["recfmt.format"], "memory");
    assert_eq!(root["recfmt.version"], "7");
    assert_eq!(root["recfmt.time_system"], "UTC");
    assert!(
        root["recfmt.epoch"].starts_with("2020-01-01T00:00:00"),
        "{}",
        root["recfmt.epoch"]
    );
    assert_eq!(root["source.generator"], "unit test");
    assert_eq!(root["source.file"], "in.rec");
    assert_eq!(root["source.scenario"], "overridden");
    assert!(matches!(
        file.root().attrs().unwrap()["recfmt.format"],
        AttrValue::VarLenString(_)
    ));

    let mut groups = file.root().groups().unwrap();
    groups.sort();
    assert_eq!(groups, ["EVENTS", "raw", "vehicle_nav"]);

    // --- vehicle/nav ---
    let nav = file.group("vehicle_nav").unwrap();
    let attrs = attrs_as_strings(nav.attrs().unwrap());
    assert_eq!(attrs["recfmt.stream"], "vehicle/nav");
    assert_eq!(attrs["recfmt.time_column"], "t_us");
    assert_eq!(attrs["recfmt.time_base"], "1/1000000");
    assert_eq!(attrs["stream.rate_hz"], "10");
    assert!(!attrs.contains_key("recfmt.entity_column"));
    let mut names = nav.datasets().unwrap();
    names.sort();
    assert_eq!(
        names,
        ["b", "flag", "label", "m", "n", "pos_vec", "t_us", "x", "y"]
    );
    for (signal, name) in streams[0]
        .signals
        .iter()
        .zip(["t_us", "x", "y", "n", "b", "flag", "label", "pos_vec", "m"])
    {
        let ds = file.dataset(&format!("vehicle_nav/{name}")).unwrap();
        // Rows first, then the axes of a fixed shape, each held whole by every chunk.
        let axes: Vec<u64> = match &signal.shape {
            Shape::Fixed(dims) => dims.iter().map(|&d| u64::from(d)).collect(),
            _ => Vec::new(),
        };
        assert_eq!(ds.shape().unwrap(), [&[10][..], &axes].concat(), "{name}");
        assert_eq!(
            ds.chunk_shape().unwrap(),
            Some([&[4][..], &axes].concat()),
            "{name}"
        );
        assert_eq!(ds.filters(), [2, 1], "{name}: shuffle then deflate");
        let a = attrs_as_strings(ds.attrs().unwrap());
        assert_eq!(a["original_name"], signal.name);
        assert_eq!(a["dtype"], signal.dtype.name());
        assert_eq!(a.get("unit"), signal.unit.as_ref(), "{name}");
    }
    let ds = |name: &str| file.dataset(&format!("vehicle_nav/{name}")).unwrap();
    let rows = all_rows();
    let nav_rows: Vec<&FrameBuf> = rows.iter().filter(|r| r.stream == 0).collect();

    assert_eq!(
        ds("t_us").read_u64().unwrap(),
        (0..10)
            .map(|i| i * 100_000 + u64::MAX / 2)
            .collect::<Vec<_>>()
    );
    let x = ds("x").read_f32().unwrap();
    for (i, v) in x.iter().enumerate() {
        if i == 4 {
            assert!(v.is_nan());
        } else {
            assert_eq!(*v, (i as f64 * 0.1) as f32);
        }
    }
    let y = ds("y").read_f64().unwrap();
    assert_eq!(
        y,
        nav_rows
            .iter()
            .map(|r| r.values[2].as_f64().unwrap())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        ds("n").read_i32().unwrap(),
        (0..10)
            .map(|i| -i * 1000 + i32::MAX - 5000)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        ds("b").read_u8().unwrap(),
        (0..10).map(|i| 250 + i % 6).collect::<Vec<u8>>()
    );

    let flag = ds("flag");
    match flag.datatype().unwrap() {
        Datatype::Enumeration { size, members, .. } => {
            assert_eq!(size, 1);
            let names: Vec<(&str, &[u8])> = members
                .iter()
                .map(|m| (m.name.as_str(), m.value.as_slice()))
                .collect();
            assert_eq!(names, [("FALSE", &[0u8][..]), ("TRUE", &[1u8][..])]);
        }
        other => panic!("flag is {other:?}"),
    }
    assert_eq!(
        flag.read_raw().unwrap(),
        (0..10).map(|i| u8::from(i % 3 == 0)).collect::<Vec<_>>()
    );

    let label = ds("label");
    assert!(matches!(
        label.datatype().unwrap(),
        Datatype::String { size: 64, .. }
    ));
    let labels = label.read_string().unwrap();
    let expected: Vec<String> = (0..10)
        .map(|i| match i {
            5 => String::new(),
            6 => "Größe ✓".into(),
            _ => format!("row {i}"),
        })
        .collect();
    assert_eq!(labels, expected);

    // A fixed shape is trailing dataset axes: (rows, 3), chunked (4, 3), unlimited rows.
    let vec3 = ds("pos_vec");
    assert!(matches!(
        vec3.datatype().unwrap(),
        Datatype::FloatingPoint { size: 8, .. }
    ));
    assert_eq!(vec3.shape().unwrap(), [10, 3]);
    assert_eq!(vec3.chunk_shape().unwrap(), Some(vec![4, 3]));
    assert_eq!(
        vec3.maxshape().unwrap(),
        Some(vec![MaxExtent::Unlimited, MaxExtent::Fixed(3)])
    );
    assert_eq!(attrs_as_strings(vec3.attrs().unwrap())["shape"], "3");
    let values = f64s(&vec3.read_raw().unwrap());
    assert_eq!(values.len(), 30);
    for (i, row) in values.chunks(3).enumerate() {
        if i == 7 {
            assert!(row.iter().all(|v| v.is_nan()));
        } else {
            let f = i as f64;
            assert_eq!(row, [f, f + 0.5, -f]);
        }
    }

    let m = ds("m");
    assert!(matches!(
        m.datatype().unwrap(),
        Datatype::FixedPoint { size: 2, .. }
    ));
    assert_eq!(m.shape().unwrap(), [10, 2, 2]);
    let raw = m.read_raw().unwrap();
    let m_values: Vec<i16> = raw
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect();
    let expected: Vec<i16> = (0..10i16).flat_map(|i| [i, -i, 300, -300]).collect();
    assert_eq!(m_values, expected);
    assert_eq!(
        attrs_as_strings(ds("y").attrs().unwrap())["recfmt.frame"],
        "body"
    );

    // --- EVENTS ---
    let events = file.group("EVENTS").unwrap();
    let attrs = attrs_as_strings(events.attrs().unwrap());
    assert_eq!(attrs["recfmt.time_column"], "time");
    assert_eq!(attrs["recfmt.time_base"], "1/1");
    assert_eq!(attrs["recfmt.entity_column"], "id");
    let ds = |name: &str| file.dataset(&format!("EVENTS/{name}")).unwrap();
    assert_eq!(
        ds("time").read_f64().unwrap(),
        (0..7).map(|i| i as f64 * 0.25).collect::<Vec<_>>()
    );
    assert_eq!(ds("id").read_u32().unwrap(), [0, 1, 0, 1, 0, 1, 0]);
    assert_eq!(
        ds("message").read_string().unwrap(),
        (0..7).map(|i| "x".repeat(i * 9)).collect::<Vec<_>>()
    );
    assert_eq!(ds("level").read_i64().unwrap(), [-3, -2, -1, 0, 1, 2, 3]);

    // --- raw: no rows, omitted columns listed ---
    let raw = file.group("raw").unwrap();
    assert_eq!(raw.datasets().unwrap(), ["t_us"]);
    assert_eq!(file.dataset("raw/t_us").unwrap().shape().unwrap(), [0]);
    let attrs = raw.attrs().unwrap();
    assert_eq!(
        attrs["recfmt.omitted_columns"].as_strings().unwrap(),
        ["payload", "xs"]
    );
}

#[test]
fn omitted_columns_are_listed_up_front() {
    let omitted = omitted_columns(&streams());
    let names: Vec<(&str, &str)> = omitted
        .iter()
        .map(|c| (c.stream.as_str(), c.signal.as_str()))
        .collect();
    assert_eq!(names, [("raw", "payload"), ("raw", "xs")]);
}

#[test]
fn default_chunks_stay_within_65535_rows() {
    assert_eq!(Hdf5Options::default().chunk_rows, MAX_CHUNK_ROWS);
    let dir = tempfile::tempdir().unwrap();
    let header = header();
    let mut s = StreamDesc::new("s", SignalDesc::scalar("t", DType::U32), TimeBase::SECONDS);
    s.signals
        .push(SignalDesc::scalar("v", DType::F64).with_shape(Shape::Fixed(vec![2])));
    let streams = [s];
    let rows = 65_535 * 2 + 7;

    for chunk_rows in [MAX_CHUNK_ROWS, 1_000_000] {
        let path = dir.path().join(format!("chunks_{chunk_rows}.h5"));
        let options = Hdf5Options {
            chunk_rows,
            ..Hdf5Options::default()
        };
        let mut writer = Hdf5Writer::create(&path, &header, &streams, &options).unwrap();
        let mut batcher = StreamBatcher::new(&header, &streams[0], 50_000);
        for i in 0..rows {
            let row = FrameBuf {
                stream: 0,
                values: vec![
                    Value::UInt(i),
                    Value::Array(ArrayValue::F64(vec![i as f64, -(i as f64)])),
                ],
            };
            batcher.push(&row).unwrap();
            if batcher.is_full() {
                writer
                    .write_batch(0, &batcher.finish_batch().unwrap())
                    .unwrap();
            }
        }
        writer
            .write_batch(0, &batcher.finish_batch().unwrap())
            .unwrap();
        writer.finish().unwrap();

        let file = File::open(&path).unwrap();
        for (name, axes) in [("s/t", &[][..]), ("s/v", &[2][..])] {
            let ds = file.dataset(name).unwrap();
            let chunk = [&[65_535][..], axes].concat();
            assert_eq!(ds.chunk_shape().unwrap(), Some(chunk), "{name}");
            assert_eq!(ds.shape().unwrap(), [&[rows][..], axes].concat());
        }
        let t = file.dataset("s/t").unwrap().read_u32().unwrap();
        assert!(t.iter().enumerate().all(|(i, &v)| v as usize == i));
        let v = f64s(&file.dataset("s/v").unwrap().read_raw().unwrap());
        assert!(
            v.chunks(2)
                .enumerate()
                .all(|(i, p)| p == [i as f64, -(i as f64)])
        );
    }
}

/// A writer that fails or is dropped leaves neither the file nor its partial file, and a
/// file of the same name that existed before stays as it was.
#[test]
fn failures_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let header = header();
    let streams = streams();

    // Dropped before finish.
    let path = dir.path().join("dropped.h5");
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &small_options()).unwrap();
    write_rows(&mut writer, &streams, &all_rows()).unwrap();
    drop(writer);
    assert!(dir_names(dir.path()).is_empty());

    // A null integer: the error names stream, signal and row; the old file survives.
    // (An existing file is refused up front, so this one appears while the writer runs.)
    let path = dir.path().join("null.h5");
    let mut rows = all_rows();
    let row_8 = rows.iter_mut().filter(|r| r.stream == 0).nth(8).unwrap();
    row_8.values[3] = Value::Null;
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &small_options()).unwrap();
    std::fs::write(&path, b"old").unwrap();
    let err = write_rows(&mut writer, &streams, &rows).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Value { .. }), "{text}");
    assert!(
        text.contains("\"vehicle/nav\"") && text.contains("\"n\"") && text.contains("row 8"),
        "{text}"
    );
    // The writer refuses to go on.
    let again = writer.finish().unwrap_err();
    assert!(
        again.to_string().contains("earlier HDF5 write failed"),
        "{again}"
    );
    assert_eq!(dir_names(dir.path()), ["null.h5"]);
    assert_eq!(std::fs::read(&path).unwrap(), b"old");

    // A null bool.
    let path = dir.path().join("bool.h5");
    let mut rows = all_rows();
    rows[0].values[5] = Value::Null;
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &small_options()).unwrap();
    let err = write_rows(&mut writer, &streams, &rows).unwrap_err();
    assert!(
        err.to_string().contains("\"flag\"") && err.to_string().contains("row 0"),
        "{err}"
    );
    drop(writer);

    // A string longer than the width is refused, not truncated.
    let path = dir.path().join("long.h5");
    let options = Hdf5Options {
        string_width: 20,
        ..small_options()
    };
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &options).unwrap();
    let err = write_rows(&mut writer, &streams, &all_rows()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("\"EVENTS\"")
            && text.contains("\"message\"")
            && text.contains("row 3")
            && text.contains("27 bytes")
            && text.contains("string width of 20 bytes"),
        "{text}"
    );
    drop(writer);

    // A value in a column without an HDF5 form.
    let path = dir.path().join("bytes.h5");
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &small_options()).unwrap();
    let rows = vec![
        FrameBuf {
            stream: 2,
            values: vec![Value::UInt(1), Value::Null, Value::Null],
        },
        FrameBuf {
            stream: 2,
            values: vec![Value::UInt(2), Value::Bytes(vec![1, 2]), Value::Null],
        },
    ];
    let err = write_rows(&mut writer, &streams, &rows).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("\"payload\"") && text.contains("row 1") && text.contains("bytes"),
        "{text}"
    );
    drop(writer);

    // A batch that does not match its stream.
    let path = dir.path().join("mismatch.h5");
    let mut batcher = StreamBatcher::new(&header, &streams[1], 3);
    batcher.push(&event_row(1)).unwrap();
    let batch = batcher.finish_batch().unwrap();
    for (stream, expected) in [(0, "a batch has 4 columns"), (9, "the file has 3 streams")] {
        let mut writer = Hdf5Writer::create(&path, &header, &streams, &small_options()).unwrap();
        let err = writer.write_batch(stream, &batch).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        assert!(err.to_string().contains(expected), "{err}");
    }
    // Same column count, wrong types.
    let mut other = streams[1].clone();
    other.signals[3].dtype = DType::F32;
    let mut batcher = StreamBatcher::new(&header, &other, 3);
    batcher.push(&event_row(1)).unwrap();
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &small_options()).unwrap();
    let err = writer
        .write_batch(1, &batcher.finish_batch().unwrap())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("does not match the signal's dtype i64"),
        "{err}"
    );
    drop(writer);

    // Bad options fail before anything is written.
    for options in [
        Hdf5Options {
            deflate: Some(10),
            ..Hdf5Options::default()
        },
        Hdf5Options {
            string_width: 0,
            ..Hdf5Options::default()
        },
    ] {
        let err = Hdf5Writer::create(&dir.path().join("bad.h5"), &header, &streams, &options)
            .unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
    }
    // A directory that does not exist.
    let err = Hdf5Writer::create(
        &dir.path().join("missing/out.h5"),
        &header,
        &streams,
        &Hdf5Options::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");

    assert_eq!(dir_names(dir.path()), ["null.h5"]);
}

#[test]
fn uncompressed_and_mismatched_chunk_sizes_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.h5");
    let streams = streams();
    let options = Hdf5Options {
        deflate: None,
        chunk_rows: 0, // clamped to 1
        ..Hdf5Options::default()
    };
    let mut writer = Hdf5Writer::create(&path, &header(), &streams, &options).unwrap();
    write_rows(&mut writer, &streams, &all_rows()).unwrap();
    writer.finish().unwrap();
    let file = File::open(&path).unwrap();
    let ds = file.dataset("vehicle_nav/y").unwrap();
    assert!(ds.filters().is_empty());
    assert_eq!(ds.chunk_shape().unwrap(), Some(vec![1]));
    assert_eq!(ds.read_f64().unwrap().len(), 10);
    assert_eq!(
        file.dataset("EVENTS/level").unwrap().read_i64().unwrap(),
        [-3, -2, -1, 0, 1, 2, 3]
    );
}

#[test]
fn a_file_without_streams_holds_the_root_attributes() {
    fn assert_send<T: Send>() {}
    assert_send::<Hdf5Writer>();

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.h5");
    let writer =
        Hdf5Writer::create(&path, &Header::default(), &[], &Hdf5Options::default()).unwrap();
    writer.finish().unwrap();
    let file = File::open(&path).unwrap();
    assert!(file.root().groups().unwrap().is_empty());
    let root = attrs_as_strings(file.root().attrs().unwrap());
    assert_eq!(root["recfmt.format"], "");
    assert!(!root.contains_key("recfmt.time_system"));
}

#[test]
fn a_shape_axis_longer_than_a_chunk_dimension_stays_an_array_element() {
    // 70 000 exceeds the 65 535 a chunk dimension may have for every reader, so this column
    // is a 1-D dataset of HDF5 array elements, while the [2] column beside it is 2-D.
    let mut stream = StreamDesc::new(
        "scan",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    stream
        .signals
        .push(SignalDesc::scalar("ranges", DType::U8).with_shape(Shape::Fixed(vec![70_000])));
    stream
        .signals
        .push(SignalDesc::scalar("xy", DType::F32).with_shape(Shape::Fixed(vec![2])));
    let header = header();
    let streams = [stream];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.h5");
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &Hdf5Options::default()).unwrap();
    let mut batcher = StreamBatcher::new(&header, &streams[0], 16);
    for i in 0..3u64 {
        let ranges = (0..70_000u64).map(|k| (k + i) % 251);
        let row = FrameBuf {
            stream: 0,
            values: vec![
                Value::UInt(i),
                Value::Array(ArrayValue::UInt(ranges.collect())),
                Value::Array(ArrayValue::F64(vec![i as f64, -(i as f64)])),
            ],
        };
        batcher.push(&row).unwrap();
    }
    writer
        .write_batch(0, &batcher.finish_batch().unwrap())
        .unwrap();
    writer.finish().unwrap();

    let file = File::open(&path).unwrap();
    let ranges = file.dataset("scan/ranges").unwrap();
    assert_eq!(ranges.shape().unwrap(), [3]);
    match ranges.datatype().unwrap() {
        Datatype::Array { dimensions, .. } => assert_eq!(dimensions, [70_000]),
        other => panic!("ranges is {other:?}"),
    }
    let raw = ranges.read_raw().unwrap();
    assert_eq!(raw.len(), 3 * 70_000);
    assert_eq!(raw[70_000 + 250], ((250 + 1) % 251) as u8);
    let xy = file.dataset("scan/xy").unwrap();
    assert_eq!(xy.shape().unwrap(), [3, 2]);
    assert_eq!(xy.read_f32().unwrap(), [0.0, -0.0, 1.0, -1.0, 2.0, -2.0]);
}

/// Rows of the parallel-compression tests: several datasets of different element sizes,
/// a `(rows, 3)` column, text, and a second stream with a different chunk count.
fn parallel_streams() -> Vec<StreamDesc> {
    let mut imu = StreamDesc::new(
        "imu",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    imu.signals.extend([
        SignalDesc::scalar("acc", DType::F64).with_shape(Shape::Fixed(vec![3])),
        SignalDesc::scalar("temp", DType::F32),
        SignalDesc::scalar("count", DType::I64),
        SignalDesc::scalar("ok", DType::Bool),
        SignalDesc::scalar("mode", DType::Str),
    ]);
    let mut gps = StreamDesc::new(
        "gps",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    gps.signals.push(SignalDesc::scalar("sats", DType::U16));
    vec![imu, gps]
}

/// Rows of stream 0 (`imu`), then every 7th row one of stream 1 (`gps`).
fn parallel_rows(imu_rows: u64) -> Vec<FrameBuf> {
    let mut rows = Vec::new();
    for i in 0..imu_rows {
        let f = i as f64;
        rows.push(FrameBuf {
            stream: 0,
            values: vec![
                Value::UInt(1_000_000 + i * 10_000),
                // Noise-like in the low bits, so deflate has real work and chunks differ.
                Value::Array(ArrayValue::F64(vec![
                    (f * 0.01).sin(),
                    (f * 0.37).cos() * 9.81,
                    ((i * 2_654_435_761) % 1_000_003) as f64 / 7.0,
                ])),
                Value::Float(f64::from((20.0 + (f * 0.001).sin()) as f32)),
                Value::Int(i as i64 * 3 - 40_000),
                Value::Bool(i % 5 < 2),
                Value::Str(format!("mode {}", i % 13)),
            ],
        });
        if i % 7 == 0 {
            rows.push(FrameBuf {
                stream: 1,
                values: vec![Value::Float(f * 0.01), Value::UInt(4 + i % 9)],
            });
        }
    }
    rows
}

/// Writes `rows` in batches of 700 rows per stream (not a multiple of the chunk length).
fn write_parallel_file(path: &Path, rows: &[FrameBuf], compression_threads: usize) {
    let header = header();
    let streams = parallel_streams();
    let options = Hdf5Options {
        chunk_rows: 1_000,
        compression_threads,
        ..Hdf5Options::default()
    };
    let mut writer = Hdf5Writer::create(path, &header, &streams, &options).unwrap();
    let mut batchers: Vec<StreamBatcher> = streams
        .iter()
        .map(|s| StreamBatcher::new(&header, s, 700))
        .collect();
    for row in rows {
        let batcher = &mut batchers[row.stream];
        batcher.push(row).unwrap();
        if batcher.is_full() {
            writer
                .write_batch(row.stream, &batcher.finish_batch().unwrap())
                .unwrap();
        }
    }
    for (i, batcher) in batchers.iter_mut().enumerate() {
        if !batcher.is_empty() {
            writer
                .write_batch(i, &batcher.finish_batch().unwrap())
                .unwrap();
        }
    }
    writer.finish().unwrap();
}

const PARALLEL_DATASETS: [&str; 8] = [
    "imu/t_us",
    "imu/acc",
    "imu/temp",
    "imu/count",
    "imu/ok",
    "imu/mode",
    "gps/t",
    "gps/sats",
];

/// Many chunks across several datasets, compressed by worker threads: every value reads
/// back, shapes, chunks and filters are those of the single-threaded writer.
#[test]
fn parallel_compression_writes_every_value_of_many_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parallel.h5");
    // 40 full chunks of 1 000 rows and a partial one of 321 in `imu`; 5 full + 903 in `gps`.
    let imu_rows = 40_321u64;
    let rows = parallel_rows(imu_rows);
    write_parallel_file(&path, &rows, 3);

    let file = File::open(&path).unwrap();
    let imu: Vec<&FrameBuf> = rows.iter().filter(|r| r.stream == 0).collect();
    let gps: Vec<&FrameBuf> = rows.iter().filter(|r| r.stream == 1).collect();
    assert_eq!(gps.len(), 5_761);
    let column = |rows: &[&FrameBuf], k: usize| -> Vec<Value> {
        rows.iter().map(|r| r.values[k].clone()).collect()
    };

    for name in PARALLEL_DATASETS {
        let ds = file.dataset(name).unwrap();
        assert_eq!(ds.filters(), [2, 1], "{name}: shuffle then deflate");
        let (rows, axes) = match name {
            "imu/acc" => (imu_rows, vec![3]),
            n if n.starts_with("imu/") => (imu_rows, vec![]),
            _ => (gps.len() as u64, vec![]),
        };
        assert_eq!(ds.shape().unwrap(), [&[rows][..], &axes].concat(), "{name}");
        assert_eq!(
            ds.chunk_shape().unwrap(),
            Some([&[1_000][..], &axes].concat()),
            "{name}"
        );
    }
    let ds = |name: &str| file.dataset(name).unwrap();
    let uints = |v: Vec<Value>| -> Vec<u64> { v.iter().map(|x| x.as_u64().unwrap()).collect() };
    let floats = |v: Vec<Value>| -> Vec<f64> { v.iter().map(|x| x.as_f64().unwrap()).collect() };

    assert_eq!(ds("imu/t_us").read_u64().unwrap(), uints(column(&imu, 0)));
    let acc: Vec<f64> = imu
        .iter()
        .flat_map(|r| match &r.values[1] {
            Value::Array(ArrayValue::F64(v)) => v.clone(),
            other => panic!("acc is {other:?}"),
        })
        .collect();
    assert_eq!(acc.len() as u64, 3 * imu_rows);
    assert_eq!(f64s(&ds("imu/acc").read_raw().unwrap()), acc);
    let temp: Vec<f32> = floats(column(&imu, 2)).iter().map(|&v| v as f32).collect();
    assert_eq!(ds("imu/temp").read_f32().unwrap(), temp);
    let count: Vec<i64> = column(&imu, 3)
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(ds("imu/count").read_i64().unwrap(), count);
    let ok: Vec<u8> = (0..imu_rows).map(|i| u8::from(i % 5 < 2)).collect();
    assert_eq!(ds("imu/ok").read_raw().unwrap(), ok);
    let mode = ds("imu/mode").read_raw().unwrap();
    assert_eq!(mode.len() as u64, 64 * imu_rows);
    for (i, text) in mode.chunks(64).enumerate() {
        let expected = format!("mode {}", i % 13);
        assert_eq!(&text[..expected.len()], expected.as_bytes(), "row {i}");
        assert!(text[expected.len()..].iter().all(|&b| b == 0), "row {i}");
    }
    assert_eq!(ds("gps/t").read_f64().unwrap(), floats(column(&gps, 0)));
    let sats: Vec<u16> = uints(column(&gps, 1)).iter().map(|&v| v as u16).collect();
    assert_eq!(ds("gps/sats").read_u16().unwrap(), sats);
}

/// The file the worker threads help write holds exactly the values of the single-threaded
/// writer's (hdf5-pure's own filter step), and is in fact the same file byte for byte: the
/// chunks are encoded by the same code and written in the same order.
#[test]
fn parallel_compression_matches_the_sequential_writer() {
    let dir = tempfile::tempdir().unwrap();
    let rows = parallel_rows(12_345);
    let sequential = dir.path().join("sequential.h5");
    write_parallel_file(&sequential, &rows, 1);
    let seq = File::open(&sequential).unwrap();
    for threads in [2, 5] {
        let path = dir.path().join(format!("parallel_{threads}.h5"));
        write_parallel_file(&path, &rows, threads);
        let par = File::open(&path).unwrap();
        for name in PARALLEL_DATASETS {
            let (a, b) = (seq.dataset(name).unwrap(), par.dataset(name).unwrap());
            assert_eq!(a.shape().unwrap(), b.shape().unwrap(), "{name}");
            assert_eq!(a.datatype().unwrap(), b.datatype().unwrap(), "{name}");
            assert_eq!(a.read_raw().unwrap(), b.read_raw().unwrap(), "{name}");
            assert_eq!(a.attrs().unwrap(), b.attrs().unwrap(), "{name}");
        }
        assert!(
            std::fs::read(&sequential).unwrap() == std::fs::read(&path).unwrap(),
            "{threads} compression threads: the file differs from the sequential writer's"
        );
    }
}

/// A writer dropped (or failing) while its workers hold chunks stops them and leaves no file.
#[test]
fn parallel_compression_dropped_or_failed_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let header = header();
    let streams = parallel_streams();
    let options = Hdf5Options {
        chunk_rows: 100,
        compression_threads: 4,
        ..Hdf5Options::default()
    };
    let mut rows = parallel_rows(5_000);

    let path = dir.path().join("dropped.h5");
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &options).unwrap();
    let mut batcher = StreamBatcher::new(&header, &streams[0], 5_000);
    for row in rows.iter().filter(|r| r.stream == 0) {
        batcher.push(row).unwrap();
    }
    writer
        .write_batch(0, &batcher.finish_batch().unwrap())
        .unwrap();
    drop(writer);
    assert!(dir_names(dir.path()).is_empty());

    // A null integer after many chunks were handed to the workers.
    let path = dir.path().join("null.h5");
    let row = rows
        .iter_mut()
        .filter(|r| r.stream == 0)
        .nth(4_321)
        .unwrap();
    row.values[3] = Value::Null;
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &options).unwrap();
    let mut batcher = StreamBatcher::new(&header, &streams[0], 5_000);
    for row in rows.iter().filter(|r| r.stream == 0) {
        batcher.push(row).unwrap();
    }
    let err = writer
        .write_batch(0, &batcher.finish_batch().unwrap())
        .unwrap_err();
    assert!(
        matches!(&err, Error::Value { signal, message, .. } if signal == "count" && message.contains("row 4321")),
        "{err}"
    );
    assert!(writer.finish().is_err());
    assert!(dir_names(dir.path()).is_empty());
}
