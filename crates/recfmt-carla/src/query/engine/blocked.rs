//! `QueryBlocked`: `show_recorder_actors_blocked`.

use std::io::{Read, Write};

use super::*;

impl<R: Read> Engine<R> {
    /// `QueryBlocked`.
    pub(crate) fn blocked(
        &mut self,
        min_time: f64,
        min_distance: f64,
        w: &mut dyn Write,
    ) -> EResult<Table<BlockedRow>> {
        let Some(info) = self.check_file_info()? else {
            return Ok(None);
        };
        let mut hdr = Vec::new();
        push_padded(&mut hdr, b"Time", 8, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Id", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Actor", 35, false);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Duration", 10, true);
        hdr.push(b'\n');
        self.out.extend_from_slice(&hdr);

        let mut actors: LibcxxMap<Blocked> = LibcxxMap::new();
        // `std::multimap<double, std::string, std::greater<double>>`.
        let mut results: Vec<BlockedRow> = Vec::new();
        let insert = |results: &mut Vec<BlockedRow>, row: BlockedRow| {
            let at = results.partition_point(|r| {
                row.duration.partial_cmp(&r.duration) != Some(std::cmp::Ordering::Greater)
            });
            results.insert(at, row);
        };
        while self.read_packet_header()? {
            self.flush(w, false)?;
            match self.kind() {
                Some(PacketKind::FrameStart) => self.read_frame()?,
                Some(PacketKind::FrameEnd) => {}
                Some(PacketKind::EventAdd) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.read_event_add()?;
                        let fresh = Blocked {
                            name: ue_text(&self.add.blueprint),
                            ..Blocked::default()
                        };
                        *actors.entry(self.add_id(), Blocked::default) = fresh;
                    }
                }
                Some(PacketKind::EventDel) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.del = self.s.value(self.del)?;
                        actors.erase(self.add_id());
                    }
                }
                Some(PacketKind::Position) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        let width = self.width;
                        self.position = self.read_over(self.position, Position::size(width))?;
                        let r = Position::read(&self.position, width);
                        let id = r.database_id;
                        let loc = r.location.to_f64();
                        let (elapsed, step) = (self.frame_elapsed(), self.frame_duration());
                        let ue5 = self.flavour.vector_width() == VectorWidth::F64;
                        let a = actors.entry(id, Blocked::default);
                        if distance(a.last, loc, ue5) < min_distance {
                            if a.duration == 0.0 {
                                a.time = elapsed;
                            }
                            a.duration += step;
                        } else {
                            if a.duration >= min_time {
                                let row = BlockedRow {
                                    time: a.time,
                                    id,
                                    blueprint: a.name.clone(),
                                    duration: a.duration,
                                };
                                insert(&mut results, row);
                            }
                            a.duration = 0.0;
                            a.last = loc;
                        }
                    }
                }
                _ => self.skip_packet()?,
            }
        }
        for (id, a) in actors.iter() {
            if a.duration >= min_time {
                let row = BlockedRow {
                    time: a.time,
                    id,
                    blueprint: a.name.clone(),
                    duration: a.duration,
                };
                insert(&mut results, row);
            }
        }
        for r in &results {
            let o = &mut self.out;
            push_padded(o, format_f(r.time, 0).as_bytes(), 8, true);
            o.push(b' ');
            push_padded(o, r.id.to_string().as_bytes(), 6, true);
            o.push(b' ');
            push_padded(o, r.blueprint.as_bytes(), 35, false);
            o.push(b' ');
            push_padded(o, format_f(r.duration, 0).as_bytes(), 10, true);
            o.push(b'\n');
        }
        let (frames, duration) = self.footer(false);
        self.flush(w, true)?;
        Ok(Some((info, results, frames, duration)))
    }
}

/// An actor of the blocked query.
#[derive(Debug, Default)]
struct Blocked {
    name: String,
    last: [f64; 3],
    time: f64,
    duration: f64,
}

/// `FVector::Distance`: in `float` for UE4 builds (the values are `f32`), `double` for UE5.
fn distance(a: [f64; 3], b: [f64; 3], ue5: bool) -> f64 {
    if ue5 {
        let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    } else {
        let d = [
            b[0] as f32 - a[0] as f32,
            b[1] as f32 - a[1] as f32,
            b[2] as f32 - a[2] as f32,
        ];
        f64::from((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt())
    }
}
