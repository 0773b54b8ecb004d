//! Writing and reading datasets generically over the scalar element type.
//!
#![doc = include_str!("../../docs/guide/generic-io.md")]
