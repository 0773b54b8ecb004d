//! Flight tracks: the aircraft's path (and each multiplayer callsign's) as KML or GPX.
//!
//! [`Tracks::open`] or [`Tracks::from_reader`] collects the points; [`write_kml`] and
//! [`write_gpx`] write them.
//!
//! * The user aircraft's track comes from the `signals` stream: `/position/latitude-deg`,
//!   `/position/longitude-deg` and `/position/altitude-ft` (feet, converted to metres with
//!   0.3048). Every row with a finite, in-range latitude and longitude gives one point, so a
//!   tape gives one point per frame.
//! * One track per callsign comes from the `multiplayer` stream: `POS_DATA` packets carry an
//!   Earth-centred, Earth-fixed position in metres (spec §7), converted to WGS84 latitude,
//!   longitude and ellipsoidal height with [`ecef_to_geodetic`]. The point's time is the
//!   time of the frame that carries the packet. Other packets (chat, ...) are ignored.
//!
//! Time. A tape has replay seconds only (spec §1 item 7), no absolute time:
//!
//! * KML: with an epoch ([`TrackOptions::epoch`], or the recording's own), each track is a
//!   `gx:Track` with one `<when>` (epoch + replay seconds, UTC) per `<gx:coord>`; Google
//!   Earth then shows a time slider. Without an epoch, each track is a `LineString` (a
//!   `Point` for a single point) and the Placemark's `ExtendedData` holds
//!   `<Data name="replay_seconds">`: one replay time per coordinate, space-separated, in
//!   coordinate order.
//! * GPX `<time>` must be absolute: it is the epoch plus replay seconds, and without an
//!   epoch **1970-01-01T00:00:00Z plus replay seconds**, so a tape recorded with FlightGear's
//!   *simple-time* (frame times are UTC Unix seconds) gets its true UTC times.
//!
//! Times are written as UTC with millisecond precision (`2024-05-01T12:00:01.250Z`).
//! Altitudes are absolute (`altitudeMode` `absolute`; GPX `<ele>`), in metres. FlightGear's
//! `altitude-ft` is above mean sea level while the multiplayer height is above the WGS84
//! ellipsoid; the two differ by the geoid undulation (up to about 100 m), which is not
//! corrected. Longitudes are normalised to \[-180, 180). Tracks without points are left
//! out. The text is escaped for XML, and characters XML 1.0 cannot hold are replaced.
//!
//! ```
//! use recfmt_fgtape::track::{Track, TrackKind, TrackOptions, TrackPoint, Tracks, write_gpx, write_kml};
//!
//! let point = |time, latitude| TrackPoint { time, latitude, longitude: 8.5, altitude: Some(500.0) };
//! let tracks = Tracks {
//!     title: "c172p".into(),
//!     aircraft: Some(Track {
//!         name: "c172p".into(),
//!         kind: TrackKind::Aircraft,
//!         points: vec![point(1.0, 47.0), point(1.5, 47.001)],
//!     }),
//!     ..Tracks::default()
//! };
//! let kml = String::from_utf8(write_kml(&tracks, Vec::new(), &TrackOptions::default())?).unwrap();
//! assert!(kml.contains("<coordinates>8.5,47,500 8.5,47.001,500</coordinates>"));
//! assert!(kml.contains("<value>1 1.5</value>"));
//! let gpx = String::from_utf8(write_gpx(&tracks, Vec::new(), &TrackOptions::default())?).unwrap();
//! assert!(gpx.contains(r#"<trkpt lat="47" lon="8.5"><ele>500</ele><time>1970-01-01T00:00:01.000Z</time></trkpt>"#));
//! # Ok::<(), recfmt_core::Error>(())
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use recfmt_core::{
    FrameBuf, ReadOptions, RecordingReader, TimeSystem, Value, unix_to_rfc3339_millis,
};

use crate::FgTape;
use crate::mp::{MpHeader, PositionMsg};

/// The signal giving the aircraft's latitude, degrees.
pub const LATITUDE: &str = "/position/latitude-deg";
/// The signal giving the aircraft's longitude, degrees.
pub const LONGITUDE: &str = "/position/longitude-deg";
/// The signal giving the aircraft's altitude above mean sea level, feet.
pub const ALTITUDE_FT: &str = "/position/altitude-ft";
/// Metres per international foot.
pub const FEET_TO_METRES: f64 = 0.3048;

/// WGS84 semi-major axis, metres.
pub const WGS84_A: f64 = 6_378_137.0;
/// WGS84 flattening.
pub const WGS84_F: f64 = 1.0 / 298.257_223_563;

/// One point of a track.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackPoint {
    /// Replay time in seconds (the tape's clock).
    pub time: f64,
    /// Latitude, degrees north.
    pub latitude: f64,
    /// Longitude, degrees east.
    pub longitude: f64,
    /// Altitude in metres, when known.
    pub altitude: Option<f64>,
}

/// Whose track it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrackKind {
    /// The recording aircraft (from the `signals` stream).
    Aircraft,
    /// Another aircraft, from multiplayer position packets.
    Multiplayer,
}

/// The points of one aircraft, in the order read (time order for fgtape).
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// Aircraft type or callsign.
    pub name: String,
    /// Whose track it is.
    pub kind: TrackKind,
    /// The points.
    pub points: Vec<TrackPoint>,
}

/// Every track of a recording.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tracks {
    /// Title of the document (the aircraft type when the recording names it).
    pub title: String,
    /// A one-line description (aircraft description, airport, FlightGear version).
    pub description: String,
    /// The user aircraft's track, when the recording has position signals.
    pub aircraft: Option<Track>,
    /// One track per multiplayer callsign, in order of first appearance.
    pub multiplayer: Vec<Track>,
    /// Rows and packets that gave no point (no or invalid position).
    pub skipped: u64,
    /// The recording's own epoch (replay second 0) as UTC Unix seconds, when its header has
    /// one.
    pub epoch: Option<f64>,
}

impl Tracks {
    /// Opens a tape with [`FgTape`] and collects its tracks.
    pub fn open(path: impl AsRef<Path>, options: &ReadOptions) -> recfmt_core::Result<Self> {
        let mut tape = FgTape::open(path, options)?;
        Self::from_reader(&mut tape)
    }

    /// Collects the tracks of any recording whose schema has the streams of [`FgTape`]: a
    /// `signals` stream with the columns [`LATITUDE`], [`LONGITUDE`] and optionally
    /// [`ALTITUDE_FT`], and/or a `multiplayer` stream with `callsign` and `packet` columns.
    /// Fails when it has neither.
    pub fn from_reader<R: RecordingReader + ?Sized>(reader: &mut R) -> recfmt_core::Result<Self> {
        let schema = reader.schema().clone();
        let header = reader.header().clone();
        let signals = schema.stream_index("signals").and_then(|s| {
            let d = &schema.streams[s];
            Some((
                s,
                d.signal_index(LATITUDE)?,
                d.signal_index(LONGITUDE)?,
                d.signal_index(ALTITUDE_FT),
            ))
        });
        let multiplayer = schema.stream_index("multiplayer").and_then(|s| {
            let d = &schema.streams[s];
            Some((s, d.signal_index("packet")?))
        });
        if signals.is_none() && multiplayer.is_none() {
            return Err(recfmt_core::Error::invalid(format!(
                "no track in this {} recording: it has neither a `signals` stream with {LATITUDE} and {LONGITUDE} nor a `multiplayer` stream with packets",
                header.format
            )));
        }
        let meta = |key: &str| header.metadata.get(key).filter(|v| !v.is_empty());
        let title = meta("meta/aircraft-type")
            .cloned()
            .unwrap_or_else(|| "aircraft".to_owned());
        let mut description = Vec::new();
        if let Some(d) = meta("meta/aircraft-description") {
            description.push(d.clone());
        }
        if let Some(a) = meta("meta/closest-airport-id") {
            description.push(format!("near {a}"));
        }
        if !header.version.is_empty() {
            description.push(format!("{} {}", reader.format().name, header.version));
        }
        let mut tracks = Tracks {
            aircraft: signals.map(|_| Track {
                name: title.clone(),
                kind: TrackKind::Aircraft,
                points: Vec::new(),
            }),
            title,
            description: description.join(", "),
            epoch: header.time.and_then(|t| t.to_system(0.0, TimeSystem::Utc)),
            ..Tracks::default()
        };
        let mut by_callsign: HashMap<String, usize> = HashMap::new();
        let mut buf = FrameBuf::default();
        while reader.read_frame(&mut buf)? {
            let desc = &schema.streams[buf.stream];
            let Some(time) = buf.time_seconds(desc) else {
                tracks.skipped += 1;
                continue;
            };
            if let Some((s, lat, lon, alt)) = signals
                && buf.stream == s
            {
                let value = |i: usize| buf.values.get(i).and_then(Value::as_f64);
                let point = match (value(lat), value(lon)) {
                    (Some(latitude), Some(longitude)) => valid_point(
                        time,
                        latitude,
                        longitude,
                        alt.and_then(value).map(|ft| ft * FEET_TO_METRES),
                    ),
                    _ => None,
                };
                match (point, tracks.aircraft.as_mut()) {
                    (Some(p), Some(track)) => track.points.push(p),
                    _ => tracks.skipped += 1,
                }
            } else if let Some((s, packet)) = multiplayer
                && buf.stream == s
            {
                let Some(Value::Bytes(packet)) = buf.values.get(packet) else {
                    tracks.skipped += 1;
                    continue;
                };
                let (Some(header), Some(msg)) =
                    (MpHeader::parse(packet), PositionMsg::parse(packet))
                else {
                    tracks.skipped += 1;
                    continue;
                };
                let (latitude, longitude, height) = ecef_to_geodetic(msg.position);
                let magnitude = msg.position.iter().map(|c| c * c).sum::<f64>().sqrt();
                let point = valid_point(time, latitude, longitude, Some(height))
                    .filter(|_| magnitude >= 1000.0);
                let Some(point) = point else {
                    tracks.skipped += 1;
                    continue;
                };
                let callsign = header.callsign();
                let index = *by_callsign.entry(callsign.clone()).or_insert_with(|| {
                    tracks.multiplayer.push(Track {
                        name: callsign,
                        kind: TrackKind::Multiplayer,
                        points: Vec::new(),
                    });
                    tracks.multiplayer.len() - 1
                });
                tracks.multiplayer[index].points.push(point);
            }
        }
        Ok(tracks)
    }

    /// Every track with points: the aircraft first, then the multiplayer callsigns.
    pub fn iter(&self) -> impl Iterator<Item = &Track> {
        self.aircraft
            .iter()
            .chain(&self.multiplayer)
            .filter(|t| !t.points.is_empty())
    }
}

/// A point, when the position is usable (finite, latitude within ±90°); the longitude is
/// normalised to [-180, 180) and a non-finite altitude dropped.
fn valid_point(
    time: f64,
    latitude: f64,
    longitude: f64,
    altitude: Option<f64>,
) -> Option<TrackPoint> {
    if !(time.is_finite() && latitude.is_finite() && longitude.is_finite()) || latitude.abs() > 90.0
    {
        return None;
    }
    let longitude = if (-180.0..180.0).contains(&longitude) {
        longitude
    } else {
        let l = (longitude + 180.0).rem_euclid(360.0) - 180.0;
        if l >= 180.0 { l - 360.0 } else { l }
    };
    Some(TrackPoint {
        time,
        latitude,
        longitude,
        altitude: altitude.filter(|a| a.is_finite()),
    })
}

/// Converts Earth-centred, Earth-fixed cartesian coordinates (metres) to WGS84 geodetic
/// latitude and longitude (degrees) and height above the ellipsoid (metres).
///
/// The latitude is found by fixed-point iteration, which converges to the last bit within a
/// few steps for any point outside the Earth's core and is exact at the poles.
///
/// ```
/// use recfmt_fgtape::track::{ecef_to_geodetic, geodetic_to_ecef};
/// let (lat, lon, h) = ecef_to_geodetic(geodetic_to_ecef(37.62, -122.4, 900.0));
/// assert!((lat - 37.62).abs() < 1e-12 && (lon + 122.4).abs() < 1e-12 && (h - 900.0).abs() < 1e-6);
/// assert_eq!(ecef_to_geodetic([6_378_137.0, 0.0, 0.0]), (0.0, 0.0, 0.0));
/// ```
pub fn ecef_to_geodetic(position: [f64; 3]) -> (f64, f64, f64) {
    let [x, y, z] = position;
    let e2 = WGS84_F * (2.0 - WGS84_F);
    let p = x.hypot(y);
    let longitude = y.atan2(x);
    let mut latitude = z.atan2(p * (1.0 - e2));
    for _ in 0..30 {
        let s = latitude.sin();
        let n = WGS84_A / (1.0 - e2 * s * s).sqrt();
        let next = (z + e2 * n * s).atan2(p);
        let done = (next - latitude).abs() < 1e-15;
        latitude = next;
        if done {
            break;
        }
    }
    let (s, c) = latitude.sin_cos();
    let height = p * c + z * s - WGS84_A * (1.0 - e2 * s * s).sqrt();
    (latitude.to_degrees(), longitude.to_degrees(), height)
}

/// Converts WGS84 geodetic latitude and longitude (degrees) and ellipsoidal height (metres)
/// to Earth-centred, Earth-fixed cartesian coordinates (metres).
pub fn geodetic_to_ecef(latitude: f64, longitude: f64, height: f64) -> [f64; 3] {
    let e2 = WGS84_F * (2.0 - WGS84_F);
    let (sl, cl) = latitude.to_radians().sin_cos();
    let (so, co) = longitude.to_radians().sin_cos();
    let n = WGS84_A / (1.0 - e2 * sl * sl).sqrt();
    [
        (n + height) * cl * co,
        (n + height) * cl * so,
        (n * (1.0 - e2) + height) * sl,
    ]
}

/// Options of [`write_kml`] and [`write_gpx`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrackOptions {
    /// The instant of replay second 0, as UTC Unix seconds (seconds since
    /// 1970-01-01T00:00:00Z, leap seconds not counted). When `None`, the recording's own epoch
    /// ([`Tracks::epoch`]) is used; fgtape recordings have none, so KML then gets
    /// `LineString`s with replay offsets and GPX counts from 1970-01-01T00:00:00Z.
    pub epoch: Option<f64>,
    /// Leave the multiplayer tracks out.
    pub aircraft_only: bool,
}

impl TrackOptions {
    /// Options with an epoch (UTC Unix seconds of replay second 0).
    pub fn with_epoch(epoch: f64) -> Self {
        TrackOptions {
            epoch: Some(epoch),
            ..TrackOptions::default()
        }
    }
}

/// The two track formats, for callers that pick one by name (`--to kml|gpx`).
///
/// ```
/// use recfmt_fgtape::track::TrackFormat;
/// assert_eq!(TrackFormat::from_name("KML"), Some(TrackFormat::Kml));
/// assert_eq!(TrackFormat::from_name("gpx").map(TrackFormat::extension), Some("gpx"));
/// assert_eq!(TrackFormat::from_name("csv"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrackFormat {
    /// KML 2.2 (Google Earth), see [`write_kml`].
    Kml,
    /// GPX 1.1, see [`write_gpx`].
    Gpx,
}

impl TrackFormat {
    /// `kml` or `gpx` (any case); `None` otherwise.
    pub fn from_name(name: &str) -> Option<TrackFormat> {
        match name.trim().to_ascii_lowercase().as_str() {
            "kml" => Some(TrackFormat::Kml),
            "gpx" => Some(TrackFormat::Gpx),
            _ => None,
        }
    }

    /// The file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            TrackFormat::Kml => "kml",
            TrackFormat::Gpx => "gpx",
        }
    }

    /// Writes `tracks` in this format with [`write_kml`] or [`write_gpx`].
    pub fn write<W: Write>(
        self,
        tracks: &Tracks,
        out: W,
        options: &TrackOptions,
    ) -> recfmt_core::Result<W> {
        match self {
            TrackFormat::Kml => write_kml(tracks, out, options),
            TrackFormat::Gpx => write_gpx(tracks, out, options),
        }
    }
}

fn selected<'a>(tracks: &'a Tracks, options: &TrackOptions) -> Vec<&'a Track> {
    tracks
        .iter()
        .filter(|t| !(options.aircraft_only && t.kind == TrackKind::Multiplayer))
        .collect()
}

fn io(e: std::io::Error) -> recfmt_core::Error {
    recfmt_core::Error::Io(e)
}

/// Writes the tracks as a KML 2.2 document (see the [module docs](self) for how time is
/// written) and returns the output.
pub fn write_kml<W: Write>(
    tracks: &Tracks,
    mut out: W,
    options: &TrackOptions,
) -> recfmt_core::Result<W> {
    let clock = options.epoch.or(tracks.epoch).map(Clock::new);
    let mut x = String::with_capacity(64 * 1024);
    x.push_str(concat!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
        "<kml xmlns=\"http://www.opengis.net/kml/2.2\" xmlns:gx=\"http://www.google.com/kml/ext/2.2\">\n",
        "<Document>\n"
    ));
    push_element(&mut x, 1, "name", &tracks.title);
    if !tracks.description.is_empty() {
        push_element(&mut x, 1, "description", &tracks.description);
    }
    for (id, color, width) in [("aircraft", "ff0000ff", 3), ("multiplayer", "ffff7f00", 2)] {
        x.push_str(&format!(
            "  <Style id=\"{id}\"><LineStyle><color>{color}</color><width>{width}</width></LineStyle><IconStyle><color>{color}</color></IconStyle></Style>\n"
        ));
    }
    out.write_all(x.as_bytes()).map_err(io)?;
    let list = selected(tracks, options);
    let mut in_folder = false;
    for track in list {
        x.clear();
        let indent = if track.kind == TrackKind::Multiplayer {
            if !in_folder {
                x.push_str("  <Folder>\n    <name>Multiplayer</name>\n");
                in_folder = true;
            }
            2
        } else {
            1
        };
        let pad = "  ".repeat(indent);
        x.push_str(&format!("{pad}<Placemark>\n"));
        push_element(&mut x, indent + 1, "name", &track.name);
        let style = match track.kind {
            TrackKind::Aircraft => "#aircraft",
            TrackKind::Multiplayer => "#multiplayer",
        };
        x.push_str(&format!("{pad}  <styleUrl>{style}</styleUrl>\n"));
        let absolute = track.points.iter().all(|p| p.altitude.is_some());
        let mode = if absolute {
            "absolute"
        } else {
            "clampToGround"
        };
        let alt = |p: &TrackPoint| p.altitude.unwrap_or(0.0);
        match &clock {
            Some(clock) => {
                x.push_str(&format!(
                    "{pad}  <gx:Track>\n{pad}    <altitudeMode>{mode}</altitudeMode>\n"
                ));
                for p in &track.points {
                    x.push_str(&format!("{pad}    <when>{}</when>\n", clock.at(p.time)?));
                }
                for p in &track.points {
                    x.push_str(&format!(
                        "{pad}    <gx:coord>{} {} {}</gx:coord>\n",
                        p.longitude,
                        p.latitude,
                        alt(p)
                    ));
                }
                x.push_str(&format!("{pad}  </gx:Track>\n"));
            }
            None => {
                x.push_str(&format!(
                    "{pad}  <ExtendedData>\n{pad}    <Data name=\"replay_seconds\">\n{pad}      <displayName>Replay time of each point (s)</displayName>\n{pad}      <value>"
                ));
                for (i, p) in track.points.iter().enumerate() {
                    if i > 0 {
                        x.push(' ');
                    }
                    x.push_str(&p.time.to_string());
                }
                x.push_str(&format!(
                    "</value>\n{pad}    </Data>\n{pad}  </ExtendedData>\n"
                ));
                let (open, close) = if track.points.len() == 1 {
                    ("<Point>", "</Point>")
                } else {
                    ("<LineString>", "</LineString>")
                };
                x.push_str(&format!(
                    "{pad}  {open}\n{pad}    <altitudeMode>{mode}</altitudeMode>\n{pad}    <coordinates>"
                ));
                for (i, p) in track.points.iter().enumerate() {
                    if i > 0 {
                        x.push(' ');
                    }
                    x.push_str(&format!("{},{},{}", p.longitude, p.latitude, alt(p)));
                }
                x.push_str(&format!("</coordinates>\n{pad}  {close}\n"));
            }
        }
        x.push_str(&format!("{pad}</Placemark>\n"));
        out.write_all(x.as_bytes()).map_err(io)?;
    }
    x.clear();
    if in_folder {
        x.push_str("  </Folder>\n");
    }
    x.push_str("</Document>\n</kml>\n");
    out.write_all(x.as_bytes()).map_err(io)?;
    out.flush().map_err(io)?;
    Ok(out)
}

/// Writes the tracks as a GPX 1.1 document, one `<trk>` per track (`<type>` `aircraft` or
/// `multiplayer`), and returns the output. `<time>` is the epoch plus replay seconds, the
/// epoch defaulting to 1970-01-01T00:00:00Z (see the [module docs](self)).
pub fn write_gpx<W: Write>(
    tracks: &Tracks,
    mut out: W,
    options: &TrackOptions,
) -> recfmt_core::Result<W> {
    let clock = options
        .epoch
        .or(tracks.epoch)
        .map_or(Clock { unix: 0.0 }, Clock::new);
    let mut x = String::with_capacity(64 * 1024);
    x.push_str(concat!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
        "<gpx version=\"1.1\" creator=\"recfmt-fgtape\" xmlns=\"http://www.topografix.com/GPX/1/1\" ",
        "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" ",
        "xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd\">\n",
        "  <metadata>\n"
    ));
    push_element(&mut x, 2, "name", &tracks.title);
    let mut desc = tracks.description.clone();
    if options.epoch.or(tracks.epoch).is_none() {
        if !desc.is_empty() {
            desc.push_str(". ");
        }
        desc.push_str("Times are replay seconds counted from 1970-01-01T00:00:00Z (the recording has no absolute time).");
    }
    if !desc.is_empty() {
        push_element(&mut x, 2, "desc", &desc);
    }
    x.push_str("  </metadata>\n");
    out.write_all(x.as_bytes()).map_err(io)?;
    for track in selected(tracks, options) {
        x.clear();
        x.push_str("  <trk>\n");
        push_element(&mut x, 2, "name", &track.name);
        let kind = match track.kind {
            TrackKind::Aircraft => "aircraft",
            TrackKind::Multiplayer => "multiplayer",
        };
        x.push_str(&format!("    <type>{kind}</type>\n    <trkseg>\n"));
        for p in &track.points {
            x.push_str(&format!(
                "      <trkpt lat=\"{}\" lon=\"{}\">",
                p.latitude, p.longitude
            ));
            if let Some(a) = p.altitude {
                x.push_str(&format!("<ele>{a}</ele>"));
            }
            x.push_str(&format!("<time>{}</time></trkpt>\n", clock.at(p.time)?));
        }
        x.push_str("    </trkseg>\n  </trk>\n");
        out.write_all(x.as_bytes()).map_err(io)?;
    }
    out.write_all(b"</gpx>\n").map_err(io)?;
    out.flush().map_err(io)?;
    Ok(out)
}

/// Turns replay seconds into UTC text.
#[derive(Debug, Clone, Copy)]
struct Clock {
    /// Unix seconds (UTC) of replay second 0.
    unix: f64,
}

impl Clock {
    fn new(unix: f64) -> Self {
        Clock { unix }
    }

    fn at(&self, seconds: f64) -> recfmt_core::Result<String> {
        unix_to_rfc3339_millis(self.unix + seconds).ok_or_else(|| {
            recfmt_core::Error::invalid(format!(
                "replay time {seconds} s gives an instant outside the years 0000-9999"
            ))
        })
    }
}

/// Appends `<name>text</name>` on its own line.
fn push_element(x: &mut String, indent: usize, name: &str, text: &str) {
    x.push_str(&"  ".repeat(indent));
    x.push('<');
    x.push_str(name);
    x.push('>');
    x.push_str(&escape(text));
    x.push_str("</");
    x.push_str(name);
    x.push_str(">\n");
}

/// Escapes text for XML content and attributes; characters XML 1.0 cannot hold (control
/// characters other than tab, newline and carriage return, U+FFFE, U+FFFF) become U+FFFD.
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        matches!(c, '&' | '<' | '>' | '"' | '\'')
            || (c < ' ' && !matches!(c, '\t' | '\n' | '\r'))
            || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if !text.contains(bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if bad(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape("plain"), Cow::Borrowed("plain"));
        assert_eq!(
            escape("a<b>&\"'\u{1}"),
            "a&lt;b&gt;&amp;&quot;&apos;\u{FFFD}"
        );
    }

    #[test]
    fn geodesy_round_trips_everywhere() {
        for lat in [-90.0, -89.999, -45.0, 0.0, 12.5, 37.62, 89.9, 90.0] {
            for lon in [-180.0, -122.4, 0.0, 8.5, 179.99] {
                for h in [-400.0, 0.0, 900.0, 12_000.0, 400_000.0] {
                    let (la, lo, hh) = ecef_to_geodetic(geodetic_to_ecef(lat, lon, h));
                    assert!((la - lat).abs() < 1e-11, "{lat} {lon} {h}: {la}");
                    if lat.abs() < 90.0 {
                        let dl = (lo - lon).rem_euclid(360.0);
                        assert!(
                            !(1e-11..=360.0 - 1e-11).contains(&dl),
                            "{lat} {lon} {h}: {lo}"
                        );
                    }
                    assert!((hh - h).abs() < 1e-6, "{lat} {lon} {h}: {hh}");
                }
            }
        }
        // Not NaN at the centre.
        let (la, lo, h) = ecef_to_geodetic([0.0, 0.0, 0.0]);
        assert!(la.is_finite() && lo.is_finite() && h.is_finite());
    }

    #[test]
    fn points_are_checked_and_longitudes_normalised() {
        assert_eq!(valid_point(0.0, 91.0, 0.0, None), None);
        assert_eq!(valid_point(0.0, f64::NAN, 0.0, None), None);
        let p = valid_point(0.0, 1.0, 180.0, Some(f64::INFINITY)).unwrap_or_else(|| panic!());
        assert_eq!((p.longitude, p.altitude), (-180.0, None));
        let p = valid_point(0.0, 1.0, 540.5, None).unwrap_or_else(|| panic!());
        assert_eq!(p.longitude, -179.5);
    }
}
