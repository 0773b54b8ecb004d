//! Decoding straight into the caller's batches (issue 23): with one decoding thread, a
//! framed block is lent the caller's [`BatchSet`] when every block before it has been handed
//! out, and its worker decodes the block's rows into it, where otherwise the block would be
//! decoded into batches of its own and copied again on the caller's thread (the largest cost
//! a read of every stream added to that thread). A block framed while the worker still has
//! the one before is not held back for a loan: it is sent at once to be decoded and copied
//! as with more threads. So the copy lands on the caller's thread exactly when the worker is
//! the slower of the two (fresh memory to fault in, many streams), and the worker is never
//! left without a block while the caller waits; with more threads, decoding blocks side by
//! side is worth more than the copy, and nothing is lent.
//!
//! The batches come back with their block when decoding fails, cut back to the rows they
//! held before it, so a failed call leaves them as the copying path does. Only a worker that
//! panics keeps them: the call fails as it does whenever a worker stops, and the caller's
//! batch set is left empty.

use std::sync::Arc;

use recfmt_core::BatchSet;

use super::{Block, Job, Pipeline, Selection, corrupt_block, decode_into, worker_gone};
use crate::error::Result;

impl Pipeline {
    /// True when fitting blocks are decoded straight into the caller's batches: with one
    /// decoding thread, which then has one block at a time (see the module documentation).
    pub(crate) fn lends(&self) -> bool {
        self.workers.len() == 1
    }

    /// True when every block framed so far (but a held one) has been handed out: the
    /// caller's batches hold every row before the next block.
    pub(crate) fn idle(&self) -> bool {
        self.sent == self.received && self.ready.iter().all(Block::is_done)
    }

    /// Sends `block` to be decoded: straight into `dst` when it can ([`Self::lends`], and
    /// every block before it handed out), else into batches of its own. Lent, its records
    /// left are decoded up to the first that fills a wanted stream's batch, where `consume`
    /// stops: all of them in most blocks; the rest go on in the next call.
    pub(crate) fn hand_on(
        &mut self,
        mut block: Block,
        sel: &Arc<Selection>,
        dst: &mut BatchSet,
    ) -> Result<()> {
        if !(self.lends() && self.idle()) || block.error_after_last || block.is_done() {
            return self.dispatch(block, sel);
        }
        block.mark_upto(dst);
        let mut out = self
            .placeholder
            .take()
            .unwrap_or_else(|| BatchSet::new(&self.shared.schema, 0));
        std::mem::swap(dst, &mut out);
        block.lent_rows = Some(rows_of(&out));
        let job = Job {
            block,
            sel: Arc::clone(sel),
            spare: None,
            out: Some(out),
        };
        let Some(jobs) = &self.workers[0].jobs else {
            return Err(worker_gone());
        };
        match jobs.send(job) {
            Ok(()) => {
                self.sent += 1;
                Ok(())
            }
            Err(returned) => {
                // The worker is gone: the batches come back with the job.
                if let Some(mut out) = returned.0.out {
                    std::mem::swap(dst, &mut out);
                    self.placeholder = Some(out);
                }
                Err(worker_gone())
            }
        }
    }

    /// Decodes the records left in `block` straight into `dst` on the caller's thread, up to
    /// the first that fills a wanted stream's batch, as a loan would on the worker: for the
    /// rest of a lent block that stopped at a full batch while a later block is already with
    /// the worker (the rest comes first, and cannot wait for the worker to be free). The
    /// block goes to the front of the ready ones, to be counted like a lent block. On a
    /// decoding error `dst` is cut back to the rows it held.
    pub(crate) fn decode_here(&mut self, mut block: Block, dst: &mut BatchSet) -> Result<()> {
        if block.error_after_last || block.is_done() {
            // The copying path keeps the strict error's order; it decodes the block again.
            self.ready.push_front(block);
            return Ok(());
        }
        block.mark_upto(dst);
        let rows = rows_of(dst);
        let result = match block.recs.get(block.next..block.upto) {
            Some(recs) => decode_into(&self.shared, &block, recs, dst, &mut self.gathered),
            None => Err(corrupt_block()),
        };
        if result.is_err() {
            cut_back(dst, &rows);
        }
        result?;
        block.in_dst = true;
        self.ready.push_front(block);
        Ok(())
    }
}

/// Each stream's rows in `set`, to put it back with [`cut_back`].
fn rows_of(set: &BatchSet) -> Vec<usize> {
    (0..set.len()).map(|s| set.stream(s).rows()).collect()
}

/// Puts `set` back to the rows [`rows_of`] took: what a failed decoding added is dropped.
pub(super) fn cut_back(set: &mut BatchSet, rows: &[usize]) {
    for (s, &r) in rows.iter().enumerate().take(set.len()) {
        set.stream_mut(s).truncate_rows(r);
    }
}
