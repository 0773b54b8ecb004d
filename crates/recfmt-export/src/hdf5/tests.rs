//! Unit tests of the HDF5 writer's buffers and layout rules.

use recfmt_core::{DType, Header, Shape, SignalDesc, StreamDesc};

use super::layout::{Layout, layout, link_name, unique_link_names};
use super::*;

/// The chunk buffer capacities of every stored column, in bytes.
fn pending_capacities(writer: &Hdf5Writer) -> Vec<usize> {
    let open = writer.open.as_ref().unwrap();
    open.streams
        .iter()
        .flat_map(|s| &s.columns)
        .filter_map(|c| match c {
            Column::Stored(c) => Some(c.buffer.capacity()),
            Column::Omitted { .. } => None,
        })
        .collect()
}

#[test]
fn chunk_buffers_grow_with_the_rows_seen() {
    use recfmt_core::{FrameBuf, TimeBase, Value};
    let mut nav = StreamDesc::new(
        "NAV",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    nav.signals.push(SignalDesc::scalar("x", DType::F32));
    let header = Header {
        format: "memory",
        ..Header::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.h5");
    let streams = [nav];
    let options = Hdf5Options {
        compression_threads: 1,
        ..Hdf5Options::default()
    };
    let mut writer = Hdf5Writer::create(&path, &header, &streams, &options).unwrap();
    let mut batcher = crate::StreamBatcher::new(&header, &streams[0], 100_000);
    let mut rows = 0u64;
    let mut write = |writer: &mut Hdf5Writer, n: u64| {
        for _ in 0..n {
            let row = FrameBuf {
                stream: 0,
                values: vec![Value::UInt(rows), Value::Float(0.5)],
            };
            batcher.push(&row).unwrap();
            rows += 1;
        }
        writer
            .write_batch(0, &batcher.finish_batch().unwrap())
            .unwrap();
    };
    // One row holds a few bytes per column, not a whole chunk (65 535 rows: 512 KiB for
    // the times), which 5000 one-row streams multiplied into gigabytes.
    write(&mut writer, 1);
    let held = pending_capacities(&writer);
    assert!(held.iter().all(|&c| c <= 64), "{held:?}");
    // A thousand rows: doubled as they came, within twice what they need.
    write(&mut writer, 999);
    let held = pending_capacities(&writer);
    assert!(held[0] >= 8000 && held[0] <= 16_000, "{held:?}");
    assert!(held[1] >= 4000 && held[1] <= 8000, "{held:?}");
    // Never past one chunk.
    write(&mut writer, 100_000);
    let held = pending_capacities(&writer);
    assert!(held[0] <= MAX_CHUNK_ROWS * 8, "{held:?}");
    assert!(held[1] <= MAX_CHUNK_ROWS * 4, "{held:?}");
    writer.finish().unwrap();
    let file = hdf5_pure::File::open(&path).unwrap();
    let x = file.dataset("NAV/x").unwrap().read_f32().unwrap();
    assert_eq!(x.len(), 101_000);
    assert!(x.iter().all(|&v| v == 0.5));
}

#[test]
fn link_names_are_sanitized_and_unique() {
    let names = unique_link_names(
        [
            "/position/altitude-ft",
            "position_altitude-ft",
            "x",
            "",
            ".",
            "..",
            "a\0b",
        ]
        .into_iter(),
    );
    assert_eq!(
        names,
        [
            "position_altitude-ft",
            "position_altitude-ft_2",
            "x",
            "_",
            "__2",
            "__3",
            "a_b"
        ]
    );
    assert_eq!(link_name("/"), "_");
}

#[test]
fn chunks_shrink_for_wide_rows() {
    let wide = SignalDesc::scalar("m", DType::F64).with_shape(Shape::Fixed(vec![64, 64]));
    let Layout::Stored(l) = layout(&wide, 64, MAX_CHUNK_ROWS) else {
        panic!("stored");
    };
    assert_eq!(l.row_bytes, 64 * 64 * 8);
    assert_eq!(l.chunk_rows, 128);
    let narrow = SignalDesc::scalar("x", DType::F64);
    let Layout::Stored(l) = layout(&narrow, 64, MAX_CHUNK_ROWS) else {
        panic!("stored");
    };
    assert_eq!(l.chunk_rows, MAX_CHUNK_ROWS);
}
