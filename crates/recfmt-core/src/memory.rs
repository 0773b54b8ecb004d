//! A recording held in memory.

use crate::{FormatInfo, FrameBuf, Header, Integrity, RecordingReader, Result, Schema, Value};

static MEMORY: FormatInfo = FormatInfo {
    id: "memory",
    name: "In-memory recording",
    extensions: &[],
};

/// A recording whose rows are held in memory: a [`RecordingReader`] over rows built in code.
/// For testing what consumes readers (exporters, plots, custom sinks) without a file, and for
/// handing rows computed elsewhere to them.
///
/// ```
/// use recfmt_core::{DType, FrameBuf, MemoryRecording, RecordingReader, Schema, SignalDesc,
///     StreamDesc, TimeBase, Value};
///
/// let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
/// nav.signals.push(SignalDesc::scalar("x", DType::F64).with_unit("m"));
/// let rows = (0..3).map(|i| (0, vec![Value::Float(i as f64), Value::Float(2.0 * i as f64)]));
/// let mut recording = MemoryRecording::new(Default::default(), Schema { streams: vec![nav] })
///     .with_rows(rows);
///
/// let mut frame = FrameBuf::default();
/// let mut xs = Vec::new();
/// while recording.read_frame(&mut frame)? {
///     xs.push(frame.values[1].as_f64());
/// }
/// assert_eq!(xs, [Some(0.0), Some(2.0), Some(4.0)]);
/// # Ok::<(), recfmt_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct MemoryRecording {
    header: Header,
    schema: Schema,
    rows: Vec<FrameBuf>,
    next: usize,
    integrity: Integrity,
}

impl MemoryRecording {
    /// A recording of `schema` with no rows yet; `header.format` is what readers report as
    /// the source format.
    pub fn new(header: Header, schema: Schema) -> Self {
        MemoryRecording {
            header,
            schema,
            rows: Vec::new(),
            next: 0,
            integrity: Integrity::default(),
        }
    }

    /// Appends rows, each `(stream index, one value per signal of the stream)`, in read order.
    pub fn with_rows(mut self, rows: impl IntoIterator<Item = (usize, Vec<Value>)>) -> Self {
        self.rows.extend(
            rows.into_iter()
                .map(|(stream, values)| FrameBuf { stream, values }),
        );
        self
    }

    /// The integrity report the reader gives (say, to act as a truncated recording).
    pub fn with_integrity(mut self, integrity: Integrity) -> Self {
        self.integrity = integrity;
        self
    }

    /// Rows not yet read.
    pub fn remaining(&self) -> usize {
        self.rows.len() - self.next
    }
}

impl RecordingReader for MemoryRecording {
    fn format(&self) -> &'static FormatInfo {
        &MEMORY
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        let Some(row) = self.rows.get(self.next) else {
            return Ok(false);
        };
        dst.clone_from(row);
        self.next += 1;
        Ok(true)
    }
}
