//! What only the front ends (the command line, the Python package) ask of a format, beside
//! what the core's [`Registry`] does (detect, open, create): recovering a damaged recording
//! and the state of every signal at a time. The answers are typed; the front ends render them.
//!
//! Formats stay plug-ins: the front ends find these hooks by format id through [`hooks`] and
//! name no format. The table is filled here, from functions the format crates export.

use std::collections::BTreeMap;
use std::path::Path;

use recfmt_core::{Integrity, ReadOptions, Registry, Value, WriteOptions};
use serde::Serialize;

/// Every signal's value at one time, found by random access (ICAREC warm starts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateAt {
    /// The time of the frame found, in seconds.
    pub t: f64,
    /// Its frame number.
    pub frame: u64,
    /// Signal names and their values, in schema order.
    pub values: Vec<(String, Value)>,
}

/// Finds the state at time `t` (the last frame at or before it); `None` when no frame is that
/// early. The [`Integrity`] is that of the recording opened.
pub type StateAtFn = fn(
    path: &Path,
    t: f64,
    options: &ReadOptions,
) -> recfmt_core::Result<(Option<StateAt>, Integrity)>;

/// What a recovery kept and dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Recovered {
    /// Records found in the damaged input.
    pub records_in: u64,
    /// Records written to the output.
    pub records_written: u64,
    /// Records dropped (undecodable).
    pub records_dropped: u64,
    /// Bytes dropped: garbage, torn tails and dropped records.
    pub bytes_dropped: u64,
    /// Other repairs, by name (`timestamps_fixed`), in the order the format lists them.
    pub repairs: Vec<(&'static str, u64)>,
}

impl Recovered {
    /// True when anything was dropped or changed.
    pub fn changed(&self) -> bool {
        self.records_dropped > 0 || self.bytes_dropped > 0 || self.repairs.iter().any(|r| r.1 > 0)
    }

    /// Every count by name (`records_in`, `records_dropped`, `timestamps_fixed`, …).
    pub fn counts(&self) -> BTreeMap<String, u64> {
        [
            ("records_in", self.records_in),
            ("records_written", self.records_written),
            ("records_dropped", self.records_dropped),
            ("bytes_dropped", self.bytes_dropped),
        ]
        .into_iter()
        .chain(self.repairs.iter().copied())
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }
}

/// Writes every valid record of a damaged recording into a new file, replacing an existing
/// one only as `write` allows.
pub type RecoverFn = fn(
    source: &Path,
    target: &Path,
    options: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<Recovered>;

/// The front-end hooks of one format.
#[derive(Debug, Clone, Copy)]
pub struct FrontEndHooks {
    /// The format's id in the registry.
    pub format: &'static str,
    /// Writes every valid record of a damaged recording into a new file.
    pub recover: Option<RecoverFn>,
    /// The state of every signal at a time, by random access.
    pub state_at: Option<StateAtFn>,
}

/// The hooks of every format compiled in.
static HOOKS: &[FrontEndHooks] = &[
    #[cfg(feature = "icarec")]
    FrontEndHooks {
        format: "icarec",
        recover: None,
        state_at: Some(icarec_state_at),
    },
    #[cfg(feature = "nanover")]
    FrontEndHooks {
        format: "nanover",
        recover: Some(nanover_recover),
        state_at: None,
    },
];

/// The front-end hooks of the format with id `format`, if it has any.
pub fn hooks(format: &str) -> Option<&'static FrontEndHooks> {
    HOOKS.iter().find(|h| h.format == format)
}

/// The ids of the formats in `registry` that have the hook `has`, in registration order.
pub(crate) fn formats_with(
    registry: &Registry,
    has: fn(&FrontEndHooks) -> bool,
) -> Vec<&'static str> {
    registry
        .formats()
        .iter()
        .map(|f| f.info.id)
        .filter(|id| hooks(id).is_some_and(has))
        .collect()
}

/// What the format with id `format` can do: its descriptor's capabilities with its
/// front-end hooks in their places (`write`, `copy`, `validate`, `recover`, `state-at`,
/// `options`, `outputs`, `queries`).
pub(crate) fn capabilities(descriptor: &recfmt_core::FormatDescriptor) -> Vec<&'static str> {
    let mut out = descriptor.capabilities();
    let hooks = hooks(descriptor.info.id);
    let at = out
        .iter()
        .position(|c| !matches!(*c, "write" | "copy" | "validate"))
        .unwrap_or(out.len());
    let mut extra = Vec::new();
    if hooks.is_some_and(|h| h.recover.is_some()) {
        extra.push("recover");
    }
    if hooks.is_some_and(|h| h.state_at.is_some()) {
        extra.push("state-at");
    }
    out.splice(at..at, extra);
    out
}

#[cfg(feature = "icarec")]
fn icarec_state_at(
    path: &Path,
    t: f64,
    options: &ReadOptions,
) -> recfmt_core::Result<(Option<StateAt>, Integrity)> {
    let (state, integrity) = recfmt_icarec::find_state(path, t, options)?;
    let state = state.map(|s| StateAt {
        t: s.t,
        frame: s.frame,
        values: s
            .values
            .into_iter()
            .map(|(name, value)| (name, icarec_value(value)))
            .collect(),
    });
    Ok((state, integrity))
}

/// An ICAREC signal value as a generic one: numbers and booleans as they are, vectors,
/// quaternions and matrices as arrays of `f64`.
#[cfg(feature = "icarec")]
fn icarec_value(value: recfmt_icarec::SignalValue) -> Value {
    use recfmt_icarec::SignalValue as S;
    match value {
        S::Double(v) => Value::Float(v),
        S::Int64(v) => Value::Int(v),
        S::Int32(v) => Value::Int(i64::from(v)),
        S::Bool(v) => Value::Bool(v),
        other => Value::Array(recfmt_core::ArrayValue::F64(other.elements().collect())),
    }
}

#[cfg(feature = "nanover")]
fn nanover_recover(
    source: &Path,
    target: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<Recovered> {
    let s = recfmt_nanover::repair_replacing(source, target, &Default::default(), write.replace)?;
    Ok(Recovered {
        records_in: s.records_in,
        records_written: s.records_written,
        records_dropped: s.records_dropped,
        bytes_dropped: s.bytes_dropped,
        repairs: vec![
            ("timestamps_fixed", s.timestamps_fixed),
            ("resets_restored", s.resets_restored),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_every_number_and_changed_means_something_was_lost() {
        let mut done = Recovered {
            records_in: 7,
            records_written: 7,
            repairs: vec![("timestamps_fixed", 0)],
            ..Recovered::default()
        };
        assert!(!done.changed());
        assert_eq!(done.counts()["records_in"], 7);
        assert_eq!(done.counts()["timestamps_fixed"], 0);
        done.repairs[0].1 = 2;
        assert!(done.changed());
    }

    #[cfg(all(feature = "icarec", feature = "nanover"))]
    #[test]
    fn hooks_take_their_place_among_the_capabilities() {
        let registry = crate::default_registry();
        let of = |id: &str| capabilities(registry.by_id(id).expect("registered"));
        // `mat` (any recording to MATLAB) is an output of the ICAREC crate.
        assert_eq!(
            of("icarec"),
            ["write", "copy", "validate", "state-at", "outputs"]
        );
        assert_eq!(
            of("nanover"),
            ["write", "copy", "validate", "recover", "options", "outputs"]
        );
        assert_eq!(formats_with(registry, |h| h.recover.is_some()), ["nanover"]);
    }
}
