//! The generic model written as a Continuous tape ([`FgTapeWriter`]).

use std::path::{Path, PathBuf};

use recfmt_core::{
    AtomicFile, DType, FrameBuf, Header, RecordingWriter, Replace, Schema, Shape, Value,
};

use crate::continuous::{
    self, ContinuousFrame, ContinuousHeader, ExtraProperty, ITEM_EXTRA_PROPERTIES,
    ITEM_MULTIPLAYER, ITEM_SIGNALS,
};
use crate::error::FORMAT_ID;
use crate::props::{PropValue, PropertyList};
use crate::signals::{Interpolation, SignalType, SignalValue, normalise};

/// Writes recordings from the generic model as FlightGear Continuous tapes (spec §5).
///
/// What fits:
///
/// * a `signals` stream (or, when no stream has that name, the only stream besides the two
///   below): the time column (any time base; written as seconds) and scalar signals of type
///   f64, f32, i32, i16, i8 or bool, which become `double`, `float`, `int`, `int16`, `int8`
///   and `bool` signals (u8 and u16 are widened to `int16` and `int`). The property path is
///   the column's `property` metadata (as [`crate::FgTape`] sets it), else its name when that
///   starts with `/`, else `/` plus the name with characters outside `A-Za-z0-9_.-/`
///   replaced by `_`. The `interpolation` metadata is kept (default `linear`);
/// * a `multiplayer` stream with a `packet` (bytes) column: each row is one packet;
/// * an `extra_properties` stream with `path` and `value` (text) and `removed` (bool)
///   columns.
///
/// Anything else makes [`RecordingWriter::write_header`] fail with a list of what does not
/// fit. Rows with the same time make one frame (rows arrive in time order, as
/// [`crate::FgTape`] emits them: each frame's signals row, then its packets and records); a
/// second signals row at the same time starts a new frame. A null signal value, or a frame
/// with multiplayer or extra-property rows but no signals row, repeats the signal's last
/// value (zero before the first). Integer values must fit their type.
///
/// The Meta tree gets the header's `meta/...` metadata (as text), `tape-duration` 0 and
/// `continuous-compression`. Frames are uncompressed unless [`FgTapeWriter::compressed`] is
/// set. [`FgTapeWriter::recovery`] writes a Recovery tape instead. The file appears under its
/// name only when [`RecordingWriter::finish`] succeeds.
///
/// ```
/// use recfmt_core::{DType, FrameBuf, Header, RecordingReader, RecordingWriter, Schema, SignalDesc, StreamDesc, TimeBase, Value};
/// use recfmt_fgtape::{FgTape, FgTapeWriter};
///
/// let mut stream = StreamDesc::new("signals", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
/// stream.signals.push(SignalDesc::scalar("/position/altitude-ft", DType::F64));
/// stream.signals.push(SignalDesc::scalar("/gear/gear/wow", DType::Bool));
/// let schema = Schema { streams: vec![stream] };
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("ufo-continuous.fgtape");
/// let mut w = FgTapeWriter::create(&path);
/// w.write_header(&Header::default(), &schema)?;
/// for i in 0..3 {
///     let values = vec![Value::Float(f64::from(i)), Value::Float(100.0 * f64::from(i)), Value::Bool(i == 0)];
///     w.write_frame(&FrameBuf { stream: 0, values })?;
/// }
/// w.finish()?;
///
/// let mut tape = FgTape::open(&path, &Default::default())?;
/// let mut row = FrameBuf::default();
/// assert!(tape.read_frame(&mut row)?);
/// assert_eq!(row.values, [Value::Float(0.0), Value::Float(0.0), Value::Bool(true)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FgTapeWriter {
    path: PathBuf,
    replace: Replace,
    compression: bool,
    recovery: bool,
    open: Option<Open>,
}

/// A signal to record: property path, type, interpolation.
type PlannedSignal = (String, SignalType, Interpolation);

/// How the rows of the input map onto frame items.
#[derive(Debug)]
struct Plan {
    /// Stream index of the signals, and per column (time column excluded) the signal
    /// position in frame order.
    signals: Option<(usize, Vec<Column>)>,
    /// Stream index and `packet` column.
    multiplayer: Option<(usize, usize)>,
    /// Stream index and the `path`, `value`, `removed` columns.
    extra: Option<(usize, usize, usize, Option<usize>)>,
    /// Item positions in every frame.
    items: [Option<usize>; 3],
}

#[derive(Debug, Clone)]
struct Column {
    /// Index in the stream's signals.
    source: usize,
    /// Position in frame order.
    slot: usize,
    ty: SignalType,
    name: String,
}

#[derive(Debug)]
struct Open {
    writer: continuous::Writer<AtomicFile>,
    header: ContinuousHeader,
    plan: Plan,
    schema: Schema,
    /// The last value of every signal, in frame order.
    held: Vec<SignalValue>,
    /// The frame being gathered: its time, whether it has a signals row, packets, records.
    pending: Option<Pending>,
    rows: u64,
    /// A Recovery tape: only the last frame is written, at the end.
    recovery: bool,
    /// The time of the last frame gathered (Recovery tapes).
    latest: Option<f64>,
}

#[derive(Debug, Default)]
struct Pending {
    time: f64,
    has_signals: bool,
    packets: Vec<Vec<u8>>,
    extra: Vec<ExtraProperty>,
}

impl FgTapeWriter {
    /// A writer that will create the tape at `path` when the header is written (an existing
    /// file is kept: see [`FgTapeWriter::with_replace`]).
    pub fn create(path: impl AsRef<Path>) -> Self {
        FgTapeWriter {
            path: path.as_ref().to_path_buf(),
            replace: Replace::Never,
            compression: false,
            recovery: false,
            open: None,
        }
    }

    /// Whether an existing file at the path may be replaced.
    pub fn with_replace(mut self, replace: Replace) -> Self {
        self.replace = replace;
        self
    }

    /// Writes every frame as raw DEFLATE (`continuous-compression` 1, FlightGear `next` from
    /// 2021-07-31 and 2024.1) instead of uncompressed.
    pub fn compressed(mut self, compression: bool) -> Self {
        self.compression = compression;
        self
    }

    /// Writes a Recovery tape (spec §6), the file FlightGear rewrites every few seconds to
    /// resume a flight from: only a `signals` item, no `continuous-compression` key, and one
    /// uncompressed frame holding the recording's last time and every signal's last value.
    /// The recording may hold only the signals stream; [`FgTapeWriter::compressed`] has no
    /// effect.
    pub fn recovery(mut self, recovery: bool) -> Self {
        self.recovery = recovery;
        self
    }

    fn plan(&self, schema: &Schema) -> recfmt_core::Result<(Plan, Vec<PlannedSignal>)> {
        let mut misfits = Vec::new();
        let by_name = |name: &str| schema.stream_index(name);
        let multiplayer_stream = by_name("multiplayer");
        let extra_stream = by_name("extra_properties");
        let others: Vec<usize> = (0..schema.streams.len())
            .filter(|&i| Some(i) != multiplayer_stream && Some(i) != extra_stream)
            .collect();
        let signals_stream = by_name("signals").or(match others.as_slice() {
            [only] => Some(*only),
            _ => None,
        });
        for &i in &others {
            if Some(i) != signals_stream {
                misfits.push(format!(
                    "stream {:?} (a Continuous tape holds one signals stream, plus multiplayer and extra_properties)",
                    schema.streams[i].name
                ));
            }
        }
        let mut signals = Vec::new();
        let mut columns = Vec::new();
        if let Some(s) = signals_stream {
            let desc = &schema.streams[s];
            let mut seen: std::collections::HashMap<String, String> = Default::default();
            for (k, sig) in desc.signals.iter().enumerate() {
                if k == desc.time {
                    if !is_number(sig.dtype) || sig.shape != Shape::Scalar {
                        misfits.push(format!(
                            "{}/{}: the time column must be a number",
                            desc.name, sig.name
                        ));
                    }
                    continue;
                }
                let ty = match (sig.dtype, &sig.shape) {
                    (_, Shape::Fixed(_) | Shape::Variable) => None,
                    (DType::F64, _) => Some(SignalType::Double),
                    (DType::F32, _) => Some(SignalType::Float),
                    (DType::I32 | DType::U16, _) => Some(SignalType::Int),
                    (DType::I16 | DType::U8, _) => Some(SignalType::Int16),
                    (DType::I8, _) => Some(SignalType::Int8),
                    (DType::Bool, _) => Some(SignalType::Bool),
                    _ => None,
                };
                let Some(ty) = ty else {
                    misfits.push(format!(
                        "{}/{}: {} {} (signals are scalar f64, f32, i32, i16, i8, bool, u8 or u16)",
                        desc.name,
                        sig.name,
                        match sig.shape {
                            Shape::Scalar => "scalar",
                            _ => "array of",
                        },
                        sig.dtype
                    ));
                    continue;
                };
                let property =
                    property_path(sig.metadata.get("property").map(String::as_str), &sig.name);
                if let Some(other) = seen.insert(normalise(&property), sig.name.clone()) {
                    misfits.push(format!(
                        "{}/{}: property {property} is also {other:?}'s",
                        desc.name, sig.name
                    ));
                    continue;
                }
                let interpolation = sig
                    .metadata
                    .get("interpolation")
                    .and_then(|i| Interpolation::parse(i))
                    .unwrap_or(Interpolation::Linear);
                columns.push(Column {
                    source: k,
                    slot: 0,
                    ty,
                    name: sig.name.clone(),
                });
                signals.push((property, ty, interpolation));
            }
        }
        let column = |stream: usize, name: &str, dtypes: &[DType], misfits: &mut Vec<String>| {
            let desc = &schema.streams[stream];
            match desc.signal_index(name) {
                Some(i) if dtypes.contains(&desc.signals[i].dtype) => Some(i),
                _ => {
                    misfits.push(format!(
                        "{}: needs a {name} column of type {}",
                        desc.name,
                        dtypes
                            .iter()
                            .map(|d| d.name())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ));
                    None
                }
            }
        };
        let multiplayer = multiplayer_stream
            .and_then(|s| Some((s, column(s, "packet", &[DType::Bytes], &mut misfits)?)));
        let extra = extra_stream.and_then(|s| {
            let path = column(s, "path", &[DType::Str], &mut misfits);
            let value = column(s, "value", &[DType::Str], &mut misfits);
            let removed = schema.streams[s].signal_index("removed");
            Some((s, path?, value?, removed))
        });
        if self.recovery {
            for (present, name) in [
                (multiplayer_stream, "multiplayer"),
                (extra_stream, "extra_properties"),
            ] {
                if present.is_some() {
                    misfits.push(format!(
                        "stream {name:?} (a Recovery tape holds only signals)"
                    ));
                }
            }
            if signals_stream.is_none() {
                misfits.push("no signals stream (a Recovery tape holds signals)".into());
            }
        }
        if signals_stream.is_none() && multiplayer_stream.is_none() && extra_stream.is_none() {
            misfits.push("no stream to write (a Continuous tape needs signals, multiplayer or extra_properties)".into());
        }
        if !misfits.is_empty() {
            return Err(recfmt_core::Error::unsupported(
                FORMAT_ID,
                format!(
                    "writing this recording as a Continuous tape: {}",
                    misfits.join("; ")
                ),
            ));
        }
        // Frame order: by type, then in column order (as FlightGear's getConfig lists them).
        let mut order: Vec<usize> = (0..signals.len()).collect();
        order.sort_by_key(|&i| signals[i].1);
        for (slot, &i) in order.iter().enumerate() {
            columns[i].slot = slot;
        }
        let ordered = order.iter().map(|&i| signals[i].clone()).collect();
        let mut items = [None; 3];
        let mut n = 0;
        for (k, present) in [
            signals_stream.is_some(),
            multiplayer.is_some(),
            extra.is_some(),
        ]
        .into_iter()
        .enumerate()
        {
            if present {
                items[k] = Some(n);
                n += 1;
            }
        }
        Ok((
            Plan {
                signals: signals_stream.map(|s| (s, columns)),
                multiplayer,
                extra,
                items,
            },
            ordered,
        ))
    }

    fn header_tree(&self, header: &Header, plan: &Plan, signals: &[PlannedSignal]) -> PropertyList {
        let mut t = PropertyList::new();
        for (key, value) in &header.metadata {
            let skip = [
                "meta/tape-duration",
                "meta/tape-duration-str",
                "meta/continuous-compression",
                "meta/multiplayer",
            ];
            if key.starts_with("meta/") && !skip.contains(&key.as_str()) && valid_path(key) {
                t.root.set(key, PropValue::string(value.clone()));
            }
        }
        // FlightGear writes no compression key into Recovery tapes: their frame is never
        // compressed.
        if !self.recovery {
            t.root.set(
                "meta/continuous-compression",
                PropValue::int(i32::from(self.compression)),
            );
        }
        t.root.set("meta/tape-duration", PropValue::double(0.0));
        t.root
            .set("meta/tape-duration-str", PropValue::string("0:00"));
        let names = [ITEM_SIGNALS, ITEM_MULTIPLAYER, ITEM_EXTRA_PROPERTIES];
        for (k, name) in names.iter().enumerate() {
            if let Some(n) = plan.items[k] {
                t.root.set(&format!("data[{n}]"), PropValue::string(*name));
            }
        }
        if plan.signals.is_some() {
            let recorder = header
                .metadata
                .get("fgtape.recorder")
                .cloned()
                .unwrap_or_else(|| "recfmt flight recorder".to_owned());
            t.root.set("signals/name", PropValue::string(recorder));
            for (n, (property, ty, interpolation)) in signals.iter().enumerate() {
                let base = format!("signals/signals/signal[{n}]");
                t.root
                    .set(&format!("{base}/type"), PropValue::string(ty.name()));
                t.root.set(
                    &format!("{base}/interpolation"),
                    PropValue::string(interpolation.name()),
                );
                t.root.set(
                    &format!("{base}/property"),
                    PropValue::string(property.clone()),
                );
            }
            let mut record_size = 8usize;
            for ty in SignalType::ALL {
                let count = signals.iter().filter(|s| s.1 == ty).count();
                record_size += match ty {
                    SignalType::Double => 8 * count,
                    SignalType::Float | SignalType::Int => 4 * count,
                    SignalType::Int16 => 2 * count,
                    SignalType::Int8 => count,
                    SignalType::Bool => count.div_ceil(8),
                };
                t.root.set(
                    &format!("signals/{}", ty.name()),
                    PropValue::int(i32::try_from(count).unwrap_or(i32::MAX)),
                );
            }
            t.root.set(
                "signals/recorder/record-size",
                PropValue::int(i32::try_from(record_size).unwrap_or(i32::MAX)),
            );
            t.root.set(
                "signals/recorder/signal-count",
                PropValue::int(i32::try_from(signals.len()).unwrap_or(i32::MAX)),
            );
        }
        t
    }
}

fn is_number(d: DType) -> bool {
    d.size().is_some()
}

/// A property path for a column: its `property` metadata or name when that is a valid
/// absolute path, else the name made into one.
fn property_path(property: Option<&str>, name: &str) -> String {
    if let Some(p) = property.filter(|p| p.starts_with('/') && valid_path(p)) {
        return p.to_owned();
    }
    if name.starts_with('/') && valid_path(name) {
        return name.to_owned();
    }
    let steps: Vec<String> = name
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|step| {
            let mut clean: String = step
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if clean.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-') {
                clean.insert(0, '_');
            }
            clean
        })
        .collect();
    if steps.is_empty() {
        "/_".to_owned()
    } else {
        format!("/{}", steps.join("/"))
    }
}

/// A path SimGear can hold: steps of `A-Za-z0-9_.-`, each optionally with `[n]`.
fn valid_path(path: &str) -> bool {
    path.trim_start_matches('/').split('/').all(|step| {
        let (name, index) = match step.split_once('[') {
            Some((n, rest)) => (n, Some(rest)),
            None => (step, None),
        };
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            && !name.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
            && index.is_none_or(|i| {
                i.strip_suffix(']')
                    .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
            })
    })
}

fn invalid(message: String) -> recfmt_core::Error {
    recfmt_core::Error::invalid(message)
}

impl Open {
    /// Writes the pending frame; for a Recovery tape only notes its time (the one frame is
    /// written by [`Open::finish`]).
    fn flush(&mut self) -> recfmt_core::Result<()> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        if self.recovery {
            self.latest = Some(p.time);
            return Ok(());
        }
        self.write(p)
    }

    /// The last frame gathered, then the file (not yet under its name).
    fn finish(mut self) -> recfmt_core::Result<AtomicFile> {
        self.flush()?;
        if self.recovery {
            let time = self.latest.ok_or_else(|| {
                invalid("a Recovery tape holds one frame, and the recording has no row".into())
            })?;
            self.write(Pending {
                time,
                has_signals: true,
                ..Pending::default()
            })?;
        }
        Ok(self.writer.finish()?)
    }

    /// Writes a frame: the signals as held now, and the pending packets and records.
    fn write(&mut self, p: Pending) -> recfmt_core::Result<()> {
        let mut items = vec![Vec::new(); self.header.data.len()];
        if let (Some(i), Some(layout)) = (self.plan.items[0], &self.header.signals) {
            let mut block = layout.encode(&self.held)?;
            block.extend_from_slice(&[0; 8]);
            items[i] = block;
        }
        if let Some(i) = self.plan.items[1] {
            items[i] = crate::mp::join_u16_packets(p.packets.iter().map(Vec::as_slice))?;
        }
        if let Some(i) = self.plan.items[2] {
            items[i] = continuous::encode_extra_properties(&p.extra)?;
        }
        self.writer.write_frame(&ContinuousFrame {
            time: p.time,
            items,
            deflate: None,
        })?;
        Ok(())
    }

    /// The pending frame for a row at `time`; `signals` rows start a new frame when the
    /// pending one already has its signals.
    fn frame_at(&mut self, time: f64, signals: bool) -> recfmt_core::Result<&mut Pending> {
        let fresh = match &self.pending {
            Some(p) => p.time != time || (signals && p.has_signals),
            None => true,
        };
        if fresh {
            self.flush()?;
            self.pending = Some(Pending {
                time,
                ..Pending::default()
            });
        }
        self.pending
            .as_mut()
            .ok_or_else(|| invalid("no pending frame".into()))
    }

    fn signal_value(&self, c: &Column, v: &Value) -> recfmt_core::Result<Option<SignalValue>> {
        let bad = || {
            invalid(format!(
                "row {}: {} = {v:?} does not fit a {} signal",
                self.rows, c.name, c.ty
            ))
        };
        let int = || -> recfmt_core::Result<i64> {
            match v {
                Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
                _ => v.as_i64().ok_or_else(bad),
            }
        };
        if matches!(v, Value::Null) {
            return Ok(None);
        }
        Ok(Some(match c.ty {
            SignalType::Double => SignalValue::Double(v.as_f64().ok_or_else(bad)?),
            SignalType::Float => SignalValue::Float(v.as_f64().ok_or_else(bad)? as f32),
            SignalType::Int => SignalValue::Int(i32::try_from(int()?).map_err(|_| bad())?),
            SignalType::Int16 => SignalValue::Int16(i16::try_from(int()?).map_err(|_| bad())?),
            SignalType::Int8 => SignalValue::Int8(i8::try_from(int()?).map_err(|_| bad())?),
            SignalType::Bool => SignalValue::Bool(v.as_f64().ok_or_else(bad)? != 0.0),
        }))
    }
}

impl RecordingWriter for FgTapeWriter {
    fn write_header(&mut self, header: &Header, schema: &Schema) -> recfmt_core::Result<()> {
        if self.open.is_some() {
            return Err(invalid("the header was already written".into()));
        }
        let (plan, signals) = self.plan(schema)?;
        let tree = self.header_tree(header, &plan, &signals);
        let continuous_header = ContinuousHeader::new(tree)?;
        // The layout FlightGear will derive must be the planned one, signal for signal.
        let held = match &continuous_header.signals {
            Some(layout) => {
                let derived: Vec<(&str, SignalType)> = layout
                    .signals()
                    .iter()
                    .map(|s| (s.property.as_str(), s.ty))
                    .collect();
                let planned: Vec<(&str, SignalType)> =
                    signals.iter().map(|s| (s.0.as_str(), s.1)).collect();
                if derived != planned {
                    return Err(invalid(format!(
                        "the signal list does not survive as a FlightGear config ({} signals planned, {} derived)",
                        planned.len(),
                        derived.len()
                    )));
                }
                layout
                    .signals()
                    .iter()
                    .map(|s| match s.ty {
                        SignalType::Double => SignalValue::Double(0.0),
                        SignalType::Float => SignalValue::Float(0.0),
                        SignalType::Int => SignalValue::Int(0),
                        SignalType::Int16 => SignalValue::Int16(0),
                        SignalType::Int8 => SignalValue::Int8(0),
                        SignalType::Bool => SignalValue::Bool(false),
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let file = AtomicFile::create(&self.path, self.replace)?;
        let writer = continuous::Writer::new(file, &continuous_header)?;
        self.open = Some(Open {
            writer,
            header: continuous_header,
            plan,
            schema: schema.clone(),
            held,
            pending: None,
            rows: 0,
            recovery: self.recovery,
            latest: None,
        });
        Ok(())
    }

    fn write_frame(&mut self, frame: &FrameBuf) -> recfmt_core::Result<()> {
        let open = self
            .open
            .as_mut()
            .ok_or_else(|| invalid("write_header must come before write_frame".into()))?;
        open.rows += 1;
        let desc = open
            .schema
            .streams
            .get(frame.stream)
            .ok_or_else(|| invalid(format!("row {}: no stream {}", open.rows, frame.stream)))?;
        let time = frame
            .time_seconds(desc)
            .filter(|t| t.is_finite())
            .ok_or_else(|| {
                invalid(format!(
                    "row {} of stream {:?} has no finite time",
                    open.rows, desc.name
                ))
            })?;
        let value = |i: usize| frame.values.get(i).unwrap_or(&Value::Null);
        if let Some((s, columns)) = &open.plan.signals
            && *s == frame.stream
        {
            let mut updates = Vec::with_capacity(columns.len());
            for c in columns {
                if let Some(v) = open.signal_value(c, value(c.source))? {
                    updates.push((c.slot, v));
                }
            }
            // The pending frame is written with the values held so far, so start the new
            // frame before taking this row's values.
            open.frame_at(time, true)?.has_signals = true;
            for (slot, v) in updates {
                open.held[slot] = v;
            }
        } else if let Some((s, packet)) = open.plan.multiplayer
            && s == frame.stream
        {
            let bytes = match value(packet) {
                Value::Bytes(b) => b.clone(),
                Value::Null => return Ok(()),
                other => {
                    return Err(invalid(format!(
                        "row {}: multiplayer packet is {other:?}, not bytes",
                        open.rows
                    )));
                }
            };
            if bytes.len() > usize::from(u16::MAX) {
                return Err(invalid(format!(
                    "row {}: multiplayer packet of {} bytes exceeds 65535",
                    open.rows,
                    bytes.len()
                )));
            }
            open.frame_at(time, false)?.packets.push(bytes);
        } else if let Some((s, path, val, removed)) = open.plan.extra
            && s == frame.stream
        {
            let text = |v: &Value| match v {
                Value::Str(s) => Some(s.clone()),
                _ => None,
            };
            let rows = open.rows;
            let path = text(value(path))
                .ok_or_else(|| invalid(format!("row {rows}: extra property without a path")))?;
            let removed = removed.is_some_and(|r| value(r).as_f64().is_some_and(|b| b != 0.0));
            let record = match (removed, text(value(val))) {
                (false, Some(value)) => ExtraProperty::Change { path, value },
                _ => ExtraProperty::Removal { path },
            };
            open.frame_at(time, false)?.extra.push(record);
        } else {
            return Err(invalid(format!(
                "row {}: stream {:?} is not written to the tape",
                open.rows, desc.name
            )));
        }
        Ok(())
    }

    fn finish(&mut self) -> recfmt_core::Result<()> {
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        open.finish()?.commit()?;
        Ok(())
    }
}

/// The registry's [`recfmt_core::CreateFn`].
pub(crate) fn create(
    path: &Path,
    write: &recfmt_core::WriteOptions,
) -> recfmt_core::Result<Box<dyn RecordingWriter>> {
    recfmt_core::atomic::check_target(path, write.replace)?;
    Ok(Box::new(
        FgTapeWriter::create(path).with_replace(write.replace),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_paths() {
        assert_eq!(property_path(Some("/a[0]/b[1]"), "x"), "/a[0]/b[1]");
        assert_eq!(
            property_path(None, "/position/altitude-ft"),
            "/position/altitude-ft"
        );
        assert_eq!(property_path(None, "speed (m/s)"), "/speed__m/s_");
        assert_eq!(property_path(Some("relative"), "x%i"), "/x_i");
        assert_eq!(property_path(None, "/bad name"), "/bad_name");
        assert_eq!(property_path(None, ""), "/_");
        assert_eq!(property_path(None, "/a//b"), "/a/b");
        assert_eq!(property_path(None, "1st/a[x]"), "/_1st/a_x_");
        assert!(valid_path("/a-b/c.d[12]/_e"));
        assert!(!valid_path("/a[x]"));
        assert!(!valid_path("/1a"));
        assert!(!valid_path("/a//b"));
    }
}
