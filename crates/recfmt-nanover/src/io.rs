//! Streaming low-level reader and writer of `.traj` and `.state` files.

pub mod reader;
pub mod writer;

pub use reader::{Messages, NANOVER_MAX_INTERVAL_US, RESYNC_WINDOW_US, Reader, Record, Timed};
pub use writer::Writer;
