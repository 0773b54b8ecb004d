//! Writing a tracks table (time, id, blueprint, position, rotation) as a recording.

use std::io::{Seek, Write};

use recfmt_core::{FrameBuf, StreamDesc, Value};

use super::invalid;
use crate::record::RowValues;
use crate::tracks::{TrackLogWriter, TrackRow};

#[derive(Debug)]
pub(super) struct Tracks<W: Write + Seek> {
    pub(super) writer: TrackLogWriter<W>,
    pub(super) desc: StreamDesc,
    pub(super) cols: [usize; 8],
    pub(super) uid: Option<usize>,
    pub(super) role: Option<usize>,
}

impl<W: Write + Seek> Tracks<W> {
    pub(super) fn row(&mut self, frame: &FrameBuf, row: u64) -> recfmt_core::Result<()> {
        if frame.stream != 0 {
            return Err(invalid(format!(
                "row {row}: unknown stream {}",
                frame.stream
            )));
        }
        let r = RowValues {
            v: &frame.values,
            row,
            stream: "tracks",
        };
        let c = self.cols;
        let time = frame.time_seconds(&self.desc);
        let opt_text = |i: Option<usize>| match i.and_then(|i| frame.values.get(i)) {
            Some(Value::Str(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        let t = TrackRow {
            time: time.ok_or_else(|| r.err(self.desc.time, "expected a time"))?,
            id: r.u32(c[0])?,
            blueprint: r.str(c[1])?.to_owned(),
            x: r.f64(c[2])?,
            y: r.f64(c[3])?,
            z: r.f64(c[4])?,
            roll: r.f64(c[5])?,
            pitch: r.f64(c[6])?,
            yaw: r.f64(c[7])?,
            uid: match self.uid.and_then(|i| frame.values.get(i)) {
                Some(v) => v.as_u64().and_then(|u| u32::try_from(u).ok()).unwrap_or(0),
                None => 0,
            },
            role_name: opt_text(self.role),
        };
        self.writer.push(t).map_err(Into::into)
    }
}
