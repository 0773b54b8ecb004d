//! A user block in front of a finished HDF5 file (MATLAB's 512-byte v7.3 header).
//!
//! hdf5-pure 0.47 appends in place, in bounded memory, only to a file without a user block
//! (its bounded engine refuses a non-zero base address, and so does its fast in-place
//! append). So an output with a user block is written without one and, once closed, copied
//! behind the block a buffer at a time, with the superblock moved to the block's end: its
//! base address becomes the block's length and its end-of-file address (the one absolute
//! address HDF5 stores) grows by it; every other address is relative to the base and stays.
//! That is the layout the HDF5 C library writes itself for `H5Pset_userblock(512)`.

use std::io::{self, Read, Write};

/// Length of the version-2/3 superblock with 8-byte addresses, checksum included.
const SUPERBLOCK_V2_LEN: usize = 48;
/// Byte offsets in that superblock.
const BASE_ADDRESS_AT: usize = 12;
const EOF_ADDRESS_AT: usize = 28;
const CHECKSUM_AT: usize = 44;

/// Copies the HDF5 file `hdf5` (no user block, version-2/3 superblock at byte 0, 8-byte
/// addresses: what hdf5-pure writes) to `out` behind `block`, whose length must be a power of
/// two of at least 512 bytes, as HDF5 requires.
pub(crate) fn copy_behind_block(
    block: &[u8],
    mut hdf5: impl Read,
    mut out: impl Write,
) -> io::Result<()> {
    let len = block.len();
    if len < 512 || !len.is_power_of_two() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("an HDF5 user block is 512, 1024, 2048... bytes, not {len}"),
        ));
    }
    let mut superblock = [0u8; SUPERBLOCK_V2_LEN];
    hdf5.read_exact(&mut superblock)?;
    rebase_superblock(&mut superblock, len as u64)?;
    out.write_all(block)?;
    out.write_all(&superblock)?;
    io::copy(&mut hdf5, &mut out)?;
    out.flush()
}

/// Moves a version-2/3 superblock from byte 0 to byte `base`.
fn rebase_superblock(sb: &mut [u8; SUPERBLOCK_V2_LEN], base: u64) -> io::Result<()> {
    let malformed = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    if &sb[..8] != b"\x89HDF\r\n\x1a\n" || !matches!(sb[8], 2 | 3) || sb[9] != 8 || sb[10] != 8 {
        return Err(malformed(
            "not a version-2/3 HDF5 superblock with 8-byte addresses",
        ));
    }
    if u64_at(sb, BASE_ADDRESS_AT) != 0 {
        return Err(malformed("the HDF5 file already has a user block"));
    }
    if lookup3(&sb[..CHECKSUM_AT]).to_le_bytes() != sb[CHECKSUM_AT..] {
        return Err(malformed("the HDF5 superblock's checksum does not match"));
    }
    let eof = u64_at(sb, EOF_ADDRESS_AT)
        .checked_add(base)
        .ok_or_else(|| malformed("the HDF5 end-of-file address overflows"))?;
    sb[BASE_ADDRESS_AT..BASE_ADDRESS_AT + 8].copy_from_slice(&base.to_le_bytes());
    sb[EOF_ADDRESS_AT..EOF_ADDRESS_AT + 8].copy_from_slice(&eof.to_le_bytes());
    let sum = lookup3(&sb[..CHECKSUM_AT]);
    sb[CHECKSUM_AT..].copy_from_slice(&sum.to_le_bytes());
    Ok(())
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Bob Jenkins' lookup3 `hashlittle` with an initial value of 0: the checksum of HDF5's
/// version-2 metadata (hdf5-pure keeps its own private).
fn lookup3(data: &[u8]) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn last(a: &mut u32, b: &mut u32, c: &mut u32) {
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(14));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(11));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(25));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(16));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(4));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(14));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(24));
    }
    let word = |w: &[u8]| {
        let mut b = [0u8; 4];
        b[..w.len()].copy_from_slice(w);
        u32::from_le_bytes(b)
    };
    let init = 0xdead_beef_u32.wrapping_add(data.len() as u32);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    let mut tail = [0u8; 12];
    tail[..rest.len()].copy_from_slice(rest);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    last(&mut a, &mut b, &mut c);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup3_matches_the_reference_values() {
        // Values from lookup3.c's own self-test (`driver5`) and HDF5's H5checksum tests.
        assert_eq!(lookup3(b""), 0xdeadbeef);
        assert_eq!(lookup3(b"Four score and seven years ago"), 0x17770551);
    }

    #[test]
    fn a_superblock_moves_behind_the_block_and_keeps_a_valid_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.h5");
        let mut skeleton = hdf5_pure::FileBuilder::new();
        skeleton.create_dataset("v").with_f64_data(&[1.0, 2.0, 3.0]);
        skeleton.write(&path).unwrap();
        let plain = std::fs::read(&path).unwrap();
        let mut out = Vec::new();
        copy_behind_block(&[7u8; 512], &plain[..], &mut out).unwrap();
        assert_eq!(out.len(), plain.len() + 512);
        assert_eq!(&out[512 + 48..], &plain[48..]);
        assert_eq!(u64_at(&out[512..], BASE_ADDRESS_AT), 512);
        assert_eq!(
            u64_at(&out[512..], EOF_ADDRESS_AT),
            u64_at(&plain, EOF_ADDRESS_AT) + 512
        );
        let moved = dir.path().join("y.h5");
        std::fs::write(&moved, &out).unwrap();
        let file = hdf5_pure::File::open(&moved).unwrap();
        assert_eq!(
            file.dataset("v").unwrap().read_f64().unwrap(),
            [1.0, 2.0, 3.0]
        );

        // Twice is refused, and so is a block HDF5 cannot have.
        assert!(copy_behind_block(&[0u8; 512], &out[512..], Vec::new()).is_err());
        assert!(copy_behind_block(&[0u8; 500], &plain[..], Vec::new()).is_err());
    }
}
