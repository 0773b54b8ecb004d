//! The storage filters this crate applies to a dataset: deflate, shuffle, scale-offset, LZF
//! and ZFP.
//!
#![doc = include_str!("../../docs/guide/compression.md")]
