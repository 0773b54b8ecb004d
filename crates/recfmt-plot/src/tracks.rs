//! Tracks seen from above: CARLA actors on their map, aircraft ground tracks, with an
//! optional altitude profile.

use std::collections::BTreeMap;

use recfmt_core::{BatchSet, RecordingReader};

use crate::{Error, Result, element_f64, for_each_batch};

/// Points kept per track; longer tracks keep every second point, then every fourth, ... so
/// memory stays bounded.
pub const MAX_TRACK_POINTS: usize = 20_000;

/// `(time s, x, y, altitude)`.
pub type TrackPoint = (f64, f64, f64, Option<f64>);

/// One track.
#[derive(Debug, Clone, Default)]
pub struct MapTrack {
    /// Legend text (`id 42`, a callsign, ...).
    pub name: String,
    /// `(time s, x, y, altitude)` points in time order.
    pub points: Vec<TrackPoint>,
    /// Every how many input points one is kept.
    stride: usize,
    seen: usize,
}

impl MapTrack {
    /// A track with no points.
    pub fn new(name: impl Into<String>) -> Self {
        MapTrack {
            name: name.into(),
            points: Vec::new(),
            stride: 1,
            seen: 0,
        }
    }

    /// Adds a point, thinning the track when it holds [`MAX_TRACK_POINTS`].
    pub fn push(&mut self, t: f64, x: f64, y: f64, altitude: Option<f64>) {
        if !(x.is_finite() && y.is_finite()) {
            return;
        }
        if self.seen.is_multiple_of(self.stride) {
            if self.points.len() >= MAX_TRACK_POINTS {
                let mut i = 0;
                self.points.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
            self.points.push((t, x, y, altitude));
        }
        self.seen += 1;
    }
}

/// Tracks from above, ready to draw.
#[derive(Debug, Clone, Default)]
pub struct TrackMap {
    /// The title.
    pub title: String,
    /// The horizontal axis text (`x [m]`, `longitude [deg]`).
    pub x_label: String,
    /// The vertical axis text.
    pub y_label: String,
    /// The tracks.
    pub tracks: Vec<MapTrack>,
    /// Draw an altitude profile (altitude against time) below the map.
    pub profile: bool,
    /// The altitude axis text.
    pub altitude_label: String,
    /// Keep one unit of x as long as one unit of y (metres); off for longitude/latitude,
    /// where the map is stretched by the cosine of the mean latitude instead.
    pub geographic: bool,
}

/// Reads `x` and `y` of stream `stream` (optionally `z` as altitude) batch by batch and
/// makes one track per entity (per value of the stream's entity key), scaled by `scale`
/// (for example 0.01 for centimetres to metres).
pub fn xy_tracks(
    reader: &mut dyn RecordingReader,
    stream: &str,
    axes: (&str, &str, Option<&str>),
    scale: f64,
) -> Result<Vec<MapTrack>> {
    let schema = reader.schema().clone();
    let s = schema
        .stream_index(stream)
        .ok_or_else(|| Error::Invalid(format!("the recording has no stream {stream:?}")))?;
    let desc = &schema.streams[s];
    let column = |name: &str| {
        desc.signal_index(name)
            .ok_or_else(|| Error::Invalid(format!("stream {stream} has no signal {name:?}")))
    };
    let (x, y) = (column(axes.0)?, column(axes.1)?);
    let z = axes.2.map(column).transpose()?;
    let entity = desc.entity;
    let entity_name = entity
        .map_or("", |e| desc.signals[e].name.as_str())
        .to_owned();
    let batches = BatchSet::with_columns(
        &schema,
        65_536,
        |i| i == s,
        |_, c| c == desc.time || c == x || c == y || Some(c) == z || Some(c) == entity,
    );
    let mut tracks: BTreeMap<i128, MapTrack> = BTreeMap::new();
    for_each_batch(reader, batches, &mut |batch| {
        let times = batch.times(desc);
        let cols = batch.columns();
        for (row, t) in times.iter().enumerate() {
            let Some(t) = *t else { continue };
            let value = |c: usize| {
                let col = &cols[c];
                if col.validity().is_some_and(|v| !v[row]) {
                    return None;
                }
                element_f64(col.data(), row)
            };
            let (Some(px), Some(py)) = (value(x), value(y)) else {
                continue;
            };
            let key = entity.and_then(value).map_or(0, |e| e as i128);
            let track = tracks.entry(key).or_insert_with(|| {
                MapTrack::new(if entity.is_some() {
                    format!("{entity_name} {key}")
                } else {
                    stream.to_owned()
                })
            });
            track.push(
                t,
                px * scale,
                py * scale,
                z.and_then(value).map(|v| v * scale),
            );
        }
        Ok(())
    })?;
    Ok(tracks.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_tracks_are_thinned_evenly_and_keep_their_start() {
        let mut track = MapTrack::new("t");
        for i in 0..100_000u32 {
            let t = f64::from(i);
            track.push(t, t, -t, Some(1.0));
        }
        track.push(1.0, f64::NAN, 0.0, None);
        assert!(track.points.len() <= MAX_TRACK_POINTS);
        assert!(track.points.len() >= MAX_TRACK_POINTS / 2);
        assert_eq!(track.points[0], (0.0, 0.0, -0.0, Some(1.0)));
        let steps: Vec<f64> = track.points.windows(2).map(|w| w[1].0 - w[0].0).collect();
        assert!(steps.iter().all(|&s| s == steps[0]), "uneven thinning");
    }
}
