//! Streaming low-level reader and writer of `timeseries.bin`.

pub mod reader;
pub mod writer;

pub use reader::{Reader, Records};
pub use writer::Writer;
