//! A small made-up format, the *beacon log*, as a template for adding a format to recfmt.
//! Copy this crate, rename it, and replace the parsing: the rest (descriptor, registry,
//! conversion to Parquet/CSV/HDF5, `info`, `validate`) comes with the registry.
//!
//! A beacon log is text. The first line is the magic `BEACONLOG 1`; every other line is
//! either empty, a `#` comment, or one ping: `<seconds> <beacon id> <rssi dBm>`, e.g.
//!
//! ```text
//! BEACONLOG 1
//! # site: roof
//! 0.00 7 -61.5
//! 0.25 9 -80
//! ```
//!
//! It reads as one stream, `pings`, with the signals `t` (f64, s), `beacon` (u32) and `rssi`
//! (f32, dBm). A last line cut short (no newline, not a whole ping) is dropped and reported as
//! lost data; a bad line elsewhere is an error naming its byte offset (with `strict`, so is a
//! cut last line).
//!
//! What the descriptor declares besides reading:
//!
//! * an option, `min_rssi` (`--opt beacon.min_rssi=-70`): pings weaker than that are left out;
//! * a named query, `beacons` (`recfmt beacon beacons LOG [--json]`): pings per beacon.
//!
//! A reader implements [`RecordingReader::read_row`]: it decodes one record and pushes its
//! values, in the schema's signal order, to a [`RowWriter`]. From that one method come the row
//! view (`read_frame`) and the typed column view (`read_batches`) that conversions use, with
//! no column code in the reader: a value lands in its column's vector when its type is the
//! column's, and a value of another type is converted exactly or refused, never dropped.
//! [`binary`] is the same format as fixed 16-byte records, read streaming: the shape of a fast
//! binary reader (it converts to Parquet as fast as the built-in USVLOG reader, see
//! `cargo xtask bench custom`).
//!
//! Registering it is one line:
//!
//! ```
//! let mut registry = recfmt_core::Registry::default();
//! registry.register(&recfmt_example::FORMAT);
//! let format = registry.detect(b"BEACONLOG 1\n0 1 -50\n", Some("beacon")).unwrap();
//! assert_eq!(format.info.id, "beacon");
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use recfmt_core::{
    DType, Error, FormatDescriptor, FormatInfo, FormatOption, FormatOptions, Header, Integrity,
    OptionKind, Query, QueryForm, ReadOptions, RecordingReader, Result, ResultExt, RowWriter,
    Schema, Score, SignalDesc, StreamDesc, Tier, TimeBase,
};

pub mod binary;

/// The format id, used by `--format`, `--to` and in errors.
pub const FORMAT_ID: &str = "beacon";

/// The first line of every beacon log.
pub const MAGIC: &str = "BEACONLOG 1";

const INFO: FormatInfo = FormatInfo {
    id: FORMAT_ID,
    name: "Beacon log (example format)",
    extensions: &["beacon"],
};

/// The descriptor the registry holds: detection, opening, one option and one query.
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    options: &[FormatOption {
        key: "min_rssi",
        kind: OptionKind::Number,
        default: None,
        help: "leave out pings weaker than this (dBm)",
    }],
    queries: &[Query {
        name: "beacons",
        help: "pings per beacon",
        params: &[],
        run: beacons_query,
    }],
    ..FormatDescriptor::new(INFO, Tier::Magic, score, open)
};

/// Sure (255) when the first line is the magic, else not this format.
pub fn score(head: &[u8]) -> Score {
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    if first.strip_suffix(b"\r").unwrap_or(first) == MAGIC.as_bytes() {
        Score::Yes(255)
    } else {
        Score::No
    }
}

fn open(path: &Path, options: &ReadOptions) -> Result<Box<dyn RecordingReader>> {
    let text = std::fs::read(path).in_file(path)?;
    Ok(Box::new(
        BeaconRecording::parse(text, options).in_file(path)?,
    ))
}

/// One ping.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ping {
    /// Seconds since the start of the log.
    pub t: f64,
    /// Which beacon.
    pub beacon: u32,
    /// Received signal strength, dBm.
    pub rssi: f32,
}

/// A beacon log read into memory (logs are small), as a [`RecordingReader`].
#[derive(Debug)]
pub struct BeaconRecording {
    header: Header,
    schema: Schema,
    pings: Vec<Ping>,
    next: usize,
    integrity: Integrity,
    bytes: u64,
}

impl BeaconRecording {
    /// Parses a whole log. `options.format_options` may hold `min_rssi`.
    pub fn parse(text: Vec<u8>, options: &ReadOptions) -> Result<Self> {
        let min_rssi = options.format_options.get_f64("min_rssi");
        let mut integrity = Integrity::default();
        let mut pings = Vec::new();
        let mut offset = 0usize;
        let mut lines = text.split_inclusive(|&b| b == b'\n').peekable();
        let first = lines.next().unwrap_or_default();
        if first.trim_ascii() != MAGIC.as_bytes() {
            return Err(Error::malformed(
                FORMAT_ID,
                0,
                format!("the line {MAGIC:?}"),
            ));
        }
        offset += first.len();
        while let Some(line) = lines.next() {
            let at = offset as u64;
            offset += line.len();
            let body = line.trim_ascii();
            if body.is_empty() || body.starts_with(b"#") {
                continue;
            }
            match parse_ping(body) {
                Some(ping) => {
                    if min_rssi.is_none_or(|min| f64::from(ping.rssi) >= min) {
                        pings.push(ping);
                    }
                }
                None if lines.peek().is_none() && !line.ends_with(b"\n") && !options.strict => {
                    integrity.truncate(at, line.len() as u64);
                    integrity.warn(format!("the last line (byte {at}) is cut short"));
                }
                None => {
                    return Err(Error::malformed(
                        FORMAT_ID,
                        at,
                        "a ping: <seconds> <beacon id> <rssi dBm>",
                    ));
                }
            }
        }
        let mut stream = StreamDesc::new(
            "pings",
            SignalDesc::scalar("t", DType::F64).with_unit("s"),
            TimeBase::SECONDS,
        );
        stream
            .signals
            .push(SignalDesc::scalar("beacon", DType::U32));
        stream
            .signals
            .push(SignalDesc::scalar("rssi", DType::F32).with_unit("dBm"));
        Ok(BeaconRecording {
            header: Header {
                format: FORMAT_ID,
                version: "1".into(),
                ..Header::default()
            },
            schema: Schema {
                streams: vec![stream],
            },
            pings,
            next: 0,
            integrity,
            bytes: text.len() as u64,
        })
    }

    /// Every ping kept, in file order.
    pub fn pings(&self) -> &[Ping] {
        &self.pings
    }
}

fn parse_ping(line: &[u8]) -> Option<Ping> {
    let text = std::str::from_utf8(line).ok()?;
    let mut fields = text.split_ascii_whitespace();
    let ping = Ping {
        t: fields.next()?.parse().ok()?,
        beacon: fields.next()?.parse().ok()?,
        rssi: fields.next()?.parse().ok()?,
    };
    (fields.next().is_none() && ping.t.is_finite()).then_some(ping)
}

impl RecordingReader for BeaconRecording {
    fn format(&self) -> &'static FormatInfo {
        &FORMAT.info
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// One ping a call, its values pushed in the schema's signal order with their own
    /// types: the same code gives `read_frame`'s rows and `read_batches`' typed columns.
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        let Some(ping) = self.pings.get(self.next) else {
            return Ok(false);
        };
        self.next += 1;
        if row.begin(0)? {
            row.push(ping.t)?;
            row.push(ping.beacon)?;
            row.push(ping.rssi)?;
            row.finish()?;
        }
        Ok(true)
    }

    fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    fn progress(&self) -> (u64, Option<u64>) {
        let done = self.bytes * self.next as u64 / self.pings.len().max(1) as u64;
        (done, Some(self.bytes))
    }
}

/// The `beacons` query: how many pings each beacon sent, as text (`beacon 7: 12 pings`) or
/// JSON (`{"7": 12}`).
fn beacons_query(
    path: &Path,
    _: &FormatOptions,
    form: QueryForm,
    out: &mut dyn Write,
) -> Result<()> {
    let text = std::fs::read(path).in_file(path)?;
    let recording = BeaconRecording::parse(text, &ReadOptions::default()).in_file(path)?;
    let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
    for ping in recording.pings() {
        *counts.entry(ping.beacon).or_default() += 1;
    }
    match form {
        QueryForm::Text => {
            for (beacon, n) in &counts {
                writeln!(out, "beacon {beacon}: {n} pings")?;
            }
        }
        QueryForm::Json => {
            let fields: Vec<String> = counts
                .iter()
                .map(|(b, n)| format!("\"{b}\": {n}"))
                .collect();
            writeln!(out, "{{{}}}", fields.join(", "))?;
        }
    }
    Ok(())
}
