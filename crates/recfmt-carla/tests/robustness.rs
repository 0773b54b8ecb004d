//! Truncated and corrupted copies of a real log: no panics, every complete packet kept, and
//! errors that name the offset.

#![allow(clippy::unwrap_used)]

mod common;

use recfmt_carla::{Error, Packet, Reader, index_frames};
use recfmt_core::Limits;

/// (offset, size in bytes, packet) of every packet of a file.
fn all_packets(bytes: &[u8]) -> (usize, Vec<(u64, usize, Packet)>) {
    let mut r = Reader::new(bytes);
    let header = r.read_header().unwrap();
    let mut out = Vec::new();
    let mut p = Packet::default();
    loop {
        if !r.read_packet(&mut p).unwrap() {
            break;
        }
        let n = usize::try_from(r.last_packet_len()).unwrap();
        out.push((r.last_packet_offset(), n, p.clone()));
    }
    (header.encoded_len(), out)
}

/// Reads a possibly damaged file; returns the packets read, the errors met, and whether the
/// header failed. Continues after recoverable errors.
fn read_lenient(bytes: &[u8], limits: Limits) -> (Vec<(u64, Packet)>, Vec<Error>, bool) {
    let mut r = Reader::new(bytes).with_limits(limits);
    let mut errors = Vec::new();
    if let Err(e) = r.read_header() {
        errors.push(e);
        return (Vec::new(), errors, true);
    }
    let mut packets = Vec::new();
    let mut p = Packet::default();
    for _ in 0..1_000_000 {
        match r.read_packet(&mut p) {
            Ok(false) => break,
            Ok(true) => packets.push((r.last_packet_offset(), p.clone())),
            Err(e) => {
                let fatal = !e.is_recoverable();
                errors.push(e);
                if fatal {
                    // A fatal error ends the stream: the next call reports the end.
                    assert!(!r.read_packet(&mut p).unwrap_or(false));
                    break;
                }
            }
        }
    }
    (packets, errors, false)
}

fn smallest_sample() -> Option<Vec<u8>> {
    let files = common::sample_files();
    let path = files
        .iter()
        .min_by_key(|p| std::fs::metadata(p).unwrap().len())?;
    Some(std::fs::read(path).unwrap())
}

#[test]
fn truncated_copies_keep_every_complete_packet() {
    let Some(bytes) = smallest_sample() else {
        return;
    };
    let (header_len, full) = all_packets(&bytes);

    let mut cuts: Vec<usize> = (0..1200).collect();
    let mut rng = common::Rng(0x5eed_c0de);
    cuts.extend((0..250).map(|_| rng.below(bytes.len() as u64) as usize));
    // Packet boundaries and one byte either side, for a spread of packets.
    for (off, n, _) in full.iter().step_by(97) {
        let end = *off as usize + n;
        cuts.extend([end - 1, end, end + 1]);
    }
    cuts.push(bytes.len() - 1);

    let mut checked = 0;
    for cut in cuts {
        let cut = cut.min(bytes.len());
        let (packets, errors, header_failed) = read_lenient(&bytes[..cut], Limits::default());
        if cut < header_len {
            assert!(header_failed, "cut {cut}");
            assert!(
                matches!(errors[0], Error::Truncated { offset: 0, .. }),
                "cut {cut}: {}",
                errors[0]
            );
            continue;
        }
        let complete: Vec<_> = full
            .iter()
            .filter(|(off, n, _)| *off as usize + n <= cut)
            .collect();
        assert_eq!(packets.len(), complete.len(), "cut {cut}");
        for ((off, p), (off2, _, p2)) in packets.iter().zip(&complete) {
            assert_eq!(off, off2, "cut {cut}");
            assert_eq!(p, p2, "cut {cut} at {off}");
        }
        let boundary = complete
            .last()
            .map_or(header_len, |(off, n, _)| *off as usize + n);
        if boundary == cut {
            assert!(errors.is_empty(), "cut {cut}: {errors:?}");
        } else {
            assert_eq!(errors.len(), 1, "cut {cut}: {errors:?}");
            match &errors[0] {
                Error::Truncated {
                    offset, available, ..
                } => {
                    assert_eq!(*offset as usize, boundary, "cut {cut}");
                    assert_eq!(*available as usize, cut - boundary, "cut {cut}");
                }
                e => panic!("cut {cut}: {e}"),
            }
            assert!(
                errors[0]
                    .to_string()
                    .contains(&format!("at byte {boundary}"))
            );
        }

        let index = index_frames(&bytes[..cut], &Limits::default()).unwrap();
        let frames = complete
            .iter()
            .filter(|(_, _, p)| matches!(p, Packet::FrameStart(_)))
            .count();
        assert_eq!(index.frames.len(), frames, "cut {cut}");
        assert_eq!(index.end as usize, boundary, "cut {cut}");
        assert_eq!(index.error.is_some(), boundary != cut, "cut {cut}");
        checked += 1;
    }
    println!("checked {checked} truncated copies");
}

#[test]
fn bit_flipped_copies_never_panic() {
    let Some(bytes) = smallest_sample() else {
        return;
    };
    // Keep the run short in debug builds: the packets in the first 64 KiB hold frame 1 (the
    // richest frame); cut at a packet boundary so an undamaged copy reads cleanly.
    let (_, full) = all_packets(&bytes);
    let end = full
        .iter()
        .map(|(off, n, _)| *off as usize + n)
        .take_while(|&end| end <= 64 << 10)
        .last()
        .unwrap();
    let bytes = &bytes[..end];
    let mut rng = common::Rng(0xf1_1bad);
    // clean, recoverable packet errors only, stream ended early, header rejected
    let mut outcomes = [0usize; 4];
    for round in 0..300 {
        let mut copy = bytes.to_vec();
        let flips = 1 + rng.below(4);
        for _ in 0..flips {
            // Bias half the flips into the first 2 KiB (header, frame 1 events, sizes).
            let limit = if rng.below(2) == 0 {
                2048
            } else {
                copy.len() as u64
            };
            let at = rng.below(limit) as usize;
            copy[at] ^= 1 << rng.below(8);
        }
        let limits = Limits {
            max_record_len: 1 << 20,
            ..Limits::default()
        };
        let (packets, errors, header_failed) = read_lenient(&copy, limits);
        let _ = index_frames(&copy[..], &limits);
        for e in &errors {
            // Every input error names an offset inside the file.
            if let Some(off) = e.offset() {
                assert!(off <= copy.len() as u64, "round {round}: {e}");
            }
            let core: recfmt_core::Error = match e {
                Error::Io(_) => continue,
                Error::Truncated {
                    what,
                    offset,
                    needed,
                    available,
                } => Error::Truncated {
                    what,
                    offset: *offset,
                    needed: *needed,
                    available: *available,
                }
                .into(),
                _ => recfmt_core::Error::invalid(e.to_string()),
            };
            let _ = core.to_string();
        }
        let slot = if header_failed {
            3
        } else if errors.iter().any(|e| !e.is_recoverable()) {
            2
        } else if !errors.is_empty() {
            1
        } else {
            0
        };
        outcomes[slot] += 1;
        assert!(packets.len() <= 1_000_000);
    }
    println!(
        "bit flips over {} bytes: {} read cleanly, {} with skipped packets only, {} ended early, {} header rejected",
        bytes.len(),
        outcomes[0],
        outcomes[1],
        outcomes[2],
        outcomes[3]
    );
}

#[test]
fn size_over_the_limit_is_reported_before_allocating() {
    let Some(bytes) = smallest_sample() else {
        return;
    };
    let limits = Limits {
        max_record_len: 1000,
        ..Limits::default()
    };
    let (packets, errors, _) = read_lenient(&bytes, limits);
    assert_eq!(errors.len(), 1);
    match &errors[0] {
        Error::Limit {
            what,
            value,
            limit,
            offset,
        } => {
            assert_eq!(*what, "packet size");
            assert!(*value > 1000);
            assert_eq!(*limit, 1000);
            assert_eq!(*offset as usize, 34 + 5 + 24); // the first EventAdd follows FrameStart
        }
        e => panic!("{e}"),
    }
    assert_eq!(packets.len(), 1);
    let core: recfmt_core::Error = errors.into_iter().next().unwrap().into();
    assert_eq!(core.kind(), recfmt_core::ErrorKind::Limit);
}

#[test]
fn garbage_after_a_valid_header() {
    let Some(bytes) = smallest_sample() else {
        return;
    };
    let mut rng = common::Rng(42);
    for _ in 0..200 {
        let mut copy = bytes[..34].to_vec();
        let len = rng.below(600) as usize;
        copy.extend((0..len).map(|_| rng.next() as u8));
        let (_, errors, header_failed) = read_lenient(&copy, Limits::default());
        assert!(!header_failed);
        let _ = errors;
    }
}

/// A generated file: header, frame 1, then `big` user packets of `size` bytes, then frame 2.
/// Bodies are never materialised, so offsets past 4 GiB cost no memory.
struct Huge {
    prefix: Vec<u8>,
    big_header: [u8; 5],
    size: u64,
    big: u64,
    suffix: Vec<u8>,
    pos: u64,
}

impl Huge {
    fn len(&self) -> u64 {
        self.prefix.len() as u64 + self.big * (5 + self.size) + self.suffix.len() as u64
    }
}

impl std::io::Read for Huge {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let p0 = self.prefix.len() as u64;
        let unit = 5 + self.size;
        let mid_end = p0 + self.big * unit;
        let n = if self.pos < p0 {
            let s = &self.prefix[self.pos as usize..];
            let n = s.len().min(buf.len());
            buf[..n].copy_from_slice(&s[..n]);
            n
        } else if self.pos < mid_end {
            let within = (self.pos - p0) % unit;
            if within < 5 {
                let s = &self.big_header[within as usize..];
                let n = s.len().min(buf.len());
                buf[..n].copy_from_slice(&s[..n]);
                n
            } else {
                // Body bytes: whatever is in the buffer already.
                (unit - within).min(buf.len() as u64) as usize
            }
        } else {
            let at = (self.pos - mid_end) as usize;
            let s = self.suffix.get(at..).unwrap_or(&[]);
            let n = s.len().min(buf.len());
            buf[..n].copy_from_slice(&s[..n]);
            n
        };
        self.pos += n as u64;
        Ok(n)
    }
}

#[test]
fn offsets_beyond_4_gib() {
    use recfmt_carla::{Flavour, FrameStart, Header, Writer};
    let frame = |id: u64, elapsed: f64| {
        let mut w = Writer::new(Vec::new(), Flavour::Carla0912);
        w.write_packet(&Packet::FrameStart(FrameStart {
            id,
            duration_this: -1.0,
            elapsed,
        }))
        .unwrap();
        w.write_packet(&Packet::FrameEnd).unwrap();
        w.into_inner().unwrap()
    };
    let mut prefix = Vec::new();
    recfmt_carla::codec::encode_header(&Header::new("Town01", 0), &mut prefix).unwrap();
    prefix.extend(frame(1, 0.0));
    let size: u64 = 250 << 20;
    let mut big_header = [150u8, 0, 0, 0, 0];
    big_header[1..].copy_from_slice(&(size as u32).to_le_bytes());
    let huge = Huge {
        prefix,
        big_header,
        size,
        big: 18,
        suffix: frame(2, 1.0),
        pos: 0,
    };
    let total = huge.len();
    assert!(total > 4 << 30);
    let index = index_frames(huge, &Limits::default()).unwrap();
    assert!(index.error.is_none(), "{:?}", index.error);
    assert_eq!(index.frames.len(), 2);
    assert_eq!(index.frames[1].offset, total - 29 - 5);
    assert_eq!(index.frames[1].end, Some(total));
    assert_eq!(index.end, total);
    assert_eq!(index.packets, 4 + 18);
    println!(
        "indexed a {total}-byte generated file; frame 2 at byte {}",
        index.frames[1].offset
    );
}
