//! The one HDF5 writing module of recfmt: every HDF5 output (`recfmt convert --to hdf5` in
//! `recfmt-export`, Icarus HDF5 in `recfmt-icarec`, NanoVer's HDF5 export in
//! `recfmt-nanover`) writes through it.
//!
//! * [`H5Output`]: the file, declared up front from a [`hdf5_pure::FileBuilder`] skeleton,
//!   written under a temporary name and moved into place when complete (removed on failure);
//!   open for in-place appends in bounded memory, synced once at close; with a user block
//!   in front when asked ([`H5Output::with_user_block`], MATLAB's v7.3 header).
//! * [`ChunkedWriter`] and [`ColumnBuffer`]: datasets declared empty
//!   ([`declare_appendable`]) and grown a whole chunk at a time, so memory stays at most one
//!   chunk per column however long the recording is; full chunks are compressed
//!   (shuffle + deflate) on worker threads ([`compression_threads`]) while the writing thread
//!   goes on, and written in order, so the file is the one a single thread makes.
//! * [`write_error`]: an hdf5-pure failure as a [`recfmt_core::Error`] of kind `Io` naming
//!   the file and what was being written, hdf5-pure's error kept as the source.
//! * [`text`] and [`bool_datatype`]: the attribute and element types every output shares.
//!
//! The files use the HDF5 1.10+ format (version-3 superblock, extensible-array chunk index);
//! they read with h5py (HDF5 1.14 and 2.0), `h5dump` 1.10 and later, and hdf5-pure itself.

mod chunked;
mod compress;
mod error;
mod output;
mod userblock;

pub use chunked::{ChunkedWriter, ColumnBuffer, DatasetId, declare_appendable};
pub use compress::compression_threads;
pub use error::{InternalError, WriteError, internal_error, write_error};
pub use output::H5Output;

use hdf5_pure::{AttrValue, Datatype, EnumTypeBuilder};

/// The largest chunk dimension every HDF5 reader accepts from hdf5-pure 0.47.
///
/// hdf5-pure encodes a chunk dimension above 65 535 in 4 bytes where the C library expects
/// 3, and HDF5 2.0 (the one in current h5py wheels) then refuses to open the dataset.
pub const MAX_CHUNK_ROWS: usize = 65_535;

/// A string attribute: variable-length UTF-8, which h5py returns as `str`.
pub fn text(value: impl Into<String>) -> AttrValue {
    AttrValue::VarLenString(value.into())
}

/// The element type of booleans: an enum of `int8` with `FALSE = 0` and `TRUE = 1`, which
/// h5py reads as numpy `bool`.
pub fn bool_datatype() -> Result<Datatype, hdf5_pure::FormatError> {
    EnumTypeBuilder::with_base(hdf5_pure::make_i8_type())
        .value("FALSE", 0)
        .value("TRUE", 1)
        .build()
}
