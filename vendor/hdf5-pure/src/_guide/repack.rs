//! Rewriting a file into a fresh, compact copy, dropping objects on the way.
//!
#![doc = include_str!("../../docs/guide/repack.md")]
