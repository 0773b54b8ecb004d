//! The batch path on decoding threads: records framed into blocks on the caller's thread,
//! decoded by the [`Pipeline`]'s workers (see `crate::parallel`).

use std::io::Read;

use recfmt_core::BatchSet;

use super::UsvlogRecording;
use crate::error::{Error, Result};
use crate::parallel::{Block, End, MAX_BLOCK_BYTES, Pipeline};

impl<R: Read> UsvlogRecording<R> {
    /// Sets the number of threads that decode records for [`RecordingReader::read_batches`](recfmt_core::RecordingReader::read_batches)
    /// (0: all on the caller's thread, as [`RecordingReader::read_frame`](recfmt_core::RecordingReader::read_frame) does). Takes
    /// effect when the batch path starts; rows, values and integrity notes do not depend on it.
    pub fn set_decode_threads(&mut self, threads: usize) {
        self.decode_threads = threads.min(64);
    }

    /// Blocks of records decoded on other threads so far (0 while the batch path runs on the
    /// caller's thread): for tests and measurements to tell which path ran.
    pub fn blocks_decoded_in_parallel(&self) -> u64 {
        self.pipeline.as_ref().map_or(0, Pipeline::blocks_sent)
    }

    /// Sets the bytes of records per block handed to a decoding thread (clamped to
    /// 1..=64 MiB), before the batch path starts. Small blocks are for tests that need many
    /// block boundaries in a small file.
    pub fn set_block_bytes(&mut self, bytes: usize) {
        self.block_bytes = bytes.clamp(1, MAX_BLOCK_BYTES);
    }

    /// True when the batch path decodes on other threads: asked for, no resync (whose
    /// look-ahead scanning stays with the single-threaded reader), an input not known to be
    /// too small to fill two blocks, and columns to decode besides the times: a scan of the
    /// time columns alone (`recfmt validate`, `info`) costs less on one thread than the copy
    /// of every record into a block (measured: 0.21 s against 0.29 s for 400 MB). Starts the
    /// threads the first time; once started, every later call goes through them.
    pub(super) fn use_pipeline(&mut self, dst: &BatchSet) -> bool {
        if self.pipeline.is_some() {
            return true;
        }
        if self.decode_threads == 0
            || self.resync
            || self
                .total_bytes
                .is_some_and(|n| n < 2 * self.block_bytes as u64)
        {
            return false;
        }
        // Asked once per batch set, not once per row: a set's selection does not change.
        let key = std::ptr::from_ref(dst) as usize;
        if self.times_only_set == Some(key) {
            return false;
        }
        let decodes_values =
            (0..dst.len()).any(|s| dst.wants(s) && dst.stream(s).keeps_other_than(0));
        if !decodes_values {
            self.times_only_set = Some(key);
            return false;
        }
        self.pipeline = Pipeline::start(
            self.schema.clone(),
            self.decoder.clone(),
            self.decode_threads,
            self.block_bytes,
        );
        if self.pipeline.is_none() {
            // No thread could be started: decode here.
            self.decode_threads = 0;
        }
        self.pipeline.is_some()
    }

    /// Frames records into `block` until it holds [`Self::set_block_bytes`] bytes (true) or
    /// the records end (false), with every check and integrity note of the single-threaded
    /// path, in the same order. Records that yield no row (a short payload skipped as corrupt)
    /// are left out; an error (strict mode, I/O) ends the block before the failing record,
    /// except a long payload, kept as the single-threaded path keeps it.
    fn frame_block(&mut self, block: &mut Block, limit: usize) -> Result<bool> {
        while block.bytes() < limit {
            // Most records: those kept as they lie in the file, read straight into the block.
            let unknown = self.decoder.unknown_stream();
            let (decoder, stream_of_type) = (&self.decoder, &self.stream_of_type);
            let (records_seen, unknown_counts) = (&mut self.records_seen, &mut self.unknown_counts);
            let read = block.read_records(&mut self.reader, limit, |header| {
                let stream = stream_of_type[usize::from(header.type_id)] as usize;
                if stream == u32::MAX as usize {
                    *unknown_counts.entry(header.type_id).or_default() += 1;
                    Some(unknown)
                } else if usize::from(header.len) == decoder.payload_size(stream) {
                    records_seen[stream] += 1;
                    Some(stream)
                } else {
                    // A length that disagrees with the layout: noted on the full path below.
                    None
                }
            })?;
            if read > 0 {
                continue;
            }
            let record = next_record!(self.reader, Ok(false));
            let stream = self.stream_of_type[usize::from(record.type_id)] as usize;
            if stream == u32::MAX as usize {
                *self.unknown_counts.entry(record.type_id).or_default() += 1;
                block.push(self.decoder.unknown_stream(), &record);
                continue;
            }
            self.records_seen[stream] += 1;
            let (expected, found) = (self.decoder.payload_size(stream), record.payload.len());
            if found >= expected {
                block.push(stream, &record);
            }
            if found == expected {
                continue;
            }
            let (offset, type_id) = (record.offset, record.type_id);
            if let Err(e) = self.payload_length_mismatch(offset, type_id, stream, expected, found) {
                if found > expected {
                    block.set_error_after_last();
                }
                return Err(e);
            }
        }
        Ok(true)
    }

    /// The batch path on decoding threads: frames blocks while the workers have room and
    /// appends the next decoded block to `dst`, until a wanted stream is full (true) or the
    /// records end (false; or fail, once the rows before the failure are handed out).
    pub(super) fn pipelined_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        self.check_batch_set(dst)?;
        let Some(mut pipeline) = self.pipeline.take() else {
            return Ok(false);
        };
        let result = self.pipelined_fill(&mut pipeline, dst);
        self.pipeline = Some(pipeline);
        result
    }

    /// The loop of [`Self::pipelined_batches`].
    fn pipelined_fill(&mut self, p: &mut Pipeline, dst: &mut BatchSet) -> Result<bool> {
        let sel = p.selection(dst);
        loop {
            if let Some(block) = p.held.pop_front() {
                if p.idle() {
                    p.hand_on(block, &sel, dst)?;
                } else {
                    p.decode_here(block, dst)?;
                    // Counted at once, before framing can fail: its rows are in `dst` now.
                    if p.fill_next_block(dst, &sel)? == Some(true) {
                        return Ok(true);
                    }
                }
            }
            while p.wants_block() {
                let mut block = p.new_block();
                match self.frame_block(&mut block, p.block_bytes) {
                    Ok(true) => {}
                    Ok(false) => p.end = Some(End::Records),
                    Err(e) => p.end = Some(End::Failed(e)),
                }
                // Lent when every block before it is handed out; framed while the worker
                // still decodes the one before, it is decoded into batches of its own and
                // copied here: the copy goes to this thread whenever the worker is the slower
                // one, which balances the two.
                p.hand_on(block, &sel, dst)?;
            }
            match p.fill_next_block(dst, &sel)? {
                Some(true) => return Ok(true),
                Some(false) => {}
                None => {
                    if p.ended()? {
                        return Ok(false);
                    }
                }
            }
        }
    }

    /// Fails on a batch set not made for this schema: the decoded blocks are copied into it
    /// column by column.
    fn check_batch_set(&self, dst: &BatchSet) -> Result<()> {
        let streams = &self.schema.streams;
        let matches = dst.len() == streams.len()
            && streams.iter().enumerate().all(|(s, desc)| {
                !dst.wants(s) || {
                    let columns = dst.stream(s).columns();
                    columns.len() == desc.signals.len()
                        && columns
                            .iter()
                            .zip(&desc.signals)
                            .all(|(c, d)| c.dtype() == d.dtype)
                }
            });
        if matches {
            Ok(())
        } else {
            Err(Error::Core(recfmt_core::Error::invalid(
                "a batch set not made for this USVLOG schema".to_owned(),
            )))
        }
    }
}
