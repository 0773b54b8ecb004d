//! Documentation pages of the crate, under `cfg(doc)`.

pub mod compound_types;
pub mod compression;
pub mod editing;
pub mod file_space;
pub mod generic_io;
pub mod groups_attributes;
pub mod ndarray;
pub mod portability;
pub mod reading;
pub mod repack;
pub mod streaming;
pub mod swmr;
pub mod vlen_strings;
pub mod writing;
