//! Signal and stream names as MATLAB identifiers.
//!
//! MATLAB's variable and field names start with a letter, hold only ASCII letters, digits and
//! `_`, are at most 63 characters long (`namelengthmax`) and are not keywords. A name is made
//! one by: every other character becomes `_` (`Vehicle.Nav.position.x` gives
//! `Vehicle_Nav_position_x`), leading and trailing `_` go (`/position/altitude-ft` gives
//! `position_altitude_ft`), a name that is then empty or starts with a digit gets an `x` in
//! front, a keyword gets a `_` after it, and it is cut to 63 characters. When two names of one
//! struct come out the same, or a name is reserved (`units` at the top), the later one gets
//! `_2`, `_3`... (cut so the whole stays within 63).

use std::collections::HashSet;

/// MATLAB's `namelengthmax`.
pub const MAX_NAME_LEN: usize = 63;

/// MATLAB's keywords (`iskeyword`), sorted.
const KEYWORDS: [&str; 20] = [
    "break",
    "case",
    "catch",
    "classdef",
    "continue",
    "else",
    "elseif",
    "end",
    "for",
    "function",
    "global",
    "if",
    "otherwise",
    "parfor",
    "persistent",
    "return",
    "spmd",
    "switch",
    "try",
    "while",
];

/// `name` as a MATLAB identifier (without resolving collisions; see `Names`).
pub fn identifier(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let trimmed = mapped.trim_matches('_');
    let mut out = match trimmed.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => trimmed.to_owned(),
        _ => format!("x{trimmed}"),
    };
    if KEYWORDS.binary_search(&out.as_str()).is_ok() {
        out.push('_');
    }
    out.truncate(MAX_NAME_LEN);
    out
}

/// The names given so far in one scope (the file's variables, or one struct's fields).
#[derive(Debug, Default)]
pub struct Names {
    used: HashSet<String>,
}

impl Names {
    /// A scope where `reserved` are already taken.
    pub fn with_reserved(reserved: &[&str]) -> Self {
        Names {
            used: reserved.iter().map(|r| (*r).to_owned()).collect(),
        }
    }

    /// A new identifier for `name`, unlike every one given before in this scope.
    pub fn add(&mut self, name: &str) -> String {
        let base = identifier(name);
        let mut candidate = base.clone();
        let mut n = 1u64;
        while self.used.contains(&candidate) {
            n += 1;
            let suffix = format!("_{n}");
            let keep = MAX_NAME_LEN - suffix.len();
            candidate = format!("{}{suffix}", &base[..base.len().min(keep)]);
        }
        self.used.insert(candidate.clone());
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(
            identifier("Vehicle.Nav.position.x"),
            "Vehicle_Nav_position_x"
        );
        assert_eq!(identifier("/position/altitude-ft"), "position_altitude_ft");
        assert_eq!(identifier("3d"), "x3d");
        assert_eq!(identifier(""), "x");
        assert_eq!(identifier("..."), "x");
        assert_eq!(identifier("end"), "end_");
        assert_eq!(identifier("höhe"), "h_he");
        assert_eq!(identifier(&"a".repeat(100)).len(), MAX_NAME_LEN);
        assert!(KEYWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn collisions_get_numbers_within_the_length_limit() {
        let mut names = Names::with_reserved(&["units"]);
        assert_eq!(names.add("units"), "units_2");
        assert_eq!(names.add("a.b"), "a_b");
        assert_eq!(names.add("a-b"), "a_b_2");
        assert_eq!(names.add("a b"), "a_b_3");
        let long = "x".repeat(70);
        assert_eq!(names.add(&long), "x".repeat(63));
        let second = names.add(&long);
        assert_eq!(second.len(), MAX_NAME_LEN);
        assert!(second.ends_with("_2"));
    }
}
