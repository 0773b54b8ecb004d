//! Opening a `.nanover.zip` as a [`NanoverRecording`]: a first pass over its messages' keys
//! (walked from the file, arrays skipped) declares the schema and takes the checkpoints,
//! then the events are decoded as they are read.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

#[cfg(feature = "nanover-zip")]
use recfmt_core::Metadata;
use recfmt_core::ReadOptions;

use super::NanoverRecording;
#[cfg(not(feature = "nanover-zip"))]
use super::zip_unsupported;
#[cfg(feature = "nanover-zip")]
use super::{Source, columns::Prescan};
#[cfg(feature = "nanover-zip")]
use crate::checkpoint::{Tracker, spacing_for};
#[cfg(feature = "nanover-zip")]
use crate::error::Result;

impl NanoverRecording<BufReader<File>> {
    #[cfg(feature = "nanover-zip")]
    pub(super) fn open_zip(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Self> {
        use recfmt_core::ResultExt;
        let file = File::open(path).in_file(path)?;
        let len = file.metadata().in_file(path)?.len();
        // Positioned reads: the open pass reads a few hundred bytes per message and seeks
        // past the arrays (with no system call), whole messages are read around it.
        let source = crate::skim::PositionedFile::new(file);
        let mut rec = Self::from_zip_source(source, options).in_file(path)?;
        rec.header
            .metadata
            .insert("zip".into(), path.display().to_string());
        rec.total_bytes = Some(len);
        Ok(rec)
    }

    #[cfg(not(feature = "nanover-zip"))]
    pub(super) fn open_zip(path: &Path, _options: &ReadOptions) -> recfmt_core::Result<Self> {
        Err(zip_unsupported(path))
    }
}

impl<R: Read + std::io::Seek> NanoverRecording<R> {
    /// Reads a `.nanover.zip` (NanoVer's format since October 2025; see [`crate::nzip`]).
    /// A first pass walks each message's keys from the file, skipping its arrays, to declare
    /// the schema and take checkpoints; the messages are then decoded one at a time as they
    /// are read, and served as the same streams as a `.traj` and `.state`. Memory holds one
    /// message and a small record per index entry.
    #[cfg(feature = "nanover-zip")]
    pub fn from_zip(source: R, options: &ReadOptions) -> Result<Self>
    where
        R: Send + std::fmt::Debug + 'static,
    {
        Self::from_zip_source(source, options)
    }

    /// [`NanoverRecording::from_zip`] from a source of any type (the events are boxed).
    #[cfg(feature = "nanover-zip")]
    fn from_zip_source<Z>(source: Z, options: &ReadOptions) -> Result<Self>
    where
        Z: Read + std::io::Seek + Send + std::fmt::Debug + 'static,
    {
        let mut events = crate::nzip::ZipEvents::open(source, &options.limits)?;
        let mut scan = Prescan::default();
        let mut has_state = false;
        let mut tracker = Tracker::new(spacing_for(events.messages_extent()));
        while let Some(message) = events.next_shape()? {
            // The entry this message came from.
            let entry = events.next_entry().saturating_sub(1) as u64;
            if events.time_known() {
                tracker.note_time(message.timestamp);
            }
            if let Some(f) = &message.frame {
                scan.add_frame(f);
                tracker.frame(
                    entry,
                    f.frame_index == 0,
                    f.values.iter().map(|(k, _)| k.as_str()),
                    f.arrays.iter().map(|(k, _)| k.as_str()),
                );
            }
            has_state |= message.state;
            let (last_index, last_ts, time_known) = events.resume_state();
            let resume = crate::checkpoint::Resume::Zip {
                last_index,
                last_ts,
                time_known,
            };
            tracker.checkpoint(events.next_entry() as u64, events.read_to(), resume);
        }
        scan.checkpoints = Some(tracker.finish());
        if options.strict && events.integrity().lost_data() {
            let integrity = events.integrity();
            let at = integrity.truncated_at.unwrap_or(0);
            let expected = format!("an intact .nanover.zip ({})", integrity.warnings.join("; "));
            return Err(crate::Error::Core(
                if integrity.status == recfmt_core::IntegrityStatus::Truncated {
                    recfmt_core::Error::truncated(crate::FORMAT_ID, at, expected)
                } else {
                    recfmt_core::Error::malformed(crate::FORMAT_ID, at, expected)
                },
            ));
        }
        events.rewind();
        let has_traj = scan.frames > 0 || !has_state;
        let mut metadata = Metadata::new();
        metadata.insert("container".into(), "nanover.zip".into());
        Ok(Self::assemble(
            Source::Events(Box::new(events)),
            scan,
            metadata,
            (has_traj, has_state),
            "nanover.zip",
        ))
    }
}
