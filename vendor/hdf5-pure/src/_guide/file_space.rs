//! Recording a file-space strategy, and what persisted free space lets a later session reuse.
//!
#![doc = include_str!("../../docs/guide/file-space.md")]
