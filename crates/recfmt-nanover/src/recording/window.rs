//! Time windows ([`RecordingReader::seek_time`], [`RecordingReader::stop_time`]): where
//! reading starts and where it ends, with rows equal to a full read's.
//!
//! * The end: where the first pass saw the `.traj`'s frames (or a zip's events) in time
//!   order, they end before the first one at or after the end ([`Timeline::set_stop`],
//!   [`crate::nzip::ZipEvents::set_stop`]); a `.state` is read to its end (its order is not
//!   known before it is read).
//! * The start of the `frames` rows: a row is the aggregated frame, which depends on records
//!   long before the start (see [`crate::checkpoint`]), so the `.traj` and a zip's events
//!   continue from the last checkpoint of the first pass before which every frame is
//!   earlier than the start, after rebuilding the aggregate from the records that last set
//!   each of its keys, and restoring the session numbering and the reader's state there.
//! * The start of a `.state`: its rows are each update's own changes, with no aggregate; its
//!   records before the first at or after the start are framed, not decoded
//!   ([`Reader::skip_before`]). A binary search over byte offsets would skip records a full
//!   read keeps where a torn file's resync accepts a bogus time, or a file without resync
//!   ends at garbage that the search jumps over.
//!
//! Where the aggregate cannot be rebuilt exactly (counter resets on: they depend on values
//! the first pass does not read; a version-1 file; a setter that no longer decodes), the
//! `.traj` is read from the start.
//!
//! [`RecordingReader::seek_time`]: recfmt_core::RecordingReader::seek_time
//! [`RecordingReader::stop_time`]: recfmt_core::RecordingReader::stop_time
//! [`Timeline::set_stop`]: crate::timeline::Timeline::set_stop
//! [`Reader::skip_before`]: crate::io::Reader::skip_before

use std::io::{Read, Seek};

use super::{NanoverRecording, Source};
use crate::aggregate::FrameView;
use crate::checkpoint::{Checkpoint, Resume};
use crate::error::Result;
use crate::proto::GetFrameResponse;

/// Microseconds before which every time is surely earlier than `seconds` (`None`: nothing to
/// skip). One µs of margin for the rounding of µs to seconds.
fn start_us(seconds: f64) -> Option<u128> {
    let us = (seconds * 1e6).floor();
    // `as` saturates: +inf gives u128::MAX, negatives 0.
    (us as u128).checked_sub(1).filter(|&t| t > 0)
}

/// Applies the records that last set each key (ascending) to an empty frame: the aggregate a
/// full read has where they were listed. `None` when one cannot be read or a later one
/// resets (only the first may: it is then the reset that started the aggregate), which a
/// first pass that disagrees with decoding could give.
fn rebuild(
    setters: &[u64],
    mut frame_at: impl FnMut(u64) -> Result<Option<GetFrameResponse>>,
) -> Result<Option<FrameView>> {
    let mut view = FrameView::new();
    for (i, &at) in setters.iter().enumerate() {
        let Some(msg) = frame_at(at)? else {
            return Ok(None);
        };
        if msg.frame_index == 0 && i > 0 {
            return Ok(None);
        }
        view.apply_owned(msg);
    }
    Ok(Some(view))
}

impl<R: Read> NanoverRecording<R> {
    /// Positions the reader for rows from `seconds` on (see the module docs); false when
    /// nothing moved (the caller filters rows either way).
    pub(super) fn window_start(&mut self, seconds: f64) -> Result<bool> {
        if self.started || self.view.counter_resets_enabled() {
            return Ok(false);
        }
        let Some(target) = start_us(seconds) else {
            return Ok(false);
        };
        match &self.source {
            Source::Files(_) => match self.seek_files {
                Some(seek) => seek(self, target),
                None => Ok(false),
            },
            Source::Events(_) => self.seek_events(target),
        }
    }

    /// Ends the rows at the first event at or after `seconds` (a few µs of margin: the caller
    /// filters); false when reading has begun.
    pub(super) fn window_end(&mut self, seconds: f64) -> bool {
        if self.started || seconds.is_nan() {
            return false;
        }
        // Only where the first pass saw every time later than the one before: with a time
        // going back (a bogus record accepted by resync, say), later records may still be
        // inside the window.
        if !self.checkpoints.as_ref().is_some_and(|c| c.in_order) {
            return false;
        }
        let stop = ((seconds * 1e6).ceil() as u128).saturating_add(2);
        match &mut self.source {
            Source::Files(timeline) => timeline.set_stop(Some(stop)),
            Source::Events(events) => events.set_stop(Some(stop)),
        }
        true
    }

    /// Takes over the aggregate and the numbering of a checkpoint.
    fn continue_from(&mut self, view: FrameView, cp: &Checkpoint) {
        self.view = view;
        self.session = cp.session;
        self.frames_seen = cp.frames_seen;
    }

    /// A zip's events: from the checkpoint's entry.
    fn seek_events(&mut self, target: u128) -> Result<bool> {
        let Some(cp) = self.checkpoints.as_ref().and_then(|c| c.before(target)) else {
            return Ok(false);
        };
        let cp = cp.clone();
        let (
            Source::Events(events),
            Resume::Zip {
                last_index,
                last_ts,
                time_known,
            },
        ) = (&mut self.source, cp.resume)
        else {
            return Ok(false);
        };
        let entry = |at: u64| usize::try_from(at).unwrap_or(usize::MAX);
        let Some(view) = rebuild(&cp.setters, |at| events.frame_of_entry(entry(at)))? else {
            return Ok(false);
        };
        events.resume(entry(cp.at), (last_index, last_ts, time_known));
        self.continue_from(view, &cp);
        Ok(true)
    }
}

impl<R: Read + Seek> NanoverRecording<R> {
    /// A `.traj` and/or `.state` opened from files: the `.traj` from its checkpoint, the
    /// `.state` by its search.
    pub(super) fn seek_files(&mut self, target: u128) -> Result<bool> {
        let cp = self
            .checkpoints
            .as_ref()
            .and_then(|c| c.before(target))
            .cloned();
        let Source::Files(timeline) = &mut self.source else {
            return Ok(false);
        };
        if timeline.started() {
            return Ok(false);
        }
        let mut moved = false;
        if let Some(state) = timeline.state_mut() {
            moved |= state.skip_before(target)?;
        }
        let traj = timeline.traj_mut();
        if let (Some(traj), Some(cp)) = (traj, cp)
            && let Resume::Traj { last_ts } = cp.resume
        {
            let (from, from_ts) = (traj.position(), traj.last_timestamp());
            match rebuild(&cp.setters, |at| traj.frame_at(at))? {
                Some(view) => {
                    traj.resume_at(cp.at, last_ts)?;
                    self.continue_from(view, &cp);
                    moved = true;
                }
                None => traj.resume_at(from, from_ts)?,
            }
        }
        Ok(moved)
    }
}
