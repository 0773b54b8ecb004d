//! FrameStart (id 0) and FrameEnd (id 1).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;

/// Body of a FrameStart packet: 24 bytes, no count.
///
/// The recorder writes `duration_this = -1.0` and patches it with the tick's length when the
/// next frame starts, so `elapsed + duration_this` is the next frame's `elapsed`; the last
/// frame of a file keeps `-1.0`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameStart {
    /// Frame number, 1 for the first recorded tick.
    pub id: u64,
    /// Seconds until the next frame; `-1.0` in the last frame.
    pub duration_this: f64,
    /// Seconds since the first frame (0 in frame 1).
    pub elapsed: f64,
}

impl FrameStart {
    /// Body size in bytes.
    pub const SIZE: usize = 24;

    pub(crate) fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(FrameStart {
            id: c.u64()?,
            duration_this: c.f64()?,
            elapsed: c.f64()?,
        })
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.id);
        out.put_f64(self.duration_this);
        out.put_f64(self.elapsed);
    }
}
