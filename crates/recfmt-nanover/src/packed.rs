//! The `.nanover.zip` layout shared by its reader (`nzip`) and its writer (`zipwrite`),
//! declared once: the member names and the `arrays` keys packed into little-endian bytes.

use crate::proto::ValueArray;

/// The member holding the messages, written first.
pub(crate) const MESSAGES: &str = "messages.msgpack";
/// The member holding the index of the messages.
pub(crate) const INDEX: &str = "index.msgpack";

/// Element type of a key whose arrays NanoVer packs into bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packed {
    F32,
    U32,
    U8,
}

impl Packed {
    /// How `key`'s arrays are packed, `None` for a key stored as a plain list.
    pub(crate) fn of(key: &str) -> Option<Packed> {
        Some(match key {
            "particle.positions"
            | "particle.velocities"
            | "particle.forces"
            | "particle.forces.system"
            | "system.box.vectors"
            | "forces.user.sparse" => Packed::F32,
            "particle.residues" | "bond.pairs" | "residue.chains" | "forces.user.index" => {
                Packed::U32
            }
            "particle.elements" | "bond.orders" => Packed::U8,
            _ => return None,
        })
    }

    /// True when the key's arrays are float arrays in `.traj` (`bond.orders` is packed as
    /// `u8` but holds floats there).
    pub(crate) fn is_float(self, key: &str) -> bool {
        self == Packed::F32 || key == "bond.orders"
    }

    /// The element count of `key`'s array packed in `byte_len` bytes and whether it reads
    /// as floats; `None` when the key is not packed or the bytes are not whole elements
    /// (then [`Packed::unpack`] gives `None` too).
    pub(crate) fn shape(key: &str, byte_len: u64) -> Option<(bool, u64)> {
        let packed = Packed::of(key)?;
        let width = match packed {
            Packed::F32 | Packed::U32 => 4,
            Packed::U8 => 1,
        };
        byte_len
            .is_multiple_of(width)
            .then(|| (packed.is_float(key), byte_len / width))
    }

    /// The array of `key` from its packed bytes; `None` when the key is not packed or the
    /// bytes are not whole elements.
    #[cfg_attr(not(feature = "nanover-zip"), allow(dead_code))]
    pub(crate) fn unpack(key: &str, bytes: &[u8]) -> Option<ValueArray> {
        let (float, _) = Packed::shape(key, bytes.len() as u64)?;
        let words = || bytes.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
        Some(match Packed::of(key)? {
            Packed::F32 => ValueArray::floats(words().map(f32::from_le_bytes).collect()),
            Packed::U32 => ValueArray::indices(words().map(u32::from_le_bytes).collect()),
            Packed::U8 if float => {
                ValueArray::floats(bytes.iter().map(|&b| f32::from(b)).collect())
            }
            Packed::U8 => ValueArray::indices(bytes.iter().map(|&b| u32::from(b)).collect()),
        })
    }
}

/// `values` keys NanoVer's converter turns into integers (`int(value)`).
pub(crate) fn integer_value(key: &str) -> bool {
    matches!(key, "particle.count" | "residue.count" | "chain.count")
}
