//! The streams of a tape, declared once each, and the one writing of their rows: every row
//! goes through a [`RowWriter`], which serves both the row and the column views.

use recfmt_core::{DType, Result, RowWriter, Schema, SignalDesc, StreamDesc, TimeBase};

use crate::continuous::ExtraProperty;
use crate::mp::{MpHeader, PositionMsg};
use crate::signals::SignalLayout;

/// The `t` column every stream starts with.
fn time() -> SignalDesc {
    SignalDesc::scalar("t", DType::F64).with_unit("s")
}

/// The streams of a tape with these parts, and the index of `signals`, `multiplayer` and
/// `extra_properties` in it.
pub(super) fn schema(
    layout: Option<&SignalLayout>,
    has_mp: bool,
    has_extra: bool,
) -> (Schema, [Option<usize>; 3]) {
    let mut schema = Schema::default();
    let mut streams = [None; 3];
    let parts = [
        layout.map(signals_stream),
        has_mp.then(multiplayer_stream),
        has_extra.then(extra_stream),
    ];
    for (slot, stream) in parts.into_iter().enumerate() {
        if let Some(stream) = stream {
            streams[slot] = Some(schema.streams.len());
            schema.streams.push(stream);
        }
    }
    (schema, streams)
}

/// `signals`: `t`, then one column per signal of the layout, in frame order.
fn signals_stream(layout: &SignalLayout) -> StreamDesc {
    let mut s = StreamDesc::new("signals", time(), TimeBase::SECONDS);
    let mut used = std::collections::HashSet::new();
    for sig in layout.signals() {
        let mut name = sig.name();
        let mut k = 2;
        while !used.insert(name.clone()) {
            name = format!("{}#{k}", sig.name());
            k += 1;
        }
        let mut d = SignalDesc::scalar(name, sig.ty.dtype());
        d.metadata.insert("property".into(), sig.property.clone());
        d.metadata
            .insert("interpolation".into(), sig.interpolation.name().into());
        d.metadata
            .insert("fgtape.type".into(), sig.ty.name().into());
        s.signals.push(d);
    }
    s
}

/// Writes a `signals` row: `t`, then the block's values. The block length is checked even
/// when the stream is not wanted, so a short block fails in every view.
pub(super) fn write_signals(
    layout: &SignalLayout,
    stream: usize,
    time: f64,
    block: &[u8],
    row: &mut RowWriter<'_>,
) -> Result<()> {
    layout.check_block(block)?;
    if !row.begin(stream)? {
        return Ok(());
    }
    if row.wants_next() {
        row.push(time)?;
    } else {
        row.skip()?;
    }
    if !row.skip_rest() {
        layout.write_row(block, row)?;
    }
    row.finish()
}

/// `multiplayer`: one row per packet, written by [`Pending::write`].
fn multiplayer_stream() -> StreamDesc {
    let mut s = StreamDesc::new("multiplayer", time(), TimeBase::SECONDS);
    s.signals.push(SignalDesc::scalar("callsign", DType::Str));
    s.signals.push(SignalDesc::scalar("msg_id", DType::U32));
    // Decoded from position messages (null for other messages).
    s.signals.push(SignalDesc::scalar("model", DType::Str));
    s.signals
        .push(SignalDesc::scalar("sim_time", DType::F64).with_unit("s"));
    s.signals
        .push(SignalDesc::scalar("lag", DType::F64).with_unit("s"));
    s.signals
        .push(SignalDesc::scalar("latitude_deg", DType::F64).with_unit("deg"));
    s.signals
        .push(SignalDesc::scalar("longitude_deg", DType::F64).with_unit("deg"));
    s.signals
        .push(SignalDesc::scalar("altitude_m", DType::F64).with_unit("m (WGS84 ellipsoid)"));
    for axis in ["x", "y", "z"] {
        s.signals
            .push(SignalDesc::scalar(format!("ecef_{axis}"), DType::F64).with_unit("m"));
    }
    s.signals.push(SignalDesc::scalar("packet", DType::Bytes));
    s.entity = Some(1);
    s
}

/// `extra_properties`: one row per change or removal, written by [`Pending::write`].
fn extra_stream() -> StreamDesc {
    let mut s = StreamDesc::new("extra_properties", time(), TimeBase::SECONDS);
    s.signals.push(SignalDesc::scalar("path", DType::Str));
    s.signals.push(SignalDesc::scalar("value", DType::Str));
    s.signals.push(SignalDesc::scalar("removed", DType::Bool));
    s
}

/// A row of the `multiplayer` or `extra_properties` stream a frame carried, waiting its turn.
#[derive(Debug)]
pub(super) enum Pending {
    Mp { time: f64, packet: Vec<u8> },
    Extra { time: f64, record: ExtraProperty },
}

impl Pending {
    /// Writes the row to its stream (`streams` as [`schema`] numbers them), decoding nothing
    /// when the stream is not wanted.
    pub(super) fn write(
        &self,
        streams: &[Option<usize>; 3],
        row: &mut RowWriter<'_>,
    ) -> Result<()> {
        let (stream, time) = match self {
            Pending::Mp { time, .. } => (streams[1], *time),
            Pending::Extra { time, .. } => (streams[2], *time),
        };
        let Some(stream) = stream else {
            return Ok(());
        };
        if !row.begin(stream)? {
            return Ok(());
        }
        row.push(time)?;
        match self {
            Pending::Mp { packet, .. } => write_packet(packet, row)?,
            Pending::Extra { record, .. } => match record {
                ExtraProperty::Change { path, value } => {
                    row.push_str(path)?;
                    row.push_str(value)?;
                    row.push(false)?;
                }
                ExtraProperty::Removal { path } => {
                    row.push_str(path)?;
                    row.push_null()?;
                    row.push(true)?;
                }
            },
        }
        row.finish()
    }
}

/// The `multiplayer` columns after `t` for one packet.
fn write_packet(packet: &[u8], row: &mut RowWriter<'_>) -> Result<()> {
    match MpHeader::parse(packet) {
        Some(h) => {
            row.push_str(&h.callsign())?;
            row.push(h.msg_id)?;
        }
        None => {
            row.push_null()?;
            row.push_null()?;
        }
    }
    match PositionMsg::parse(packet) {
        Some(pos) => {
            let (lat, lon, alt) = crate::track::ecef_to_geodetic(pos.position);
            row.push_str(&pos.model)?;
            for v in [pos.time, pos.lag, lat, lon, alt] {
                row.push(v)?;
            }
            for v in pos.position {
                row.push(v)?;
            }
        }
        None => {
            for _ in 0..9 {
                row.push_null()?;
            }
        }
    }
    row.push_bytes(packet)
}
