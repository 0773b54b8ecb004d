//! State of traffic lights (id 7) and TrafficLightTime (id 16).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;

/// The state of one traffic light. 10 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrafficLightState {
    /// Recorded actor id.
    pub database_id: u32,
    /// Whether the light's group is frozen.
    pub is_frozen: bool,
    /// Seconds spent in the current state.
    pub elapsed_time: f32,
    /// 0 Red, 1 Yellow, 2 Green, 3 Off.
    pub state: u8,
}

impl Record for TrafficLightState {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(10)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(TrafficLightState {
            database_id: c.u32()?,
            is_frozen: c.bool()?,
            elapsed_time: c.f32()?,
            state: c.u8()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_bool(self.is_frozen);
        out.put_f32(self.elapsed_time);
        out.put_u8(self.state);
        Ok(())
    }
}

/// The phase durations of one traffic light. 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrafficLightTime {
    /// Recorded actor id.
    pub database_id: u32,
    /// Green phase, seconds.
    pub green_time: f32,
    /// Yellow phase, seconds.
    pub yellow_time: f32,
    /// Red phase, seconds.
    pub red_time: f32,
}

impl Record for TrafficLightTime {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(16)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(TrafficLightTime {
            database_id: c.u32()?,
            green_time: c.f32()?,
            yellow_time: c.f32()?,
            red_time: c.f32()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_f32(self.green_time);
        out.put_f32(self.yellow_time);
        out.put_f32(self.red_time);
        Ok(())
    }
}
