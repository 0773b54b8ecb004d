//! Writes the seed corpus `fuzz/corpus/<target>/` from the generated fixtures
//! (`tests/fixtures`), the third-party samples (`../shared/samples`, or `RECFMT_SAMPLES`) and
//! the crates' own generators, cut down to a few records each so the committed corpus stays
//! small: `cargo run -p recfmt-fuzz --example make_seeds`.
//!
//! `cargo xtask fuzz` keeps what libFuzzer finds in `fuzz/target/corpus/` (not committed); only
//! the seeds written here are committed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

fn main() -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let fuzz = root.join("fuzz");
    let samples = std::env::var_os("RECFMT_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/samples"));
    let corpus = fuzz.join("corpus");
    let fixtures = root.join("tests/fixtures/generated");
    let seeds = Seeds { corpus: &corpus };
    usvlog(&seeds, &fixtures)?;
    icarec(&seeds, &fixtures)?;
    carla(&seeds, &samples)?;
    fgtape(&seeds, &samples)?;
    nanover(&seeds, &samples)?;
    Ok(())
}

struct Seeds<'a> {
    corpus: &'a Path,
}

impl Seeds<'_> {
    fn put(&self, target: &str, name: &str, bytes: &[u8]) -> Result<()> {
        let dir = self.corpus.join(target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(name), bytes)?;
        eprintln!("{target}/{name}: {} bytes", bytes.len());
        Ok(())
    }
}

/// The first `records` records of a `timeseries.bin` (header kept), cut at a record boundary.
fn usvlog_head(bytes: &[u8], records: usize) -> &[u8] {
    let mut at = recfmt_tlv::HEADER_LEN;
    for _ in 0..records {
        let Some(head) = bytes.get(at..at + recfmt_tlv::RECORD_HEADER_LEN) else {
            break;
        };
        let len = usize::from(u16::from_le_bytes([head[10], head[11]]));
        let end = at + recfmt_tlv::RECORD_HEADER_LEN + len;
        if end > bytes.len() {
            break;
        }
        at = end;
    }
    &bytes[..at]
}

fn usvlog(seeds: &Seeds, fixtures: &Path) -> Result<()> {
    let dir = fixtures.join("usvlog");
    for session in ["all_types", "unknown_types"] {
        let bytes = std::fs::read(dir.join(session).join("timeseries.bin"))?;
        seeds.put("usvlog_records", session, usvlog_head(&bytes, 40))?;
        // `usvlog_batches`: one knob byte (block size, batch capacity), then the records:
        // enough of them for batches of a few rows to fill in the middle of blocks.
        for knobs in [0x00u8, 0x07, 0x0f, 0x11, 0x23, 0x5a, 0xff] {
            let input = [&[knobs][..], usvlog_head(&bytes, 300)].concat();
            seeds.put("usvlog_batches", &format!("{session}_{knobs:02x}"), &input)?;
        }
        seeds.put(
            "usvlog_meta",
            &format!("{session}.json"),
            &std::fs::read(dir.join(session).join("meta.json"))?,
        )?;
    }
    // The torn tail: a few complete records, then 5 bytes of the next.
    let bytes = std::fs::read(dir.join("all_types/timeseries.bin"))?;
    let head = usvlog_head(&bytes, 6);
    seeds.put("usvlog_records", "torn", &bytes[..head.len() + 5])?;
    let torn = [&[0x31][..], &bytes[..head.len() + 5]].concat();
    seeds.put("usvlog_batches", "torn_31", &torn)?;
    seeds.put(
        "usvlog_layouts",
        "unknown_types.toml",
        &std::fs::read(dir.join("unknown_types/layouts.toml"))?,
    )?;
    seeds.put(
        "usvlog_layouts",
        "battery.json",
        br#"{"records": [{"id": 42, "name": "REC_BATTERY", "fields": [
  {"name": "voltage", "type": "f32", "unit": "V"},
  {"name": "cells", "type": "u16", "count": 4},
  {"pad": 2},
  {"name": "ok", "type": "bool"},
  {"name": "t", "type": "f64"}, {"name": "n", "type": "i64"}, {"name": "m", "type": "u8"}
]}]}"#,
    )?;
    Ok(())
}

fn icarec(seeds: &Seeds, fixtures: &Path) -> Result<()> {
    use recfmt_icarec::{IcarecRecording, IcarusH5Options, write_icarus_h5};
    let dir = fixtures.join("icarec");
    for rec in ["all_types", "empty_static"] {
        seeds.put(
            "icarec_schema",
            &format!("{rec}.json"),
            &std::fs::read(dir.join(format!("{rec}.icarec/schema.json")))?,
        )?;
    }
    // Frames of the all-types schema (the fixed schema of the target): 216 bytes each.
    let dynamic = std::fs::read(dir.join("all_types.icarec/dynamic_signals.bin"))?;
    let stride = dynamic.len() / 200;
    seeds.put("icarec_frames", "four_frames", &dynamic[..4 * stride])?;
    seeds.put("icarec_frames", "torn", &dynamic[..2 * stride + 9])?;
    let mut nan = dynamic[..2 * stride].to_vec();
    nan[stride..stride + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    seeds.put("icarec_frames", "nan_time", &nan)?;

    // An Icarus HDF5 file of three frames, written by this crate.
    let tmp = std::env::temp_dir().join(format!("recfmt-seeds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    recfmt_icarec::generate::write_all_types(&tmp.join("small.icarec"), 3)?;
    let mut rec = IcarecRecording::open(&tmp.join("small.icarec"), &Default::default())?;
    let h5 = tmp.join("small.h5");
    let options = IcarusH5Options {
        chunk_rows: Some(4),
        deflate: None,
    };
    write_icarus_h5(&mut rec, &h5, &options)?;
    seeds.put("icarus_hdf5", "three_frames.h5", &std::fs::read(&h5)?)?;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}

/// The header and first `frames` frames of a recorder file, cut at a packet boundary.
fn carla_head(bytes: &[u8], frames: usize) -> Result<Vec<u8>> {
    use recfmt_carla::{PacketKind, RawPacket, Reader};
    let flavour = {
        let mut reader = Reader::new(bytes);
        reader.read_header()?;
        reader.detect_flavour()?
    };
    let frame_end = flavour
        .id_of(PacketKind::FrameEnd)
        .context("every flavour has FrameEnd")?;
    let mut reader = Reader::new(bytes).with_flavour(Some(flavour));
    reader.read_header()?;
    let mut raw = RawPacket::default();
    let mut seen = 0;
    while reader.read_raw_packet(&mut raw)? {
        if raw.id == frame_end {
            seen += 1;
            if seen == frames {
                let end = raw.offset as usize + recfmt_carla::PACKET_HEADER_LEN + raw.body.len();
                return Ok(bytes[..end].to_vec());
            }
        }
    }
    Ok(bytes.to_vec())
}

fn carla(seeds: &Seeds, samples: &Path) -> Result<()> {
    use recfmt_carla::{
        Flavour, FrameStart, Header, Packet, Position, Vector3, VectorWidth, Writer,
    };
    for name in [
        "sr_0910_DistanceBetweenVehicles.log",
        "sr_0913_DistanceToLaneCenter.log",
    ] {
        let bytes = std::fs::read(samples.join("carla").join(name))?;
        seeds.put("carla_packets", name, &carla_head(&bytes, 3)?)?;
    }
    // A one-frame recording of every flavour.
    for flavour in Flavour::ALL {
        let v = |x: f64, y: f64, z: f64| match flavour.vector_width() {
            VectorWidth::F32 => Vector3::F32([x as f32, y as f32, z as f32]),
            VectorWidth::F64 => Vector3::F64([x, y, z]),
        };
        let mut writer = Writer::new(Vec::new(), flavour);
        writer.write_header(&Header::new("Town01", 1_637_676_528))?;
        writer.write_packet(&Packet::FrameStart(FrameStart {
            id: 1,
            duration_this: 0.05,
            elapsed: 0.0,
        }))?;
        writer.write_packet(&Packet::Position(vec![Position {
            database_id: 24,
            location: v(100.0, 200.0, 0.5),
            rotation: v(0.0, 0.0, 90.0),
        }]))?;
        writer.write_packet(&Packet::FrameEnd)?;
        seeds.put(
            "carla_packets",
            &format!("one_frame_{}", flavour.name()),
            &writer.into_inner()?,
        )?;
    }
    Ok(())
}

fn fgtape(seeds: &Seeds, samples: &Path) -> Result<()> {
    use recfmt_fgtape::normal::{NormalTape, RawData};
    for name in [
        "fg2.11.0-dr400-jsbsim-normal.fgtape",
        "fg2020.3.16-c172p-normal-mp-short.fgtape",
    ] {
        let tape = NormalTape::open(samples.join("fgtape").join(name))?;
        seeds.put(
            "fgtape_props",
            &format!("{name}.meta.xml"),
            tape.header.meta.text().as_bytes(),
        )?;
        seeds.put(
            "fgtape_props",
            &format!("{name}.config.xml"),
            tape.header.config.text().as_bytes(),
        )?;
        // Two frames per container, written decompressed (what FlightGear's gzread also
        // accepts) so that mutations reach the containers and not only the deflate stream.
        let rs = tape.header.record_size();
        let mut small = tape.clone();
        for data in &mut small.raw_data {
            let frames: Vec<_> = data.frames.iter().take(2).cloned().collect();
            *data = RawData::new(frames, rs);
        }
        seeds.put("fgtape_tape", name, &small.to_decompressed_bytes()?)?;
        if name.starts_with("fg2020") {
            let gz = small.write_gzip(Vec::new())?;
            seeds.put("fgtape_tape", &format!("{name}.gz"), &gz)?;
        }
    }
    Ok(())
}

/// The header and first `records` records of a `.traj`/`.state` (version 2), rewritten.
fn nanover_head(
    bytes: &[u8],
    kind: recfmt_nanover::FileKind,
    records: usize,
) -> Result<(Vec<u8>, Vec<Vec<u8>>)> {
    use recfmt_nanover::io::{Reader, Record, Writer};
    let mut reader = Reader::new(bytes, kind);
    let version = reader.read_header()?;
    let mut writer = Writer::new(Vec::new(), kind, version)?;
    let mut record = Record::default();
    let mut payloads = Vec::new();
    while payloads.len() < records && reader.read_record(&mut record)? {
        writer.write_record(record.timestamp, &record.payload)?;
        payloads.push(record.payload.clone());
    }
    Ok((writer.finish()?, payloads))
}

fn nanover(seeds: &Seeds, samples: &Path) -> Result<()> {
    use recfmt_nanover::FileKind;
    let (traj, state) = recfmt_nanover::generate::small_recording_bytes()?;
    seeds.put("nanover_records", "small.traj", &traj)?;
    seeds.put("nanover_records", "small.state", &state)?;
    let (_, frames) = nanover_head(&traj, FileKind::Trajectory, 3)?;
    let (_, updates) = nanover_head(&state, FileKind::State, 3)?;
    for (i, p) in frames.iter().enumerate() {
        seeds.put("nanover_protobuf", &format!("small_frame_{i}"), p)?;
    }
    for (i, p) in updates.iter().enumerate() {
        seeds.put("nanover_protobuf", &format!("small_state_{i}"), p)?;
    }
    let server = samples.join("nanover/server-py");
    let (head, payloads) = nanover_head(
        &std::fs::read(server.join("17-ala-recording-multiple.traj"))?,
        FileKind::Trajectory,
        2,
    )?;
    if head.len() < 64 << 10 {
        seeds.put("nanover_records", "17-ala.traj", &head)?;
    }
    if let Some(p) = payloads.iter().find(|p| p.len() < 64 << 10) {
        seeds.put("nanover_protobuf", "17-ala_frame", p)?;
    }
    seeds.put(
        "nanover_records",
        "17-ala.state",
        &std::fs::read(server.join("17-ala-recording-multiple.state"))?,
    )?;

    // A .nanover.zip of the small recording, as this crate writes it, and its members.
    let tmp = std::env::temp_dir().join(format!("recfmt-seeds-nv-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    std::fs::write(tmp.join("small.traj"), &traj)?;
    std::fs::write(tmp.join("small.state"), &state)?;
    let zip_path = tmp.join("small.nanover.zip");
    recfmt_nanover::write_zip(
        &tmp.join("small.traj"),
        Some(&tmp.join("small.state")),
        &zip_path,
    )?;
    let zip_bytes = std::fs::read(&zip_path)?;
    seeds.put("nanover_zip", "small.nanover.zip", &zip_bytes)?;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&zip_bytes))?;
    let mut member = |name: &str| -> Result<Vec<u8>> {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut archive.by_name(name)?, &mut out)?;
        Ok(out)
    };
    let mut joined = member("index.msgpack")?;
    joined.extend_from_slice(b"\xc1MSG\xc1");
    joined.extend_from_slice(&member("messages.msgpack")?);
    seeds.put("nanover_msgpack", "small", &joined)?;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}
