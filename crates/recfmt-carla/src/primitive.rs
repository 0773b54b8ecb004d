//! Field types shared by many packets: strings and vectors, kept exactly as stored.

use std::borrow::Cow;
use std::fmt;

use crate::flavour::VectorWidth;

/// An Unreal `FString` as the recorder stores it: a `u16` byte length and that many bytes.
///
/// The bytes are kept as they are (normally UTF-8, never NUL-terminated) so that writing
/// reproduces the file exactly, even for invalid UTF-8.
#[derive(Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct FString(Vec<u8>);

impl FString {
    /// Largest length the `u16` length field can hold.
    pub const MAX_LEN: usize = u16::MAX as usize;

    /// A string holding `bytes` unchanged.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        FString(bytes.into())
    }

    /// The stored bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text, when it is valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The text, with invalid UTF-8 replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// The bytes before the first NUL, which is what CARLA's own tools display.
    pub fn until_nul(&self) -> &[u8] {
        match self.0.iter().position(|&b| b == 0) {
            Some(end) => &self.0[..end],
            None => &self.0,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Replaces the content, keeping the allocation.
    pub fn set(&mut self, bytes: &[u8]) {
        self.0.clear();
        self.0.extend_from_slice(bytes);
    }

    /// The bytes, consuming the string.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl fmt::Debug for FString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Display for FString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl From<&str> for FString {
    fn from(s: &str) -> Self {
        FString(s.as_bytes().to_vec())
    }
}

impl From<String> for FString {
    fn from(s: String) -> Self {
        FString(s.into_bytes())
    }
}

impl PartialEq<str> for FString {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for FString {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

/// An Unreal `FVector` (X, Y, Z) in the width the file stores it.
///
/// UE4 builds store three `f32`, UE5 builds three `f64`. The value keeps its width (and the
/// exact bits, NaN payloads included) so that writing reproduces the file. Locations are in
/// centimetres; a rotation vector holds roll (X), pitch (Y) and yaw (Z) in degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Vector3 {
    /// Three single-precision floats (UE4).
    F32([f32; 3]),
    /// Three double-precision floats (UE5).
    F64([f64; 3]),
}

impl Default for Vector3 {
    fn default() -> Self {
        Vector3::F32([0.0; 3])
    }
}

impl Vector3 {
    /// A vector of `width` from three `f64`s (narrowed for [`VectorWidth::F32`]).
    pub fn new(width: VectorWidth, x: f64, y: f64, z: f64) -> Self {
        match width {
            VectorWidth::F32 => Vector3::F32([x as f32, y as f32, z as f32]),
            VectorWidth::F64 => Vector3::F64([x, y, z]),
        }
    }

    /// A vector of `width` from three `f64`s, or `None` when a finite component does not fit
    /// the width (beyond ±3.4e38 in [`VectorWidth::F32`], where it would become infinite).
    pub fn checked(width: VectorWidth, x: f64, y: f64, z: f64) -> Option<Self> {
        let fits = |v: f64| !v.is_finite() || (v as f32).is_finite();
        (width == VectorWidth::F64 || (fits(x) && fits(y) && fits(z)))
            .then(|| Vector3::new(width, x, y, z))
    }

    /// The width this vector is stored with.
    pub fn width(&self) -> VectorWidth {
        match self {
            Vector3::F32(_) => VectorWidth::F32,
            Vector3::F64(_) => VectorWidth::F64,
        }
    }

    /// The three components widened to `f64`.
    pub fn to_f64(&self) -> [f64; 3] {
        match *self {
            Vector3::F32([x, y, z]) => [f64::from(x), f64::from(y), f64::from(z)],
            Vector3::F64(v) => v,
        }
    }

    /// X (or roll).
    pub fn x(&self) -> f64 {
        self.to_f64()[0]
    }

    /// Y (or pitch).
    pub fn y(&self) -> f64 {
        self.to_f64()[1]
    }

    /// Z (or yaw).
    pub fn z(&self) -> f64 {
        self.to_f64()[2]
    }
}
