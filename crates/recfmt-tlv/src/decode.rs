//! The one decoding of a record into a row, shared by the reader (row and column views) and
//! the decoding threads of the batch path.

use recfmt_core::{Result, RowWriter};

use crate::layout::CompiledLayout;
use crate::record::RecordRef;

/// How each stream's records become rows: the compiled layout of every stream with a layout
/// (by stream index), and the stream of records without one.
#[derive(Debug, Clone)]
pub(crate) struct RowDecoder {
    layouts: Vec<CompiledLayout>,
    unknown_stream: usize,
}

impl RowDecoder {
    /// A decoder for streams `0..layouts.len()` (one per layout) and `unknown_stream`.
    pub(crate) fn new(layouts: Vec<CompiledLayout>, unknown_stream: usize) -> Self {
        RowDecoder {
            layouts,
            unknown_stream,
        }
    }

    /// The stream of records whose type has no layout.
    pub(crate) fn unknown_stream(&self) -> usize {
        self.unknown_stream
    }

    /// Payload bytes of stream `stream`'s layout (0 for the unknown stream).
    pub(crate) fn payload_size(&self, stream: usize) -> usize {
        self.layouts.get(stream).map_or(0, |l| l.size)
    }

    /// Writes `record` as a row of `stream` (when the stream is wanted): `t_us`, then the
    /// layout's fields, or `type_id` and the raw payload for a type without a layout. A
    /// payload of a layout must be at least the layout's size (the framer checks it).
    #[inline(always)]
    pub(crate) fn write_row(
        &self,
        stream: usize,
        record: &RecordRef<'_>,
        row: &mut RowWriter<'_>,
    ) -> Result<()> {
        if !row.begin(stream)? {
            return Ok(());
        }
        // A number pushed into a column a projection left out is dropped at no cost: no need
        // to ask `wants_next` first (which would look the column up twice).
        row.push(record.t_us)?;
        if row.skip_rest() {
            // The times alone are wanted (`recfmt validate`).
            return row.finish();
        }
        match self.layouts.get(stream) {
            Some(layout) => layout.write_fields(record.payload, row)?,
            None => {
                row.push(record.type_id)?;
                push_or_skip(row, |row| row.push_bytes(record.payload))?;
            }
        }
        row.finish()
    }
}

/// Pushes the next signal's value when it is wanted; skips it otherwise.
#[inline]
fn push_or_skip(
    row: &mut RowWriter<'_>,
    push: impl FnOnce(&mut RowWriter<'_>) -> Result<()>,
) -> Result<()> {
    if row.wants_next() {
        push(row)
    } else {
        row.skip()
    }
}
