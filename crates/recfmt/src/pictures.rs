//! Pictures and scenes that need to know a format (feature `plot` for pictures, feature
//! `export-mcap` for MCAP scenes): the format crates stay free of plotting, and
//! [`recfmt_plot`] and [`recfmt_export`] free of formats.

#[cfg(all(feature = "plot", feature = "carla"))]
use std::path::Path;

#[cfg(all(feature = "plot", feature = "fgtape"))]
use recfmt_core::RecordingReader;

/// CARLA actor tracks seen from above (the `position` stream, centimetres shown as metres),
/// one line per actor, a dot where each starts.
///
/// ```no_run
/// let log = std::path::Path::new("recording.log");
/// let figure = recfmt::pictures::carla_map(log, &Default::default())?;
/// let svg = String::from_utf8(figure.render(recfmt_plot::ImageKind::Svg, 600, None)?)?;
/// assert!(svg.contains("x [m]"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(all(feature = "plot", feature = "carla"))]
pub fn carla_map(
    path: &Path,
    options: &recfmt_core::ReadOptions,
) -> Result<recfmt_plot::Figure, recfmt_plot::Error> {
    let registry = crate::default_registry();
    let detected = registry.detect_path(path)?.info.id;
    if detected != "carla" {
        return Err(recfmt_plot::Error::Invalid(format!(
            "{}: not a CARLA recorder log (this is {detected})",
            path.display()
        )));
    }
    let mut reader = registry.open_path(path, Some("carla"), options)?;
    let map = reader
        .header()
        .metadata
        .get("map")
        .cloned()
        .unwrap_or_default();
    let title = format!(
        "{}: actor tracks{}",
        file_name(path),
        if map.is_empty() {
            String::new()
        } else {
            format!(" on {map}")
        }
    );
    let tracks = recfmt_plot::xy_tracks(reader.as_mut(), "position", ("x", "y", None), 0.01)?;
    if tracks.is_empty() {
        return Err(recfmt_plot::Error::Invalid(format!(
            "{}: no actor positions to draw",
            path.display()
        )));
    }
    Ok(recfmt_plot::Figure::Map(recfmt_plot::TrackMap {
        title,
        x_label: "x [m]".into(),
        y_label: "y [m] (CARLA axes: y to the right of x)".into(),
        tracks,
        profile: false,
        altitude_label: String::new(),
        geographic: false,
    }))
}

/// The ground track (longitude, latitude) and altitude profile of a recording with aircraft
/// positions (FlightGear tapes: the aircraft and every multiplayer callsign).
#[cfg(all(feature = "plot", feature = "fgtape"))]
pub fn ground_track(
    reader: &mut dyn RecordingReader,
    title: &str,
) -> Result<recfmt_plot::Figure, recfmt_plot::Error> {
    let tracks = recfmt_fgtape::track::Tracks::from_reader(reader)?;
    let tracks: Vec<recfmt_plot::MapTrack> = tracks
        .iter()
        .map(|t| {
            let mut track = recfmt_plot::MapTrack::new(t.name.clone());
            for p in &t.points {
                track.push(p.time, p.longitude, p.latitude, p.altitude);
            }
            track
        })
        .filter(|t| !t.points.is_empty())
        .collect();
    if tracks.is_empty() {
        return Err(recfmt_plot::Error::Invalid(
            "the recording holds no position to draw".into(),
        ));
    }
    Ok(recfmt_plot::Figure::Map(recfmt_plot::TrackMap {
        title: format!("{title}: ground track"),
        x_label: "longitude [deg]".into(),
        y_label: "latitude [deg]".into(),
        tracks,
        profile: true,
        altitude_label: "altitude [m]".into(),
        geographic: true,
    }))
}

#[cfg(all(feature = "plot", feature = "carla"))]
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The `foxglove.SceneUpdate` channel for recordings whose entities have positions: CARLA's
/// `position` stream (centimetres, Unreal's left-handed axes, boxes of a car's size).
/// `None` for other formats.
#[cfg(feature = "export-mcap")]
pub fn mcap_scene(
    header: &recfmt_core::Header,
    schema: &recfmt_core::Schema,
) -> Option<recfmt_export::mcap::SceneSpec> {
    if header.format != "carla" {
        return None;
    }
    let desc = &schema.streams[schema.stream_index("position")?];
    let has = |n: &str| desc.signal_index(n).is_some();
    if desc.entity.is_none() || !["x", "y", "z"].iter().all(|n| has(n)) {
        return None;
    }
    let rotation = ["roll", "pitch", "yaw"]
        .iter()
        .all(|n| has(n))
        .then(|| ["roll".into(), "pitch".into(), "yaw".into()]);
    Some(recfmt_export::mcap::SceneSpec {
        stream: "position".into(),
        topic: "/scene".into(),
        frame_id: "map".into(),
        position: ["x".into(), "y".into(), "z".into()],
        rotation_deg: rotation,
        to_metres: 0.01,
        left_handed: true,
        size: [4.5, 2.0, 1.6],
    })
}
