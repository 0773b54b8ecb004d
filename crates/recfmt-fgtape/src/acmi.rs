//! Flights for Tacview: any recording with position signals as an ACMI 2.2 text file.
//!
//! ACMI 2.2 (Tacview's public format, <https://www.tacview.net/documentation/acmi/>) is UTF-8
//! text: the header `FileType=text/acmi/tacview` and `FileVersion=2.2`, global properties on
//! object `0`, then `#<seconds>` frame lines, each followed by `<hex id>,prop=value,...`
//! lines for the objects that changed and `-<hex id>` lines for objects that left. All units
//! are metric: degrees, metres, metres per second.
//!
//! What [`write_acmi`] writes:
//!
//! * Global properties: `DataSource` (`FlightGear <meta/version/flightgear>`, else the
//!   format and its version), `DataRecorder` (`recfmt <version>`), `Title` (the tape's
//!   `meta/user-data/description`, else the aircraft description or type), `Author`
//!   (`meta/user-data/author-name`), `Comments` (aircraft, closest airport) and
//!   `ReferenceTime` only when the recording has an absolute time (tapes have none).
//! * The recording aircraft, object `1`: `Name` (`meta/aircraft-type`), `Type=Air+FixedWing`,
//!   `T=lon|lat|alt|roll|pitch|yaw` from the `signals` stream ([`LATITUDE`], [`LONGITUDE`],
//!   [`ALTITUDE_FT`] in metres, `/orientation/roll-deg`, `/orientation/pitch-deg`,
//!   `/orientation/heading-deg`; `T=lon|lat|alt` when the orientation is missing) and the
//!   properties of [`OWN_PROPERTIES`] that the recording has (IAS, TAS, Mach, AOA, AGL,
//!   Throttle, Flaps), converted to Tacview's units. One update per `signals` row.
//! * Each multiplayer callsign, objects `2`, `3`, ... in order of appearance: `Name` (the
//!   model's file stem, `c172p` for `Aircraft/c172p/Models/c172p.xml`), `CallSign`,
//!   `Type=Air+FixedWing` and `T=lon|lat|alt` from the `multiplayer` stream's decoded position
//!   (`latitude_deg`, `longitude_deg`, `altitude_m`). A callsign with no position for more
//!   than [`EXPIRY_SECONDS`] is removed (`-id`) at the first later row, and gets a new
//!   object if it comes back. Multiplayer rows that are not position packets are ignored.
//!   A tape frame can hold several packets of one callsign: each is written, at the frame's
//!   time, so the last one is the position Tacview shows.
//!
//! Frame times are the recording's seconds (the tape's replay clock), written exactly (the
//! shortest text that reads back as the same `f64`). Values are rounded: longitude and
//! latitude to 1e-7 degrees (about 1 cm), altitudes to the centimetre, angles to 0.01
//! degrees. As the format allows, a component of `T` or a property whose text did not change
//! since the object's last update is left out (`T=-122.3|||0.5||`), and an object with no
//! change gets no line. Text values have their commas escaped (`\,`), line breaks escaped
//! (`\` at the end of the line), other control characters replaced by spaces and trailing
//! backslashes dropped. The file starts with a UTF-8 byte order mark, as Tacview's do.
//!
//! Altitudes: the aircraft's is FlightGear's `altitude-ft` above mean sea level, the
//! multiplayer ones are above the WGS84 ellipsoid (as in [`crate::track`]); the geoid
//! undulation between them is not corrected.
//!
//! Memory stays bounded by the objects alive at once: rows are written as they are read.
//!
//! ```
//! use recfmt_core::{DType, MemoryRecording, Schema, SignalDesc, StreamDesc, TimeBase, Value};
//! use recfmt_fgtape::acmi::{AcmiOptions, write_acmi};
//!
//! let mut stream = StreamDesc::new("signals", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
//! for name in ["/position/latitude-deg", "/position/longitude-deg", "/position/altitude-ft"] {
//!     stream.signals.push(SignalDesc::scalar(name, DType::F64));
//! }
//! let rows = [(1.0, 47.0), (1.5, 47.001), (2.0, 47.001)]
//!     .map(|(t, lat)| (0, vec![Value::Float(t), Value::Float(lat), Value::Float(8.5), Value::Float(1000.0)]));
//! let mut recording = MemoryRecording::new(Default::default(), Schema { streams: vec![stream] })
//!     .with_rows(rows);
//! let (text, summary) = write_acmi(&mut recording, Vec::new(), &AcmiOptions::default())?;
//! let text = String::from_utf8(text)?;
//! assert!(text.starts_with("\u{feff}FileType=text/acmi/tacview\nFileVersion=2.2\n"));
//! // The third row changes nothing: no line, no frame.
//! assert!(text.ends_with("#1\n1,Name=aircraft,Type=Air+FixedWing,T=8.5|47|304.8\n#1.5\n1,T=|47.001|\n"));
//! assert_eq!((summary.frames, summary.objects), (2, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

use recfmt_core::{FrameBuf, Header, RecordingReader, Schema, TimeSystem, Value};

pub use crate::track::{ALTITUDE_FT, FEET_TO_METRES, LATITUDE, LONGITUDE};

/// Metres per second in one knot (1852 m per hour).
pub const KNOTS_TO_MPS: f64 = 1852.0 / 3600.0;

/// Seconds without a position after which a multiplayer aircraft is removed.
pub const EXPIRY_SECONDS: f64 = 10.0;

/// The ACMI id of the recording aircraft.
pub const OWN_ID: u64 = 1;

/// Tacview's object type for aeroplanes.
pub const AIRCRAFT_TYPE: &str = "Air+FixedWing";

/// The aircraft's orientation signals, degrees: roll, pitch, true heading (ACMI's yaw).
pub const ORIENTATION: [&str; 3] = [
    "/orientation/roll-deg",
    "/orientation/pitch-deg",
    "/orientation/heading-deg",
];

/// One ACMI property of the recording aircraft and where it comes from.
#[derive(Debug, Clone, Copy)]
pub struct PropertyMapping {
    /// The ACMI property (`IAS`).
    pub property: &'static str,
    /// Signals that give it, the first found wins, each with the factor to Tacview's unit.
    pub signals: &'static [(&'static str, f64)],
    /// Decimals written.
    pub decimals: usize,
}

/// The aircraft properties written when the recording has one of their signals.
pub const OWN_PROPERTIES: &[PropertyMapping] = &[
    PropertyMapping {
        property: "IAS",
        signals: &[("/velocities/airspeed-kt", KNOTS_TO_MPS)],
        decimals: 2,
    },
    PropertyMapping {
        property: "TAS",
        signals: &[
            ("/velocities/true-airspeed-kt", KNOTS_TO_MPS),
            ("/fdm/jsbsim/velocities/vtrue-kts", KNOTS_TO_MPS),
        ],
        decimals: 2,
    },
    PropertyMapping {
        property: "Mach",
        signals: &[("/velocities/mach", 1.0)],
        decimals: 3,
    },
    PropertyMapping {
        property: "AOA",
        signals: &[("/orientation/alpha-deg", 1.0)],
        decimals: 2,
    },
    PropertyMapping {
        property: "AGL",
        signals: &[
            ("/position/altitude-agl-m", 1.0),
            ("/position/altitude-agl-ft", FEET_TO_METRES),
        ],
        decimals: 2,
    },
    PropertyMapping {
        property: "Throttle",
        signals: &[
            ("/controls/engines/engine/throttle", 1.0),
            ("/controls/engines/current-engine/throttle", 1.0),
        ],
        decimals: 3,
    },
    PropertyMapping {
        property: "Flaps",
        signals: &[("/surface-positions/flap-pos-norm", 1.0)],
        decimals: 3,
    },
];

/// Options of [`write_acmi`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AcmiOptions {
    /// The instant of second 0 as UTC Unix seconds, written as `ReferenceTime`; `None` uses
    /// the recording's own absolute time, if it has one.
    pub epoch: Option<f64>,
}

/// What [`write_acmi`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AcmiSummary {
    /// `#` frame lines.
    pub frames: u64,
    /// Objects created (the aircraft and each multiplayer appearance).
    pub objects: u64,
    /// Objects removed (`-id` lines).
    pub removed: u64,
    /// Rows that gave no update (no time, no valid position).
    pub skipped: u64,
}

/// Columns of the recording aircraft in the `signals` stream.
struct OwnColumns {
    stream: usize,
    latitude: usize,
    longitude: usize,
    altitude: Option<usize>,
    orientation: Option<[usize; 3]>,
    /// (mapping, column, factor)
    properties: Vec<(&'static PropertyMapping, usize, f64)>,
}

impl OwnColumns {
    fn find(schema: &Schema) -> Option<Self> {
        let stream = schema.stream_index("signals")?;
        let d = &schema.streams[stream];
        let orientation = ORIENTATION.map(|name| d.signal_index(name));
        Some(OwnColumns {
            stream,
            latitude: d.signal_index(LATITUDE)?,
            longitude: d.signal_index(LONGITUDE)?,
            altitude: d.signal_index(ALTITUDE_FT),
            orientation: match orientation {
                [Some(r), Some(p), Some(y)] => Some([r, p, y]),
                _ => None,
            },
            properties: OWN_PROPERTIES
                .iter()
                .filter_map(|m| {
                    m.signals
                        .iter()
                        .find_map(|(name, factor)| Some((m, d.signal_index(name)?, *factor)))
                })
                .collect(),
        })
    }
}

/// Columns of the `multiplayer` stream.
struct MpColumns {
    stream: usize,
    callsign: usize,
    model: Option<usize>,
    latitude: usize,
    longitude: usize,
    altitude: Option<usize>,
}

impl MpColumns {
    fn find(schema: &Schema) -> Option<Self> {
        let stream = schema.stream_index("multiplayer")?;
        let d = &schema.streams[stream];
        Some(MpColumns {
            stream,
            callsign: d.signal_index("callsign")?,
            model: d.signal_index("model"),
            latitude: d.signal_index("latitude_deg")?,
            longitude: d.signal_index("longitude_deg")?,
            altitude: d.signal_index("altitude_m"),
        })
    }
}

/// What was last written for one object, so unchanged text is left out.
#[derive(Debug, Default)]
struct ObjectState {
    id: u64,
    /// The text of each `T` component last written.
    transform: Vec<String>,
    /// The text of each property last written, by name.
    properties: HashMap<&'static str, String>,
    /// Recording time of its last update.
    last_seen: f64,
}

/// The text writer: frame lines, object lines, escaping and number formatting.
struct Emitter<W: Write> {
    out: W,
    line: String,
    frame: Option<f64>,
    summary: AcmiSummary,
}

impl<W: Write> Emitter<W> {
    fn write_line(&mut self) -> recfmt_core::Result<()> {
        self.line.push('\n');
        self.out
            .write_all(self.line.as_bytes())
            .map_err(recfmt_core::Error::Io)?;
        self.line.clear();
        Ok(())
    }

    /// Starts the frame at `time` unless it is the current one.
    fn at(&mut self, time: f64) -> recfmt_core::Result<()> {
        if self.frame.is_some_and(|f| f.to_bits() == time.to_bits()) {
            return Ok(());
        }
        self.frame = Some(time);
        self.summary.frames += 1;
        let _ = write!(self.line, "#{time}");
        self.write_line()
    }

    /// Writes `0,<key>=<text>` when the text is not empty.
    fn global(&mut self, key: &str, text: &str) -> recfmt_core::Result<()> {
        let text = escape(text);
        if text.is_empty() {
            return Ok(());
        }
        let _ = write!(self.line, "0,{key}={text}");
        self.write_line()
    }

    /// Writes an object's update at `time`: text properties (only on creation or change),
    /// the `T` components that changed, then numeric properties that changed. Nothing when
    /// nothing changed.
    fn update(
        &mut self,
        time: f64,
        object: &mut ObjectState,
        texts: &[(&'static str, &str)],
        transform: &[String],
        numbers: &[(&'static str, String)],
    ) -> recfmt_core::Result<()> {
        let mut fields = String::new();
        for (key, value) in texts {
            let value = escape(value);
            if object.properties.get(key).is_some_and(|v| *v == value) {
                continue;
            }
            let _ = write!(fields, ",{key}={value}");
            object.properties.insert(key, value);
        }
        let fresh = object.transform.len() != transform.len();
        if fresh || object.transform.iter().zip(transform).any(|(a, b)| a != b) {
            fields.push_str(",T=");
            for (i, text) in transform.iter().enumerate() {
                if i > 0 {
                    fields.push('|');
                }
                if fresh || object.transform[i] != *text {
                    fields.push_str(text);
                }
            }
            object.transform = transform.to_vec();
        }
        for (key, value) in numbers {
            if object.properties.get(key).is_some_and(|v| v == value) {
                continue;
            }
            let _ = write!(fields, ",{key}={value}");
            object.properties.insert(key, value.clone());
        }
        object.last_seen = time;
        if fields.is_empty() {
            return Ok(());
        }
        self.at(time)?;
        let _ = write!(self.line, "{:x}{fields}", object.id);
        self.write_line()
    }

    fn remove(&mut self, time: f64, id: u64) -> recfmt_core::Result<()> {
        self.at(time)?;
        let _ = write!(self.line, "-{id:x}");
        self.summary.removed += 1;
        self.write_line()
    }
}

/// `value` rounded to `decimals`, without trailing zeros (`47`, `-122.3791234`, never `-0`).
pub fn number(value: f64, decimals: usize) -> String {
    let mut text = format!("{value:.decimals$}");
    if text.contains('.') {
        let kept = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(kept);
    }
    if text == "-0" {
        text.remove(0);
    }
    text
}

/// Escapes a text value for ACMI (see the [module docs](self)).
///
/// ```
/// assert_eq!(recfmt_fgtape::acmi::escape("a, b\nc\u{1}d\\"), "a\\, b\\\nc d");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().trim_end_matches('\\').trim_end().chars() {
        match c {
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The model's file stem: `c172p` for `Aircraft/c172p/Models/c172p.xml`.
fn model_name(model: &str) -> &str {
    let file = model.rsplit(['/', '\\']).next().unwrap_or(model);
    file.strip_suffix(".xml").unwrap_or(file)
}

/// Global properties from the recording's header.
fn write_globals<W: Write>(
    emitter: &mut Emitter<W>,
    header: &Header,
    format_name: &str,
    epoch: Option<f64>,
) -> recfmt_core::Result<()> {
    let meta = |key: &str| {
        header
            .metadata
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    };
    let source = match meta("meta/version/flightgear") {
        Some(v) => format!("FlightGear {v}"),
        None => format!("{format_name} {}", header.version),
    };
    emitter.global("DataSource", &source)?;
    emitter.global(
        "DataRecorder",
        &format!("recfmt {}", env!("CARGO_PKG_VERSION")),
    )?;
    if let Some(epoch) = epoch {
        let time = recfmt_core::unix_to_rfc3339_millis(epoch).ok_or_else(|| {
            recfmt_core::Error::invalid(format!(
                "the recording's start ({epoch} Unix seconds) is outside the years 0000-9999"
            ))
        })?;
        emitter.global("ReferenceTime", &time)?;
    }
    let title = meta("meta/user-data/description")
        .or_else(|| meta("meta/aircraft-description"))
        .or_else(|| meta("meta/aircraft-type"))
        .unwrap_or("");
    emitter.global("Title", title)?;
    emitter.global("Author", meta("meta/user-data/author-name").unwrap_or(""))?;
    let mut comments = Vec::new();
    if let Some(d) = meta("meta/aircraft-description") {
        comments.push(d.to_owned());
    }
    if let Some(a) = meta("meta/closest-airport-id") {
        comments.push(format!("near {a}"));
    }
    emitter.global("Comments", &comments.join(", "))
}

/// A finite, in-range longitude and latitude, longitude normalised to [-180, 180).
fn position(longitude: Option<f64>, latitude: Option<f64>) -> Option<(f64, f64)> {
    let (lon, lat) = (longitude?, latitude?);
    if !(lon.is_finite() && lat.is_finite()) || lat.abs() > 90.0 {
        return None;
    }
    let lon = (lon + 180.0).rem_euclid(360.0) - 180.0;
    Some((if lon >= 180.0 { lon - 360.0 } else { lon }, lat))
}

/// Writes the recording read by `reader` as ACMI 2.2 text to `out` (see the
/// [module docs](self)) and returns `out` and what was written. Fails when the recording has
/// neither a `signals` stream with [`LATITUDE`] and [`LONGITUDE`] nor a `multiplayer`
/// stream with decoded positions.
pub fn write_acmi<R: RecordingReader + ?Sized, W: Write>(
    reader: &mut R,
    out: W,
    options: &AcmiOptions,
) -> recfmt_core::Result<(W, AcmiSummary)> {
    let schema = reader.schema().clone();
    let header = reader.header().clone();
    let own = OwnColumns::find(&schema);
    let mp = MpColumns::find(&schema);
    if own.is_none() && mp.is_none() {
        return Err(recfmt_core::Error::invalid(format!(
            "nothing to write as ACMI in this {} recording: it has neither a `signals` stream with {LATITUDE} and {LONGITUDE} nor a `multiplayer` stream with positions",
            header.format
        )));
    }
    let epoch = options
        .epoch
        .or_else(|| header.time.and_then(|t| t.to_system(0.0, TimeSystem::Utc)));
    let mut emitter = Emitter {
        out,
        line: String::with_capacity(256),
        frame: None,
        summary: AcmiSummary::default(),
    };
    emitter
        .out
        .write_all("\u{feff}FileType=text/acmi/tacview\nFileVersion=2.2\n".as_bytes())
        .map_err(recfmt_core::Error::Io)?;
    write_globals(&mut emitter, &header, reader.format().name, epoch)?;

    let own_name = header
        .metadata
        .get("meta/aircraft-type")
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .unwrap_or("aircraft")
        .to_owned();
    let mut aircraft: Option<ObjectState> = None;
    let mut players: HashMap<String, ObjectState> = HashMap::new();
    let mut next_id = OWN_ID + 1;
    // The earliest time a live player can expire: players are scanned only past it.
    let mut next_expiry = f64::INFINITY;
    let mut transform: Vec<String> = Vec::with_capacity(6);
    let mut numbers: Vec<(&'static str, String)> = Vec::new();
    let mut buf = FrameBuf::default();
    while reader.read_frame(&mut buf)? {
        let desc = &schema.streams[buf.stream];
        let Some(time) = buf.time_seconds(desc).filter(|t| t.is_finite()) else {
            emitter.summary.skipped += 1;
            continue;
        };
        if time > next_expiry {
            let mut gone: Vec<(String, u64)> = players
                .iter()
                .filter(|(_, p)| time - p.last_seen > EXPIRY_SECONDS)
                .map(|(c, p)| (c.clone(), p.id))
                .collect();
            gone.sort_by_key(|(_, id)| *id);
            for (callsign, id) in gone {
                players.remove(&callsign);
                emitter.remove(time, id)?;
            }
            next_expiry = players
                .values()
                .map(|p| p.last_seen + EXPIRY_SECONDS)
                .fold(f64::INFINITY, f64::min);
        }
        let value = |i: usize| buf.values.get(i).and_then(Value::as_f64);
        if let Some(own) = own.as_ref().filter(|o| o.stream == buf.stream) {
            let Some((lon, lat)) = position(value(own.longitude), value(own.latitude)) else {
                emitter.summary.skipped += 1;
                continue;
            };
            transform.clear();
            transform.push(number(lon, 7));
            transform.push(number(lat, 7));
            let altitude = own
                .altitude
                .and_then(value)
                .map(|ft| ft * FEET_TO_METRES)
                .filter(|a| a.is_finite());
            transform.push(altitude.map_or_else(String::new, |a| number(a, 2)));
            if let Some(columns) = own.orientation {
                for c in columns {
                    let angle = value(c).filter(|a| a.is_finite());
                    transform.push(angle.map_or_else(String::new, |a| number(a, 2)));
                }
            }
            numbers.clear();
            for (mapping, column, factor) in &own.properties {
                if let Some(v) = value(*column).map(|v| v * factor).filter(|v| v.is_finite()) {
                    numbers.push((mapping.property, number(v, mapping.decimals)));
                }
            }
            let state = aircraft.get_or_insert_with(|| {
                emitter.summary.objects += 1;
                ObjectState {
                    id: OWN_ID,
                    ..ObjectState::default()
                }
            });
            emitter.update(
                time,
                state,
                &[("Name", own_name.as_str()), ("Type", AIRCRAFT_TYPE)],
                &transform,
                &numbers,
            )?;
        } else if let Some(mp) = mp.as_ref().filter(|m| m.stream == buf.stream) {
            let callsign = match buf.values.get(mp.callsign) {
                Some(Value::Str(c)) if !c.is_empty() => c.clone(),
                _ => {
                    emitter.summary.skipped += 1;
                    continue;
                }
            };
            let altitude = mp.altitude.and_then(value).filter(|a| a.is_finite());
            // A zero ECEF vector decodes to a point thousands of km below the surface.
            let Some((lon, lat)) = position(value(mp.longitude), value(mp.latitude))
                .filter(|_| altitude.is_none_or(|a| a > -100_000.0))
            else {
                emitter.summary.skipped += 1;
                continue;
            };
            let model = match mp.model.and_then(|m| buf.values.get(m)) {
                Some(Value::Str(m)) => model_name(m).to_owned(),
                _ => String::new(),
            };
            transform.clear();
            transform.push(number(lon, 7));
            transform.push(number(lat, 7));
            transform.push(altitude.map_or_else(String::new, |a| number(a, 2)));
            let player = players.entry(callsign.clone()).or_insert_with(|| {
                emitter.summary.objects += 1;
                let id = next_id;
                next_id += 1;
                ObjectState {
                    id,
                    ..ObjectState::default()
                }
            });
            let name = if model.is_empty() { &callsign } else { &model };
            emitter.update(
                time,
                player,
                &[
                    ("Name", name.as_str()),
                    ("CallSign", callsign.as_str()),
                    ("Type", AIRCRAFT_TYPE),
                ],
                &transform,
                &[],
            )?;
            next_expiry = next_expiry.min(time + EXPIRY_SECONDS);
        }
    }
    emitter.out.flush().map_err(recfmt_core::Error::Io)?;
    Ok((emitter.out, emitter.summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use recfmt_core::{DType, MemoryRecording, SignalDesc, StreamDesc, TimeBase};

    #[test]
    fn numbers_are_rounded_and_trimmed() {
        assert_eq!(number(47.0, 7), "47");
        assert_eq!(number(-122.379_123_44, 7), "-122.3791234");
        assert_eq!(number(-0.000_000_01, 7), "0");
        assert_eq!(number(304.8, 2), "304.8");
    }

    #[test]
    fn positions_are_checked_and_longitudes_normalised() {
        assert_eq!(position(Some(180.0), Some(1.0)), Some((-180.0, 1.0)));
        assert_eq!(position(Some(540.5), Some(1.0)), Some((-179.5, 1.0)));
        assert_eq!(position(Some(0.0), Some(90.5)), None);
        assert_eq!(position(Some(f64::NAN), Some(0.0)), None);
        assert_eq!(position(None, Some(0.0)), None);
    }

    fn multiplayer_schema() -> Schema {
        let mut mp = StreamDesc::new(
            "multiplayer",
            SignalDesc::scalar("t", DType::F64),
            TimeBase::SECONDS,
        );
        mp.signals.push(SignalDesc::scalar("callsign", DType::Str));
        mp.signals.push(SignalDesc::scalar("model", DType::Str));
        for name in ["latitude_deg", "longitude_deg", "altitude_m"] {
            mp.signals.push(SignalDesc::scalar(name, DType::F64));
        }
        Schema { streams: vec![mp] }
    }

    fn packet(t: f64, callsign: &str, lat: f64) -> (usize, Vec<Value>) {
        let text = |s: &str| Value::Str(s.to_owned());
        let values = vec![
            Value::Float(t),
            text(callsign),
            text("Aircraft/ufo/Models/ufo.xml"),
            Value::Float(lat),
            Value::Float(8.0),
            Value::Float(500.0),
        ];
        (0, values)
    }

    fn acmi(recording: &mut MemoryRecording) -> (String, AcmiSummary) {
        let (bytes, summary) = write_acmi(recording, Vec::new(), &AcmiOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        (String::from_utf8(bytes).unwrap_or_default(), summary)
    }

    #[test]
    fn silent_callsigns_are_removed_and_come_back_as_new_objects() {
        let mut header = Header::default();
        header
            .metadata
            .insert("meta/user-data/description".into(), "a, b\n".into());
        let mut recording = MemoryRecording::new(header, multiplayer_schema()).with_rows([
            packet(0.0, "A", 1.0),
            packet(1.0, "A", 1.0),
            packet(1.0, "B", 2.0),
            // A zero ECEF vector: skipped, not a point in the Earth's core.
            (0, {
                let mut v = packet(2.0, "B", 0.0).1;
                v[5] = Value::Float(-6_356_752.0);
                v
            }),
            packet(10.5, "B", 2.5),
            packet(12.0, "A", 1.5),
        ]);
        let (text, summary) = acmi(&mut recording);
        let body: Vec<&str> = text.lines().skip_while(|l| !l.starts_with('#')).collect();
        assert_eq!(
            body,
            [
                "#0",
                "2,Name=ufo,CallSign=A,Type=Air+FixedWing,T=8|1|500",
                "#1",
                "3,Name=ufo,CallSign=B,Type=Air+FixedWing,T=8|2|500",
                "#10.5",
                "3,T=|2.5|",
                "#12",
                "-2",
                "4,Name=ufo,CallSign=A,Type=Air+FixedWing,T=8|1.5|500",
            ]
        );
        assert!(text.contains("\n0,Title=a\\, b\n"), "{text}");
        assert_eq!(
            summary,
            AcmiSummary {
                frames: 4,
                objects: 3,
                removed: 1,
                skipped: 1
            }
        );
    }

    #[test]
    fn an_epoch_gives_the_reference_time() {
        let mut recording = MemoryRecording::new(Header::default(), multiplayer_schema())
            .with_rows([packet(0.5, "A", 1.0)]);
        let options = AcmiOptions {
            epoch: Some(1_700_000_000.0),
        };
        let (bytes, _) =
            write_acmi(&mut recording, Vec::new(), &options).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8(bytes).unwrap_or_default();
        assert!(
            text.contains("\n0,ReferenceTime=2023-11-14T22:13:20.000Z\n"),
            "{text}"
        );
        assert!(text.contains("\n#0.5\n"), "{text}");
    }

    #[test]
    fn a_recording_without_positions_is_refused() {
        let stream = StreamDesc::new("x", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
        let mut recording = MemoryRecording::new(
            Header::default(),
            Schema {
                streams: vec![stream],
            },
        );
        let err = write_acmi(&mut recording, Vec::new(), &AcmiOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("nothing to write as ACMI"), "{err}");
    }

    #[test]
    fn model_names() {
        assert_eq!(model_name("Aircraft/c172p/Models/c172p.xml"), "c172p");
        assert_eq!(model_name("ufo"), "ufo");
    }
}
