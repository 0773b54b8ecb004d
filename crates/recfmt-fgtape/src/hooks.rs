//! What the fgtape descriptor does besides reading and writing: faithful copies, and flight
//! tracks (KML, GPX) from any recording with position signals.

use std::path::Path;

use recfmt_core::{
    Integrity, OutputSource, ReadOptions, RecordingReader, ResultExt, SpecialOutput, WriteOptions,
    Written,
};

use crate::track::{TrackFormat, TrackOptions, Tracks};

/// The copy keeps the tape's three containers and every complete frame: a tape cut inside a
/// frame loses that frame (the cut container's size field set to the frames kept), one cut
/// inside its header cannot be copied.
pub(crate) fn copy(
    source: &Path,
    target: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Copied> {
    recfmt_core::atomic::check_target(target, write.replace)?;
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

/// Writes the flight tracks of a recording as KML or GPX. Times are absolute when the
/// recording has an epoch, else replay seconds (see [`crate::track`]).
fn write_tracks(
    format: TrackFormat,
    reader: &mut dyn RecordingReader,
    output: &Path,
    write: &WriteOptions,
) -> recfmt_core::Result<Written> {
    recfmt_core::atomic::check_target(output, write.replace)?;
    let epoch = reader.header().time.and_then(|t| t.epoch);
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
    },
    SpecialOutput {
        id: "gpx",
        help: "a GPX flight track (-o FILE.gpx), as for KML",
        file_extension: Some("gpx"),
        source: OutputSource::Rows(gpx),
    },
];
