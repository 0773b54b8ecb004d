//! Streaming reader and writer over [`std::io::Read`] and [`std::io::Write`].

mod reader;
mod writer;

pub use reader::{RawPacket, Reader};
pub use writer::Writer;
