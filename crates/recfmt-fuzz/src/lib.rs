//! The bodies of recfmt's fuzz targets.
//!
//! Every `fuzz/fuzz_targets/<name>.rs` (cargo-fuzz's own workspace) is one line that hands
//! libFuzzer's input to the function of the same name here, so the same bodies also run under
//! the main workspace's plain `cargo test`, which replays `fuzz/corpus/<name>/` and
//! `fuzz/regressions/<name>/` through them (`tests/replay.rs`) without libFuzzer. How to fuzz:
//! `docs/RELIABILITY.md`.
//!
//! A body feeds the bytes to a reader the way the `recfmt` tool does and reads everything it
//! yields. Errors are the expected answer to most inputs and are ignored; what a body must
//! never do is panic, loop without end or allocate without bound, and those are what libFuzzer
//! reports. Where the crate has a writer, a body that decoded something also writes it back,
//! decodes that again and asserts the two decodings agree (compared as re-encoded bytes, so a
//! NaN equals itself).
//!
//! Readers that only open paths (ICAREC directories, Icarus HDF5, FlightGear's adapter) get
//! the input through a file in a per-process scratch directory.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use prost::Message;
use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};

/// A harness body: one fuzz input, panics on a defect.
pub type Body = fn(&[u8]);

/// Every target: (name, body). `fuzz_targets/<name>.rs` calls the body; the replay test and
/// `cargo xtask fuzz` list targets from here.
pub const TARGETS: &[(&str, Body)] = &[
    ("usvlog_records", usvlog_records),
    ("usvlog_batches", usvlog_batches),
    ("usvlog_meta", usvlog_meta),
    ("usvlog_layouts", usvlog_layouts),
    ("icarec_schema", icarec_schema),
    ("icarec_frames", icarec_frames),
    ("icarus_hdf5", icarus_hdf5),
    ("carla_packets", carla_packets),
    ("fgtape_props", fgtape_props),
    ("fgtape_tape", fgtape_tape),
    ("nanover_records", nanover_records),
    ("nanover_protobuf", nanover_protobuf),
    ("nanover_msgpack", nanover_msgpack),
    ("nanover_zip", nanover_zip),
];

/// Most rows a body reads from one generic-model reader. Inputs are at most a few hundred KiB
/// and every row consumes input bytes, so a reader that needs more is looping.
const MAX_ROWS: usize = 1 << 20;

/// Time windows `[start, end)` a body reads besides the whole recording: around the times
/// generated and sample recordings use, before and past them, empty, backwards, NaN.
const WINDOWS: [(f64, f64); 6] = [
    (0.0, 1.0),
    (1.0, 1e3),
    (-1.0, 1e9),
    (1e6, f64::INFINITY),
    (0.5, 0.25),
    (f64::NAN, f64::NAN),
];

/// Reads [`WINDOWS`] through readers `open` makes anew: each seeks to the start (a binary
/// search that parses whatever bytes its probes land on, for USVLOG, CARLA and FlightGear),
/// stops at the end, and is read to its end. Panics if one never ends.
fn drain_windows<'a>(open: impl Fn() -> Option<Box<dyn RecordingReader + 'a>>) {
    for (start, end) in WINDOWS {
        let Some(mut reader) = open() else {
            return;
        };
        if reader.seek_time(start).is_err() {
            continue;
        }
        reader.stop_time(end);
        drain(reader.as_mut());
    }
}

/// Reads every row of a generic-model reader; panics if it never ends.
fn drain(reader: &mut dyn RecordingReader) {
    let mut row = FrameBuf::default();
    for _ in 0..MAX_ROWS {
        match reader.read_frame(&mut row) {
            Ok(true) => {}
            Ok(false) | Err(_) => return,
        }
    }
    panic!("a reader yielded {MAX_ROWS} rows without ending");
}

/// A scratch directory of this process, for readers that open paths.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("recfmt-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory under the temp dir");
        dir
    })
}

/// Writes `bytes` to `name` in the scratch directory and returns the path.
fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, bytes).expect("a scratch file");
    path
}

// ---------------------------------------------------------------------------------------------
// USVLOG

/// `timeseries.bin`: the raw record reader (records → writer → reader: the same records), and
/// the generic adapter with the built-in layouts, with and without resync.
pub fn usvlog_records(data: &[u8]) {
    use recfmt_tlv::io::{Reader, Writer};
    use recfmt_tlv::{FileHeader, Record, UsvlogRecording};

    fn read_all(bytes: &[u8]) -> Option<(FileHeader, Vec<Record>)> {
        let mut reader = Reader::new(bytes);
        let header = reader.read_header().ok()?;
        let mut records = Vec::new();
        let mut record = Record::default();
        while let Ok(true) = reader.read_record(&mut record) {
            records.push(record.clone());
            assert!(records.len() <= bytes.len(), "more records than bytes");
        }
        Some((header, records))
    }

    if let Some((header, records)) = read_all(data) {
        let mut writer = Writer::new(Vec::new());
        writer
            .write_header(&header)
            .expect("a header that was read writes");
        for r in &records {
            writer
                .write_record(r)
                .expect("a record that was read writes");
        }
        let copy = writer.into_inner().expect("a Vec sink");
        let (header2, records2) = read_all(&copy).expect("a written file reads");
        assert_eq!(header, header2);
        assert_eq!(records, records2, "records differ after a round trip");
    }

    for resync in [false, true] {
        let options = ReadOptions {
            resync,
            ..ReadOptions::default()
        };
        if let Ok(mut rec) = UsvlogRecording::new(data, None, &[], &options, None) {
            drain(&mut rec);
        }
        drain_windows(|| {
            let rec = UsvlogRecording::new_seekable(
                std::io::Cursor::new(data),
                None,
                &[],
                &options,
                None,
            )
            .ok()?;
            Some(Box::new(rec))
        });
    }
}

/// The USVLOG batch path with a decoding thread against the same path on the caller's thread
/// alone, call for call, on the same bytes: every `read_batches` must answer the same
/// (`Ok(true)`, `Ok(false)` or the same error text) and hand out the same batches, and the
/// integrity reports must agree. The first input byte picks the block size (1 to 916 bytes,
/// so that a small input holds many block boundaries) and the batch capacity (1 to 46 rows);
/// the rest is the `timeseries.bin`, read with the built-in layouts.
pub fn usvlog_batches(data: &[u8]) {
    let Some(&knobs) = data.first() else {
        return;
    };
    let (block_bytes, capacity) = usvlog_batch_knobs(knobs);
    let alone = usvlog_batch_run(data, 0);
    let beside = usvlog_batch_run(data, 1);
    match (&alone, &beside) {
        (Some(a), Some(b)) => {
            if let Some(i) =
                (0..a.calls.len().max(b.calls.len())).find(|&i| a.calls.get(i) != b.calls.get(i))
            {
                panic!(
                    "call {i} differs with a decoding thread (blocks of {block_bytes} bytes, \
                     batches of {capacity} rows)\nalone:  {:?}\nbeside: {:?}",
                    a.calls.get(i),
                    b.calls.get(i)
                );
            }
            assert_eq!(
                a.integrity, b.integrity,
                "integrity differs with a decoding thread"
            );
        }
        _ => assert_eq!(alone.is_some(), beside.is_some(), "opened on one path only"),
    }
}

/// What one read of a [`usvlog_batches`] input answered: each `read_batches` call's result
/// and the batches it handed out, as Debug text (so that a NaN read from the input equals
/// itself), the integrity report, and how many blocks were decoded on a thread.
#[derive(Debug)]
pub struct BatchRun {
    /// One line per call.
    pub calls: Vec<String>,
    /// The integrity report at the end.
    pub integrity: String,
    /// Blocks decoded on a decoding thread (0 on the caller's thread alone).
    pub blocks_on_threads: u64,
}

/// Reads a [`usvlog_batches`] input (its knob byte, then a `timeseries.bin`) through the batch
/// path with `threads` decoding threads; `None` when it does not open.
pub fn usvlog_batch_run(input: &[u8], threads: usize) -> Option<BatchRun> {
    use recfmt_core::BatchSet;
    use recfmt_tlv::UsvlogRecording;

    let (&knobs, data) = input.split_first()?;
    let (block_bytes, capacity) = usvlog_batch_knobs(knobs);
    let mut rec = UsvlogRecording::new(data, None, &[], &ReadOptions::default(), None).ok()?;
    rec.set_decode_threads(threads);
    rec.set_block_bytes(block_bytes);
    let mut dst = BatchSet::new(rec.schema(), capacity);
    let mut calls = Vec::new();
    for _ in 0..MAX_ROWS {
        let result = rec.read_batches(&mut dst).map_err(|e| e.to_string());
        let more = matches!(result, Ok(true));
        calls.push(format!("{result:?} {:?}", dst.take_ready(more)));
        if !more {
            return Some(BatchRun {
                calls,
                integrity: format!("{:?}", rec.integrity()),
                blocks_on_threads: rec.blocks_decoded_in_parallel(),
            });
        }
    }
    panic!("read_batches returned true {MAX_ROWS} times without ending");
}

/// The block size in bytes (1 to 916, so that a small input holds many block boundaries) and
/// the batch capacity in rows (1 to 46) that the first byte of a [`usvlog_batches`] input
/// stands for.
fn usvlog_batch_knobs(knobs: u8) -> (usize, usize) {
    (
        1 + usize::from(knobs & 0x0f) * 61,
        1 + usize::from(knobs >> 4) * 3,
    )
}

/// `meta.json`: parsing, the typed accessors, and the layout table its catalog resolves to.
pub fn usvlog_meta(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(meta) = recfmt_tlv::Meta::parse(text.to_string()) else {
        return;
    };
    let _ = meta.fw_model_id();
    let _ = meta.fw_model_schema();
    let _ = meta.record_counts();
    let _ = meta.event_count();
    let _ = meta.flattened();
    if let Ok(catalog) = meta.record_catalog() {
        let table = recfmt_tlv::LayoutTable::resolve(catalog.as_ref(), &[]);
        for layout in table.layouts() {
            let _ = layout.signals();
        }
    }
}

/// User layout files (TOML or JSON): parsing, compiling, and every layout decoding a payload
/// of its size and encoding the values back to the same bytes.
pub fn usvlog_layouts(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for name in ["layouts.toml", "layouts.json"] {
        let Ok(layouts) = recfmt_tlv::parse_layouts(text, name) else {
            continue;
        };
        let table = recfmt_tlv::LayoutTable::resolve(None, &layouts);
        for layout in table.layouts() {
            let size = layout.size();
            if size > 1 << 20 {
                continue;
            }
            // A payload of the layout's size with a recognisable pattern (no NaN bit patterns
            // in 0..=250 bytes read as floats, so values compare equal after encoding).
            let payload: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let compiled = layout.compile();
            let mut values = vec![recfmt_core::Value::Null; 1 + compiled.len()];
            // Too short a payload decodes nothing.
            assert!(size == 0 || !layout.decode_into(&payload[..size - 1], &mut values[1..]));
            if layout.decode_into(&payload, &mut values[1..]) {
                let mut out = Vec::new();
                if layout.encode(&values[1..], &mut out).is_ok() {
                    let mut again = vec![recfmt_core::Value::Null; values.len() - 1];
                    assert!(
                        layout.decode_into(&out, &mut again),
                        "encoded payload decodes"
                    );
                    assert_eq!(&values[1..], &again[..], "layout round trip");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ICAREC and Icarus HDF5

/// `schema.json`: parsing and layout (offsets, sizes), the checksum, and written text that
/// parses back to the same document.
pub fn icarec_schema(data: &[u8]) {
    use recfmt_icarec::{Schema, SchemaOptions, schema_checksum};
    let path = Path::new("schema.json");
    for skip_unknown_types in [false, true] {
        let options = SchemaOptions {
            skip_unknown_types,
            max_signals: Some(100_000),
            max_payload: Some(64 << 20),
        };
        let Ok((schema, raw)) = Schema::parse(data, path, &options) else {
            continue;
        };
        let _ = schema_checksum(&raw);
        let _ = schema.doc().compute_checksum();
        if let Ok(text) = schema.doc().to_json_text() {
            let (again, _) = Schema::parse(text.as_bytes(), path, &options)
                .expect("a schema this crate wrote parses");
            assert_eq!(
                schema.doc().to_json_text().ok(),
                again.doc().to_json_text().ok(),
                "schema round trip"
            );
        }
    }
}

/// The frames of a recording: the input is `dynamic_signals.bin` of the generated all-types
/// recording (its schema and statics are fixed), opened as a directory and read through the
/// generic adapter, strict and lenient.
pub fn icarec_frames(data: &[u8]) {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = scratch().join("frames.icarec");
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        std::fs::write(
            dir.join("schema.json"),
            include_bytes!("../../../tests/fixtures/generated/icarec/all_types.icarec/schema.json"),
        )
        .expect("schema.json");
        std::fs::write(
            dir.join("static_signals.bin"),
            include_bytes!(
                "../../../tests/fixtures/generated/icarec/all_types.icarec/static_signals.bin"
            ),
        )
        .expect("static_signals.bin");
        dir
    });
    std::fs::write(dir.join("dynamic_signals.bin"), data).expect("dynamic_signals.bin");
    for strict in [false, true] {
        let options = recfmt_icarec::OpenOptions {
            read: ReadOptions {
                strict,
                ..ReadOptions::default()
            },
            ..Default::default()
        };
        if let Ok(mut rec) = recfmt_icarec::IcarecRecording::open(dir, &options) {
            drain(&mut rec);
            let dir = rec.dir();
            for t in [f64::NEG_INFINITY, 0.0, 0.5, 1e9, f64::NAN] {
                let _ = dir.state_at(t);
            }
        }
        drain_windows(|| {
            let rec = recfmt_icarec::IcarecRecording::open(dir, &options).ok()?;
            Some(Box::new(rec))
        });
    }
}

/// Icarus's HDF5 recordings, opened from a file and read through the generic adapter.
pub fn icarus_hdf5(data: &[u8]) {
    let path = scratch_file("recording.h5", data);
    if let Ok(mut rec) = recfmt_icarec::IcarusH5Recording::open(&path, &ReadOptions::default()) {
        drain(&mut rec);
    }
    drain_windows(|| {
        let rec = recfmt_icarec::IcarusH5Recording::open(&path, &ReadOptions::default()).ok()?;
        Some(Box::new(rec))
    });
}

// ---------------------------------------------------------------------------------------------
// CARLA

/// A recorder file under every build flavour (forced) and under detection: packets decoded,
/// written back with the same flavour and decoded again to the same bytes; then the generic
/// adapter.
pub fn carla_packets(data: &[u8]) {
    use recfmt_carla::{Flavour, Packet, Reader, Writer};

    /// Header and decoded packets, and the flavour they were decoded with.
    fn read_all(
        bytes: &[u8],
        flavour: Option<Flavour>,
    ) -> Option<(recfmt_carla::Header, Vec<Packet>, Option<Flavour>)> {
        let mut reader = Reader::new(bytes).with_flavour(flavour);
        let header = reader.read_header().ok()?;
        let mut packets = Vec::new();
        let mut packet = Packet::default();
        // Every packet, good or bad, consumes at least its 5-byte header.
        for _ in 0..=bytes.len() / 5 + 1 {
            match reader.read_packet(&mut packet) {
                Ok(false) => return Some((header, packets, reader.flavour())),
                Ok(true) => packets.push(packet.clone()),
                Err(recfmt_carla::Error::Truncated { .. }) => {
                    return Some((header, packets, reader.flavour()));
                }
                Err(_) => {}
            }
        }
        panic!("the packet reader did not end");
    }

    fn write_all(
        header: &recfmt_carla::Header,
        packets: &[Packet],
        flavour: Flavour,
    ) -> Option<Vec<u8>> {
        let mut writer = Writer::new(Vec::new(), flavour);
        writer.write_header(header).ok()?;
        for p in packets {
            writer.write_packet(p).ok()?;
        }
        writer.into_inner().ok()
    }

    for forced in Flavour::ALL.map(Some).into_iter().chain([None]) {
        let Some((header, packets, flavour)) = read_all(data, forced) else {
            continue;
        };
        let Some(flavour) = flavour.or(forced) else {
            continue;
        };
        let Some(first) = write_all(&header, &packets, flavour) else {
            continue;
        };
        let (header2, packets2, _) =
            read_all(&first, Some(flavour)).expect("a written recording reads");
        assert_eq!(header, header2, "header round trip");
        assert_eq!(packets.len(), packets2.len(), "packet count round trip");
        let second = write_all(&header2, &packets2, flavour).expect("rewrites");
        assert!(
            first == second,
            "packets differ after a round trip ({flavour:?})"
        );
    }

    for forced in [None, Some(Flavour::Carla0910), Some(Flavour::Ue5)] {
        if let Ok(mut rec) =
            recfmt_carla::CarlaRecording::new(data, &ReadOptions::default(), forced)
        {
            drain(&mut rec);
        }
        drain_windows(|| {
            let source = std::io::Cursor::new(data);
            let rec =
                recfmt_carla::CarlaRecording::new_seekable(source, &ReadOptions::default(), forced)
                    .ok()?;
            Some(Box::new(rec))
        });
    }
}

// ---------------------------------------------------------------------------------------------
// FlightGear

/// SimGear property lists: parsed, written as XML and parsed back to the same tree.
pub fn fgtape_props(data: &[u8]) {
    use recfmt_fgtape::props::PropertyList;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(list) = PropertyList::parse(text) else {
        return;
    };
    let xml = list.to_xml();
    let again = PropertyList::parse(&xml).expect("written XML parses");
    assert_eq!(list, again, "property list round trip");
    if let Ok(layout) = recfmt_fgtape::signals::SignalLayout::from_config(
        &list.root,
        &recfmt_core::Limits::default(),
    ) {
        let _ = layout.record_size();
    }
}

/// Tapes: Normal tapes (gzip or decompressed: decoded, written back decompressed and decoded
/// to the same tape), Continuous/Recovery tapes (frames written back and read again), then the
/// generic adapter on the file.
pub fn fgtape_tape(data: &[u8]) {
    use recfmt_fgtape::continuous::{ContinuousFrame, Reader as CReader, Writer as CWriter};
    use recfmt_fgtape::normal::NormalTape;

    if let Ok(tape) = NormalTape::read(data) {
        let bytes = tape
            .to_decompressed_bytes()
            .expect("a tape that was read writes");
        let again = NormalTape::read(&bytes[..]).expect("a written tape reads");
        let bytes2 = again.to_decompressed_bytes().expect("rewrites");
        assert!(bytes == bytes2, "Normal tape round trip");
    }

    fn continuous_frames(
        bytes: &[u8],
    ) -> Option<(
        recfmt_fgtape::continuous::ContinuousHeader,
        Vec<ContinuousFrame>,
    )> {
        let mut reader = CReader::new(bytes).ok()?;
        let mut frames = Vec::new();
        let mut frame = ContinuousFrame::default();
        while let Ok(true) = reader.read_frame(&mut frame) {
            frames.push(frame.clone());
            assert!(frames.len() <= bytes.len(), "more frames than bytes");
        }
        Some((reader.header().clone(), frames))
    }
    if let Some((header, frames)) = continuous_frames(data)
        && let Ok(mut writer) = CWriter::new(Vec::new(), &header)
        && frames.iter().all(|f| writer.write_frame(f).is_ok())
        && let Ok(bytes) = writer.finish()
    {
        let (header2, frames2) = continuous_frames(&bytes).expect("a written tape reads");
        assert_eq!(header.data, header2.data, "Continuous header round trip");
        assert_eq!(
            frames.len(),
            frames2.len(),
            "Continuous frame count round trip"
        );
        for (a, b) in frames.iter().zip(&frames2) {
            assert_eq!(a.items, b.items, "Continuous frame round trip");
            assert_eq!(
                a.time.to_bits(),
                b.time.to_bits(),
                "Continuous time round trip"
            );
        }
    }

    let path = scratch_file("tape.fgtape", data);
    if let Ok(mut rec) = recfmt_fgtape::FgTape::open(&path, &ReadOptions::default()) {
        drain(&mut rec);
    }
    drain_windows(|| {
        let rec = recfmt_fgtape::FgTape::open(&path, &ReadOptions::default()).ok()?;
        Some(Box::new(rec))
    });
}

// ---------------------------------------------------------------------------------------------
// NanoVer

/// `.traj` and `.state` records (version 2, version 1 and detection, with and without resync):
/// every record decoded, written back and decoded again to the same messages; then the
/// generic adapter on the input as a `.traj` and as a `.state`.
pub fn nanover_records(data: &[u8]) {
    use recfmt_nanover::io::{Reader, Writer};
    use recfmt_nanover::{FileKind, NanoverRecording, Version, VersionPolicy};

    /// Timestamp and re-encoded message of one record.
    type Timed = (u128, Vec<u8>);

    /// The version and every record that decodes.
    fn read_all(
        bytes: &[u8],
        kind: FileKind,
        policy: VersionPolicy,
        resync: bool,
    ) -> Option<(Version, Vec<Timed>)> {
        let mut reader = Reader::new(bytes, kind);
        reader.set_version_policy(policy);
        reader.set_resync(resync);
        reader.set_total_len(Some(bytes.len() as u64));
        let version = reader.read_header().ok()?;
        let mut out = Vec::new();
        for _ in 0..=bytes.len() + 1 {
            let next = match kind {
                FileKind::Trajectory => {
                    let mut frame = recfmt_nanover::io::Timed::default();
                    reader
                        .read_frame(&mut frame)
                        .map(|more| more.then(|| (frame.timestamp, frame.message.encode_to_vec())))
                }
                FileKind::State => {
                    let mut update = recfmt_nanover::io::Timed::default();
                    reader.read_state(&mut update).map(|more| {
                        more.then(|| (update.timestamp, update.message.encode_to_vec()))
                    })
                }
            };
            match next {
                Ok(Some(record)) => out.push(record),
                Ok(None) | Err(_) => return Some((version, out)),
            }
        }
        panic!("the record reader did not end");
    }

    fn write_all(kind: FileKind, version: Version, records: &[Timed]) -> Vec<u8> {
        let mut writer = Writer::new(Vec::new(), kind, version).expect("a Vec sink");
        writer.set_require_increasing(false);
        for (t, payload) in records {
            match kind {
                FileKind::Trajectory => {
                    let m = recfmt_nanover::GetFrameResponse::decode(&payload[..])
                        .expect("re-encoded message decodes");
                    writer
                        .write_frame(*t, &m)
                        .expect("a frame that was read writes");
                }
                FileKind::State => {
                    let m = recfmt_nanover::StateUpdate::decode(&payload[..])
                        .expect("re-encoded message decodes");
                    writer
                        .write_state(*t, &m)
                        .expect("a state that was read writes");
                }
            }
        }
        writer.finish().expect("a Vec sink")
    }

    for kind in [FileKind::Trajectory, FileKind::State] {
        for policy in [VersionPolicy::Auto, VersionPolicy::V1] {
            for resync in [false, true] {
                let Some((version, records)) = read_all(data, kind, policy, resync) else {
                    continue;
                };
                if records.is_empty() {
                    continue;
                }
                let copy = write_all(kind, version, &records);
                let forced = match version {
                    Version::V1 => VersionPolicy::V1,
                    Version::V2 => VersionPolicy::V2,
                };
                let (_, again) =
                    read_all(&copy, kind, forced, false).expect("a written file reads");
                assert_eq!(records, again, "NanoVer records differ after a round trip");
            }
        }
    }

    let options = ReadOptions::default();
    for (traj, state) in [(Some(data), None), (None, Some(data))] {
        if let Ok(mut rec) = NanoverRecording::from_bytes(traj, state, &options) {
            drain(&mut rec);
        }
        drain_windows(|| {
            let rec = NanoverRecording::from_bytes(traj, state, &options).ok()?;
            Some(Box::new(rec))
        });
    }
}

/// One protobuf payload as each message a record can hold, folded into the frame and state
/// aggregates, converted to JSON, encoded and decoded again to the same bytes.
pub fn nanover_protobuf(data: &[u8]) {
    use recfmt_nanover::{FrameData, FrameView, GetFrameResponse, StateUpdate, StateView};

    fn round_trip<M: Message + Default>(m: &M) {
        let bytes = m.encode_to_vec();
        let again = M::decode(&bytes[..]).expect("an encoded message decodes");
        assert!(again.encode_to_vec() == bytes, "protobuf round trip");
    }

    if let Ok(frame) = GetFrameResponse::decode(data) {
        round_trip(&frame);
        let mut view = FrameView::new();
        view.apply(&frame);
        view.apply(&frame);
        let _ = view.particle_count();
        if let Some(f) = &frame.frame {
            for value in f.values.values() {
                let _ = recfmt_nanover::value_to_json_text(value);
            }
        }
    }
    if let Ok(frame) = FrameData::decode(data) {
        round_trip(&frame);
    }
    if let Ok(update) = StateUpdate::decode(data) {
        round_trip(&update);
        let mut view = StateView::default();
        view.apply(&update);
        if let Some(s) = &update.changed_keys {
            let _ = recfmt_nanover::struct_to_json(s);
        }
    }
}

/// The MessagePack members of a `.nanover.zip`: the input is `index.msgpack`, a NUL-free
/// separator `\xc1MSG\xc1` (0xc1 is never used by MessagePack), then `messages.msgpack`;
/// stored in a zip in memory and read like a recording.
pub fn nanover_msgpack(data: &[u8]) {
    const SEPARATOR: &[u8] = b"\xc1MSG\xc1";
    let (index, messages) = match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(at) => (&data[..at], &data[at + SEPARATOR.len()..]),
        None => (data, &[][..]),
    };
    let zip = stored_zip(&[("index.msgpack", index), ("messages.msgpack", messages)]);
    read_zip(&zip);
}

/// A whole `.nanover.zip`.
pub fn nanover_zip(data: &[u8]) {
    read_zip(data);
}

fn read_zip(bytes: &[u8]) {
    let limits = recfmt_core::Limits::default();
    if let Ok((events, _integrity)) =
        recfmt_nanover::nzip::read_nanover_zip(Cursor::new(bytes), &limits)
    {
        let mut view = recfmt_nanover::FrameView::new();
        for event in &events {
            if let Some(frame) = &event.frame {
                view.apply(frame);
            }
        }
    }
}

/// A zip with the given members stored (not compressed), as NanoVer writes them.
pub fn stored_zip(members: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(false);
    for (name, bytes) in members {
        zip.start_file(*name, options).expect("an in-memory zip");
        zip.write_all(bytes).expect("an in-memory zip");
    }
    zip.finish().expect("an in-memory zip").into_inner()
}
