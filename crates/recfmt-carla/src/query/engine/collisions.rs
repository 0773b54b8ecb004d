//! `QueryCollisions`: `show_recorder_collisions`.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};

use super::*;

impl<R: Read> Engine<R> {
    /// `QueryCollisions`.
    pub(crate) fn collisions(
        &mut self,
        cat1: u8,
        cat2: u8,
        w: &mut dyn Write,
    ) -> EResult<Table<CollisionRow>> {
        let Some(info) = self.check_file_info()? else {
            return Ok(None);
        };
        // Actors by id: (type, blueprint); `Actors[id]` inserts (0, "").
        let mut actors: HashMap<u32, (u8, String)> = HashMap::new();
        let mut old: HashSet<(u32, u32)> = HashSet::new();
        let mut new: HashSet<(u32, u32)> = HashSet::new();
        let mut rows = Vec::new();
        let mut hdr = Vec::new();
        push_padded(&mut hdr, b"Time", 8, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Types", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Id", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Actor 1", 35, false);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Id", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Actor 2", 35, false);
        hdr.push(b'\n');
        self.out.extend_from_slice(&hdr);
        while self.read_packet_header()? {
            self.flush(w, false)?;
            match self.kind() {
                Some(PacketKind::FrameStart) => {
                    self.read_frame()?;
                    old = std::mem::take(&mut new);
                }
                Some(PacketKind::FrameEnd) => {}
                Some(PacketKind::EventAdd) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.read_event_add()?;
                        actors.insert(
                            self.add_id(),
                            (self.add.kind[0], ue_text(&self.add.blueprint)),
                        );
                    }
                }
                Some(PacketKind::EventDel) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.del = self.s.value(self.del)?;
                        // Upstream erases the last *added* id, not the deleted one.
                        actors.remove(&self.add_id());
                    }
                }
                Some(PacketKind::Collision) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.collision = self.s.value(self.collision)?;
                        let r = Collision::read(&self.collision, self.width);
                        let (id1, id2) = (r.database_id1, r.database_id2);
                        let (hero1, hero2) = (r.is_actor1_hero, r.is_actor2_hero);
                        let mut category = |id: u32| -> u8 {
                            if id == u32::MAX {
                                return b'o';
                            }
                            let kind = actors.entry(id).or_default().0;
                            CATEGORIES.get(usize::from(kind)).copied().unwrap_or(b'?')
                        };
                        let (t1, t2) = (category(id1), category(id2));
                        let pass = |cat: u8, t: u8, hero: bool| {
                            cat == b'a' || cat == t || (cat == b'h' && hero)
                        };
                        if pass(cat1, t1, hero1) && pass(cat2, t2, hero2) {
                            if !old.contains(&(id1, id2)) {
                                let name1 = actors.entry(id1).or_default().1.clone();
                                let name2 = actors.entry(id2).or_default().1.clone();
                                let row = CollisionRow {
                                    time: self.frame_elapsed(),
                                    type1: char::from(t1),
                                    type2: char::from(t2),
                                    actor1: id1,
                                    name1,
                                    actor2: id2,
                                    name2,
                                };
                                self.collision_line(&row);
                                rows.push(row);
                            }
                            new.insert((id1, id2));
                        }
                    }
                }
                _ => self.skip_packet()?,
            }
        }
        let (frames, duration) = self.footer(!rows.is_empty());
        self.flush(w, true)?;
        Ok(Some((info, rows, frames, duration)))
    }

    fn collision_line(&mut self, r: &CollisionRow) {
        let o = &mut self.out;
        push_padded(o, format_f(r.time, 0).as_bytes(), 8, true);
        let _ = write!(o, "   {} {}  ", r.type1, r.type2);
        push_padded(o, r.actor1.to_string().as_bytes(), 6, true);
        o.push(b' ');
        push_padded(o, r.name1.as_bytes(), 35, false);
        o.push(b' ');
        push_padded(o, r.actor2.to_string().as_bytes(), 6, true);
        o.push(b' ');
        push_padded(o, r.name2.as_bytes(), 35, false);
        o.push(b'\n');
    }
}
