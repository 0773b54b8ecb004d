//! What the fgtape descriptor does besides reading and writing: faithful copies (Normal,
//! Continuous and Recovery tapes), and flight tracks (KML, GPX) from any recording with
//! position signals.

use std::path::Path;

use recfmt_core::{
    Integrity, OutputSource, ReadOptions, RecordingReader, ResultExt, SpecialOutput, WriteOptions,
    Written,
};

use crate::continuous::{self, ContinuousFrame};
use crate::track::{TrackFormat, TrackOptions, Tracks};

/// A faithful copy of a tape of any kind: Normal tapes container for container, Continuous
/// and Recovery tapes byte for byte (see [`copy_continuous`]).
pub(crate) fn copy(
    source: &Path,
    target: &Path,
    options: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Copied> {
    recfmt_core::atomic::check_target(target, write.replace)?;
    if crate::adapter::starts_with_magic(source).in_file(source)? {
        copy_continuous(source, target, options, write)
    } else {
        copy_normal(source, target, write)
    }
}

/// The copy keeps the tape's three containers and every complete frame: a tape cut inside a
/// frame loses that frame (the cut container's size field set to the frames kept), one cut
/// inside its header cannot be copied.
fn copy_normal(
    source: &Path,
    target: &Path,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Copied> {
    let (tape, cut) = crate::normal::NormalTape::open_lenient(source).in_file(source)?;
    let out = recfmt_core::AtomicFile::create(target, write.replace).in_file(target)?;
    let out = tape.write_gzip(out).in_file(target)?;
    out.commit().in_file(target)?;
    let mut integrity = Integrity::default();
    if let Some(e) = cut {
        let kept: usize = tape.frame_counts().iter().sum();
        integrity.truncate(e.offset().map_or(0, |o| o.get()), 0);
        integrity.warn(format!(
            "{}: {e}; the copy keeps the {kept} complete frames",
            source.display()
        ));
    }
    Ok(recfmt_core::Copied {
        summary: format!(
            "copied {} to {}: the same decompressed content, gzip again",
            source.display(),
            target.display()
        ),
        integrity,
    })
}

/// Copies a Continuous or Recovery tape frame by frame through the low-level reader and
/// writer: the header as stored, then each frame as stored (a compressed frame keeps its
/// flags and DEFLATE bytes), so a complete tape comes out byte for byte. A tape FlightGear
/// was still writing can end inside a frame: the copy keeps every complete frame before it
/// (a valid, shorter tape, as FlightGear itself would index it) and reports the loss. One
/// cut inside its header cannot be copied; with `--strict`, neither can a cut frame.
fn copy_continuous(
    source: &Path,
    target: &Path,
    options: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Copied> {
    let mut reader = continuous::Reader::open_with(source, options).in_file(source)?;
    let mut frame = ContinuousFrame::default();
    // A Recovery tape FlightGear wrote compressed without saying so in its header is only
    // recognised at its frame: read that first, so the copy writes the frame as stored.
    let mut more = reader.read_frame(&mut frame).in_file(source)?;
    let mut header = reader.header().clone();
    header.compression = reader.compressed();
    let out = recfmt_core::AtomicFile::create(target, write.replace).in_file(target)?;
    let mut writer = continuous::Writer::new(out, &header).in_file(target)?;
    let mut frames = 0u64;
    while more {
        writer.write_frame(&frame).in_file(target)?;
        frames += 1;
        more = reader.read_frame(&mut frame).in_file(source)?;
    }
    writer.finish().in_file(target)?.commit().in_file(target)?;
    let mut integrity = Integrity::default();
    for w in reader.warnings() {
        integrity.warn(format!("{}: {w}", source.display()));
    }
    if let Some(cut) = reader.truncated() {
        integrity.truncate(cut.offset.get(), cut.bytes);
        integrity.warn(format!(
            "{}: the copy keeps the {frames} complete frames before the one cut at {}",
            source.display(),
            cut.offset
        ));
    }
    let kind = if header.is_recovery_like() {
        "Recovery"
    } else {
        "Continuous"
    };
    let how = if integrity.lost_data() {
        format!("the header and the {frames} complete frames byte for byte")
    } else {
        format!("byte for byte ({frames} frames)")
    };
    Ok(recfmt_core::Copied {
        summary: format!(
            "copied {kind} tape {} to {}: {how}",
            source.display(),
            target.display()
        ),
        integrity,
    })
}

/// Writes the flight tracks of a recording as KML or GPX. Times are absolute when the
/// recording has an epoch, else replay seconds (see [`crate::track`]).
fn write_tracks(
    format: TrackFormat,
    reader: &mut dyn RecordingReader,
    output: &Path,
    write: &WriteOptions,
) -> recfmt_core::Result<Written> {
    recfmt_core::atomic::check_target(output, write.replace)?;
    let epoch = reader
        .header()
        .time
        .and_then(|t| t.to_system(0.0, recfmt_core::TimeSystem::Utc));
    let tracks = Tracks::from_reader(reader)?;
    let folders = match output.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => recfmt_core::CreatedDirs::create(parent).in_file(parent)?,
        None => recfmt_core::CreatedDirs::default(),
    };
    let mut file = recfmt_core::AtomicFile::create(output, write.replace).in_file(output)?;
    format.write(
        &tracks,
        &mut file,
        &TrackOptions {
            epoch,
            ..Default::default()
        },
    )?;
    file.commit().in_file(output)?;
    folders.keep();
    let points: usize = tracks.iter().map(|t| t.points.len()).sum();
    Ok(Written {
        notes: vec![format!(
            "wrote {} ({} tracks, {points} points)",
            output.display(),
            tracks.iter().count()
        )],
        integrity: None,
    })
}

fn kml(
    reader: &mut dyn RecordingReader,
    output: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<Written> {
    write_tracks(TrackFormat::Kml, reader, output, write)
}

fn gpx(
    reader: &mut dyn RecordingReader,
    output: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<Written> {
    write_tracks(TrackFormat::Gpx, reader, output, write)
}

/// KML and GPX tracks, from any recording with position signals.
pub(crate) static OUTPUTS: [SpecialOutput; 2] = [
    SpecialOutput {
        id: "kml",
        help: "a KML flight track (-o FILE.kml): the aircraft, and one track per multiplayer callsign",
        file_extension: Some("kml"),
        source: OutputSource::Rows(kml),
        options: &[],
    },
    SpecialOutput {
        id: "gpx",
        help: "a GPX flight track (-o FILE.gpx), as for KML",
        file_extension: Some("gpx"),
        source: OutputSource::Rows(gpx),
        options: &[],
    },
];
