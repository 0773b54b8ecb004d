//! Detection of the [`Flavour`] of a file from its first packets (sans-IO).

use recfmt_core::Limits;

use crate::codec::cursor::{Cursor, PacketCtx};
use crate::codec::physics_layouts_that_fit;
use crate::flavour::{Flavour, VectorWidth};
use crate::header::Header;
use crate::packet::{EventAdd, Record, VehicleWheels};

/// Collects evidence about the build that wrote a file, packet by packet.
///
/// The header version does not tell builds apart, so the detector applies the heuristics of
/// the format notes:
///
/// * **vector width**: a non-empty Position packet is `2 + 28n` bytes in UE4 and `2 + 52n`
///   in UE5; EventAdd, Kinematics, BoundingBox and TriggerVolume bodies vote too;
/// * **ids 21–24**: VehicleDoor is written between Collision and Position, so whichever of
///   ids 21 or 23 appears before Position in a frame is the door packet; door bodies are
///   `2 + 6n`, wheel bodies parse as wheels; id 24 or header version 2 means Weather;
/// * **ids 18–20**: VisualTime (20) is written every frame from 0.9.14 on;
/// * **PhysicsControl wheels**: the body parses exactly with 36-byte wheels (0.9.10–0.9.11)
///   or 48-byte wheels (0.9.12+).
///
/// Feed it the packets of at least the first frame, then ask for [`FlavourDetector::flavour`].
///
/// ```
/// use recfmt_carla::{Flavour, FlavourDetector, Header};
/// let mut d = FlavourDetector::new(&Header::new("Town01", 0));
/// d.observe(0, &[0; 24]);
/// // One UE5 Position record: 2 + 52 bytes.
/// let mut position = vec![1, 0];
/// position.extend_from_slice(&[0; 52]);
/// d.observe(6, &position);
/// d.observe(1, &[]);
/// assert!(d.is_decided());
/// assert_eq!(d.flavour(), Flavour::Ue5);
/// ```
#[derive(Debug, Clone)]
pub struct FlavourDetector {
    version: u16,
    limits: Limits,
    frames: u64,
    first_frame_done: bool,
    position_in_frame: bool,
    vector: Option<VectorWidth>,
    votes_f32: u32,
    votes_f64: u32,
    seen: [bool; 25],
    id18_other_size: bool,
    door_before_position: [bool; 2],
    door_like: [u32; 2],
    wheels_like: [u32; 2],
    physics36: u32,
    physics48: u32,
    packets: u64,
}

impl FlavourDetector {
    /// A detector for a file with `header`.
    pub fn new(header: &Header) -> Self {
        FlavourDetector {
            version: header.version,
            limits: Limits::default(),
            frames: 0,
            first_frame_done: false,
            position_in_frame: false,
            vector: None,
            votes_f32: 0,
            votes_f64: 0,
            seen: [false; 25],
            id18_other_size: false,
            door_before_position: [false; 2],
            door_like: [0; 2],
            wheels_like: [0; 2],
            physics36: 0,
            physics48: 0,
            packets: 0,
        }
    }

    /// Packets observed so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// FrameStart packets observed so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// True once the first frame is complete and the vector width is known, after which more
    /// packets cannot change the verdict (except PhysicsControl, see
    /// [`FlavourDetector::physics_evidence`]).
    pub fn is_decided(&self) -> bool {
        self.first_frame_done && self.vector.is_some()
    }

    /// Whether PhysicsControl bodies were seen, which settles 0.9.10 against 0.9.12.
    pub fn physics_evidence(&self) -> bool {
        self.physics36 + self.physics48 > 0
    }

    /// The vector width, when a packet settled it.
    pub fn vector_width(&self) -> Option<VectorWidth> {
        self.vector.or(if self.votes_f64 > self.votes_f32 {
            Some(VectorWidth::F64)
        } else if self.votes_f32 > 0 {
            Some(VectorWidth::F32)
        } else {
            None
        })
    }

    fn vote_records(&mut self, body: &[u8], per_width: [usize; 2]) {
        let Some(n) = body
            .get(..2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
        else {
            return;
        };
        if n == 0 {
            return;
        }
        let fits = |size: usize| body.len() == 2 + n * size;
        match (fits(per_width[0]), fits(per_width[1])) {
            (true, false) => self.votes_f32 += 1,
            (false, true) => self.votes_f64 += 1,
            _ => {}
        }
    }

    fn parses<T: Record>(&self, id: u8, body: &[u8], width: VectorWidth) -> bool {
        let ctx = PacketCtx {
            packet: "probe",
            id,
            offset: 0,
        };
        let mut c = Cursor::new(body, ctx, width, &self.limits);
        let Ok(n) = c.u16() else { return false };
        for _ in 0..n {
            if T::decode(&mut c).is_err() {
                return false;
            }
        }
        c.finish().is_ok()
    }

    /// Records one packet.
    pub fn observe(&mut self, id: u8, body: &[u8]) {
        self.packets += 1;
        let count = body
            .get(..2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])));
        if let Some(seen) = self.seen.get_mut(usize::from(id)) {
            *seen = true;
        }
        match id {
            0 => {
                self.frames += 1;
                self.position_in_frame = false;
            }
            1 if self.frames > 0 => self.first_frame_done = true,
            2 if self.vector.is_none() && count.is_some_and(|n| n > 0) => {
                let f32_ok = self.parses::<EventAdd>(id, body, VectorWidth::F32);
                let f64_ok = self.parses::<EventAdd>(id, body, VectorWidth::F64);
                match (f32_ok, f64_ok) {
                    (true, false) => self.votes_f32 += 2,
                    (false, true) => self.votes_f64 += 2,
                    _ => {}
                }
            }
            6 => {
                if self.frames > 0 {
                    self.position_in_frame = true;
                }
                if let Some(n) = count.filter(|&n| n > 0) {
                    if body.len() == 2 + 28 * n {
                        self.vector = Some(VectorWidth::F32);
                    } else if body.len() == 2 + 52 * n {
                        self.vector = Some(VectorWidth::F64);
                    }
                }
            }
            12 | 13 | 17 => self.vote_records(body, [28, 52]),
            15 => {
                let (fits36, fits48) = physics_layouts_that_fit(body, &self.limits);
                match (fits36, fits48) {
                    (true, false) => self.physics36 += 1,
                    (false, true) => self.physics48 += 1,
                    _ => {}
                }
            }
            18 if body.len() != 8 => self.id18_other_size = true,
            21 | 23 => {
                let slot = usize::from(id == 23);
                if self.frames > 0 && !self.position_in_frame {
                    self.door_before_position[slot] = true;
                }
                if let Some(n) = count.filter(|&n| n > 0) {
                    if body.len() == 2 + 6 * n {
                        self.door_like[slot] += 1;
                    }
                    if self.parses::<VehicleWheels>(id, body, VectorWidth::F32) {
                        self.wheels_like[slot] += 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// The best guess from the evidence so far.
    ///
    /// With no evidence at all (no PhysicsControl, no ids above 17) the answer is
    /// [`Flavour::Carla0912`], whose layouts equal 0.9.10's for every other packet.
    pub fn flavour(&self) -> Flavour {
        if self.vector_width() == Some(VectorWidth::F64) {
            return Flavour::Ue5;
        }
        if self.version >= 2 || self.seen[24] {
            return Flavour::Ue4DevWeather;
        }
        let door_score = |slot: usize| {
            i64::from(self.door_before_position[slot]) * 4 + i64::from(self.door_like[slot])
                - i64::from(self.wheels_like[slot])
        };
        if self.seen[23] {
            return if door_score(0) > door_score(1) {
                Flavour::Ue4DevDoor21
            } else {
                Flavour::Carla0916
            };
        }
        if self.seen[21] || self.seen[22] {
            return Flavour::Carla0915;
        }
        if self.seen[19] || self.seen[20] || (self.seen[18] && !self.id18_other_size) {
            return Flavour::Carla0914;
        }
        if self.physics36 > self.physics48 {
            Flavour::Carla0910
        } else {
            Flavour::Carla0912
        }
    }
}
