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
        mark_loan(&mut block, dst);
        let mut out = self
            .placeholder
            .take()
            .unwrap_or_else(|| BatchSet::new(&self.shared.schema, 0));
        std::mem::swap(dst, &mut out);
        block.lent_rows = Some((0..out.len()).map(|s| out.stream(s).rows()).collect());
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
}

impl Pipeline {
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
        mark_loan(&mut block, dst);
        let rows: Vec<usize> = (0..dst.len()).map(|s| dst.stream(s).rows()).collect();
        let result = match block.recs.get(block.next..block.lent_upto) {
            Some(recs) => decode_into(&self.shared, &block, recs, dst, &mut self.gathered),
            None => Err(corrupt_block()),
        };
        if result.is_err() {
            for (s, &r) in rows.iter().enumerate() {
                dst.stream_mut(s).truncate_rows(r);
            }
        }
        result?;
        block.in_dst = true;
        self.ready.push_front(block);
        Ok(())
    }
}

/// Sets the records of `block` a loan of `dst` decodes: those left, up to the first that
/// fills a wanted stream's batch, as `consume` counts them (`lent_upto`, and `lent_counts`
/// per stream when it stops early).
fn mark_loan(block: &mut Block, dst: &BatchSet) {
    let capacity = dst.capacity();
    let streams = block.counts.len().min(dst.len());
    let fits = (0..streams).all(|s| {
        let rest = block.counts[s] - block.consumed[s];
        !dst.wants(s) || rest == 0 || dst.stream(s).rows() + rest < capacity
    });
    block.lent_upto = block.recs.len();
    block.lent_counts.clear();
    if fits {
        return;
    }
    block.lent_counts.resize(streams, 0);
    for (i, &(_, stream)) in block.recs.iter().enumerate().skip(block.next) {
        let s = stream as usize;
        let Some(n) = block.lent_counts.get_mut(s) else {
            continue;
        };
        *n += 1;
        if dst.wants(s) && dst.stream(s).rows() + *n >= capacity {
            block.lent_upto = i + 1;
            break;
        }
    }
}

/// Hands out the rows of `block` decoded straight into `dst` (the records [`Pipeline::hand_on`]
/// lent them for, which `consume` would have appended): true when a stream of `dst` is now
/// full.
pub(super) fn count_in_dst(block: &mut Block, dst: &BatchSet) -> bool {
    if block.lent_counts.is_empty() {
        block.consumed.clone_from(&block.counts);
    } else {
        for (c, n) in block.consumed.iter_mut().zip(&block.lent_counts) {
            *c += n;
        }
    }
    block.next = block.lent_upto;
    let capacity = dst.capacity();
    (0..block.counts.len().min(dst.len())).any(|s| dst.wants(s) && dst.stream(s).is_full(capacity))
}
