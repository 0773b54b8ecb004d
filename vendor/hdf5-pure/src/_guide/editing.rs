//! Editing an existing file in place: staged commits, in-place appends, and space reuse.
//!
#![doc = include_str!("../../docs/guide/editing.md")]
