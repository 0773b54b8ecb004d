//! Streaming reader and writer over [`std::io::Read`] and [`std::io::Write`].

mod reader;
mod writer;

pub use reader::{Packets, RawPacket, Reader};
pub use writer::Writer;

/// Read buffer for whole-file reads. Packets are a few dozen bytes, so the 8 KiB default
/// meant a `read` call every few hundred packets: 126,000 calls and 0.3 s of system time
/// for a 1 GB log.
pub(crate) const FILE_BUFFER: usize = 256 * 1024;
