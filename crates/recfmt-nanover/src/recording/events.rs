//! The sources of events other than a `.traj`/`.state` pair: a `.nanover.zip`, recognised by
//! name or by its first local header, and read through [`EventSource`].

use std::fs::File;
use std::io::Read;
use std::path::Path;

use recfmt_core::Integrity;

use crate::error::Result;
use crate::proto::GetFrameResponse;
use crate::timeline::Event;

/// Events read one at a time with what reading them lost (a `.nanover.zip`'s
/// [`crate::nzip::ZipEvents`], whose source type the adapter does not carry).
pub(crate) trait EventSource: Send + std::fmt::Debug {
    /// The next event, `None` after the last.
    fn next_event(&mut self) -> Result<Option<Event>>;
    /// What opening and reading so far lost.
    fn integrity(&self) -> &Integrity;
    /// Events not yet read.
    fn remaining(&self) -> usize;
    /// Whether the last event's time is known (see [`crate::nzip::ZipEvents::time_known`]).
    fn time_known(&self) -> bool;
    /// Byte offset just past the last message read, for progress.
    fn read_to(&self) -> u64;
    /// Continues at entry `next` with the state [`crate::nzip::ZipEvents::resume_state`] gave there.
    fn resume(&mut self, next: usize, state: (u32, u128, bool));
    /// The frame of entry `i`, the reading position unchanged.
    fn frame_of_entry(&mut self, i: usize) -> Result<Option<GetFrameResponse>>;
    /// Ends the events before the first one at `stop` µs or later.
    fn set_stop(&mut self, stop: Option<u128>);
}

#[cfg(feature = "nanover-zip")]
impl<R: Read + std::io::Seek + Send + std::fmt::Debug> EventSource for crate::nzip::ZipEvents<R> {
    fn next_event(&mut self) -> Result<Option<Event>> {
        crate::nzip::ZipEvents::next_event(self)
    }
    fn integrity(&self) -> &Integrity {
        crate::nzip::ZipEvents::integrity(self)
    }
    fn remaining(&self) -> usize {
        crate::nzip::ZipEvents::remaining(self)
    }
    fn time_known(&self) -> bool {
        crate::nzip::ZipEvents::time_known(self)
    }
    fn read_to(&self) -> u64 {
        crate::nzip::ZipEvents::read_to(self)
    }
    fn resume(&mut self, next: usize, state: (u32, u128, bool)) {
        crate::nzip::ZipEvents::resume(self, next, state);
    }
    fn frame_of_entry(&mut self, i: usize) -> Result<Option<GetFrameResponse>> {
        crate::nzip::ZipEvents::frame_of_entry(self, i)
    }
    fn set_stop(&mut self, stop: Option<u128>) {
        crate::nzip::ZipEvents::set_stop(self, stop);
    }
}

/// The error for a `.nanover.zip` at `path` when this build leaves the `nanover-zip` feature
/// out: every zip entry point (open, copy, check, HDF5) gives the same one.
#[cfg(not(feature = "nanover-zip"))]
pub(crate) fn zip_unsupported(path: &Path) -> recfmt_core::Error {
    recfmt_core::Error::unsupported(
        crate::FORMAT_ID,
        ".nanover.zip (build recfmt-nanover with the `nanover-zip` feature)",
    )
    .in_file(path)
}

/// True when a path looks like a `.nanover.zip`: a `.zip` name, or a zip whose first entry is
/// one of its two files.
pub fn is_nanover_zip(path: &Path) -> bool {
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().ends_with(".zip"))
    {
        return true;
    }
    let mut head = Vec::with_capacity(64);
    File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut head))
        .is_ok_and(|_| zip_head_is_nanover(&head))
}

/// True when the first bytes are a zip local file header for `index.msgpack` or
/// `messages.msgpack`.
pub fn zip_head_is_nanover(head: &[u8]) -> bool {
    if head.len() < 30 || !head.starts_with(b"PK\x03\x04") {
        return false;
    }
    let name_len = usize::from(u16::from_le_bytes([head[26], head[27]]));
    head.get(30..30 + name_len)
        .is_some_and(|n| n == b"index.msgpack" || n == b"messages.msgpack")
}
