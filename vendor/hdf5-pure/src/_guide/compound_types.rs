//! Records of named fields, complex numbers, enumerations, arrays and object references.
//!
#![doc = include_str!("../../docs/guide/compound-types.md")]
