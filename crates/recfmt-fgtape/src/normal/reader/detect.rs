//! Which frame layout a Normal tape uses: nothing in the file says, so the structure of the
//! first non-empty RawData container decides (see the module documentation of `normal`).

use std::io::BufRead;

use super::Reader;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::normal::*;

impl<R: BufRead> Reader<R> {
    /// Decides the frame layout from container `index` holding `count` frames; the bytes
    /// read ahead are pushed back so the frames are then read normally.
    pub(super) fn detect(&mut self, index: usize, count: u64) -> Result<()> {
        let (rs, mp, hint) = {
            let h = self.require_header()?;
            (h.record_size() as u64, h.multiplayer, h.layout_hint())
        };
        let is_last = index == 2;
        let start = self.input.position();
        let order = if hint == Some(FrameLayout::Vector) {
            [FrameLayout::Vector, FrameLayout::Legacy]
        } else {
            [FrameLayout::Legacy, FrameLayout::Vector]
        };
        let mut look = Look {
            input: &mut self.input,
            buf: Vec::new(),
            limit: self.limits.max_record_len,
        };
        let fit = |look: &mut Look<'_, R>, layout| match layout {
            FrameLayout::Legacy => fit_legacy(look, count, rs, is_last),
            FrameLayout::Vector => fit_vector(look, count, rs, mp, is_last),
        };
        let first = fit(&mut look, order[0])?;
        let second = if matches!(first, Fit::Yes { score: 2 }) {
            Fit::Eof
        } else {
            fit(&mut look, order[1])?
        };
        let second_tried = !matches!(first, Fit::Yes { score: 2 });
        let buf = std::mem::take(&mut look.buf);
        self.input.unread(buf);
        let at = self.input.at(start);
        let name = RAW_DATA_NAMES[index];
        let structure = DecidedBy::Structure { container: index };
        let partial = DecidedBy::PartialData { container: index };
        let decision = match (first, second) {
            (Fit::Yes { .. }, _) if !second_tried => (order[0], structure),
            (Fit::Yes { score: sa }, Fit::Yes { score: sb }) => {
                let pick = if sb > sa { order[1] } else { order[0] };
                push_warning(
                    &mut self.warnings,
                    format!(
                        "both frame layouts fit the {name} container at {at}; chose {}",
                        pick.name()
                    ),
                );
                (pick, structure)
            }
            (Fit::Yes { score }, _) => {
                self.weak_fit(score, name, at, order[0]);
                (order[0], structure)
            }
            (_, Fit::Yes { score }) => {
                self.weak_fit(score, name, at, order[1]);
                (order[1], structure)
            }
            (Fit::Eof, Fit::No { .. }) => (order[0], partial),
            (Fit::No { .. }, Fit::Eof) => (order[1], partial),
            (Fit::Eof, Fit::Eof) => (hint.unwrap_or(FrameLayout::Vector), partial),
            (
                Fit::No {
                    at: a_at,
                    why: a_why,
                },
                Fit::No {
                    at: b_at,
                    why: b_why,
                },
            ) => {
                let (legacy, vector) = if order[0] == FrameLayout::Legacy {
                    ((a_at, a_why), (b_at, b_why))
                } else {
                    ((b_at, b_why), (a_at, a_why))
                };
                return Err(Error::malformed(
                    at,
                    format!(
                        "frames of the {name} container ({count} × {rs} bytes) in the legacy layout (but at {}: {}) or the 2020.3 layout (but at {}: {})",
                        self.input.at(start + legacy.0),
                        legacy.1,
                        self.input.at(start + vector.0),
                        vector.1,
                    ),
                ));
            }
        };
        if matches!(decision.1, DecidedBy::PartialData { .. }) {
            push_warning(
                &mut self.warnings,
                format!(
                    "the tape ends inside the {name} container; chose the {} layout from the data present",
                    decision.0.name()
                ),
            );
        }
        if decision.0 == FrameLayout::Legacy && mp != MpEncoding::None {
            push_warning(
                &mut self.warnings,
                "the Meta tree announces multiplayer data but the frames have the legacy layout"
                    .into(),
            );
        }
        self.layout = Some(LayoutDecision {
            layout: decision.0,
            decided_by: decision.1,
        });
        Ok(())
    }
}

/// Result of trying one layout on the bytes of a container.
#[derive(Debug)]
enum Fit {
    /// The structure fits; `score` counts the soft checks passed (rising times, next size a
    /// multiple of the record size), 2 at most.
    Yes { score: u8 },
    /// It does not fit: `why`, at `at` bytes after the container's frame data starts.
    No { at: u64, why: String },
    /// The stream ends before the check could finish.
    Eof,
}

/// Read-ahead buffer over the input, bounded by a limit.
struct Look<'a, R> {
    input: &'a mut Input<R>,
    buf: Vec<u8>,
    limit: u64,
}

impl<R: BufRead> Look<'_, R> {
    /// Makes sure `n` bytes are buffered; `false` when the stream ends first.
    fn ensure(&mut self, n: u64) -> Result<bool> {
        if n <= self.buf.len() as u64 {
            return Ok(true);
        }
        let start = self.input.offset();
        Error::check_limit(
            "RawData bytes read ahead to detect the frame layout",
            n,
            self.limit,
            start,
        )?;
        let mut chunk = vec![0u8; 64 * 1024];
        while (self.buf.len() as u64) < n {
            let want = ((n - self.buf.len() as u64) as usize).min(chunk.len());
            let got = self.input.read_full(&mut chunk[..want])?;
            self.buf.extend_from_slice(&chunk[..got]);
            if got < want {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn bytes<const N: usize>(&self, p: u64) -> [u8; N] {
        let p = p as usize;
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[p..p + N]);
        out
    }
}

struct Times {
    last: Option<f64>,
    rising: bool,
}

impl Times {
    fn push(&mut self, t: f64) {
        if !t.is_finite() || self.last.is_some_and(|l| t <= l) {
            self.rising = false;
        }
        self.last = Some(t);
    }
}

fn fit_legacy<R: BufRead>(
    look: &mut Look<'_, R>,
    count: u64,
    rs: u64,
    is_last: bool,
) -> Result<Fit> {
    let Some(end) = count.checked_mul(rs) else {
        return Ok(Fit::No {
            at: 0,
            why: "frame data larger than 2^64 bytes".into(),
        });
    };
    if !look.ensure(end)? {
        return Ok(Fit::Eof);
    }
    let mut times = Times {
        last: None,
        rising: true,
    };
    for k in 0..count {
        times.push(f64::from_le_bytes(look.bytes(k * rs)));
    }
    fit_end(look, end, rs, is_last, times.rising)
}

fn fit_vector<R: BufRead>(
    look: &mut Look<'_, R>,
    count: u64,
    rs: u64,
    mp: MpEncoding,
    is_last: bool,
) -> Result<Fit> {
    let max_len = look.limit;
    let mut times = Times {
        last: None,
        rising: true,
    };
    let mut p = 0u64;
    for _ in 0..count {
        if !look.ensure(p + 8 + rs)? {
            return Ok(Fit::Eof);
        }
        times.push(f64::from_le_bytes(look.bytes(p)));
        p += 8 + rs;
        match mp {
            MpEncoding::None => {}
            MpEncoding::Fg2020_3 => {
                if !look.ensure(p + 8)? {
                    return Ok(Fit::Eof);
                }
                let n = u64::from_le_bytes(look.bytes(p));
                if n > max_len / 8 {
                    return Ok(Fit::No {
                        at: p,
                        why: format!("implausible multiplayer packet count {n}"),
                    });
                }
                p += 8;
                for _ in 0..n {
                    if !look.ensure(p + 8)? {
                        return Ok(Fit::Eof);
                    }
                    let len = u64::from_le_bytes(look.bytes(p));
                    if len > max_len {
                        return Ok(Fit::No {
                            at: p,
                            why: format!("implausible multiplayer packet length {len}"),
                        });
                    }
                    p += 8 + len;
                    if !look.ensure(p)? {
                        return Ok(Fit::Eof);
                    }
                }
            }
            MpEncoding::Next => {
                if !look.ensure(p + 4)? {
                    return Ok(Fit::Eof);
                }
                let total = u64::from(u32::from_le_bytes(look.bytes(p)));
                if !look.ensure(p + 4 + total)? {
                    return Ok(Fit::Eof);
                }
                let block = &look.buf[(p + 4) as usize..(p + 4 + total) as usize];
                if let Err(bad) = crate::mp::split_u16_packets(block) {
                    return Ok(Fit::No {
                        at: p + 4 + bad as u64,
                        why: "multiplayer packet overruns its block".into(),
                    });
                }
                p += 4 + total;
            }
        }
    }
    fit_end(look, p, rs, is_last, times.rising)
}

/// Checks what follows the frame data ending at `end`.
fn fit_end<R: BufRead>(
    look: &mut Look<'_, R>,
    end: u64,
    rs: u64,
    is_last: bool,
    rising: bool,
) -> Result<Fit> {
    let mut score = u8::from(rising);
    if is_last {
        if look.ensure(end + 1)? {
            return Ok(Fit::No {
                at: end,
                why: "data continues after the last RawData container".into(),
            });
        }
        score += 1;
    } else {
        if !look.ensure(end + 12)? {
            return Ok(Fit::Eof);
        }
        let ty = u32::from_le_bytes(look.bytes(end));
        if ty != CONTAINER_RAW_DATA {
            return Ok(Fit::No {
                at: end,
                why: format!("no RawData header follows (type field {ty})"),
            });
        }
        let size = u64::from_le_bytes(look.bytes(end + 4));
        if size.is_multiple_of(rs) {
            score += 1;
        }
    }
    Ok(Fit::Yes { score })
}
